#include "actors/store_actor.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>
#include <thread>

#include "api/hosts.hpp"
#include "api/makedhcp.hpp"
#include "api/operations.hpp"
#include "base/log_burst.hpp"
#include "store/error.hpp"

namespace cws::actors {

namespace {

using api::api_call_ptr;
using api::api_result;
using api::authorization;

struct reader_state {
  static inline const char* name = "store-reader";
};

/// A write waiting for its commit, and where its result goes.
struct pending_write {
  api_call_ptr call;
  authorization auth;
  done_ptr done;
  /// Set: a write that is not an API call (`call` is empty), run instead of api::run_write.
  write_fn_ptr fn;
};

using pending_writes = std::vector<pending_write>;

} // namespace
} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::pending_writes)

namespace cws::actors {
namespace {

/// Commits what it is handed, on its own thread: each batch message wakes it once.
using writer_actor = caf::typed_actor<caf::reacts_to<batch_atom, pending_writes>,
                                      caf::reacts_to<commit_atom>, caf::reacts_to<flush_atom>>;

/// Writes whose commit is in the database but not durable yet, and their results.
struct unflushed_writes {
  pending_writes writes;
  std::vector<api_result> results;
};

struct writer_state {
  std::shared_ptr<store::database> db;
  /// The change feed's mark and actor (store_config).
  std::shared_ptr<durable_mark> durable;
  events_actor events;
  pending_writes queue;
  bool commit_scheduled = false;
  bool flush_scheduled = false;
  /// With a database that defers its meta-page flush: committed writes not yet answered. The
  /// next commit's own data flush makes them durable (it flushes the meta page written
  /// before it), so under load a batch costs one flush; when no commit follows, a flush
  /// message makes them durable.
  unflushed_writes unflushed;
  /// The database's last transaction id after the last commit: a commit that moves it
  /// changed something and flushed what was left unflushed before it.
  size_t last_txnid = 0;
  static inline const char* name = "store-writer";

  ~writer_state() {
    flush_and_answer();
  }

  /// Flushes the database and answers the unflushed writes; a failed flush fails them.
  void flush_and_answer();

  /// Every commit so far is durable: the change feed may publish them.
  void all_durable() {
    if (durable) {
      durable->release();
      if (events) {
        caf::anon_send(events, durable_atom::value);
      }
    }
  }
};

/// Decides when a commit happens and gathers its writes: a scheduled actor, so the requests
/// that reach it on the workers wake nobody until a batch is ready for the writer.
using gatherer_actor
  = caf::typed_actor<caf::reacts_to<run_atom, api_call_ptr, authorization, done_ptr>,
                     caf::reacts_to<run_atom, write_fn_ptr, done_ptr>,
                     caf::reacts_to<handover_atom, uint64_t>>;

struct gatherer_state {
  writer_actor writer;
  pending_writes queue;
  bool handover_scheduled = false;
  /// Identifies the scheduled hand-over: an earlier one that arrives late is ignored.
  uint64_t handover_id = 0;
  /// Writes of the last batch: their clients are likely to send the next ones.
  size_t expected = 0;
  static inline const char* name = "store-gatherer";
};

/// The reader actors' own interface: the public one minus writes.
using reader_actor = caf::typed_actor<
  caf::reacts_to<run_atom, api_call_ptr, authorization, done_ptr>,
  caf::reacts_to<run_atom, read_fn_ptr>, caf::reacts_to<done_atom, api_result, done_ptr>,
  caf::reacts_to<page_atom, api::object_pages_ptr, size_t, done_ptr>,
  caf::replies_to<plan_atom, api_call_ptr, authorization, bind_ptr>::with<plan_reply>,
  caf::replies_to<snapshot_atom>::with<api::auth_snapshot_ptr>,
  caf::replies_to<generation_atom>::with<uint64_t, uint64_t>,
  caf::replies_to<token_atom, std::string>::with<api::token_info>,
  caf::replies_to<expand_atom, std::string, bool>::with<std::vector<std::string>>>;

struct facade_state {
  std::vector<reader_actor> readers;
  gatherer_actor gatherer;
  size_t next = 0;
  static inline const char* name = "store";

  const reader_actor& reader() {
    return readers[next++ % readers.size()];
  }
};

/// A call that reads the store and then changes system files and services (makehosts,
/// makedhcp, makedns): it may wait on a disk or a server, so it never runs on an actor thread
/// in the daemon.
bool is_system_change(const api::api_call& call) {
  using api::operation;
  return call.op == operation::make_hosts || call.op == operation::make_dhcp
         || call.op == operation::dns_apply || call.op == operation::dns_delete
         || call.op == operation::dns_service;
}

api_result run_system_change(const store::database& db, const api::api_call& call,
                             const authorization& auth, const store_config& cfg) {
  if (call.op == api::operation::make_hosts) {
    return api::run_make_hosts(db, call, auth, cfg.noderange, cfg.hosts_file, cfg.hosts_file_max);
  }
  if (call.op == api::operation::make_dhcp) {
    return api::run_make_dhcp(db, call, auth, cfg.noderange, cfg.dhcp);
  }
  return api::run_dns_call(db, call, auth, cfg.noderange, cfg.dns);
}

reader_actor::behavior_type reader_impl(reader_actor::stateful_pointer<reader_state>,
                                        std::shared_ptr<store::database> db, store_config cfg) {
  return {
    [=](run_atom, const api_call_ptr& call, const authorization& auth, const done_ptr& done) {
      if (is_system_change(*call)) { // only without the system-change thread (tests)
        (*done)(run_system_change(*db, *call, auth, cfg));
        return;
      }
      (*done)(api::run_read(db, *call, auth, cfg.noderange));
    },
    [=](run_atom, const read_fn_ptr& fn) { (*fn)(*db); },
    [=](done_atom, api_result& r, const done_ptr& done) { (*done)(std::move(r)); },
    [=](page_atom, const api::object_pages_ptr& pages, size_t count, const done_ptr& done) {
      api_result r;
      try {
        r.objects = pages->next(count);
      } catch (const std::exception& e) {
        r = api_result::failure(api::errc::unavailable, e.what());
      }
      (*done)(std::move(r));
    },
    [=](plan_atom, const api_call_ptr& call, const authorization& auth, const bind_ptr& bind) {
      plan_reply r;
      try {
        r.failure = (*bind)(*db, *call, auth, cfg.noderange, r.op);
      } catch (const std::exception& e) {
        r.failure = api_result::failure(api::errc::unavailable, e.what());
      }
      return r;
    },
    [=](snapshot_atom) { return api::build_snapshot(*db, cfg.noderange); },
    [=](generation_atom) {
      auto txn = db->read();
      return caf::make_result(txn.generation(store::read_txn::counter::auth),
                              txn.generation(store::read_txn::counter::membership));
    },
    [=](token_atom, const std::string& hash) {
      return api::find_token(*db, hash, std::time(nullptr));
    },
    [=](expand_atom, const std::string& range,
        bool hide_secrets) -> caf::result<std::vector<std::string>> {
      try {
        auto opts = cfg.noderange;
        opts.hide_secrets = hide_secrets;
        return api::expand_nodes(*db, range, opts);
      } catch (const std::exception& e) {
        return caf::make_error(caf::sec::invalid_argument, e.what());
      }
    },
  };
}

/// Failed commits are logged, a burst of them (a full disk) summarised.
base::log_burst& failed_commits() {
  static base::log_burst burst{base::log_level::error, "store"};
  return burst;
}

/// Hands each write its result.
void answer(pending_writes& writes, std::vector<api_result>& results) {
  for (size_t i = 0; i < writes.size(); ++i) {
    (*writes[i].done)(std::move(results[i]));
  }
  writes.clear();
  results.clear();
}

void writer_state::flush_and_answer() {
  if (unflushed.writes.empty()) {
    all_durable(); // every commit that changed something has a write here
    return;
  }
  try {
    db->env().sync();
  } catch (const std::exception& e) {
    failed_commits().note(std::string{"a commit could not be flushed to disk: "} + e.what());
    for (auto& r : unflushed.results) {
      r = api_result::failure(api::errc::unavailable,
                              std::string{"The change could not be made durable: "} + e.what());
    }
    answer(unflushed.writes, unflushed.results);
    return; // the feed stays held: what is not durable is never announced
  }
  answer(unflushed.writes, unflushed.results);
  all_durable();
}

/// Answers a committed batch once it is durable (a change, and what a write saw, are never
/// reported before): at once when the commit flushed everything or changed nothing, else
/// with the writes left unflushed.
void answer_when_durable(writer_actor::stateful_pointer<writer_state> self, pending_writes& batch,
                         std::vector<api_result>& results, uint64_t first_generation) {
  auto& st = self->state;
  const auto& env = st.db->env();
  if (!env.defers_meta_sync()) {
    answer(batch, results);
    st.all_durable();
    return;
  }
  auto txnid = env.last_txnid();
  if (txnid == st.last_txnid) {
    // nothing committed, so nothing flushed the writes left unflushed: once they are
    // flushed, this batch saw durable state only
    st.flush_and_answer();
    answer(batch, results);
    return;
  }
  answer(st.unflushed.writes, st.unflushed.results); // this commit's data flush flushed them
  if (st.durable) {
    st.durable->hold_exactly(first_generation); // ... but not this commit's own meta page
  }
  st.last_txnid = txnid;
  std::move(batch.begin(), batch.end(), std::back_inserter(st.unflushed.writes));
  std::move(results.begin(), results.end(), std::back_inserter(st.unflushed.results));
  if (!st.flush_scheduled) {
    // queued behind every batch already in the mailbox: a commit they cause flushes these
    st.flush_scheduled = true;
    self->send(self, flush_atom::value);
  }
}

/// Commits up to max_batch queued writes in one transaction, then answers them when durable.
void commit(writer_actor::stateful_pointer<writer_state> self,
            const std::shared_ptr<store::database>& dbp, const store_config& cfg) {
  auto& db = *dbp;
  auto& st = self->state;
  st.commit_scheduled = false;
  pending_writes batch;
  if (st.queue.size() > cfg.max_batch) {
    auto cut = st.queue.begin() + static_cast<long>(cfg.max_batch);
    batch.assign(std::make_move_iterator(st.queue.begin()), std::make_move_iterator(cut));
    st.queue.erase(st.queue.begin(), cut);
    st.commit_scheduled = true;
    self->send(self, commit_atom::value);
  } else {
    batch.swap(st.queue);
  }
  std::vector<api_result> results(batch.size());
  std::vector<store::database::batch_op> ops;
  ops.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& w = batch[i];
    ops.push_back({[&results, i, &w, &cfg](store::write_txn& t) {
                     results[i]
                       = w.fn ? (*w.fn)(t) : api::run_write(t, *w.call, w.auth, cfg.noderange);
                   },
                   nullptr});
  }
  auto& metrics = *cfg.metrics;
  auto started = std::chrono::steady_clock::now();
  uint64_t first_generation = 0;
  try {
    if (st.durable) {
      first_generation = db.read().generation() + 1;
      st.durable->hold(first_generation); // before the commit is visible to the feed
    }
    db.write_batch(ops);
    metrics.commits.add();
    metrics.batch_writes.observe(batch.size());
    metrics.commit_seconds.observe(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count()));
    for (size_t i = 0; i < batch.size(); ++i) {
      if (ops[i].failure) {
        try {
          std::rethrow_exception(ops[i].failure);
        } catch (const store::rejected& r) {
          results[i] = api_result::failure(r.result.errors);
        } catch (const store::error& e) {
          results[i] = api_result::failure(api::from_store(e.code()), e.what());
          if (results[i].error == api::errc::unavailable) {
            failed_commits().note(std::string{"a write failed: "} + e.what());
          }
        } catch (const std::exception& e) {
          results[i] = api_result::failure({e.what()});
        }
      }
    }
  } catch (const std::exception& e) {
    // the commit failed: nothing of the batch is written
    metrics.commit_failures.add();
    failed_commits().note("the commit of " + std::to_string(batch.size())
                          + " writes failed, none was written: " + e.what());
    for (auto& r : results) {
      r = api_result::failure(api::errc::unavailable, e.what());
    }
  }
  answer_when_durable(self, batch, results, first_generation);
}

writer_actor::behavior_type writer_impl(writer_actor::stateful_pointer<writer_state> self,
                                        std::shared_ptr<store::database> db, store_config cfg) {
  self->state.db = db;
  self->state.durable = cfg.durable;
  self->state.events = cfg.events;
  self->state.last_txnid = db->env().last_txnid();
  return {
    [=](batch_atom, pending_writes& writes) {
      auto& st = self->state;
      std::move(writes.begin(), writes.end(), std::back_inserter(st.queue));
      if (!st.commit_scheduled) {
        // queued behind every batch already in the mailbox: they all share one commit
        st.commit_scheduled = true;
        self->send(self, commit_atom::value);
      }
    },
    [=](commit_atom) { commit(self, db, cfg); },
    [=](flush_atom) {
      auto& st = self->state;
      st.flush_scheduled = false;
      if (!st.commit_scheduled) {
        st.flush_and_answer();
      }
    },
  };
}

/// Queues a write and schedules the hand-over of its batch to the writer.
void gather(gatherer_actor::stateful_pointer<gatherer_state> self, const store_config& cfg,
            pending_write write) {
  auto& st = self->state;
  st.queue.push_back(std::move(write));
  // Hand over now when as many writes wait as the last batch held (at once at low
  // concurrency); else wait up to commit_wait for their clients' next writes, so that
  // concurrent writers share one commit instead of alternating in two half batches.
  bool wait = cfg.commit_wait.count() > 0;
  if (!st.handover_scheduled) {
    st.handover_scheduled = true;
    if (!wait || st.queue.size() >= st.expected) {
      // queued behind every write already in the mailbox: they all join the batch
      self->send(self, handover_atom::value, st.handover_id);
    } else {
      self->delayed_send(self, cfg.commit_wait, handover_atom::value, st.handover_id);
    }
  } else if (wait && st.queue.size() == st.expected) {
    // (a hand-over scheduled at once had the queue at or above `expected` already)
    self->send(self, handover_atom::value, st.handover_id); // the wait is over early
  }
}

gatherer_actor::behavior_type gatherer_impl(gatherer_actor::stateful_pointer<gatherer_state> self,
                                            writer_actor writer, store_config cfg) {
  self->state.writer = std::move(writer);
  self->link_to(self->state.writer);
  return {
    [=](run_atom, api_call_ptr& call, authorization& auth, done_ptr& done) {
      gather(self, cfg, {std::move(call), std::move(auth), std::move(done), nullptr});
    },
    [=](run_atom, write_fn_ptr& fn, done_ptr& done) {
      gather(self, cfg, {nullptr, {}, std::move(done), std::move(fn)});
    },
    [=](handover_atom, uint64_t id) {
      auto& st = self->state;
      if (id == st.handover_id && st.handover_scheduled) {
        st.handover_scheduled = false;
        ++st.handover_id;
        st.expected = st.queue.size();
        self->send(st.writer, batch_atom::value, std::move(st.queue));
        st.queue = {};
      }
    },
  };
}

/// True for reads of one named object: served by the facade itself, saving a hop.
bool is_small_read(const api::api_call& call) {
  return (call.op == api::operation::show || call.op == api::operation::site_show)
         && call.target.find_first_of("[]-:+@^/=~!(),*") == std::string::npos
         && call.target != "all";
}

store_actor::behavior_type facade_impl(store_actor::stateful_pointer<facade_state> self,
                                       std::vector<reader_actor> readers, gatherer_actor gatherer,
                                       std::shared_ptr<store::database> db, store_config cfg) {
  self->state.readers = std::move(readers);
  self->state.gatherer = std::move(gatherer);
  for (auto& r : self->state.readers) {
    self->link_to(r);
  }
  self->link_to(self->state.gatherer);
  return {
    [=](run_atom, api_call_ptr& call, authorization& auth, done_ptr& done) {
      if (is_system_change(*call) && cfg.system_changes) {
        // one at a time, on its own thread; the answer comes back through a reader, so `done`
        // is called on an actor thread as its contract says
        cfg.system_changes->post([db, call, auth, done, cfg, reader = self->state.reader()] {
          caf::anon_send(reader, done_atom::value, run_system_change(*db, *call, auth, cfg), done);
        });
        return;
      }
      if (api::is_write(call->op)) {
        self->send(self->state.gatherer, run_atom::value, std::move(call), std::move(auth),
                   std::move(done));
      } else if (is_small_read(*call)) {
        (*done)(api::run_read(db, *call, auth, cfg.noderange));
      } else {
        self->send(self->state.reader(), run_atom::value, std::move(call), std::move(auth),
                   std::move(done));
      }
    },
    [=](run_atom, read_fn_ptr& fn) {
      self->send(self->state.reader(), run_atom::value, std::move(fn));
    },
    [=](run_atom, write_fn_ptr& fn, done_ptr& done) {
      self->send(self->state.gatherer, run_atom::value, std::move(fn), std::move(done));
    },
    [=](page_atom, api::object_pages_ptr& pages, size_t count, done_ptr& done) {
      self->send(self->state.reader(), page_atom::value, std::move(pages), count, std::move(done));
    },
    [=](plan_atom, api_call_ptr& call, authorization& auth,
        bind_ptr& bind) -> caf::delegated<plan_reply> {
      return self->delegate(self->state.reader(), plan_atom::value, std::move(call),
                            std::move(auth), std::move(bind));
    },
    [=](snapshot_atom) -> caf::delegated<api::auth_snapshot_ptr> {
      return self->delegate(self->state.reader(), snapshot_atom::value);
    },
    [=](generation_atom) -> caf::delegated<uint64_t, uint64_t> {
      return self->delegate(self->state.reader(), generation_atom::value);
    },
    [=](token_atom, const std::string& hash) -> caf::delegated<api::token_info> {
      return self->delegate(self->state.reader(), token_atom::value, hash);
    },
    [=](expand_atom, const std::string& range,
        bool hide_secrets) -> caf::delegated<std::vector<std::string>> {
      return self->delegate(self->state.reader(), expand_atom::value, range, hide_secrets);
    },
  };
}

} // namespace

store_actor spawn_store(caf::actor_system& sys, std::shared_ptr<store::database> db,
                        store_config cfg) {
  std::vector<reader_actor> readers;
  for (size_t i = 0; i < std::max<size_t>(cfg.readers, 1); ++i) {
    readers.push_back(sys.spawn(reader_impl, db, cfg));
  }
  auto writer = cfg.detached_writer ? sys.spawn<caf::detached>(writer_impl, db, cfg)
                                    : sys.spawn(writer_impl, db, cfg);
  auto gatherer = sys.spawn(gatherer_impl, std::move(writer), cfg);
  return sys.spawn(facade_impl, std::move(readers), std::move(gatherer), db, cfg);
}

} // namespace cws::actors

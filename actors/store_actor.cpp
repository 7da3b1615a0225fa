#include "actors/store_actor.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>

#include "store/cluster_view.hpp"
#include "store/credentials.hpp"
#include "store/error.hpp"
#include "store/tokens.hpp"

namespace cws::actors {

namespace {

using store::object_type;

/// Noderange options for a request: the configured limits plus site.excludenodes.
store::noderange_options request_options(const store::cluster_view& view,
                                         store::noderange_options opts) {
  opts.allow_files = false;
  if (auto site = view.txn().get(object_type::site, "clustersite")) {
    opts.exclude = std::string{site->find("excludenodes").value_or("")};
  }
  return opts;
}

/// The object names a call targets: a noderange (unverified) for nodes, else a comma list.
std::vector<std::string> target_names(const store::cluster_view& view, const api_call& call,
                                      const store::noderange_options& opts) {
  if (call.type == object_type::site) {
    return {"clustersite"};
  }
  if (!call.names.empty()) {
    return call.names;
  }
  if (call.type != object_type::node) {
    return store::split_list(call.target);
  }
  auto o = request_options(view, opts);
  o.verify = false;
  return store::expand_noderange(call.target, view, o).nodes;
}

api_result failed(std::vector<std::string> messages) {
  api_result r;
  r.status = api_status::failed;
  r.messages = std::move(messages);
  return r;
}

/// `Y-M-D h:m:s` in local time without zero padding, as xCAT's time2string.
std::string expire_text(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  return std::to_string(tm.tm_year + 1900) + "-" + std::to_string(tm.tm_mon + 1) + "-"
         + std::to_string(tm.tm_mday) + " " + std::to_string(tm.tm_hour) + ":"
         + std::to_string(tm.tm_min) + ":" + std::to_string(tm.tm_sec);
}

api_result create_token(store::write_txn& t, const api_call& call) {
  auto parent = call.creds.token.empty() ? std::string{} : store::sha256_hex(call.creds.token);
  auto [id, rec] = store::create_token(t, call.user, parent, std::time(nullptr));
  api_result r;
  r.status = api_status::created;
  r.token_id = std::move(id);
  r.token_expire = rec.expires == 0 ? "never" : expire_text(rec.expires);
  return r;
}

api_result revoke_token(store::write_txn& t, const api_call& call) {
  auto key = store::sha256_hex(call.target);
  auto rec = t.get(object_type::token, key);
  if (!rec) {
    throw store::rejected{
      {{}, {}, {"Could not find an object named '" + call.target + "' of type 'token'."}}};
  }
  if (call.user != "root" && rec->find("username").value_or("") != call.user) {
    throw store::rejected{{{}, {}, {"Only root or the owner can revoke a token."}}};
  }
  t.erase(object_type::token, key);
  return {};
}

/// The caller's own tokens: handle, creation and expiry (never an id).
api_result list_own_tokens(const store::read_txn& t, const api_call& call) {
  api_result r;
  for (const auto& tok : store::list_tokens(t, call.user)) {
    store::attr_map attrs{{"created", expire_text(tok.created)},
                          {"expire", tok.expires == 0 ? "never" : expire_text(tok.expires)}};
    r.objects.emplace_back(tok.handle(), attrs);
  }
  return r;
}

// -- actor states -------------------------------------------------------------

struct reader_state {
  static inline const char* name = "store-reader";
};

/// A write waiting for its commit, and where its result goes.
struct pending_write {
  api_call_ptr call;
  done_fn done;
};

using pending_writes = std::vector<pending_write>;

using result_promise = caf::typed_response_promise<api_result>;

} // namespace
} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::pending_writes)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::result_promise)

namespace cws::actors {
namespace {

/// Commits what it is handed, on its own thread: each batch message wakes it once.
using writer_actor
  = caf::typed_actor<caf::reacts_to<exec_atom, pending_writes>, caf::reacts_to<flush_atom>>;

struct writer_state {
  pending_writes queue;
  bool flush_scheduled = false;
  static inline const char* name = "store-writer";
};

/// Decides when a commit happens and gathers its writes: a scheduled actor, so the requests
/// that reach it on the workers wake nobody until a batch is ready for the writer.
using gatherer_actor = caf::typed_actor<caf::replies_to<exec_atom, api_call_ptr>::with<api_result>,
                                        caf::reacts_to<exec_atom, api_call_ptr, done_ptr>,
                                        caf::reacts_to<flush_atom, uint64_t>,
                                        caf::reacts_to<done_atom, result_promise, api_result>>;

struct gatherer_state {
  writer_actor writer;
  pending_writes queue;
  bool flush_scheduled = false;
  /// Identifies the scheduled flush: an earlier flush message that arrives late is ignored.
  uint64_t flush_id = 0;
  /// Writes of the last batch: their clients are likely to send the next ones.
  size_t expected = 0;
  static inline const char* name = "store-gatherer";
};

struct facade_state {
  std::vector<store_actor> readers;
  gatherer_actor gatherer;
  size_t next = 0;
  static inline const char* name = "store";

  const store_actor& reader() {
    return readers[next++ % readers.size()];
  }
};

store_actor::behavior_type reader_impl(store_actor::stateful_pointer<reader_state>,
                                       std::shared_ptr<store::database> db,
                                       store::noderange_options opts) {
  return {
    [=](exec_atom, api_call_ptr call) { return run_read(*db, *call, opts); },
    [=](exec_atom, api_call_ptr call, done_ptr done) { (*done)(run_read(*db, *call, opts)); },
    [=](snapshot_atom) { return build_snapshot(*db, opts); },
    [=](generation_atom) {
      auto txn = db->read();
      return caf::make_result(txn.generation(store::read_txn::counter::auth),
                              txn.generation(store::read_txn::counter::membership));
    },
    [=](token_atom, const std::string& hash) {
      auto rec = store::find_token(db->read(), hash, std::time(nullptr));
      return token_info{!rec.user.empty(), std::move(rec.user), rec.expires};
    },
    [=](targets_atom, api_call_ptr call) { return find_targets(*db, *call, opts); },
    [=](exists_atom, const std::vector<std::string>& names) {
      std::vector<std::string> missing;
      auto txn = db->read();
      for (const auto& n : names) {
        if (!txn.exists(object_type::node, n)) {
          missing.push_back(n);
        }
      }
      return missing;
    },
    [=](expand_atom, const std::string& range,
        bool verify) -> caf::result<store::noderange_result> {
      try {
        auto txn = db->read();
        store::cluster_view view{txn};
        auto o = request_options(view, opts);
        o.verify = verify;
        return store::expand_noderange(range, view, o);
      } catch (const std::exception& e) {
        return caf::make_error(caf::sec::invalid_argument, e.what());
      }
    },
  };
}

/// Commits up to max_batch queued writes in one transaction, then replies to each.
void flush(writer_actor::stateful_pointer<writer_state> self, store::database& db,
           const store_config& cfg) {
  auto& st = self->state;
  st.flush_scheduled = false;
  pending_writes batch;
  if (st.queue.size() > cfg.max_batch) {
    auto cut = st.queue.begin() + static_cast<long>(cfg.max_batch);
    batch.assign(std::make_move_iterator(st.queue.begin()), std::make_move_iterator(cut));
    st.queue.erase(st.queue.begin(), cut);
    st.flush_scheduled = true;
    self->send(self, flush_atom::value);
  } else {
    batch.swap(st.queue);
  }
  std::vector<api_result> results(batch.size());
  std::vector<store::database::batch_op> ops;
  ops.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    auto call = batch[i].call;
    ops.push_back({[&results, i, call, &cfg](store::write_txn& t) {
                     results[i] = run_write(t, *call, cfg.noderange);
                   },
                   nullptr});
  }
  try {
    db.write_batch(ops);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (ops[i].failure) {
        try {
          std::rethrow_exception(ops[i].failure);
        } catch (const store::rejected& r) {
          results[i] = failed(r.result.errors);
        } catch (const std::exception& e) {
          results[i] = failed({e.what()});
        }
      }
    }
  } catch (const std::exception& e) {
    // the commit failed: nothing of the batch is written
    for (auto& r : results) {
      r = api_result::failure(api_status::unavailable, e.what());
    }
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].done(std::move(results[i]));
  }
}

writer_actor::behavior_type writer_impl(writer_actor::stateful_pointer<writer_state> self,
                                        std::shared_ptr<store::database> db, store_config cfg) {
  return {
    [=](exec_atom, pending_writes& writes) {
      auto& st = self->state;
      std::move(writes.begin(), writes.end(), std::back_inserter(st.queue));
      if (!st.flush_scheduled) {
        // queued behind every batch already in the mailbox: they all share one commit
        st.flush_scheduled = true;
        self->send(self, flush_atom::value);
      }
    },
    [=](flush_atom) { flush(self, *db, cfg); },
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
  if (!st.flush_scheduled) {
    st.flush_scheduled = true;
    if (!wait || st.queue.size() >= st.expected) {
      // queued behind every write already in the mailbox: they all join the batch
      self->send(self, flush_atom::value, st.flush_id);
    } else {
      self->delayed_send(self, cfg.commit_wait, flush_atom::value, st.flush_id);
    }
  } else if (wait && st.queue.size() == st.expected) {
    // (a flush scheduled at once had the queue at or above `expected` already)
    self->send(self, flush_atom::value, st.flush_id); // the wait is over early
  }
}

gatherer_actor::behavior_type gatherer_impl(gatherer_actor::stateful_pointer<gatherer_state> self,
                                            writer_actor writer, store_config cfg) {
  self->state.writer = std::move(writer);
  self->link_to(self->state.writer);
  return {
    [=](exec_atom, api_call_ptr call) -> result_promise {
      auto rp = self->make_response_promise<api_result>();
      // the writer's thread hands the result back here: a promise is delivered by its actor
      auto me = caf::actor_cast<gatherer_actor>(self);
      gather(self, cfg, {std::move(call), [me, rp](api_result r) {
                           caf::anon_send(me, done_atom::value, rp, std::move(r));
                         }});
      return rp;
    },
    [](done_atom, result_promise& rp, api_result& r) { rp.deliver(std::move(r)); },
    [=](exec_atom, api_call_ptr call, done_ptr done) {
      gather(self, cfg, {std::move(call), [done](api_result r) {
                           (*done)(std::move(r));
                         }});
    },
    [=](flush_atom, uint64_t id) {
      auto& st = self->state;
      if (id == st.flush_id && st.flush_scheduled) {
        st.flush_scheduled = false;
        ++st.flush_id;
        st.expected = st.queue.size();
        self->send(st.writer, exec_atom::value, std::move(st.queue));
        st.queue = {};
      }
    },
  };
}

/// True for reads of one named object: served by the facade itself, saving a hop.
bool is_small_read(const api_call& call) {
  return (call.op == operation::show || call.op == operation::site_show)
         && call.target.find_first_of("[]-:+@^/=~!(),*") == std::string::npos
         && call.target != "all";
}

store_actor::behavior_type facade_impl(store_actor::stateful_pointer<facade_state> self,
                                       std::vector<store_actor> readers, gatherer_actor gatherer,
                                       std::shared_ptr<store::database> db,
                                       store::noderange_options opts) {
  self->state.readers = std::move(readers);
  self->state.gatherer = std::move(gatherer);
  for (auto& r : self->state.readers) {
    self->link_to(r);
  }
  self->link_to(self->state.gatherer);
  return {
    [=](exec_atom, api_call_ptr call) -> caf::result<api_result> {
      if (is_write(call->op)) {
        return self->delegate(self->state.gatherer, exec_atom::value, std::move(call));
      }
      if (is_small_read(*call)) {
        return run_read(*db, *call, opts);
      }
      return self->delegate(self->state.reader(), exec_atom::value, std::move(call));
    },
    [=](exec_atom, api_call_ptr call, done_ptr done) {
      if (is_write(call->op)) {
        self->send(self->state.gatherer, exec_atom::value, std::move(call), std::move(done));
      } else if (is_small_read(*call)) {
        (*done)(run_read(*db, *call, opts));
      } else {
        self->send(self->state.reader(), exec_atom::value, std::move(call), std::move(done));
      }
    },
    [=](snapshot_atom) -> caf::delegated<auth_snapshot_ptr> {
      return self->delegate(self->state.reader(), snapshot_atom::value);
    },
    [=](generation_atom) -> caf::delegated<uint64_t, uint64_t> {
      return self->delegate(self->state.reader(), generation_atom::value);
    },
    [=](token_atom, const std::string& hash) -> caf::delegated<token_info> {
      return self->delegate(self->state.reader(), token_atom::value, hash);
    },
    [=](expand_atom, const std::string& range,
        bool verify) -> caf::delegated<store::noderange_result> {
      return self->delegate(self->state.reader(), expand_atom::value, range, verify);
    },
    [=](targets_atom, api_call_ptr call) -> caf::delegated<targets_reply> {
      return self->delegate(self->state.reader(), targets_atom::value, std::move(call));
    },
    [=](exists_atom,
        const std::vector<std::string>& names) -> caf::delegated<std::vector<std::string>> {
      return self->delegate(self->state.reader(), exists_atom::value, names);
    },
  };
}

} // namespace

// -- operations -------------------------------------------------------------------

api_result run_read(const store::database& db, const api_call& call,
                    const store::noderange_options& opts) {
  try {
    auto txn = db.read();
    if (is_stale(txn, call)) {
      return api_result::failure(api_status::stale, "authorization is stale", "2");
    }
    store::cluster_view view{txn};
    api_result r;
    switch (call.op) {
      case operation::list: {
        if (call.type == object_type::group) {
          r.names = txn.group_names();
        } else {
          r.names = txn.names(call.type);
        }
        if (call.type == object_type::node) {
          r.names.erase(std::remove_if(r.names.begin(), r.names.end(),
                                       [&](const std::string& n) { return view.hidden(n); }),
                        r.names.end());
        }
        if (r.names.empty()) {
          return failed(
            {"Could not get objects of type '" + std::string{store::type_name(call.type)} + "'."});
        }
        return r;
      }
      case operation::show:
      case operation::site_show: {
        auto names = target_names(view, call, opts);
        if (call.op == operation::site_show) {
          auto site = view.display(object_type::site, "clustersite").value_or(store::attr_map{});
          if (call.only_attrs) {
            store::attr_map picked; // unknown site keys are just not shown
            for (const auto& k : call.attrs) {
              if (auto it = site.find(k); it != site.end()) {
                picked.insert(*it);
              }
            }
            site = std::move(picked);
          }
          r.objects.push_back({"clustersite", std::move(site)});
          return r;
        }
        r.objects.reserve(names.size());
        auto errors = store::list_objects(
          view, call.type, names, call.only_attrs ? &call.attrs : nullptr, {},
          [&](store::listed_object&& o) { r.objects.emplace_back(std::move(o.name), o.attrs); });
        if (!errors.empty()) {
          return failed(std::move(errors)); // xCAT: any error, no listing
        }
        return r;
      }
      case operation::nodels: {
        auto o = request_options(view, opts);
        auto x = store::expand_noderange(call.target, view, o);
        if (!x.missing.empty()) {
          return failed({store::missing_nodes_message(x.missing)});
        }
        for (auto& n : x.nodes) {
          if (!view.hidden(n)) {
            r.names.push_back(std::move(n));
          }
        }
        return r;
      }
      case operation::token_list: return list_own_tokens(txn, call);
      default: return failed({"This operation is not a read."});
    }
  } catch (const store::error& e) {
    return failed({e.what()});
  }
}

api_result run_write(store::write_txn& t, const api_call& call,
                     const store::noderange_options& opts) {
  if (is_stale(t, call)) {
    return api_result::failure(api_status::stale, "authorization is stale", "2");
  }
  if (call.op == operation::token_create) {
    return create_token(t, call);
  }
  if (call.op == operation::token_revoke) {
    return revoke_token(t, call);
  }
  store::cluster_view view{t};
  std::vector<std::string> names;
  try {
    names = target_names(view, call, opts);
  } catch (const store::error& e) {
    throw store::rejected{{{}, {}, {e.what()}}};
  }
  if (auto msg = store::check_change_target(call.type, call.target, names); !msg.empty()) {
    throw store::rejected{{{}, {}, {std::move(msg)}}};
  }
  store::change_request req{call.type, std::move(names), call.changes, call.mode, false};
  store::outcome out;
  switch (call.op) {
    case operation::make: out = store::make_objects(t, req); break;
    case operation::change: out = store::change_objects(t, req); break;
    case operation::remove: out = store::remove_objects(t, call.type, req.names); break;
    default: throw store::rejected{{{}, {}, {"This operation is not a write."}}};
  }
  api_result r;
  r.status = call.op == operation::make ? api_status::created : api_status::ok;
  r.messages = std::move(out.info);
  return r;
}

targets_reply find_targets(const store::database& db, const api_call& call,
                           const store::noderange_options& opts) {
  targets_reply r;
  try {
    auto txn = db.read();
    if (is_stale(txn, call)) {
      r.error = "stale";
      return r;
    }
    store::cluster_view view{txn};
    auto x = store::expand_noderange(call.target, view, request_options(view, opts));
    if (!x.missing.empty()) {
      r.missing = std::move(x.missing);
      return r;
    }
    r.nodes.reserve(x.nodes.size());
    for (auto& n : x.nodes) {
      node_target t;
      t.address = view.attribute(n, "ip");
      auto port = std::atoi(view.attribute(n, "sshport").c_str());
      t.port = port > 0 && port < 65536 ? static_cast<uint16_t>(port) : 0;
      t.name = std::move(n);
      r.nodes.push_back(std::move(t));
    }
  } catch (const store::error& e) {
    r.error = e.what();
  }
  return r;
}

bool is_stale(const store::read_txn& txn, const api_call& call) {
  using counter = store::read_txn::counter;
  return call.stamped
         && (txn.generation(counter::auth) != call.stamp.auth_generation
             || (call.stamp.check_membership
                 && txn.generation(counter::membership) != call.stamp.membership_generation));
}

auth_snapshot_ptr build_snapshot(const store::database& db, const store::noderange_options& opts) {
  auto txn = db.read();
  auto snap = std::make_shared<auth_snapshot>();
  snap->auth_generation = txn.generation(store::read_txn::counter::auth);
  snap->membership_generation = txn.generation(store::read_txn::counter::membership);
  store::cluster_view view{txn};
  auto o = request_options(view, opts);
  txn.scan(object_type::policy, [&](std::string_view prio, store::record_view rec) {
    auto attrs = rec.to_map();
    if (store::policy_row_enabled(attrs)) {
      snap->rows.push_back(store::make_policy_row(std::string{prio}, attrs));
    }
  });
  for (auto& row : snap->rows) {
    if (!row.noderange.empty() && row.noderange != "*") {
      snap->has_noderange_rows = true;
      try {
        row.nodes = store::expand_noderange(row.noderange, view, o).nodes;
      } catch (const store::error&) {
        row.nodes.clear(); // a broken row matches no node
      }
    }
  }
  store::sort_policy(snap->rows);
  txn.scan(object_type::passwd, [&](std::string_view user, store::record_view rec) {
    snap->passwords.emplace(user, rec.find("password").value_or(""));
  });
  return snap;
}

store_actor spawn_store(caf::actor_system& sys, std::shared_ptr<store::database> db,
                        store_config cfg) {
  std::vector<store_actor> readers;
  for (size_t i = 0; i < std::max<size_t>(cfg.readers, 1); ++i) {
    readers.push_back(sys.spawn(reader_impl, db, cfg.noderange));
  }
  auto writer = cfg.detached_writer ? sys.spawn<caf::detached>(writer_impl, db, cfg)
                                    : sys.spawn(writer_impl, db, cfg);
  auto gatherer = sys.spawn(gatherer_impl, std::move(writer), cfg);
  return sys.spawn(facade_impl, std::move(readers), std::move(gatherer), db, cfg.noderange);
}

} // namespace cws::actors

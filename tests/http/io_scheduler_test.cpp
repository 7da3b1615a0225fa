// The io scheduler: actors run on the io threads, a chain of messages started on an io thread
// stays on it, a busy actor lets the thread's other handlers run between its turns, and the
// end of the system cleans up what is still queued.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <future>
#include <set>
#include <thread>

#include "http/io_scheduler.hpp"

using where_fn = std::function<void(std::thread::id)>;
using where_ptr = std::shared_ptr<where_fn>;
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(where_ptr)

namespace {

using namespace cws;

using hop_atom = caf::atom_constant<caf::atom("hop")>;

/// An actor that passes a hop count on to `next` and, at the last hop, says on which thread
/// it ran.
caf::behavior relay(caf::event_based_actor* self, caf::actor next) {
  return {
    [=](hop_atom, int left, where_ptr where) {
      if (left == 0 || !next) {
        (*where)(std::this_thread::get_id());
      } else {
        self->send(next, hop_atom::value, left - 1, where);
      }
    },
  };
}

struct io_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  explicit io_system(size_t threads) {
    http::io_scheduler::install(cfg, threads);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  http::io_scheduler& sched() {
    return *http::io_scheduler::of(*sys);
  }

  /// Returns once every io thread ran what was queued on it before.
  void settle() {
    for (size_t i = 0; i < sched().contexts().size(); ++i) {
      thread_of(i);
    }
  }

  /// The id of the thread running io_context `i`.
  std::thread::id thread_of(size_t i) {
    std::promise<std::thread::id> id;
    http::net::post(*sched().contexts()[i], [&] { id.set_value(std::this_thread::get_id()); });
    return id.get_future().get();
  }
};

/// Sends a hop message from io thread `i` (as a session does) and returns where it ended.
std::thread::id hop_from(io_system& s, size_t i, const caf::actor& first, int hops) {
  std::promise<std::thread::id> ended;
  auto where = std::make_shared<where_fn>([&](std::thread::id id) { ended.set_value(id); });
  http::net::post(*s.sched().contexts()[i],
                  [&] { caf::anon_send(first, hop_atom::value, hops, where); });
  return ended.get_future().get();
}

TEST(io_scheduler, is_the_system_scheduler_with_one_context_per_thread) {
  io_system s{2};
  ASSERT_NE(http::io_scheduler::of(*s.sys), nullptr);
  EXPECT_EQ(s.sched().contexts().size(), 2u);
  EXPECT_NE(s.thread_of(0), s.thread_of(1));
  EXPECT_NE(s.thread_of(0), std::this_thread::get_id());
  caf::actor_system_config plain;
  caf::actor_system other{plain};
  EXPECT_EQ(http::io_scheduler::of(other), nullptr);
}

TEST(io_scheduler, a_chain_sent_from_an_io_thread_stays_on_it) {
  io_system s{2};
  auto c = s.sys->spawn(relay, caf::actor{});
  auto b = s.sys->spawn(relay, c);
  auto a = s.sys->spawn(relay, b);
  for (size_t i : {0, 1, 0, 1}) {
    // every actor idle first: one still queued or finishing a turn elsewhere (its start, the
    // last hop) takes the message there, as CAF does with any actor that is running
    s.settle();
    EXPECT_EQ(hop_from(s, i, a, 2), s.thread_of(i)) << "sent from io thread " << i;
  }
  // an actor talking to itself 1000 times (many turns) stays there too
  auto self_loop = s.sys->spawn([](caf::event_based_actor* self) -> caf::behavior {
    return {[=](hop_atom, int left, where_ptr where) {
      if (left == 0) {
        (*where)(std::this_thread::get_id());
      } else {
        self->send(self, hop_atom::value, left - 1, where);
      }
    }};
  });
  s.settle();
  EXPECT_EQ(hop_from(s, 1, self_loop, 1000), s.thread_of(1));
}

TEST(io_scheduler, messages_from_other_threads_go_to_every_io_thread_in_turn) {
  io_system s{2};
  std::mutex m;
  std::set<std::thread::id> seen;
  std::promise<void> all;
  int left = 8;
  auto where = std::make_shared<where_fn>([&](std::thread::id id) {
    std::lock_guard<std::mutex> lock{m};
    seen.insert(id);
    if (--left == 0) {
      all.set_value();
    }
  });
  std::vector<caf::actor> actors;
  for (int i = 0; i < 8; ++i) {
    actors.push_back(s.sys->spawn(relay, caf::actor{}));
  }
  for (const auto& a : actors) {
    caf::anon_send(a, hop_atom::value, 0, where); // from the test's own thread
  }
  all.get_future().wait();
  EXPECT_EQ(seen, (std::set<std::thread::id>{s.thread_of(0), s.thread_of(1)}));
}

TEST(io_scheduler, a_busy_actor_lets_the_threads_other_handlers_run_between_turns) {
  io_system s{1};
  auto& ioc = *s.sched().contexts()[0];
  std::atomic<int> handled{0};
  int handled_when_other_ran = -1;
  std::promise<void> done;
  constexpr int messages = 5000;
  // the first message fills the actor's own mailbox with the rest
  auto busy = s.sys->spawn([&](caf::event_based_actor* self) -> caf::behavior {
    return {[&, self](hop_atom, int n, where_ptr where) {
      if (n == 0) {
        for (int i = 1; i < messages; ++i) {
          self->send(self, hop_atom::value, i, where);
        }
      }
      if (++handled == messages) {
        done.set_value();
      }
    }};
  });
  auto where = std::make_shared<where_fn>([](std::thread::id) {});
  std::promise<void> queued;
  http::net::post(ioc, [&] {
    caf::anon_send(busy, hop_atom::value, 0, where);
    // a session's handler queued now: it must not wait for all of the messages
    http::net::post(ioc, [&] { handled_when_other_ran = handled.load(); });
    queued.set_value();
  });
  queued.get_future().wait();
  done.get_future().wait();
  std::promise<void> flushed;
  http::net::post(ioc, [&] { flushed.set_value(); });
  flushed.get_future().wait();
  EXPECT_GT(handled_when_other_ran, 0);
  EXPECT_LT(handled_when_other_ran, messages);
}

TEST(io_scheduler, delayed_messages_arrive) {
  io_system s{2};
  std::promise<std::thread::id> ended;
  auto where = std::make_shared<where_fn>([&](std::thread::id id) { ended.set_value(id); });
  auto a = s.sys->spawn(relay, caf::actor{});
  caf::delayed_anon_send(a, std::chrono::milliseconds(20), hop_atom::value, 0, where);
  auto f = ended.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto id = f.get();
  EXPECT_TRUE(id == s.thread_of(0) || id == s.thread_of(1));
}

TEST(io_scheduler, delayed_messages_set_on_an_io_thread_fire_there_in_order_and_not_early) {
  io_system s{2};
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> arrived;
  std::promise<void> all;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::chrono::steady_clock::duration> late;
  auto a = s.sys->spawn([&](caf::event_based_actor*) -> caf::behavior {
    return {[&](hop_atom, int ms, where_ptr) {
      std::lock_guard<std::mutex> lock{m};
      late.push_back(std::chrono::steady_clock::now() - start - std::chrono::milliseconds(ms));
      arrived.emplace_back(ms, std::this_thread::get_id());
      if (arrived.size() == 3) {
        all.set_value();
      }
    }};
  });
  auto where = std::make_shared<where_fn>([](std::thread::id) {});
  s.settle();
  http::net::post(*s.sched().contexts()[1], [&] {
    start = std::chrono::steady_clock::now();
    for (int ms : {60, 20, 40}) {
      caf::delayed_anon_send(a, std::chrono::milliseconds(ms), hop_atom::value, ms, where);
    }
  });
  auto f = all.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto io1 = s.thread_of(1);
  std::lock_guard<std::mutex> lock{m};
  ASSERT_EQ(arrived.size(), 3u);
  EXPECT_EQ(arrived[0].first, 20);
  EXPECT_EQ(arrived[1].first, 40);
  EXPECT_EQ(arrived[2].first, 60);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(arrived[i].second, io1) << "armed and shipped on the io thread that set it";
    EXPECT_GE(late[i].count(), 0) << arrived[i].first << " ms: arrived early";
  }
}

TEST(io_scheduler, request_timeouts_fire_and_answered_requests_leave_no_timer) {
  io_system s{2};
  auto silent = s.sys->spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](hop_atom, int) -> caf::result<int> {
      return caf::delegated<int>{};
    }};
  });
  auto echo = s.sys->spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](hop_atom, int n) {
      return n;
    }};
  });
  std::promise<std::string> outcome;
  s.sys->spawn([&](caf::event_based_actor* self) {
    // answered at once: its 1 h timeout must be cancelled; the silent one times out
    self->request(echo, std::chrono::seconds(3600), hop_atom::value, 7).then([=, &outcome](int n) {
      self->request(silent, std::chrono::milliseconds(20), hop_atom::value, n)
        .then([&outcome](int) { outcome.set_value("answered"); },
              [&outcome](caf::error& e) {
                outcome.set_value(e == caf::sec::request_timeout ? "timeout" : "other error");
              });
    });
  });
  auto f = outcome.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(f.get(), "timeout");
  s.settle();
  EXPECT_TRUE(s.sched().clock().schedule().empty()) << "a cancelled timeout stayed scheduled";
}

TEST(io_scheduler, the_end_of_the_system_drops_delayed_messages) {
  auto payload = std::make_shared<where_fn>([](std::thread::id) {});
  std::weak_ptr<where_fn> watch = payload;
  {
    io_system s{2};
    auto a = s.sys->spawn(relay, caf::actor{});
    caf::delayed_anon_send(a, std::chrono::hours(1), hop_atom::value, 0, std::move(payload));
    s.settle();
    EXPECT_FALSE(watch.expired());
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown); // (the system waits for it)
  }
  EXPECT_TRUE(watch.expired());
}

TEST(io_scheduler, the_end_of_the_system_drops_what_is_still_queued) {
  auto left_behind = std::make_shared<int>(0);
  std::weak_ptr<int> watch = left_behind;
  {
    io_system s{2};
    auto& ioc = *s.sched().contexts()[1];
    std::promise<void> parked;
    // a handler that stays queued (as an idle connection's read does) and one actor message
    // sent from an io thread after which the thread stops
    http::net::post(ioc, [&, keep = std::move(left_behind)]() mutable {
      auto timer = std::make_shared<http::steady_timer>(ioc.get_executor());
      timer->expires_after(std::chrono::hours(1));
      timer->async_wait([timer, keep](auto) {});
      parked.set_value();
    });
    parked.get_future().wait();
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_TRUE(watch.expired()); // destroyed with the contexts, on no io thread
}

} // namespace

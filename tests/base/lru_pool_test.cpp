// The idle pool alone (base::lru_pool, the SSH engine's connection pool), without sockets or
// libssh2 sessions: a pooled "connection" is the write end of a pipe, so that a test sees when
// the pool closes it.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "base/lru_pool.hpp"

namespace {

using namespace std::chrono_literals;
/// A pooled connection: closing it (destroying it) closes its pipe end.
struct connection {
  int fd = -1;

  ~connection() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

using pool = cws::base::lru_pool<std::string, std::unique_ptr<connection>>;

class lru_pool_test : public ::testing::Test {
 protected:
  ~lru_pool_test() override {
    for (int fd : peers_) {
      ::close(fd);
    }
  }

  /// A connection; `peer` is set to the end that sees it closed.
  std::unique_ptr<connection> conn(int& peer) {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    peers_.push_back(p[0]);
    peer = p[0];
    auto c = std::make_unique<connection>();
    c->fd = p[1];
    return c;
  }

  /// True once the connection whose peer is `peer` was closed (EOF; EAGAIN while open).
  static bool closed(int peer) {
    char ch;
    return ::read(peer, &ch, 1) == 0;
  }

  pool::clock::time_point t0 = pool::clock::now();
  std::vector<int> peers_;
};

TEST_F(lru_pool_test, take_gives_back_the_connection_parked_under_the_key) {
  pool p{8, 60s};
  EXPECT_EQ(p.take("a"), nullptr);
  int a;
  auto c = conn(a);
  auto* raw = c.get();
  p.put("a", std::move(c), t0);
  EXPECT_EQ(p.size(), 1u);
  EXPECT_EQ(p.take("b"), nullptr);
  auto back = p.take("a");
  EXPECT_EQ(back.get(), raw);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(p.take("a"), nullptr);
  EXPECT_FALSE(closed(a));
}

TEST_F(lru_pool_test, one_key_gives_its_connections_least_recently_parked_first) {
  pool p{8, 60s};
  int x1, x2;
  auto first = conn(x1);
  auto second = conn(x2);
  auto* a = first.get();
  auto* b = second.get();
  p.put("x", std::move(first), t0);
  p.put("x", std::move(second), t0 + 1s);
  EXPECT_EQ(p.take("x").get(), a);
  EXPECT_EQ(p.take("x").get(), b);
  EXPECT_EQ(p.take("x"), nullptr);
}

TEST_F(lru_pool_test, max_pooled_closes_the_least_recently_parked) {
  pool p{2, 60s};
  int a, b, c;
  p.put("a", conn(a), t0);
  p.put("b", conn(b), t0 + 1s);
  p.put("c", conn(c), t0 + 2s);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_TRUE(closed(a));
  EXPECT_FALSE(closed(b));
  EXPECT_FALSE(closed(c));
  EXPECT_EQ(p.take("a"), nullptr);
  EXPECT_NE(p.take("b"), nullptr);
  EXPECT_NE(p.take("c"), nullptr);
}

TEST_F(lru_pool_test, parking_again_makes_a_connection_the_most_recent) {
  pool p{2, 60s};
  int a, b, c;
  p.put("a", conn(a), t0);
  p.put("b", conn(b), t0 + 1s);
  auto used = p.take("a"); // a runs a command, then comes back: b is now the oldest
  p.put("a", std::move(used), t0 + 2s);
  p.put("c", conn(c), t0 + 3s);
  EXPECT_TRUE(closed(b));
  EXPECT_FALSE(closed(a));
  EXPECT_NE(p.take("a"), nullptr);
  EXPECT_NE(p.take("c"), nullptr);
}

TEST_F(lru_pool_test, eviction_keeps_each_keys_queue_in_step) {
  pool p{2, 60s};
  int x1, y1, x2;
  p.put("x", conn(x1), t0);
  p.put("y", conn(y1), t0 + 1s);
  auto second = conn(x2);
  auto* x2_raw = second.get();
  p.put("x", std::move(second), t0 + 2s); // closes x1, the oldest of all and of "x"
  EXPECT_TRUE(closed(x1));
  EXPECT_EQ(p.take("x").get(), x2_raw);
  EXPECT_EQ(p.take("x"), nullptr);
  EXPECT_NE(p.take("y"), nullptr);
  EXPECT_EQ(p.size(), 0u);
}

TEST_F(lru_pool_test, max_pooled_zero_keeps_nothing) {
  pool p{0, 60s};
  int a;
  p.put("a", conn(a), t0);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_TRUE(closed(a));
}

TEST_F(lru_pool_test, expire_closes_what_idled_for_pool_idle_oldest_first) {
  pool p{8, 10s};
  EXPECT_FALSE(p.next_expiry().has_value());
  int a, b;
  p.put("a", conn(a), t0);
  p.put("b", conn(b), t0 + 5s);
  EXPECT_EQ(p.next_expiry(), t0 + 10s);
  EXPECT_EQ(p.expire(t0 + 10s - 1ms), 0u);
  EXPECT_FALSE(closed(a));
  EXPECT_EQ(p.expire(t0 + 10s), 1u); // idle for exactly pool_idle: closed
  EXPECT_TRUE(closed(a));
  EXPECT_FALSE(closed(b));
  EXPECT_EQ(p.next_expiry(), t0 + 15s);
  EXPECT_EQ(p.expire(t0 + 1h), 1u);
  EXPECT_TRUE(closed(b));
  EXPECT_EQ(p.size(), 0u);
  EXPECT_FALSE(p.next_expiry().has_value());
}

TEST_F(lru_pool_test, taking_a_connection_stops_its_expiry) {
  pool p{8, 10s};
  int a, b;
  p.put("a", conn(a), t0);
  p.put("b", conn(b), t0 + 5s);
  auto used = p.take("a");
  EXPECT_EQ(p.next_expiry(), t0 + 15s);
  EXPECT_EQ(p.expire(t0 + 12s), 0u);
  EXPECT_FALSE(closed(a));
}

TEST_F(lru_pool_test, a_time_before_the_last_put_counts_as_that_time) {
  pool p{8, 10s};
  int a, b;
  p.put("a", conn(a), t0 + 5s);
  p.put("b", conn(b), t0); // earlier than a: parked at a's time, after a
  EXPECT_EQ(p.next_expiry(), t0 + 15s);
  EXPECT_EQ(p.expire(t0 + 15s), 2u);
}

TEST_F(lru_pool_test, clear_closes_everything) {
  pool p{8, 60s};
  int a, b;
  p.put("a", conn(a), t0);
  p.put("b", conn(b), t0);
  p.clear();
  EXPECT_EQ(p.size(), 0u);
  EXPECT_TRUE(closed(a));
  EXPECT_TRUE(closed(b));
  EXPECT_EQ(p.take("a"), nullptr);
  EXPECT_FALSE(p.next_expiry().has_value());
}

TEST_F(lru_pool_test, on_close_sees_every_value_the_pool_closes_but_not_those_taken) {
  std::vector<int> closing;
  cws::base::lru_pool<std::string, int> p{1, 10s, [&](int& v) {
                                            closing.push_back(v);
                                          }};
  p.put("a", 1, t0);
  p.put("b", 2, t0); // evicts 1
  p.put("c", 3, t0); // evicts 2
  EXPECT_EQ(p.take("c"), 3);
  p.put("d", 4, t0);
  EXPECT_EQ(p.expire(t0 + 10s), 1u);
  p.put("e", 5, t0 + 10s);
  p.clear();
  EXPECT_EQ(closing, (std::vector<int>{1, 2, 4, 5}));
  EXPECT_EQ(p.take("e"), 0); // none: a default value
}

} // namespace

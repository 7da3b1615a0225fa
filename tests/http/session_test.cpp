// One HTTP session in-process over Beast's test stream, TLS validated with the cluster CA,
// with the real actors and store behind it: what the network cannot show deterministically
// (pipelining, a request that arrives a byte at a time, a client that leaves mid-listing).

#include <gtest/gtest.h>

#include <boost/beast/_experimental/test/stream.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "actors/dispatcher.hpp"
#include "actors/events_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"
#include "http/server.hpp"
#include "http/session.ipp"

namespace {

using namespace cws;
using namespace cws::http;

/// Beast's test stream as asio's TLS stream wants its next layer (Boost 1.74's lacks the
/// lowest-layer typedef).
class test_stream : public beast::test::stream {
 public:
  using beast::test::stream::stream;
  using lowest_layer_type = test_stream;

  lowest_layer_type& lowest_layer() noexcept {
    return *this;
  }
  const lowest_layer_type& lowest_layer() const noexcept {
    return *this;
  }
};

using test_session = basic_session<test_stream>;

class session_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    home_ = dir_->path / "home";
    auto r = cws::test::run_tool(dir_->path, "clusterctl init --home " + home_.string()
                                               + " --admin-password rootpw");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = cws::test::run_tool(home_, "mkdef 'cn[01-10]' groups=all mgt=kvm");
    ASSERT_EQ(r.rc, 0) << r.out;
  }

  static void TearDownTestSuite() {
    delete dir_;
  }

  session_test() {
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    ctx->cfg.page_objects = 3;
    ctx->svc = &entry;
    configure_tls(server_tls, home_ / "pki" / "server-cert.pem", home_ / "pki" / "server-key.pem");
    client_tls.load_verify_file((home_ / "pki" / "ca-cert.pem").string());
    client_tls.set_verify_mode(ssl::verify_peer);
  }

  ~session_test() override {
    entry.shutdown();
    caf::anon_send_exit(ex, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(pol, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(st, caf::exit_reason::user_shutdown);
    // what the actors still hold of the session goes before the io_context does
    sys.await_all_actors_done();
    session.reset();
    client.reset();
    ioc.poll();
  }

  /// Starts a session on a new test stream pair and does the client's TLS handshake.
  void open() {
    test_stream server_side{ioc};
    client.emplace(test_stream{ioc}, client_tls);
    beast::get_lowest_layer(*client).connect(server_side);
    session = std::make_shared<test_session>(std::move(server_side), server_tls, ctx, "127.0.0.1");
    session->run();
    bool done = false;
    client->async_handshake(ssl::stream_base::client, [&](beast::error_code ec) {
      EXPECT_FALSE(ec) << ec.message();
      done = true;
    });
    run_until(done);
  }

  /// Runs the io_context until `flag` is set (the actors answer from their own threads).
  void run_until(const bool& flag) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!flag && std::chrono::steady_clock::now() < until) {
      ioc.run_one_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(flag) << "no answer within 30 s";
  }

  void write(const std::string& bytes) {
    bool done = false;
    net::async_write(*client, net::buffer(bytes), [&](beast::error_code ec, size_t) {
      EXPECT_FALSE(ec) << ec.message();
      done = true;
    });
    run_until(done);
  }

  bhttp::response<bhttp::string_body> read() {
    bhttp::response<bhttp::string_body> res;
    bool done = false;
    bhttp::async_read(*client, buffer, res, [&](beast::error_code ec, size_t) {
      EXPECT_FALSE(ec) << ec.message();
      done = true;
    });
    run_until(done);
    return res;
  }

  static std::string get(const std::string& path) {
    return "GET /clusterws" + path + "?userName=root&userPW=rootpw HTTP/1.1\r\nHost: x\r\n\r\n";
  }

  static cws::test::temp_dir* dir_;
  static std::filesystem::path home_;

  std::shared_ptr<store::database> db = std::make_shared<store::database>(home_ / "db");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  actors::store_actor st = actors::spawn_store(sys, db, {});
  actors::policy_actor pol = actors::spawn_policy(sys, st, {});
  actors::executor_actor ex = actors::spawn_executor(sys, st, {});
  actors::dispatcher entry{sys, st, pol, ex};
  std::shared_ptr<session_context> ctx = std::make_shared<session_context>();
  net::io_context ioc{1};
  ssl::context server_tls{ssl::context::tls_server};
  ssl::context client_tls{ssl::context::tls_client};
  std::optional<beast::ssl_stream<test_stream>> client;
  std::shared_ptr<test_session> session;
  beast::flat_buffer buffer;
};

cws::test::temp_dir* session_test::dir_ = nullptr;
std::filesystem::path session_test::home_;

TEST_F(session_test, pipelined_requests_are_answered_in_order_on_one_connection) {
  open();
  write(get("/nodes/cn02/attrs/mgt") + get("/nodes/cn01/attrs/mgt") + get("/nodes/nosuch"));
  auto first = read();
  auto second = read();
  auto third = read();
  EXPECT_EQ(first.result_int(), 200);
  EXPECT_EQ(first.body(), "{\"cn02\":{\"mgt\":\"kvm\"}}\n");
  EXPECT_EQ(second.body(), "{\"cn01\":{\"mgt\":\"kvm\"}}\n");
  EXPECT_EQ(third.result_int(), 403);
  EXPECT_EQ(ctx->connections.load(), 1u);
}

TEST_F(session_test, once_a_stop_began_an_answer_closes_its_keep_alive_connection) {
  open();
  write(get("/nodes/cn01/attrs/mgt"));
  auto before = read();
  EXPECT_TRUE(before.keep_alive());
  ctx->draining = true; // what server::stop sets
  write(get("/nodes/cn02/attrs/mgt") + get("/nodes/cn03/attrs/mgt"));
  auto during = read();
  EXPECT_EQ(during.result_int(), 200); // the request read is still answered, then no other
  EXPECT_FALSE(during.keep_alive());
  EXPECT_EQ(during[bhttp::field::connection], "close");
  bhttp::response<bhttp::string_body> next;
  bool done = false;
  beast::error_code got;
  bhttp::async_read(*client, buffer, next, [&](beast::error_code ec, size_t) {
    got = ec;
    done = true;
  });
  run_until(done);
  EXPECT_TRUE(got) << "a second answer came: " << next.body();
}

TEST_F(session_test, a_paged_listing_then_the_next_request_on_the_same_connection) {
  open();
  write(get("/nodes/all/attrs/mgt") + get("/nodes/cn10/attrs/mgt"));
  auto listing = read();
  EXPECT_EQ(listing.result_int(), 200);
  EXPECT_TRUE(listing.chunked());
  std::string expected = "{";
  for (int i = 1; i <= 10; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "cn%02d", i);
    expected += std::string{i > 1 ? "," : ""} + "\"" + name + "\":{\"mgt\":\"kvm\"}";
  }
  EXPECT_EQ(listing.body(), expected + "}\n");
  auto next = read();
  EXPECT_EQ(next.body(), "{\"cn10\":{\"mgt\":\"kvm\"}}\n");
}

TEST_F(session_test, a_client_that_leaves_mid_listing_ends_the_session_and_its_snapshot) {
  open();
  std::weak_ptr<test_session> weak = session;
  session.reset(); // the session lives on its own handlers only
  write(get("/nodes/all"));
  // read the head and the first chunk, then leave
  bhttp::response_parser<bhttp::string_body> parser;
  bool done = false;
  bhttp::async_read_header(*client, buffer, parser, [&](beast::error_code ec, size_t) {
    EXPECT_FALSE(ec) << ec.message();
    done = true;
  });
  run_until(done);
  EXPECT_TRUE(parser.chunked());
  beast::get_lowest_layer(*client).close();
  bool gone = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!gone && std::chrono::steady_clock::now() < until) {
    ioc.run_one_for(std::chrono::milliseconds(100));
    gone = weak.expired();
  }
  EXPECT_TRUE(gone) << "the session (and the listing's read transaction) outlived its client";
  EXPECT_EQ(ctx->connections.load(), 0u);
}

TEST_F(session_test, a_request_arriving_a_byte_at_a_time_is_answered_once_whole) {
  open();
  auto request = get("/nodes/cn03/attrs/mgt");
  for (char c : request) {
    write(std::string(1, c)); // (TLS records of one byte each)
  }
  auto res = read();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "{\"cn03\":{\"mgt\":\"kvm\"}}\n");
}

TEST_F(session_test, a_header_over_the_limit_is_refused_with_431_and_the_connection_closed) {
  ctx->cfg.header_limit = 1024;
  open();
  write("GET /clusterws/nodes HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'a')
        + "\r\n\r\n");
  auto res = read();
  EXPECT_EQ(res.result_int(), 431);
  EXPECT_NE(res.body().find("larger than 1024 bytes"), std::string::npos) << res.body();
  EXPECT_FALSE(res.keep_alive());
}

/// A WebSocket client over the session test's TLS client stream.
using test_ws = websocket::stream<beast::ssl_stream<test_stream>&>;

TEST_F(session_test, an_allowed_websocket_upgrade_is_handed_over_and_a_stop_closes_it_with_1001) {
  // the events actor of this test only
  auto evs = actors::spawn_events(sys, db, {});
  actors::dispatcher with_events{sys, st, pol, ex, 1, evs};
  ctx->svc = &with_events;
  ctx->cfg.events_heartbeat = std::chrono::seconds(3600);
  open();
  std::weak_ptr<test_session> weak = session;
  session.reset();
  test_ws ws{*client};
  websocket::response_type res;
  bool done = false;
  ws.async_handshake(res, "x", "/clusterws/events?userName=root&userPW=rootpw&types=node",
                     [&](beast::error_code ec) {
                       EXPECT_FALSE(ec) << ec.message();
                       done = true;
                     });
  run_until(done);
  EXPECT_EQ(res.result_int(), 101);
  EXPECT_EQ(res[bhttp::field::server], "clusterws");
  EXPECT_TRUE(weak.expired()) << "the HTTP session outlived its hand-over";
  EXPECT_EQ(ctx->connections.load(), 1u); // the ws_session counts it now
  // (the events themselves: websocket_test, against the daemon)
  // a stop closes it with 1001
  ctx->upgraded.stop_all();
  beast::flat_buffer in;
  done = false;
  beast::error_code got;
  ws.async_read(in, [&](beast::error_code ec, size_t) {
    got = ec;
    done = true;
  });
  run_until(done);
  EXPECT_EQ(got, websocket::error::closed) << got.message();
  EXPECT_EQ(ws.reason().code, 1001);
  // its closing handshake done, the ws_session ends (and leaves the feed)
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ctx->connections.load() > 0 && std::chrono::steady_clock::now() < until) {
    ioc.run_one_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ctx->connections.load(), 0u);
  ctx->svc = &entry;
  with_events.shutdown();
  caf::anon_send_exit(evs, caf::exit_reason::user_shutdown);
}

/// A stream as the events hub sees it: what it was handed, in order ("set N" with the text's
/// address, "flush"), and (`leave_at_first`) its membership dropped from its first handler.
struct recording_reader : event_reader {
  std::shared_ptr<std::vector<std::string>> got = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::unique_ptr<event_membership>> membership
    = std::make_shared<std::unique_ptr<event_membership>>();
  bool leave_at_first = false;
  event_filter filter;

  void on_changes(change_texts& texts) override {
    const auto& text = texts.sse_chunk(filter);
    got->push_back("set " + std::to_string(texts.set().seq) + " "
                   + std::to_string(reinterpret_cast<uintptr_t>(&text)));
    if (leave_at_first) {
      membership->reset();
    }
  }
  void on_reset(uint64_t) override {
    got->push_back("reset");
  }
  void on_activity(const actors::activity&) override {
  }
  void on_heartbeat() override {
  }
  void flush() override {
    got->push_back("flush");
  }
};

TEST_F(session_test,
       the_hub_of_a_thread_hands_each_set_to_its_streams_then_one_flush_for_the_burst) {
  auto evs = actors::spawn_events(sys, db, {});
  actors::dispatcher with_events{sys, st, pol, ex, 1, evs};
  auto hub = ctx->hubs.of(ioc.get_executor(), with_events,
                          {std::chrono::hours(1), std::chrono::milliseconds(100)});
  ASSERT_TRUE(hub);
  EXPECT_EQ(ctx->hubs.of(ioc.get_executor(), with_events, {}), hub) << "one hub a thread";
  auto a = std::make_unique<recording_reader>();
  auto b = std::make_unique<recording_reader>();
  a->leave_at_first = true;
  auto a_got = a->got, b_got = b->got;
  auto a_membership = a->membership;
  *a_membership
    = std::make_unique<event_membership>(hub, hub->join(std::move(a), actors::from_now));
  auto b_membership
    = std::make_unique<event_membership>(hub, hub->join(std::move(b), actors::from_now));
  // both joined once the feed said so (nothing to wait for but time)
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < until) {
    ioc.run_one_for(std::chrono::milliseconds(20));
  }
  // two commits (of the tools' kind) published in one look: a burst
  for (auto name : {"hubnet1", "hubnet2"}) {
    db->write([&](store::write_txn& t) {
      t.put(store::object_type::network, name, {{"net", "10.0.0.0"}});
    });
  }
  caf::anon_send(evs, actors::durable_atom::value);
  until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (b_got->size() < 3 && std::chrono::steady_clock::now() < until) {
    ioc.run_one_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(b_got->size(), 3u);
  auto seq = db->read().generation();
  // b: both sets, then one flush for both
  EXPECT_EQ((*b_got)[0].rfind("set " + std::to_string(seq - 1) + " ", 0), 0u) << (*b_got)[0];
  EXPECT_EQ((*b_got)[1].rfind("set " + std::to_string(seq) + " ", 0), 0u) << (*b_got)[1];
  EXPECT_EQ((*b_got)[2], "flush");
  // a left from its first handler: the first set only (rendered once for both: one text)
  ASSERT_EQ(a_got->size(), 1u);
  EXPECT_EQ((*a_got)[0], (*b_got)[0]);
  b_membership.reset();
  hub.reset();
  ioc.poll();
  caf::anon_send_exit(evs, caf::exit_reason::user_shutdown);
}

TEST_F(session_test, a_refused_upgrade_is_answered_401_in_http_before_any_upgrade) {
  open();
  test_ws ws{*client};
  websocket::response_type res;
  bool done = false;
  beast::error_code got;
  ws.async_handshake(res, "x", "/clusterws/events?userName=root&userPW=wrong",
                     [&](beast::error_code ec) {
                       got = ec;
                       done = true;
                     });
  run_until(done);
  EXPECT_EQ(got, websocket::error::upgrade_declined) << got.message();
  EXPECT_EQ(res.result_int(), 401);
  EXPECT_EQ(ctx->connections.load(), 1u);
}

TEST_F(session_test, an_upgrade_request_on_a_resource_that_cannot_upgrade_is_plain_http) {
  open();
  test_ws ws{*client};
  websocket::response_type res;
  bool done = false;
  beast::error_code got;
  ws.async_handshake(res, "x", "/clusterws/nodes/cn01/attrs/mgt?userName=root&userPW=rootpw",
                     [&](beast::error_code ec) {
                       got = ec;
                       done = true;
                     });
  run_until(done);
  EXPECT_EQ(got, websocket::error::upgrade_declined) << got.message();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "{\"cn01\":{\"mgt\":\"kvm\"}}\n");
}

} // namespace

// The wire types (api/wire.hpp): each round-trips through CAF's binary serializer, a job
// request is checked before it is run, and hostile bytes (a length prefix past the input,
// trailing bytes, a message past the bound) are refused without a large allocation.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>

#include <sys/resource.h>

#include "actors/type_ids.hpp"
#include "api/delegation.hpp"
#include "api/operation_traits.hpp"

namespace {

using namespace cws;
namespace wire = cws::api::wire;

struct wire_system {
  static caf::actor_system_config& init(caf::actor_system_config& cfg) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    actors::add_wire_types(cfg);
    return cfg;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys{init(cfg)};

  template<class T>
  std::vector<char> bytes(T x) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    EXPECT_FALSE(sink(x));
    return buf;
  }

  template<class T>
  T round_trip(T x) {
    auto buf = bytes(std::move(x));
    T back;
    caf::binary_deserializer source{sys, buf};
    EXPECT_FALSE(source(back));
    EXPECT_EQ(source.remaining(), 0u);
    return back;
  }
};

wire::job_request sample_request() {
  api::api_call call;
  call.op = api::operation::nodecopy;
  call.command = "uptime; echo 'done'";
  call.timeout_ms = 30000;
  call.fanout = 16;
  auto copy = std::make_shared<api::copy_request>();
  copy->entries.push_back({{"/etc/hosts", "/etc/resolv.conf"}, "/etc/"});
  copy->recursive = true;
  copy->execute = true;
  call.copy = copy;
  std::vector<wire::target> targets(2);
  targets[0] = {0, "n1", "10.0.0.1", 22, "alice", {}, 0, {}, {}, 0, {}};
  targets[1] = {1, "n2", "", 0, "alice", {}, 0, {}, {}, 0, {}};
  return wire::make_request(42, call, std::move(targets));
}

wire::node_result sample_result() {
  base::node_result r;
  r.name = "n2";
  r.rc = 3;
  r.out = std::string("line\n\0binary", 12);
  r.err = "warn";
  r.truncated = true;
  r.error = "timeout";
  r.message = "the command did not end";
  r.reused = true;
  return wire::to_wire(1, r, 1700000000000000, 2500);
}

TEST(wire, a_job_request_round_trips_with_every_field) {
  wire_system w;
  auto x = sample_request();
  auto y = w.round_trip(x);
  EXPECT_EQ(y.version, wire::version);
  EXPECT_EQ(y.id, 42u);
  EXPECT_EQ(y.operation, "nodecopy");
  EXPECT_EQ(y.command, x.command);
  EXPECT_EQ(y.timeout_ms, 30000);
  EXPECT_EQ(y.fanout, 16u);
  ASSERT_EQ(y.copy.size(), 1u);
  EXPECT_EQ(y.copy[0].sources, x.copy[0].sources);
  EXPECT_EQ(y.copy[0].target, "/etc/");
  EXPECT_TRUE(y.recursive);
  EXPECT_FALSE(y.preserve);
  EXPECT_FALSE(y.pull);
  EXPECT_TRUE(y.execute);
  ASSERT_EQ(y.targets.size(), 2u);
  EXPECT_EQ(y.targets[0].name, "n1");
  EXPECT_EQ(y.targets[0].address, "10.0.0.1");
  EXPECT_EQ(y.targets[0].port, 22);
  EXPECT_EQ(y.targets[0].user, "alice");
  EXPECT_EQ(y.targets[1].index, 1u);
  EXPECT_EQ(wire::check(y), "");
}

TEST(wire, a_node_result_and_a_batch_round_trip) {
  wire_system w;
  auto r = w.round_trip(sample_result());
  EXPECT_EQ(r.index, 1u);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, std::string("line\n\0binary", 12));
  EXPECT_EQ(r.started_us, 1700000000000000);
  EXPECT_EQ(r.elapsed_us, 2500);
  auto n = wire::from_wire(r);
  EXPECT_EQ(n.name, "n2");
  EXPECT_EQ(n.err, "warn");
  EXPECT_TRUE(n.truncated);
  EXPECT_EQ(n.error, "timeout");
  EXPECT_EQ(n.message, "the command did not end");
  EXPECT_TRUE(n.reused);
  wire::result_batch b{42, 7, {sample_result(), sample_result()}};
  auto b2 = w.round_trip(b);
  EXPECT_EQ(b2.id, 42u);
  EXPECT_EQ(b2.seq, 7u);
  ASSERT_EQ(b2.results.size(), 2u);
  EXPECT_EQ(b2.results[1].message, "the command did not end");
}

TEST(wire, credit_and_cancel_round_trip) {
  wire_system w;
  auto c = w.round_trip(wire::credit{9, 3});
  EXPECT_EQ(c.id, 9u);
  EXPECT_EQ(c.seq, 3u);
  auto x = w.round_trip(wire::cancel{9, "The request was cancelled."});
  EXPECT_EQ(x.id, 9u);
  EXPECT_EQ(x.reason, "The request was cancelled.");
}

TEST(wire, every_wire_type_goes_into_a_message_that_serializes) {
  wire_system w;
  // registered types serialize inside a message (an unregistered one fails: unknown_type)
  auto m = caf::make_message(sample_request(), sample_result(), wire::credit{1, 2},
                             wire::cancel{1, "x"}, wire::result_batch{1, 0, {sample_result()}});
  std::vector<char> buf;
  caf::binary_serializer sink{w.sys, buf};
  ASSERT_FALSE(sink(m));
  caf::message back;
  caf::binary_deserializer source{w.sys, buf};
  ASSERT_FALSE(source(back));
  ASSERT_TRUE((back.match_elements<wire::job_request, wire::node_result, wire::credit, wire::cancel,
                                   wire::result_batch>()));
  EXPECT_EQ(back.get_as<wire::job_request>(0).targets.size(), 2u);
  EXPECT_EQ(back.get_as<wire::cancel>(3).reason, "x");
}

TEST(wire, a_request_is_checked_before_it_is_run) {
  auto ok = sample_request();
  EXPECT_EQ(wire::check(ok), "");
  auto r = ok;
  r.version = 2;
  EXPECT_EQ(wire::check(r), "wire version 2 is not this service's (1)");
  r = ok;
  r.operation = "show"; // a read: it never runs on nodes
  EXPECT_EQ(wire::check(r), "'show' is not an operation that runs on nodes");
  r.operation = "no-such";
  EXPECT_NE(wire::check(r), "");
  r = ok;
  r.targets[1].index = 0;
  EXPECT_EQ(wire::check(r), "target index 0 is out of range or repeated");
  r.targets[1].index = 2;
  EXPECT_NE(wire::check(r), "");
  r = ok;
  r.targets[0].name.clear();
  EXPECT_NE(wire::check(r), "");
  r = ok;
  EXPECT_NE(wire::check(r, {1, 1 << 20}), ""); // 2 targets, 1 allowed
  EXPECT_NE(wire::check(r, {10, 8}), "");      // the command is longer than 8 bytes
}

TEST(wire, read_job_request_takes_a_request_and_refuses_trailing_bytes_and_excess) {
  wire_system w;
  auto buf = w.bytes(sample_request());
  wire::job_request out;
  EXPECT_EQ(actors::read_job_request(w.sys, buf.data(), buf.size(), out), "");
  EXPECT_EQ(out.targets.size(), 2u);
  auto longer = buf;
  longer.push_back('x');
  EXPECT_EQ(actors::read_job_request(w.sys, longer.data(), longer.size(), out),
            "not a job request: 1 bytes after it");
  EXPECT_NE(actors::read_job_request(w.sys, buf.data(), buf.size() - 1, out), "");
  EXPECT_EQ(actors::read_job_request(w.sys, buf.data(), buf.size(), out, 16),
            "a wire message of " + std::to_string(buf.size()) + " bytes: at most 16");
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(wire, a_hostile_length_prefix_allocates_nothing_large) {
  wire_system w;
  // version, id, then the operation's length: 2^32-1 as CAF's varbyte (5 bytes), no data
  std::vector<char> buf = w.bytes(uint32_t{1});
  auto id = w.bytes(uint64_t{7});
  buf.insert(buf.end(), id.begin(), id.end());
  for (int i = 0; i < 4; ++i) {
    buf.push_back(static_cast<char>(0xff));
  }
  buf.push_back(0x0f);
  auto before = max_rss_kb();
  wire::job_request out;
  EXPECT_NE(actors::read_job_request(w.sys, buf.data(), buf.size(), out), "");
  // the same as a target count: 2^32-1 targets announced, none present
  std::vector<char> many = w.bytes(wire::job_request{});
  many.resize(many.size() - 1); // drop the empty target list's count (one byte: 0)
  for (int i = 0; i < 4; ++i) {
    many.push_back(static_cast<char>(0xff));
  }
  many.push_back(0x0f);
  EXPECT_NE(actors::read_job_request(w.sys, many.data(), many.size(), out), "");
  EXPECT_LT(max_rss_kb() - before, 64 * 1024); // no allocation of the announced size
}

} // namespace

namespace {

TEST(wire, a_share_and_its_end_round_trip_inside_a_message_and_the_share_is_checked) {
  wire_system w;
  api::delegation_settings s;
  s.credits = 3;
  s.batch_nodes = 50;
  s.batch_bytes = 1 << 20;
  auto job = sample_request();
  auto share = api::make_share(job, {1}, "sn2", 77, 8, s);
  share.sealed = std::string("\x01\x02seal", 6);
  auto m = caf::make_message(share, wire::share_end{77, 3, "no key for alice"});
  std::vector<char> buf;
  caf::binary_serializer sink{w.sys, buf};
  ASSERT_FALSE(sink(m));
  caf::message back;
  caf::binary_deserializer source{w.sys, buf};
  ASSERT_FALSE(source(back));
  ASSERT_TRUE((back.match_elements<wire::share_request, wire::share_end>()));
  const auto& y = back.get_as<wire::share_request>(0);
  EXPECT_EQ(y.job.id, 77u);
  EXPECT_EQ(y.job.fanout, 8u);
  EXPECT_EQ(y.job.command, job.command);
  ASSERT_EQ(y.job.targets.size(), 1u);
  EXPECT_EQ(y.job.targets[0].name, "n2") << "the share's targets only";
  EXPECT_EQ(y.job.targets[0].index, 0u) << "re-indexed within the share";
  EXPECT_EQ(y.service_node, "sn2");
  EXPECT_EQ(y.credits, 3u);
  EXPECT_EQ(y.batch_nodes, 50u);
  EXPECT_EQ(y.batch_bytes, 1u << 20);
  EXPECT_EQ(y.sealed, share.sealed);
  EXPECT_EQ(wire::check(y), "");
  const auto& e = back.get_as<wire::share_end>(1);
  EXPECT_EQ(e.id, 77u);
  EXPECT_EQ(e.batches, 3u);
  EXPECT_EQ(e.refused, "no key for alice");
  auto bad = y;
  bad.credits = 0;
  EXPECT_EQ(wire::check(bad), "the share has no credit, batch size or batch bytes");
  bad = y;
  bad.service_node.clear();
  EXPECT_EQ(wire::check(bad), "the share names no service node");
  bad = y;
  bad.job.targets[0].index = 1;
  EXPECT_NE(wire::check(bad), "") << "the job inside is checked too";
}

} // namespace

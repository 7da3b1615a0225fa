// xdcp/nodecopy through a service node (api/copy_share.hpp) under CAF's test coordinator: the
// head reads the files once (api::build_copy), their bytes travel inside the share (through
// CAF's serializer, as over the link), and the service node's bind (api::bind_copy) gets the
// very bytes, modes and names; a copy past sn_copy_max is never sent, and each delegated node
// gets a per-node error naming the bound while the head's own nodes copy as usual.

#include <gtest/gtest.h>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <cstdlib>
#include <fstream>
#include <random>

#include "../store/temp_home.hpp"
#include "../support/fake_operation.hpp"
#include "actors/delegation_actor.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/type_ids.hpp"
#include "api/copy.hpp"
#include "api/copy_share.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace cws::api;
namespace wire = cws::api::wire;

/// A target of a request (the fields nodeshell and copies use).
api::wire::target make_target(uint32_t index, std::string name, std::string address, uint16_t port,
                              std::string user) {
  api::wire::target t;
  t.index = index;
  t.name = std::move(name);
  t.address = std::move(address);
  t.port = port;
  t.user = std::move(user);
  return t;
}

caf::actor_system_config& wire_config(caf::actor_system_config& cfg) {
  actors::add_wire_types(cfg);
  return test::coordinated_system::init(cfg);
}

/// The coordinated system with the wire types known (the share is serialized as on the link).
struct sn_copy_fixture : ::testing::Test {
  caf::actor_system_config cfg;
  caf::actor_system sys{wire_config(cfg)};
  caf::scheduler::test_coordinator& sched
    = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());

  sn_copy_fixture() {
    std::mt19937 rng{31};
    big.resize(300 * 1024);
    for (auto& c : big) {
      c = static_cast<char>(rng());
    }
    std::ofstream{dir.path / "hosts"} << "127.0.0.1 localhost\n";
    std::ofstream{dir.path / "blob", std::ios::binary} << big;
    std::filesystem::permissions(dir.path / "blob", std::filesystem::perms::owner_read
                                                      | std::filesystem::perms::owner_write
                                                      | std::filesystem::perms::owner_exec);
  }

  ~sn_copy_fixture() override {
    caf::anon_send_exit(sn, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// The head's copy of `hosts` and `blob` into /etc/x/ (small files in memory, larger ones
  /// streamed by descriptor, as api::build_copy decides).
  std::shared_ptr<const ssh::copy_spec> head_copy() {
    copy_request req;
    req.entries.push_back(
      {{(dir.path / "hosts").string(), (dir.path / "blob").string()}, "/etc/x/"});
    copy_config c;
    c.memory_max = 1024; // blob is streamed from its descriptor
    std::shared_ptr<const ssh::copy_spec> spec;
    auto r = build_copy(req, c, spec);
    EXPECT_TRUE(r.ok()) << (r.messages.empty() ? "" : r.messages.front());
    return spec;
  }

  /// Service node sn1, whose bind turns each share's copy into the spec its nodes would
  /// write (kept in `bound`), on a fake operation (`ops`).
  void spawn_sn(wire::request_limits limits = {}) {
    service_node_config c;
    c.name = "sn1";
    c.limits = limits;
    c.bind = [this](const wire::job_request& job, node_operation_ptr& out) {
      std::shared_ptr<const ssh::copy_spec> spec;
      auto r = bind_copy(job, 4096, spec);
      if (!r.ok()) {
        return r;
      }
      bound.push_back(spec);
      std::vector<std::string> names;
      for (const auto& t : job.targets) {
        names.push_back(t.name);
      }
      auto op = std::make_shared<test::fake_operation>(names);
      ops.push_back(op);
      out = op;
      return api_result{};
    };
    sn = spawn_service_node(sys, c);
    sched.run();
  }

  /// nodecopy of `files` on n0 (the head) and n1, n2 (sn1); results in `results`.
  node_operation_ptr run(std::vector<wire::copy_group> files, const std::string& refuse_why = {}) {
    wire::job_request job;
    job.operation = "nodecopy";
    job.copy.push_back({{"hosts", "blob"}, "/etc/x/"});
    job.files = std::move(files);
    for (uint32_t i = 0; i < 3; ++i) {
      job.targets.push_back(make_target(i, "n" + std::to_string(i), "127.0.0.1", 22, "alice"));
    }
    service_nodes known;
    known.known["sn1"] = true;
    auto plan = plan_delegation({"n0", "n1", "n2"}, {"", "sn1", "sn1"}, known);
    if (!refuse_why.empty()) {
      refuse_shares(plan, refuse_why);
    }
    size_t head_fanout = 0;
    auto r = make_delegated_run({"n0", "n1", "n2"}, job, plan, {{"sn1", sn}}, {}, 8, head_fanout);
    head_op = std::make_shared<test::fake_operation>(std::vector<std::string>{"n0"});
    r.head = head_op;
    // what the link does to a share: bytes out, bytes in
    r.seal = [this](wire::share_request& share) {
      std::vector<char> buf;
      caf::binary_serializer out{sys, buf};
      ASSERT_FALSE(out(share));
      wire::share_request back;
      caf::binary_deserializer in{sys, buf};
      ASSERT_FALSE(in(back));
      wire_bytes += buf.size();
      share = std::move(back);
    };
    auto op = delegate(sys, std::move(r));
    results.assign(3, {});
    op->start([this](size_t i, base::node_result res) { results.at(i) = std::move(res); },
              [this] { ++done; });
    sched.run();
    return op;
  }

  test::temp_dir dir;
  std::string big;
  sn_executor_actor sn;
  std::vector<std::shared_ptr<const ssh::copy_spec>> bound;
  std::vector<std::shared_ptr<test::fake_operation>> ops;
  std::shared_ptr<test::fake_operation> head_op;
  std::vector<base::node_result> results;
  int done = 0;
  size_t wire_bytes = 0;
};

TEST_F(sn_copy_fixture, the_copied_files_bytes_reach_the_service_node_intact) {
  spawn_sn();
  auto spec = head_copy();
  ASSERT_TRUE(spec);
  std::vector<wire::copy_group> files;
  ASSERT_EQ(carry_copy(*spec, 1 << 20, files), "");
  auto op = run(std::move(files));
  ASSERT_EQ(bound.size(), 1u);
  ASSERT_TRUE(bound[0]);
  EXPECT_GT(wire_bytes, big.size()); // the bytes went through the serializer
  const auto& push = bound[0]->push;
  ASSERT_EQ(push.size(), 1u);
  EXPECT_EQ(push[0].target, "/etc/x");
  EXPECT_TRUE(push[0].into);
  ASSERT_EQ(push[0].files.size(), 2u);
  EXPECT_EQ(push[0].files[0].name, "hosts");
  ASSERT_TRUE(push[0].files[0].data);
  EXPECT_EQ(*push[0].files[0].data, "127.0.0.1 localhost\n");
  EXPECT_EQ(push[0].files[1].name, "blob");
  ASSERT_TRUE(push[0].files[1].data); // streamed on the head, carried whole
  EXPECT_TRUE(*push[0].files[1].data == big);
  EXPECT_EQ(push[0].files[1].mode, 0700u);
  EXPECT_FALSE(push[0].files[1].source); // the service node reads no path of the head's
  // the nodes end as the transport says: every node once
  ASSERT_EQ(ops.size(), 1u);
  ops[0]->finish(0, 0);
  ops[0]->finish(1, 0);
  head_op->finish(0, 0);
  sched.run();
  EXPECT_EQ(done, 1);
  for (const auto& r : results) {
    EXPECT_EQ(r.rc, 0) << r.name << ": " << r.message;
  }
}

TEST_F(sn_copy_fixture, a_copy_past_sn_copy_max_is_not_sent_and_each_delegated_node_says_why) {
  spawn_sn();
  auto spec = head_copy();
  ASSERT_TRUE(spec);
  std::vector<wire::copy_group> files;
  auto why = carry_copy(*spec, 64 * 1024, files);
  EXPECT_NE(why.find("more than sn_copy_max (65536 bytes)"), std::string::npos) << why;
  EXPECT_TRUE(files.empty());
  auto op = run({}, why);
  EXPECT_TRUE(bound.empty()); // the service node was sent nothing
  for (size_t i : {1, 2}) {
    EXPECT_EQ(results[i].error, "servicenode");
    EXPECT_EQ(results[i].rc, -1);
    EXPECT_EQ(results[i].message,
              "service node sn1 was not sent the request: the files to copy are 307220 bytes, "
              "more than sn_copy_max (65536 bytes) a service node is sent; nothing was run");
  }
  // the head's own node copies as usual
  head_op->finish(0, 0);
  sched.run();
  EXPECT_EQ(results[0].rc, 0);
  EXPECT_EQ(done, 1);
}

TEST_F(sn_copy_fixture, a_service_node_refuses_a_share_carrying_more_than_its_bound) {
  wire::request_limits limits;
  limits.max_copy_bytes = 1024;
  spawn_sn(limits);
  auto spec = head_copy();
  std::vector<wire::copy_group> files;
  ASSERT_EQ(carry_copy(*spec, 1 << 20, files), "");
  auto op = run(std::move(files));
  EXPECT_TRUE(bound.empty());
  head_op->finish(0, 0);
  sched.run();
  EXPECT_EQ(done, 1);
  for (size_t i : {1, 2}) {
    EXPECT_EQ(results[i].error, "servicenode");
    EXPECT_NE(results[i].message.find("service node sn1 refused the request: the files to copy "
                                      "are more than 1024 bytes (sn_copy_max)"),
              std::string::npos)
      << results[i].message;
  }
}

TEST_F(sn_copy_fixture, a_pull_or_a_copy_without_its_files_is_refused_by_the_bind) {
  wire::job_request job;
  job.operation = "nodecopy";
  job.copy.push_back({{"hosts"}, "/etc/"});
  std::shared_ptr<const ssh::copy_spec> spec;
  auto r = bind_copy(job, 4096, spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.messages.front(), "the request names files to copy and carries none");
  job.pull = true;
  r = bind_copy(job, 4096, spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.messages.front().find("xdcp -P"), std::string::npos);
  ssh::copy_spec pull;
  pull.pull = "/var/log/messages";
  std::vector<wire::copy_group> files;
  EXPECT_NE(carry_copy(pull, 1 << 20, files).find("does not go through a service node"),
            std::string::npos);
}

TEST(sn_copy_wire, a_copied_name_that_leaves_its_target_or_a_bad_mode_is_refused) {
  wire::job_request job;
  job.operation = "nodecopy";
  job.targets.push_back(make_target(0, "n1", "", 0, "root"));
  for (const char* name : {"/etc/passwd", "../x", "a/../../x", "a//b", "./a", ""}) {
    job.files = {{"/tmp/", true, {{name, false, 0644, -1, -1, "x"}}}};
    EXPECT_NE(wire::check(job).find("leaves its target"), std::string::npos) << name;
  }
  job.files = {{"/tmp/", true, {{"a", false, 010000, -1, -1, "x"}}}};
  EXPECT_NE(wire::check(job).find("bad mode"), std::string::npos);
  job.files = {{"/tmp/", true, {{"d", true, 0755, -1, -1, "x"}}}};
  EXPECT_NE(wire::check(job).find("directory's data"), std::string::npos);
  job.files = {{"/tmp/", true, {{"d", true, 0755, -1, -1, ""}, {"d/f", false, 0600, 1, 2, "x"}}}};
  EXPECT_EQ(wire::check(job), "");
}

} // namespace

namespace {

/// The seeds of fuzz_wire (fuzz/corpus/wire), as objects: the files must be these objects'
/// bytes in this build's wire format.
std::vector<std::pair<std::string, std::vector<char>>> wire_seeds(caf::actor_system& sys) {
  auto bytes = [&sys](const auto& x) {
    std::vector<char> buf;
    caf::binary_serializer out{sys, buf};
    EXPECT_FALSE(out(x));
    return buf;
  };
  std::vector<std::pair<std::string, std::vector<char>>> out;
  wire::job_request shell;
  shell.id = 1;
  shell.operation = "nodeshell";
  shell.command = "uptime";
  shell.targets = {make_target(0, "n1", "127.0.0.1", 2222, "root")};
  out.emplace_back("nodeshell_one_target", bytes(shell));
  wire::job_request power;
  power.id = 2;
  power.operation = "power";
  power.command = "on";
  out.emplace_back("power_no_target", bytes(power));
  wire::job_request copy;
  copy.id = 42;
  copy.operation = "nodecopy";
  copy.command = "uptime; echo 'done'";
  copy.timeout_ms = 30000;
  copy.fanout = 16;
  copy.copy = {{{"/etc/hosts", "/etc/resolv.conf"}, "/etc/"}};
  copy.recursive = true;
  copy.execute = true;
  copy.targets
    = {make_target(0, "n1", "10.0.0.1", 22, "alice"), make_target(1, "n2", "", 0, "alice")};
  out.emplace_back("nodecopy_two_targets", bytes(copy));
  wire::share_request share;
  share.job = copy;
  share.job.files = {{"/etc/",
                      true,
                      {{"hosts", false, 0644, -1, -1, "127.0.0.1 localhost\n"},
                       {"conf.d", true, 0755, -1, -1, ""},
                       {"conf.d/a.conf", false, 0600, 1700000000, 1700000000, "x=1\n"}}}};
  share.service_node = "sn1";
  share.sealed = "v1.42.1800000000000." + std::string(64, '0');
  out.emplace_back("share_nodecopy_with_files", bytes(share));
  return out;
}

TEST_F(sn_copy_fixture, the_wire_fuzz_seeds_are_requests_of_this_format) {
  // a seed that no longer reads fuzzes nothing: after a change of the wire types,
  // CWS_WRITE_WIRE_SEEDS=1 build/bin/actors_tests --gtest_filter='*fuzz_seeds*' rewrites them
  auto dir = std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "fuzz/corpus/wire";
  for (const auto& [name, bytes] : wire_seeds(sys)) {
    if (std::getenv("CWS_WRITE_WIRE_SEEDS") != nullptr) {
      std::ofstream{dir / name, std::ios::binary}.write(bytes.data(),
                                                        static_cast<std::streamsize>(bytes.size()));
    }
    std::ifstream in{dir / name, std::ios::binary};
    std::vector<char> file{std::istreambuf_iterator<char>{in}, {}};
    EXPECT_TRUE(file == bytes) << "fuzz/corpus/wire/" << name
                               << " is not in this build's wire format: rewrite the seeds with "
                                  "CWS_WRITE_WIRE_SEEDS=1 build/bin/actors_tests "
                                  "--gtest_filter='*fuzz_seeds*'";
    if (name == "share_nodecopy_with_files") {
      caf::binary_deserializer source{sys, file.data(), file.size()};
      wire::share_request share;
      ASSERT_FALSE(source(share));
      EXPECT_EQ(source.remaining(), 0u);
      EXPECT_EQ(wire::check(share), "");
    } else {
      wire::job_request r;
      EXPECT_EQ(actors::read_job_request(sys, file.data(), file.size(), r), "") << name;
    }
  }
}

} // namespace

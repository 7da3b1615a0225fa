// A forged share relayed from one service node to another (docs/service-nodes.md, "Trust
// model"), under CAF's test coordinator with the real seal (api/sn_seal.hpp): a share the head
// sealed for sn1 under sn1's secret, handed to sn2 (as a peer could through BASP's routing),
// is refused by sn2 whether or not the forger renames it, and nothing runs there; sn1 runs its
// own share once and refuses it sent again.

#include <gtest/gtest.h>

#include <caf/binary_serializer.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "../support/fake_operation.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/type_ids.hpp"
#include "api/sn_seal.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
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

struct ends_log {
  std::vector<wire::share_end> ends;
};

sn_sink_actor::behavior_type ends_sink(sn_sink_actor::pointer, std::shared_ptr<ends_log> log) {
  return {
    [](sn_batch_atom, wire::result_batch&) {},
    [log](sn_end_atom, wire::share_end& e) { log->ends.push_back(std::move(e)); },
  };
}

struct sn_refusal_fixture : ::testing::Test {
  caf::actor_system_config cfg;
  caf::actor_system sys{wire_config(cfg)};
  caf::scheduler::test_coordinator& sched
    = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());

  sn_refusal_fixture() {
    sink = sys.spawn(ends_sink, log);
    for (auto* name : {"sn1", "sn2"}) {
      secrets[name] = api::make_sn_secret();
      seen[name] = std::make_shared<api::sn_replay_cache>(1000);
      service_node_config c;
      c.name = name;
      // the link's check, as the service node's daemon makes it: its own secret and name
      c.verify = [this, n = std::string{name}](const wire::share_request& s) {
        return api::verify_sn_request(secrets[n], n, s.sealed, payload(s), api::sn_now_ms(),
                                      *seen[n]);
      };
      c.bind = [this, n = std::string{name}](const wire::job_request& job,
                                             api::node_operation_ptr& out) {
        ++bound[n];
        std::vector<std::string> names;
        for (const auto& t : job.targets) {
          names.push_back(t.name);
        }
        out = std::make_shared<test::fake_operation>(names);
        return api::api_result{};
      };
      sns[name] = spawn_service_node(sys, c);
    }
    sched.run();
  }

  ~sn_refusal_fixture() override {
    for (auto& [n, h] : sns) {
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    }
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// The share's bytes the seal covers: all of it but the seal.
  std::string payload(wire::share_request s) {
    s.sealed.clear();
    std::vector<char> buf;
    caf::binary_serializer out{sys, buf};
    EXPECT_FALSE(out(s));
    return {buf.begin(), buf.end()};
  }

  /// A share of `id` for `name`, sealed by the head under `name`'s secret.
  wire::share_request sealed_for(const std::string& name, uint64_t id) {
    wire::share_request s;
    s.job.operation = "nodeshell";
    s.job.command = "id";
    s.job.id = id;
    s.job.targets.push_back(make_target(0, "n1", "10.0.0.1", 22, "alice"));
    s.service_node = name;
    s.sealed = api::to_text(
      api::seal_sn_request(secrets[name], name, id, api::sn_now_ms() + 60000, payload(s)));
    return s;
  }

  std::string refused_last() {
    return log->ends.empty() ? std::string{"(no end)"} : log->ends.back().refused;
  }

  std::shared_ptr<ends_log> log = std::make_shared<ends_log>();
  sn_sink_actor sink;
  std::map<std::string, std::string> secrets;
  std::map<std::string, std::shared_ptr<api::sn_replay_cache>> seen;
  std::map<std::string, sn_executor_actor> sns;
  std::map<std::string, int> bound;
};

TEST_F(sn_refusal_fixture, a_share_sealed_for_sn1_and_relayed_to_sn2_is_refused_there) {
  auto share = sealed_for("sn1", 7);
  // as it is: sn2 sees it is sn1's
  caf::anon_send(sns["sn2"], sn_run_atom::value, share, sink);
  sched.run();
  EXPECT_NE(refused_last().find("the share is for service node 'sn1', this is 'sn2'"),
            std::string::npos)
    << refused_last();
  // renamed to sn2 by the forger: its seal is sn1's, under sn1's secret, over another name
  auto forged = share;
  forged.service_node = "sn2";
  caf::anon_send(sns["sn2"], sn_run_atom::value, forged, sink);
  sched.run();
  EXPECT_NE(refused_last(), "");
  EXPECT_NE(refused_last(), "(no end)");
  EXPECT_EQ(bound["sn2"], 0) << "nothing ran on sn2";
  // a new id and expiry written over the seal's text do not help either
  forged.sealed = api::to_text(
    api::seal_sn_request(secrets["sn1"], "sn2", 8, api::sn_now_ms() + 60000, payload(forged)));
  caf::anon_send(sns["sn2"], sn_run_atom::value, forged, sink);
  sched.run();
  EXPECT_NE(refused_last(), "");
  EXPECT_EQ(bound["sn2"], 0);
  // sn1 runs its own, once; sent again it is refused
  caf::anon_send(sns["sn1"], sn_run_atom::value, share, sink);
  sched.run();
  EXPECT_EQ(bound["sn1"], 1);
  caf::anon_send(sns["sn1"], sn_run_atom::value, share, sink);
  sched.run();
  EXPECT_EQ(bound["sn1"], 1);
  EXPECT_NE(refused_last(), "");
}

} // namespace

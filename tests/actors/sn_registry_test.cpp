// The head's service-node registry (actors/sn_registry.hpp) under CAF's test coordinator:
// heartbeats count for a service node only with the proof of its secret, bound to its current
// registration and rising, never because of the sender's actor address (which CAF's BASP lets
// a peer write). Another registered peer cannot keep a service node alive, a replayed heartbeat
// counts for nothing, and one relayed unchanged still counts (only the secret makes one).

#include <gtest/gtest.h>

#include <caf/send.hpp>

#include <chrono>
#include <thread>

#include "../store/temp_home.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/sn_registry.hpp"
#include "actors/type_ids.hpp"
#include "api/sn_seal.hpp"
#include "base/published_file.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace std::chrono;
using namespace cws;
namespace wire = cws::api::wire;

struct sn_registry_fixture : test::coordinated_system, ::testing::Test {
  sn_registry_fixture() {
    std::filesystem::create_directories(dir.path / "secrets");
    for (auto* name : {"sn1", "sn2"}) {
      secrets[name] = api::make_sn_secret();
      base::publish_file(dir.path / "secrets" / name, secrets[name] + "\n", 0600);
    }
    actors::sn_registry_config c;
    c.secrets = dir.path / "secrets";
    c.heartbeat = milliseconds(10);
    c.dead_after = milliseconds(60);
    c.head = "head";
    c.board = board;
    reg = actors::spawn_sn_registry(sys, c);
    sched.run();
  }

  ~sn_registry_fixture() override {
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
    for (auto& e : executors) {
      caf::anon_send_exit(e, caf::exit_reason::user_shutdown);
    }
    sched.run();
  }

  /// Registers `name` from `who`: @returns the challenge its heartbeats are bound to.
  std::string join(caf::scoped_actor& who, const std::string& name) {
    who->send(reg, wire::sn_hello{api::sn_protocol_version, name});
    sched.run();
    std::string nonce;
    who->receive([&](const wire::sn_challenge& c) { nonce = c.nonce; });
    EXPECT_FALSE(nonce.empty());
    // the executor the head will send work to (a service node that runs nothing here)
    executors.push_back(actors::spawn_service_node(sys, {}));
    who->send(reg,
              wire::sn_join{
                api::sn_protocol_version, name, nonce,
                api::sn_registration_proof(secrets[name], name, api::sn_protocol_version, nonce)},
              executors.back());
    sched.run();
    who->receive([&](const wire::sn_welcome& w) { EXPECT_EQ(w.refused, ""); });
    return nonce;
  }

  /// A heartbeat of `name` proven under `secret` for `nonce`.
  static wire::sn_heartbeat beat(const std::string& name, const std::string& secret,
                                 const std::string& nonce, uint64_t seq, uint32_t load = 0) {
    return {seq, load, name,
            api::sn_heartbeat_proof(secret, api::sn_heartbeat_from::service_node, name, nonce, seq,
                                    load)};
  }

  actors::sn_status status(const std::string& name) const {
    for (auto& s : board->snapshot()) {
      if (s.name == name) {
        return s;
      }
    }
    return {};
  }

  test::temp_dir dir;
  std::map<std::string, std::string> secrets;
  std::shared_ptr<actors::sn_board> board = std::make_shared<actors::sn_board>();
  actors::sn_registry_actor reg;
  std::vector<actors::sn_executor_actor> executors;
  caf::scoped_actor rogue{sys, true};
};

TEST_F(sn_registry_fixture, a_heartbeat_counts_only_with_its_service_nodes_proof) {
  auto nonce1 = join(self, "sn1");
  auto nonce2 = join(rogue, "sn2");
  self->send(reg, beat("sn1", secrets["sn1"], nonce1, 1, 7));
  sched.run();
  EXPECT_EQ(status("sn1").heartbeats, 1u);
  EXPECT_EQ(status("sn1").load, 7u);
  // sn2, registered, claims sn1: under its own secret, or with sn1's name and no proof
  rogue->send(reg, beat("sn1", secrets["sn2"], nonce1, 2, 99));
  rogue->send(reg, wire::sn_heartbeat{3, 99, "sn1", ""});
  // even from sn1's own actor address (what BASP lets a peer write), a heartbeat without the
  // proof is nothing
  caf::send_as(caf::actor_cast<caf::actor>(self), reg, wire::sn_heartbeat{4, 99, "sn1", "00"});
  // sn1's proof for an old registration's challenge, or its last heartbeat again
  self->send(reg, beat("sn1", secrets["sn1"], nonce2, 5, 99));
  rogue->send(reg, beat("sn1", secrets["sn1"], nonce1, 1, 99));
  sched.run();
  EXPECT_EQ(status("sn1").heartbeats, 1u);
  EXPECT_EQ(status("sn1").load, 7u);
  EXPECT_EQ(status("sn2").heartbeats, 0u);
  // a heartbeat sn1 made, relayed by anyone, is sn1's: only its secret makes one
  rogue->send(reg, beat("sn1", secrets["sn1"], nonce1, 6, 3));
  sched.run();
  EXPECT_EQ(status("sn1").heartbeats, 2u);
  EXPECT_EQ(status("sn1").load, 3u);
}

TEST_F(sn_registry_fixture, another_peers_heartbeats_do_not_keep_a_silent_service_node_up) {
  auto nonce1 = join(self, "sn1");
  auto nonce2 = join(rogue, "sn2");
  ASSERT_TRUE(status("sn1").registered);
  // sn1 falls silent; sn2 heartbeats for itself and, forged, for sn1, past the dead time
  auto until = steady_clock::now() + milliseconds(150);
  for (uint64_t seq = 1; steady_clock::now() < until; ++seq) {
    rogue->send(reg, beat("sn2", secrets["sn2"], nonce2, seq));
    rogue->send(reg, beat("sn1", secrets["sn2"], nonce1, seq));
    caf::send_as(caf::actor_cast<caf::actor>(self), reg, wire::sn_heartbeat{seq, 0, "sn1", ""});
    sched.run();
    sched.trigger_timeouts(); // the registry's tick: the dead-time check
    sched.run();
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_FALSE(status("sn1").registered);
  EXPECT_NE(status("sn1").left.find("silent"), std::string::npos) << status("sn1").left;
  EXPECT_TRUE(status("sn2").registered);
}

TEST_F(sn_registry_fixture, the_heads_heartbeats_carry_the_heads_proof_for_that_service_node) {
  auto nonce1 = join(self, "sn1");
  sched.trigger_timeouts();
  sched.run();
  bool got = false;
  self->receive(
    [&](const wire::sn_heartbeat& hb) {
      got = true;
      EXPECT_EQ(hb.name, "sn1");
      EXPECT_TRUE(api::sn_check_heartbeat(secrets["sn1"], api::sn_heartbeat_from::head, "sn1",
                                          nonce1, hb.seq, hb.load, hb.proof));
      // never the service node's own direction: a heartbeat cannot be reflected back
      EXPECT_FALSE(api::sn_check_heartbeat(secrets["sn1"], api::sn_heartbeat_from::service_node,
                                           "sn1", nonce1, hb.seq, hb.load, hb.proof));
    },
    caf::after(seconds(1)) >> [] {});
  EXPECT_TRUE(got);
}

} // namespace

// The wire types between two actor systems in one process over CAF's network layer (BASP on
// 127.0.0.1): a job request goes out, a result batch comes back, every field intact.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <chrono>

#include "actors/type_ids.hpp"

namespace {

using namespace cws;
namespace wire = cws::api::wire;

struct remote_config : caf::actor_system_config {
  remote_config() {
    set("logger.file-verbosity", caf::atom("quiet"));
    set("scheduler.max-threads", 2);
    actors::add_wire_types(*this);
    load<caf::io::middleman>();
  }
};

/// A stand-in service node: each target of a request gets a result naming it.
caf::behavior fake_service_node(caf::event_based_actor*) {
  return {[](const wire::job_request& r) {
    wire::result_batch b;
    b.id = r.id;
    for (const auto& t : r.targets) {
      wire::node_result n;
      n.index = t.index;
      n.name = t.name;
      n.rc = 0;
      n.out = r.command + " on " + t.address + ":" + std::to_string(t.port) + " as " + t.user;
      b.results.push_back(std::move(n));
    }
    return b;
  }};
}

TEST(wire_remote, a_request_and_its_results_cross_between_two_actor_systems) {
  remote_config head_cfg;
  remote_config sn_cfg;
  caf::actor_system sn{sn_cfg};
  caf::actor_system head{head_cfg};
  auto node = sn.spawn(fake_service_node);
  auto port = sn.middleman().publish(node, 0, "127.0.0.1");
  ASSERT_TRUE(port) << sn.render(port.error());
  auto remote = head.middleman().remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(remote) << head.render(remote.error());
  wire::job_request req;
  req.id = 5;
  req.operation = "nodeshell";
  req.command = "uptime";
  req.targets = {{0, "n1", "10.0.0.1", 22, "alice"}, {1, "n2", "10.0.0.2", 2222, "alice"}};
  caf::scoped_actor self{head};
  bool answered = false;
  self->request(*remote, std::chrono::seconds(10), req)
    .receive(
      [&](const wire::result_batch& b) {
        answered = true;
        EXPECT_EQ(b.id, 5u);
        ASSERT_EQ(b.results.size(), 2u);
        EXPECT_EQ(b.results[1].name, "n2");
        EXPECT_EQ(b.results[1].out, "uptime on 10.0.0.2:2222 as alice");
      },
      [&](const caf::error& e) { ADD_FAILURE() << head.render(e); });
  EXPECT_TRUE(answered);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

} // namespace

#pragma once

// An actor system on CAF's deterministic test coordinator: nothing runs until the test says
// `sched.run()`, timers fire only when triggered. The base of the actor tests' fixtures.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

namespace cws::test {

struct coordinated_system {
  static caf::actor_system_config& init(caf::actor_system_config& cfg) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    return cfg;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys{init(cfg)};
  caf::scoped_actor self{sys, true};
  caf::scheduler::test_coordinator& sched
    = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
};

} // namespace cws::test

#pragma once

// nodestat planning: a call's nodes become TCP port probes (probe/prober.hpp) of the ports
// xCAT's nodestat probes, sshd first, as one node_operation; and the reading of a node's
// probe as xCAT's nodestat reads it (docs/cli.md, "nodestat").

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.hpp"
#include "api/node_operation.hpp"
#include "api/operations.hpp"
#include "probe/prober.hpp"

namespace cws::api {

/// An application nodestat looks for, by the TCP port it listens on.
struct app_port {
  std::string name;
  uint16_t port = 0;
};

/// How nodestat probes. Every limit is explicit (docs/configuration.md).
struct nodestat_config {
  /// Per-node deadline: a node that answers on no port by then is `noping`.
  std::chrono::milliseconds timeout{4000};
  /// Nodes probed at once (each holds one socket per port while it is probed).
  size_t fanout = 1024;
  /// The sshd port of nodes without `sshport`.
  uint16_t ssh_port = 22;
  /// The applications probed besides sshd (always first), in order.
  std::vector<app_port> apps;
  /// xCAT's installer status port, asked `stat` when the node's currstate is install*.
  uint16_t installer_port = 3001;
};

/// Parses `name:port,name:port` (the `nodestat_ports` setting); empty gives none.
/// @throws std::invalid_argument naming the bad item.
std::vector<app_port> parse_app_ports(std::string_view text);

/// What nodestat found on one node, in xCAT's words.
struct node_state {
  /// What nodestat prints: `sshd`, `https,sshd`, `noping`, the installer's or the boot
  /// state (`boot`, `install rhels9...`), `ping`, `nosuchhost`; empty after an error.
  std::string shown;
  /// nodelist.status as `nodestat -u` writes it: `ping` when an application answered,
  /// `noping`, else what is shown.
  std::string status;
  /// `sshd=up,https=down,...` in probe order: what `-u` merges into nodelist.appstatus.
  std::string appstatus;
};

/// Reads probe `o` of a node whose ports were sshd then `apps` (then the installer port if
/// `queried`), whose currstate is `currstate`.
node_state interpret(const probe::outcome& o, const std::vector<std::string>& apps,
                     const std::string& currstate, bool queried);

/// xCAT's merge of fresh `app=state` pairs into an appstatus value: each app's state is
/// replaced where it is, or appended.
std::string merge_appstatus(const std::string& old, const std::string& fresh);

/// nodestat over the call's nodes on the prober: each node's result carries what is shown
/// (`out`); `states()` holds every node's reading once the operation is done.
class nodestat_operation : public node_operation {
 public:
  struct plan;

  explicit nodestat_operation(std::shared_ptr<plan> p);
  ~nodestat_operation() override;

  const std::vector<std::string>& nodes() const override;
  void start(result_fn on_result, std::function<void()> on_done) override;
  void cancel() override;

  /// Each node's reading, in node order (complete after `on_done`).
  const std::vector<node_state>& states() const;

 private:
  std::shared_ptr<plan> plan_;
  std::atomic<uint64_t> run_{0};
};

/// Plans nodestat of the call's verified noderange: addresses (`ip`, else the name), sshd
/// ports (`sshport`, else `cfg.ssh_port`) and boot states (`currstate`) in one read.
/// @returns a failure (bad or missing nodes, stale authorization), or success with `out` set.
api_result plan_nodestat(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const nodestat_config& cfg,
                         std::shared_ptr<probe::prober> prober,
                         std::shared_ptr<nodestat_operation>& out);

/// One node to probe, resolved elsewhere (a service node's share: no store).
struct probe_node {
  std::string name;
  std::string address;
  /// Its sshd port (0: `cfg.ssh_port`).
  uint16_t port = 0;
  /// Its boot state (currstate).
  std::string currstate;
};

/// Plans nodestat of `nodes` as plan_nodestat plans its nodes: sshd then `cfg.apps`, the
/// installer's port for a node being installed, `cfg.timeout` per node, `fanout` at once.
std::shared_ptr<nodestat_operation> plan_probe_nodes(std::vector<probe_node> nodes,
                                                     const nodestat_config& cfg, size_t fanout,
                                                     std::shared_ptr<probe::prober> prober);

} // namespace cws::api

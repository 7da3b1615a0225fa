#include "api/nodestat.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "store/cluster_view.hpp"

namespace cws::api {

std::vector<app_port> parse_app_ports(std::string_view text) {
  std::vector<app_port> out;
  size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find(',', pos);
    auto item = text.substr(pos, end == std::string_view::npos ? text.size() - pos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ') {
        s.remove_prefix(1);
      }
      while (!s.empty() && s.back() == ' ') {
        s.remove_suffix(1);
      }
      return s;
    };
    item = trim(item);
    auto colon = item.find(':');
    auto bad = [&] {
      return std::invalid_argument("'" + std::string{item}
                                   + "' is not name:port (a name of letters, digits, _ or -, "
                                     "a port from 1 to 65535)");
    };
    if (colon == std::string_view::npos || colon == 0) {
      throw bad();
    }
    auto name = item.substr(0, colon);
    auto digits = item.substr(colon + 1);
    bool name_ok = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    bool digits_ok
      = !digits.empty() && digits.size() <= 5
        && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    long port = digits_ok ? std::stol(std::string{digits}) : 0;
    if (!name_ok || port < 1 || port > 65535) {
      throw bad();
    }
    out.push_back({std::string{name}, static_cast<uint16_t>(port)});
  }
  if (out.size() + 2 > probe::max_ports) {
    throw std::invalid_argument("at most " + std::to_string(probe::max_ports - 2)
                                + " applications besides sshd");
  }
  return out;
}

node_state interpret(const probe::outcome& o, const std::vector<std::string>& apps,
                     const std::string& currstate, bool queried) {
  node_state s;
  if (o.error == "resolve") {
    s.shown = s.status = "nosuchhost"; // xCAT's word (fping's "address not found")
    return s;
  }
  if (!o.error.empty()) {
    return s;
  }
  std::vector<std::string> open;
  for (size_t i = 0; i < apps.size() && i < o.ports.size(); ++i) {
    bool up = o.ports[i] == probe::port_state::open;
    if (up) {
      open.push_back(apps[i]);
    }
    s.appstatus += (i > 0 ? "," : "") + apps[i] + (up ? "=up" : "=down");
  }
  if (!open.empty()) {
    std::sort(open.begin(), open.end()); // as xCAT's nmap reading does
    for (const auto& a : open) {
      s.shown += (s.shown.empty() ? "" : ",") + a;
    }
    s.status = "ping";
    return s;
  }
  if (!o.alive()) {
    s.shown = s.status = "noping";
    return s;
  }
  // up, but no application answers: what the installer says, else the boot state
  std::string answer = queried ? o.answer.substr(0, o.answer.find('\n')) : std::string{};
  while (!answer.empty() && (answer.back() == '\r' || answer.back() == ' ')) {
    answer.pop_back();
  }
  s.shown = !answer.empty() ? answer : !currstate.empty() ? currstate : "ping";
  s.status = s.shown;
  return s;
}

std::string merge_appstatus(const std::string& old, const std::string& fresh) {
  // both are comma lists of app=state
  auto split = [](const std::string& text) {
    std::vector<std::pair<std::string, std::string>> pairs;
    size_t pos = 0;
    while (pos <= text.size() && !text.empty()) {
      auto end = text.find(',', pos);
      auto item = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      auto eq = item.find('=');
      if (!item.empty()) {
        pairs.emplace_back(item.substr(0, eq),
                           eq == std::string::npos ? std::string{} : item.substr(eq + 1));
      }
      if (end == std::string::npos) {
        break;
      }
      pos = end + 1;
    }
    return pairs;
  };
  auto merged = split(old);
  for (auto& pair : split(fresh)) {
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const auto& p) { return p.first == pair.first; });
    if (it != merged.end()) {
      it->second = pair.second;
    } else {
      merged.push_back(std::move(pair));
    }
  }
  std::string out;
  for (const auto& [app, state] : merged) {
    out += (out.empty() ? "" : ",") + app + "=" + state;
  }
  return out;
}

namespace {

/// What the prober's callbacks read and fill; shared with them, since they may outlive the
/// operation's owner. (Never the prober itself: its last owner must not be its own thread.)
struct readings {
  std::vector<std::string> names;
  std::vector<std::string> apps;
  std::vector<std::string> currstate;
  std::vector<node_state> states;
};

} // namespace

/// A planned nodestat.
struct nodestat_operation::plan {
  std::shared_ptr<probe::prober> prober;
  std::vector<probe::target> targets;
  std::shared_ptr<readings> r = std::make_shared<readings>();
  size_t fanout = 1;
  std::chrono::milliseconds timeout{0};
};

nodestat_operation::nodestat_operation(std::shared_ptr<plan> p) : plan_(std::move(p)) {
  // nop
}

nodestat_operation::~nodestat_operation() = default;

const std::vector<std::string>& nodestat_operation::nodes() const {
  return plan_->r->names;
}

const std::vector<node_state>& nodestat_operation::states() const {
  return plan_->r->states;
}

void nodestat_operation::start(result_fn on_result, std::function<void()> on_done) {
  auto p = plan_->r;
  p->states.resize(p->names.size());
  auto targets = std::move(plan_->targets);
  auto id = plan_->prober->run(
    std::move(targets), plan_->fanout, plan_->timeout,
    [p, on_result = std::move(on_result)](size_t index, probe::outcome o) {
      bool queried = o.ports.size() > p->apps.size();
      auto& s = p->states[index];
      s = interpret(o, p->apps, p->currstate[index], queried);
      base::node_result r;
      r.name = p->names[index];
      r.rc = o.error.empty() ? 0 : -1;
      r.out = s.shown;
      r.error = o.error == "resolve" ? std::string{} : o.error;
      r.message = o.message;
      on_result(index, std::move(r));
    },
    std::move(on_done));
  run_.store(id);
}

void nodestat_operation::cancel() {
  if (auto id = run_.load(); id != 0) {
    plan_->prober->cancel(id);
  }
}

std::shared_ptr<nodestat_operation> plan_probe_nodes(std::vector<probe_node> nodes,
                                                     const nodestat_config& cfg, size_t fanout,
                                                     std::shared_ptr<probe::prober> prober) {
  auto p = std::make_shared<nodestat_operation::plan>();
  p->prober = std::move(prober);
  p->fanout = std::max<size_t>(1, fanout);
  p->timeout = cfg.timeout;
  auto& rd = *p->r;
  rd.apps.push_back("sshd");
  for (const auto& a : cfg.apps) {
    rd.apps.push_back(a.name);
  }
  p->targets.reserve(nodes.size());
  rd.names.reserve(nodes.size());
  rd.currstate.reserve(nodes.size());
  for (auto& t : nodes) {
    probe::target pt;
    pt.node = t.name;
    pt.address = std::move(t.address);
    pt.ports.push_back(t.port != 0 ? t.port : cfg.ssh_port);
    for (const auto& a : cfg.apps) {
      pt.ports.push_back(a.port);
    }
    if (t.currstate.rfind("install", 0) == 0 && cfg.installer_port != 0) {
      // a node being installed: xCAT's installer answers `stat` on its status port
      pt.query_index = pt.ports.size();
      pt.ports.push_back(cfg.installer_port);
      pt.query = "stat \n";
    }
    rd.names.push_back(std::move(t.name));
    rd.currstate.push_back(std::move(t.currstate));
    p->targets.push_back(std::move(pt));
  }
  return std::make_shared<nodestat_operation>(std::move(p));
}

api_result plan_nodestat(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const nodestat_config& cfg,
                         std::shared_ptr<probe::prober> prober,
                         std::shared_ptr<nodestat_operation>& out) {
  std::vector<probe_node> nodes;
  try {
    // one read: the targets and their boot states from the same snapshot
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return api_result::failure(errc::stale, "authorization is stale");
    }
    store::cluster_view view{txn};
    std::vector<node_target> found;
    if (auto r = node_targets(view, call, auth, caller_options(opts, auth), found); !r.ok()) {
      return r;
    }
    nodes.reserve(found.size());
    for (auto& t : found) {
      auto state = view.attribute(t.name, "currstate");
      nodes.push_back({std::move(t.name), std::move(t.address), t.port, std::move(state)});
    }
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
  out = plan_probe_nodes(std::move(nodes), cfg,
                         effective_fanout(call.fanout, cfg.fanout, cfg.fanout), std::move(prober));
  return {};
}

} // namespace cws::api

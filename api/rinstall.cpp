#include "api/rinstall.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "api/operations.hpp"
#include "api/targets.hpp"
#include "base/text.hpp"

namespace cws::api {

namespace {

using base::node_errc;
using base::node_result;

/// How far one node goes.
enum class route : uint8_t {
  ipmi, ///< nodeset, rsetboot net, rpower boot
  kvm,  ///< nodeset, rpower boot (the domain boots as its definition says, as rinstall.pm)
};

/// The operation: one step at a time over the nodes still going, each step planned when it
/// starts (so it reads what the step before wrote).
class rinstall_operation : public node_operation,
                           public std::enable_shared_from_this<rinstall_operation> {
 public:
  rinstall_operation(const store::database& db, api_call call, authorization auth,
                     store::noderange_options opts, rinstall_drivers d, rinstall_request req,
                     std::vector<std::string> nodes, std::vector<node_result> early,
                     std::vector<route> routes)
      : db_(db), call_(std::move(call)), auth_(std::move(auth)), opts_(std::move(opts)),
        d_(std::move(d)), req_(std::move(req)), nodes_(std::move(nodes)), early_(std::move(early)),
        routes_(std::move(routes)), done_(nodes_.size(), false), out_(nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      index_.emplace(nodes_[i], i);
    }
  }

  const std::vector<std::string>& nodes() const override {
    return nodes_;
  }

  void start(result_fn on_result, std::function<void()> on_done) override {
    on_result_ = std::move(on_result);
    on_done_ = std::move(on_done);
    std::vector<std::string> going;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!early_[i].name.empty()) {
        finish(i, std::move(early_[i]));
      } else {
        going.push_back(nodes_[i]);
      }
    }
    if (going.empty()) {
      end();
      return;
    }
    auto self = shared_from_this();
    (*d_.boot_states)(going, req_.action, [self](std::vector<node_result> results) {
      self->after_nodeset(std::move(results));
    });
  }

  void cancel() override {
    node_operation_ptr step;
    {
      std::lock_guard<std::mutex> lock{mu_};
      if (cancelled_) {
        return;
      }
      cancelled_ = true;
      step = step_;
    }
    if (step) {
      step->cancel(); // its nodes end as cancelled through the step's results
    }
  }

 private:
  void after_nodeset(std::vector<node_result> results) {
    std::vector<std::string> next;
    for (auto& r : results) {
      auto it = index_.find(r.name);
      if (it == index_.end()) {
        continue;
      }
      if (r.failed()) {
        if (r.error.empty()) {
          r.error = to_string(node_errc::boot_state);
        }
        finish(it->second, std::move(r));
      } else {
        out_[it->second] = "nodeset: " + r.out + "\n";
        next.push_back(r.name);
      }
    }
    // rsetboot net for the ipmi nodes; kvm nodes go straight to rpower boot
    std::vector<std::string> setboot;
    for (const auto& n : next) {
      if (routes_[index_.at(n)] == route::ipmi) {
        setboot.push_back(n);
      } else {
        power_.push_back(n);
      }
    }
    run_step(operation::nextboot, req_.uefi ? "net -u" : "net", std::move(setboot), "rsetboot");
  }

  /// Plans and runs `op command` over `names`; then the next step (rsetboot -> rpower -> end).
  void run_step(operation op, const std::string& command, std::vector<std::string> names,
                const char* label) {
    bool last = op == operation::power;
    if (names.empty()) {
      if (last) {
        end();
      } else {
        run_step(operation::power, "boot", std::move(power_), "rpower");
      }
      return;
    }
    bool cancelled = false;
    {
      std::lock_guard<std::mutex> lock{mu_};
      cancelled = cancelled_;
    }
    if (cancelled) {
      for (const auto& n : names) {
        finish(index_.at(n), node_result::failure(n, node_errc::cancelled,
                                                  base::node_message::cancelled_unstarted));
      }
      end();
      return;
    }
    api_call sub;
    sub.op = op;
    sub.command = command;
    sub.type = store::object_type::node;
    sub.fanout = call_.fanout;
    auto auth = auth_;
    auth.nodes = std::make_shared<const std::vector<std::string>>(names);
    node_operation_ptr step;
    auto planned = plan_hardware(db_, sub, auth, opts_, d_.hardware, d_.drivers, step);
    if (!planned.ok()) {
      auto why
        = planned.messages.empty() ? std::string{"cannot plan "} + label : planned.messages.front();
      for (const auto& n : names) {
        finish(index_.at(n), node_result::failure(n, node_errc::unsupported, why));
      }
      end();
      return;
    }
    {
      std::lock_guard<std::mutex> lock{mu_};
      step_ = step;
    }
    auto self = shared_from_this();
    std::string what = label;
    step->start(
      [self, step, last, what](size_t i, node_result r) {
        const auto& name = step->nodes()[i];
        auto at = self->index_.at(name);
        if (r.failed()) {
          r.name = name;
          r.message = what + ": " + r.message;
          self->finish(at, std::move(r));
          return;
        }
        auto answer = base::trim(r.out);
        node_result ok;
        {
          std::lock_guard<std::mutex> lock{self->mu_};
          self->out_[at] += what + ": " + std::string{answer} + "\n";
          if (!last) {
            self->power_.push_back(name); // on to rpower boot
            return;
          }
          ok.out = self->out_[at];
        }
        ok.name = name;
        ok.rc = 0;
        self->finish(at, std::move(ok));
      },
      [self, last] {
        if (last) {
          self->end();
        } else {
          std::vector<std::string> power;
          {
            std::lock_guard<std::mutex> lock{self->mu_};
            power.swap(self->power_);
          }
          // nodes keep noderange order in the next step
          std::sort(power.begin(), power.end(), [&](const auto& a, const auto& b) {
            return self->index_.at(a) < self->index_.at(b);
          });
          self->run_step(operation::power, "boot", std::move(power), "rpower");
        }
      });
  }

  void finish(size_t i, node_result r) {
    {
      std::lock_guard<std::mutex> lock{mu_};
      if (done_[i]) {
        return;
      }
      done_[i] = true;
    }
    r.name = nodes_[i];
    on_result_(i, std::move(r));
  }

  /// Every node still without a result gets one (none should be left), then on_done once.
  void end() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      bool open = false;
      {
        std::lock_guard<std::mutex> lock{mu_};
        open = !done_[i];
      }
      if (open) {
        finish(i, node_result::failure(nodes_[i], node_errc::cancelled,
                                       base::node_message::cancelled_unstarted));
      }
    }
    std::function<void()> done;
    {
      std::lock_guard<std::mutex> lock{mu_};
      done.swap(on_done_);
      step_.reset();
    }
    if (done) {
      done();
    }
  }

  const store::database& db_;
  api_call call_;
  authorization auth_;
  store::noderange_options opts_;
  rinstall_drivers d_;
  rinstall_request req_;
  std::vector<std::string> nodes_;
  std::vector<node_result> early_;
  std::vector<route> routes_;
  std::unordered_map<std::string, size_t> index_;
  result_fn on_result_;
  std::function<void()> on_done_;
  std::mutex mu_;
  std::vector<bool> done_;
  std::vector<std::string> out_;
  std::vector<std::string> power_;
  node_operation_ptr step_;
  bool cancelled_ = false;
};

} // namespace

const char* const rinstall_usage
  = "Usage:\n"
    "   rinstall <noderange> [boot | shell | runcmd=<command>] [-c|--console] [-u|--uefimode] "
    "[-V|--verbose]\n"
    "   rinstall <noderange> [osimage[=<imagename>]] [--noupdateinitrd] [--ignorekernelchk] "
    "[-c|--console] [-u|--uefimode] [-V|--verbose]\n"
    "   rinstall <noderange> runimage=<task>\n"
    "   rinstall [-h|--help|-v|--version]\n";

std::optional<rinstall_request> parse_rinstall(std::string_view command, std::string& error) {
  rinstall_request req;
  req.action.what = nodeset_action::kind::osimage;
  bool have_state = false;
  for (auto w : base::split_words(command, " \t")) {
    std::string word{w};
    if (word == "-u" || word == "--uefimode") {
      req.uefi = true;
      continue;
    }
    if (have_state || (!word.empty() && word[0] == '-')) {
      error = "Invalid option " + word;
      return std::nullopt;
    }
    have_state = true;
    if (word != "boot" && word != "shell" && word != "osimage" && word.rfind("osimage=", 0) != 0) {
      error = "Invalid option " + word;
      return std::nullopt;
    }
    auto action = parse_nodeset_action(word, error);
    if (!action) {
      return std::nullopt;
    }
    req.action = *action;
  }
  return req;
}

std::string rinstall_command(const rinstall_request& request) {
  using k = nodeset_action::kind;
  std::string out;
  switch (request.action.what) {
    case k::boot: out = "boot"; break;
    case k::shell: out = "shell"; break;
    default:
      out = request.action.image.empty() ? "osimage" : "osimage=" + request.action.image;
      break;
  }
  return request.uefi ? out + " -u" : out;
}

std::vector<node_result> write_boot_states_each(store::write_txn& t,
                                                const std::vector<std::string>& nodes,
                                                const nodeset_action& action) {
  std::vector<std::string> states;
  auto errors = set_boot_state_each(t, nodes, action, states);
  std::vector<node_result> out;
  out.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!errors[i].empty()) {
      out.push_back(node_result::failure(nodes[i], node_errc::boot_state, errors[i]));
    } else {
      node_result r;
      r.name = nodes[i];
      r.rc = 0;
      r.out = states[i];
      out.push_back(std::move(r));
    }
  }
  return out;
}

api_result plan_rinstall(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const rinstall_drivers& d,
                         node_operation_ptr& out) {
  std::string error;
  auto req = parse_rinstall(call.command, error);
  if (!req) {
    return api_result::failure({error});
  }
  if (!d.boot_states) {
    return api_result::failure(errc::unavailable, "rinstall is not enabled on this service.");
  }
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return api_result::failure(errc::stale, "authorization is stale");
    }
    store::cluster_view view{txn};
    std::vector<std::string> names;
    if (auto r = verified_nodes(view, call, auth, caller_options(opts, auth), names); !r.ok()) {
      return r;
    }
    if (req->action.what == nodeset_action::kind::osimage && !req->action.image.empty()
        && !txn.exists(store::object_type::osimage, req->action.image)) {
      // rinstall.pm checks the image before anything
      return api_result::failure(
        {"Cannot find the OS image " + req->action.image + " in the osimage table."});
    }
    std::vector<node_result> early(names.size());
    std::vector<route> routes(names.size(), route::ipmi);
    for (size_t i = 0; i < names.size(); ++i) {
      auto mgt = view.attribute(names[i], "mgt");
      if (mgt == "kvm") {
        routes[i] = route::kvm;
      } else if (mgt.empty()) {
        early[i] = node_result::failure(names[i], node_errc::unsupported,
                                        names[i]
                                          + ": 'mgt' attribute not defined in 'nodehm' "
                                            "table.");
      } else if (mgt != "ipmi") {
        early[i] = node_result::failure(names[i], node_errc::unsupported,
                                        names[i]
                                          + ": rinstall only support nodehm.mgt type 'ipmi', "
                                            "'kvm'.");
      }
    }
    out = std::make_shared<rinstall_operation>(db, call, auth, opts, d, *req, std::move(names),
                                               std::move(early), std::move(routes));
    return {};
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
}

} // namespace cws::api

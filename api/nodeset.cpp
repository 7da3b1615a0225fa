#include "api/nodeset.hpp"

#include <unistd.h>

#include <filesystem>
#include <unordered_map>

#include "api/install_token.hpp"
#include "base/published_file.hpp"
#include "base/text.hpp"

namespace cws::api {

namespace {

using store::object_type;

const char* const osimage_prefix = "osimage";

/// An osimage as nodeset reads it (looked up once per call, whatever the number of nodes).
struct image_info {
  bool found = false;
  std::string provmethod;
  std::string osvers;
  std::string osarch;
  std::string profile;
  std::string rootimgdir;
  std::string boottarget;
  /// netboot/statelite: the refusal (xCAT's words when the image is not generated).
  std::string diskless_refusal;
};

/// This host's name, as xCAT's messages name the management node.
std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) {
    return "localhost";
  }
  return buf;
}

/// Why nodeset refuses a netboot or statelite image (`name`, of provmethod `method`): the
/// image service (genimage, packimage, liteimg, a root image served to diskless nodes) is not
/// part of clusterws. An image that is not generated gets xCAT's own words (anaconda.pm
/// mknetboot); one that is (made by xCAT) gets clusterws's refusal.
std::string diskless_refusal(const std::string& name, const image_info& img,
                             const std::string& installdir) {
  auto dir = img.rootimgdir;
  if (dir.empty()) {
    dir = (installdir.empty() ? std::string{"/install"} : installdir) + "/netboot/" + img.osvers
          + "/" + img.osarch + "/" + img.profile;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir + "/kernel", ec)) {
    const char* tool = img.provmethod == "statelite" ? "liteimg" : "packimage";
    return "Did you run \"genimage\" before running \"" + std::string{tool}
           + "\"? kernel cannot be found at " + dir + "/kernel on " + host_name();
  }
  return "osimage " + name + " has provmethod " + img.provmethod
         + ": clusterws does not serve diskless (netboot, statelite) images; use an image with "
           "provmethod=install";
}

/// One node's new own values: attribute -> value ("" erases it).
using node_changes = std::vector<std::pair<std::string, std::string>>;

void set_value(node_changes& c, const char* attr, std::string value) {
  for (auto& [k, v] : c) {
    if (k == attr) {
      v = std::move(value);
      return;
    }
  }
  c.emplace_back(attr, std::move(value));
}

class planner {
 public:
  planner(const store::cluster_view& view, store::outcome& out) : view_(view), out_(out) {
    // nop
  }

  /// Plans `action` for `node` into `changes`; returns its new currstate ("" after an error).
  std::string plan(const std::string& node, const nodeset_action& action, node_changes& changes,
                   int depth = 0) {
    using k = nodeset_action::kind;
    switch (action.what) {
      case k::osimage: return plan_osimage(node, action.image, changes);
      case k::boot: return plan_boot(node, changes);
      case k::shell:
        if (view_.attribute(node, "arch").empty()) {
          return fail("No archictecture defined in nodetype table for " + node); // (sic)
        }
        set_value(changes, "currstate", "shell");
        return "shell";
      case k::offline: set_value(changes, "currstate", "offline"); return "offline";
      case k::stat: return boot_state_of(view_, node);
      case k::next: return plan_next(node, changes, depth);
    }
    return {};
  }

 private:
  std::string fail(std::string message) {
    out_.errors.push_back(std::move(message));
    return {};
  }

  const image_info& image(const std::string& name) {
    auto it = images_.find(name);
    if (it != images_.end()) {
      return it->second;
    }
    image_info info;
    if (auto rec = view_.txn().get(object_type::osimage, name)) {
      info.found = true;
      info.provmethod = std::string{rec->find("provmethod").value_or("")};
      info.osvers = std::string{rec->find("osvers").value_or("")};
      info.osarch = std::string{rec->find("osarch").value_or("")};
      info.profile = std::string{rec->find("profile").value_or("")};
      info.rootimgdir = std::string{rec->find("rootimgdir").value_or("")};
      info.boottarget = std::string{rec->find("boottarget").value_or("")};
      if (info.provmethod == "netboot" || info.provmethod == "statelite") {
        std::string installdir;
        if (auto site = view_.txn().get(object_type::site, "clustersite")) {
          installdir = std::string{site->find("installdir").value_or("")};
        }
        info.diskless_refusal = diskless_refusal(name, info, installdir);
      }
    }
    return images_.emplace(name, std::move(info)).first->second;
  }

  /// destiny.pm setdestiny, `osimage[=name]`: the image's provmethod, osvers, osarch and
  /// profile become the node's nodetype values; currstate `install <os>-<arch>-<profile>`.
  std::string plan_osimage(const std::string& node, std::string name, node_changes& changes) {
    if (name.empty()) {
      name = view_.attribute(node, "provmethod");
      if (name == "install" || name == "netboot" || name == "statelite") {
        name.clear(); // the old os/arch/profile form names no image
      }
      if (name.empty()) {
        return fail(node + ": OS image name must be specified.");
      }
    }
    const auto& img = image(name);
    if (!img.found) {
      return fail("Cannot find the OS image " + name + " on the osimage table.");
    }
    if (img.provmethod.empty()) {
      return fail("osimage.provmethod for " + name + " must be set.");
    }
    bool failed = false;
    auto need = [&](const std::string& value, const char* what) {
      if (value.empty()) {
        fail(std::string{"nodetype."} + what + " not defined for " + node);
        failed = true;
      }
    };
    need(img.osvers, "os");
    need(img.osarch, "arch");
    need(img.profile, "profile");
    if (failed) {
      return {};
    }
    if (!img.diskless_refusal.empty()) {
      return fail(node + ": " + img.diskless_refusal);
    }
    if (!img.boottarget.empty() || is_boottarget_os(img.osvers)) {
      std::string error;
      if (!find_boot_target(view_.txn(), img.boottarget, img.osvers, img.profile, error)) {
        return fail(node + ": " + error);
      }
    }
    set_value(changes, "provmethod", name);
    set_value(changes, "profile", img.profile);
    set_value(changes, "os", img.osvers);
    set_value(changes, "arch", img.osarch);
    auto state = img.provmethod + " " + img.osvers + "-" + img.osarch + "-" + img.profile;
    set_value(changes, "currstate", state);
    if (img.provmethod != "netboot" && img.provmethod != "statelite") {
      set_value(changes, "currchain", "boot");
    }
    return state;
  }

  /// `boot`: currstate boot; nodetype.provmethod blanked unless it installs (destiny.pm: a
  /// diskless image must not come back at the next `nodeset osimage`).
  std::string plan_boot(const std::string& node, node_changes& changes) {
    set_value(changes, "currstate", "boot");
    auto method = view_.attribute(node, "provmethod");
    if (!method.empty()) {
      if (method != "install" && method != "netboot") {
        const auto& img = image(method);
        if (!img.provmethod.empty()) {
          method = img.provmethod;
        }
      }
      if (method != "install") {
        set_value(changes, "provmethod", "");
      }
    }
    return "boot";
  }

  /// destiny.pm nextdestiny: the first state of chain.currchain (chain.chain when empty)
  /// becomes the node's, the rest stays (the last one sticks).
  std::string plan_next(const std::string& node, node_changes& changes, int depth) {
    auto chain = view_.attribute(node, "currchain");
    if (chain.empty()) {
      chain = view_.attribute(node, "chain");
    }
    if (chain.empty()) {
      return fail(node + ": no path in chain.currchain or chain.chain to move along.");
    }
    std::vector<std::string> steps;
    std::string step;
    for (char c : chain + ",") {
      if (c == ',' || c == ';') {
        if (!step.empty()) {
          steps.push_back(step);
        }
        step.clear();
      } else {
        step += c;
      }
    }
    if (steps.empty()) {
      return fail(node + ": no path in chain.currchain or chain.chain to move along.");
    }
    std::string rest;
    for (size_t i = 1; i < steps.size(); ++i) {
      rest += (rest.empty() ? "" : ",") + steps[i];
    }
    set_value(changes, "currchain", rest.empty() ? steps.front() : rest);
    std::string error;
    auto next = parse_nodeset_action(steps.front(), error);
    if (!next || next->what == nodeset_action::kind::stat
        || (next->what == nodeset_action::kind::next && depth > 0)) {
      return fail(node + ": Unknown state " + steps.front() + " requested");
    }
    return plan(node, *next, changes, depth + 1);
  }

  const store::cluster_view& view_;
  store::outcome& out_;
  std::unordered_map<std::string, image_info> images_;
};

} // namespace

bool is_boottarget_os(std::string_view os) {
  return os == "boottarget" || os == "target" || os == "bt";
}

std::optional<boot_target> find_boot_target(const store::read_txn& txn,
                                            std::string_view image_boottarget, std::string_view os,
                                            std::string_view profile, std::string& error) {
  std::string name{image_boottarget};
  if (name.empty()) {
    if (!is_boottarget_os(os)) {
      return std::nullopt;
    }
    name = std::string{profile};
  }
  auto rec = name.empty() ? std::nullopt : txn.get(object_type::boottarget, name);
  if (!rec) {
    error = image_boottarget.empty()
              ? std::string{profile} + " in nodetype table was not defined in boottarget table"
              : "boottarget " + name + " of the osimage is not defined in the boottarget table";
    return std::nullopt;
  }
  boot_target bt;
  bt.name = name;
  bt.kernel = std::string{rec->find("kernel").value_or("")};
  bt.initrd = std::string{rec->find("initrd").value_or("")};
  bt.kcmdline = std::string{rec->find("kcmdline").value_or("")};
  if (bt.kernel.empty()) {
    error = "boottarget " + name + " has no kernel";
    return std::nullopt;
  }
  return bt;
}

const char* const nodeset_usage
  = "Usage: nodeset <noderange> [shell|boot|runcmd=bmcsetup|osimage[=<imagename>]|offline]";

std::optional<nodeset_action> parse_nodeset_action(std::string_view word, std::string& error) {
  using k = nodeset_action::kind;
  nodeset_action a;
  if (word == "boot") {
    a.what = k::boot;
  } else if (word == "shell") {
    a.what = k::shell;
  } else if (word == "offline") {
    a.what = k::offline;
  } else if (word == "stat") {
    a.what = k::stat;
  } else if (word == "next") {
    a.what = k::next;
  } else if (word == osimage_prefix) {
    a.what = k::osimage;
  } else if (word.substr(0, 8) == "osimage=") {
    a.what = k::osimage;
    a.image = std::string{word.substr(8)};
    if (a.image.empty()) {
      error = "OS image name must be specified.";
      return std::nullopt;
    }
  } else {
    error = "Unknown state " + std::string{word} + " requested";
    return std::nullopt;
  }
  return a;
}

std::string nodeset_word(const nodeset_action& action) {
  using k = nodeset_action::kind;
  switch (action.what) {
    case k::osimage: return action.image.empty() ? "osimage" : "osimage=" + action.image;
    case k::boot: return "boot";
    case k::shell: return "shell";
    case k::offline: return "offline";
    case k::stat: return "stat";
    case k::next: return "next";
  }
  return "stat";
}

std::string boot_state_of(const store::cluster_view& view, std::string_view node) {
  auto state = view.attribute(node, "currstate");
  return state.empty() ? "offline" : state;
}

store::outcome boot_states(const store::cluster_view& view, const std::vector<std::string>& nodes) {
  store::outcome out;
  out.info.reserve(nodes.size());
  for (const auto& n : nodes) {
    out.info.push_back(n + ": " + boot_state_of(view, n));
  }
  return out;
}

namespace {

/// Writes the planned changes of `nodes[i]` for every i where `keep(i)`, arming or ending
/// each node's install token; xCAT's `node: <state>` info lines for them.
template<class Keep>
void write_planned(store::write_txn& t, const std::vector<std::string>& nodes,
                   const std::vector<node_changes>& changes, const std::vector<std::string>& states,
                   store::outcome& out, Keep keep) {
  out.info.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!keep(i)) {
      continue;
    }
    auto rec = t.get(object_type::node, nodes[i]);
    auto attrs = rec ? rec->to_map() : store::attr_map{};
    bool differs = false;
    for (const auto& [k, v] : changes[i]) {
      auto it = attrs.find(k);
      auto old = it == attrs.end() ? std::string{} : it->second;
      if (old != v) {
        differs = true;
        attrs[k] = v; // (an empty value is not stored)
      }
    }
    if (differs) {
      t.put(object_type::node, nodes[i], attrs);
      ++out.count;
    }
    // an install (or netboot) arms a fresh token, anything else ends the one armed
    const auto& s = states[i];
    if (s.rfind("install ", 0) == 0 || s.rfind("netboot ", 0) == 0 || s.rfind("statelite ", 0) == 0
        || s.rfind("boottarget ", 0) == 0) {
      arm_install_tokens(t, {nodes[i]});
    } else {
      disarm_install_token(t, nodes[i]);
    }
    out.info.push_back(nodes[i] + ": " + states[i]);
  }
}

} // namespace

store::outcome set_boot_state(store::write_txn& t, const std::vector<std::string>& nodes,
                              const nodeset_action& action) {
  store::cluster_view view{t};
  if (action.what == nodeset_action::kind::stat) {
    return boot_states(view, nodes);
  }
  store::outcome out;
  planner p{view, out};
  // plan every node first (reads only), so an error writes nothing at all
  std::vector<node_changes> changes(nodes.size());
  std::vector<std::string> states(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    states[i] = p.plan(nodes[i], action, changes[i]);
  }
  if (!out.errors.empty()) {
    throw store::rejected{std::move(out)};
  }
  write_planned(t, nodes, changes, states, out, [](size_t) { return true; });
  return out;
}

store::outcome boot_state_dry_run(const store::cluster_view& view,
                                  const std::vector<std::string>& nodes,
                                  const nodeset_action& action) {
  if (action.what == nodeset_action::kind::stat) {
    return boot_states(view, nodes);
  }
  store::outcome out;
  planner p{view, out};
  std::vector<node_changes> changes(nodes.size());
  std::vector<std::string> states(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    states[i] = p.plan(nodes[i], action, changes[i]);
  }
  if (!out.errors.empty()) {
    throw store::rejected{std::move(out)};
  }
  std::string text;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    auto rec = view.txn().get(object_type::node, node);
    auto attrs = rec ? rec->to_map() : store::attr_map{};
    std::string before;
    std::string after;
    for (const auto& [k, v] : changes[i]) {
      auto it = attrs.find(k);
      auto old = it == attrs.end() ? std::string{} : it->second;
      if (old != v) {
        // xCAT's table.column: chain.currstate, nodetype.os, ...
        auto column = (k == "currstate" || k == "currchain" ? "chain." : "nodetype.") + k;
        before += old.empty() ? "" : column + "=" + old + "\n";
        after += v.empty() ? "" : column + "=" + v + "\n";
      }
    }
    auto diff = base::unified_diff(before, after, node + " (store)", node + " (nodeset)");
    text += diff.empty() ? node + ": unchanged\n" : diff;
    const auto& s = states[i];
    if (s.rfind("install ", 0) == 0 || s.rfind("netboot ", 0) == 0 || s.rfind("statelite ", 0) == 0
        || s.rfind("boottarget ", 0) == 0) {
      text += "would arm the install token of " + node + "\n";
    } else if (install_token_armed(view.txn(), node)) {
      text += "would end the install token of " + node + "\n";
    }
  }
  out.info = base::output_lines(text);
  if (!out.info.empty() && out.info.back().empty()) {
    out.info.pop_back();
  }
  return out;
}

std::vector<std::string> set_boot_state_each(store::write_txn& t,
                                             const std::vector<std::string>& nodes,
                                             const nodeset_action& action,
                                             std::vector<std::string>& states) {
  store::cluster_view view{t};
  store::outcome out;
  planner p{view, out};
  std::vector<node_changes> changes(nodes.size());
  std::vector<std::string> errors(nodes.size());
  states.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto before = out.errors.size();
    states[i] = p.plan(nodes[i], action, changes[i]);
    for (auto k = before; k < out.errors.size(); ++k) {
      errors[i] += (errors[i].empty() ? "" : " ") + out.errors[k];
    }
  }
  out.errors.clear();
  write_planned(t, nodes, changes, states, out, [&](size_t i) { return errors[i].empty(); });
  return errors;
}

} // namespace cws::api

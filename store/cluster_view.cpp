#include "store/cluster_view.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "store/error.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"

namespace cws::store {

namespace {

/// `defaults` prepended to `own` as lsdef does with the xcatdefaults postscripts row.
std::string prepend(const std::string& defaults, std::string_view own) {
  if (defaults.empty()) {
    return std::string{own};
  }
  if (own.empty()) {
    return defaults;
  }
  return defaults + "," + std::string{own};
}

} // namespace

cluster_view::cluster_view(const read_txn& txn, bool xcatdefaults)
    : txn_(txn), xcatdefaults_(xcatdefaults) {
  // nop
}

const std::vector<std::string>& cluster_view::nodes() const {
  if (!nodes_) {
    nodes_ = txn_.names(object_type::node);
  }
  return *nodes_;
}

bool cluster_view::is_node(std::string_view name) const {
  return txn_.exists(object_type::node, name);
}

const attr_map* cluster_view::group_record(std::string_view name) const {
  auto it = groups_.find(std::string{name});
  if (it == groups_.end()) {
    std::optional<attr_map> rec;
    if (auto r = txn_.get(object_type::group, name)) {
      rec = r->to_map();
    }
    it = groups_.emplace(std::string{name}, std::move(rec)).first;
  }
  return it->second ? &*it->second : nullptr;
}

const std::string* cluster_view::dynamic_selections(std::string_view name) const {
  const attr_map* rec = group_record(name);
  if (rec == nullptr) {
    return nullptr;
  }
  auto type = rec->find("grouptype");
  auto where = rec->find("wherevals");
  bool dynamic = type != rec->end() && type->second == "dynamic" && where != rec->end();
  return dynamic ? &where->second : nullptr;
}

std::vector<std::string> cluster_view::dynamic_tests(std::string_view name) const {
  std::vector<std::string> out;
  if (const std::string* where = dynamic_selections(name)) {
    for (auto one : split_wherevals(*where)) {
      try {
        if (auto s = selector::parse(one)) {
          out.push_back(s->attribute());
        }
      } catch (const error&) {
        // a selection that does not parse is not tested by group() either
      }
    }
  }
  return out;
}

std::optional<std::vector<std::string>> cluster_view::group(std::string_view name) const {
  const attr_map* rec = group_record(name);
  if (rec != nullptr) {
    if (const std::string* where = dynamic_selections(name)) {
      // dynamic group: nodes passing every `attr<op>value` of wherevals (`::`-separated)
      std::vector<selector> sels;
      for (auto one : split_wherevals(*where)) {
        if (auto s = selector::parse(one)) {
          sels.push_back(std::move(*s));
        }
      }
      std::vector<std::string> out;
      for (const auto& n : nodes()) {
        bool ok = !sels.empty();
        for (const auto& s : sels) {
          ok = ok && s.matches(attribute(n, s.attribute()));
        }
        if (ok) {
          out.push_back(n);
        }
      }
      return out;
    }
  }
  auto members = txn_.members(name);
  if (members.empty() && rec == nullptr) {
    return std::nullopt;
  }
  return members;
}

std::string cluster_view::for_node(std::string_view node, std::string value) const {
  if (!regex_value::is_expression(value)) {
    return value;
  }
  auto it = expressions_.find(value);
  if (it == expressions_.end()) {
    std::string error;
    // checked when written; a value stored before that check is shown as it is
    it = expressions_.emplace(value, regex_value::parse(value, error)).first;
  }
  return it->second ? it->second->evaluate(node) : value;
}

std::string cluster_view::inherited(std::string_view node, record_view own, std::string_view attr,
                                    std::string* group) const {
  if (auto v = own.find(attr)) {
    return is_nodelist_attribute(attr) ? std::string{*v} : for_node(node, std::string{*v});
  }
  if (is_nodelist_attribute(attr)) {
    return {};
  }
  // the first of the node's groups, in order, that has a value provides it
  for (const auto& g : base::split_list(own.find("groups").value_or(""))) {
    if (const attr_map* rec = group_record(g)) {
      if (auto it = rec->find(attr); it != rec->end()) {
        auto value = for_node(node, it->second);
        if (group != nullptr && !value.empty()) {
          *group = g;
        }
        return value;
      }
    }
  }
  return {};
}

std::string cluster_view::attribute(std::string_view node, std::string_view attr) const {
  auto own = txn_.get(object_type::node, node);
  return own ? inherited(node, *own, attr, nullptr) : std::string{};
}

std::string cluster_view::attribute(std::string_view node, std::string_view attr,
                                    std::string& group) const {
  group.clear();
  auto own = txn_.get(object_type::node, node);
  return own ? inherited(node, *own, attr, &group) : std::string{};
}

bool cluster_view::hidden(std::string_view name) const {
  auto own = txn_.get(object_type::node, name);
  return own && own->find("hidden").value_or("") == "1";
}

bool cluster_view::exists(object_type t, std::string_view name) const {
  if (t == object_type::group) {
    return group_record(name) != nullptr || !txn_.members(name).empty();
  }
  return txn_.exists(t, name);
}

std::optional<attr_map> cluster_view::display(object_type t, std::string_view name) const {
  if (t == object_type::group) {
    auto members = group(name);
    if (!members) {
      return std::nullopt;
    }
    attr_map out;
    if (const attr_map* rec = group_record(name)) {
      out = *rec;
    }
    out["members"] = base::join_list(*members); // always shown, even when empty
    return out;
  }
  auto rec = txn_.get(t, name);
  if (!rec) {
    return std::nullopt;
  }
  attr_map out = rec->to_map();
  if (t == object_type::node) {
    for (const auto& g : base::split_list(out["groups"])) {
      if (const attr_map* grec = group_record(g)) {
        for (const auto& [k, v] : *grec) {
          if (is_valid_attribute(object_type::node, k) && !is_nodelist_attribute(k)) {
            out.emplace(k, v); // the node's own value wins
          }
        }
      }
    }
    for (auto& [k, v] : out) {
      // (the cheap test first: this runs for every attribute of every node listed)
      if (regex_value::is_expression(v) && !is_nodelist_attribute(k)) {
        v = for_node(name, std::move(v));
      }
    }
    // xCAT's getobjdefs reads a conditional attribute (bmc, bmcusername, ...) only from the
    // table its condition selects: with no qualifying mgt lsdef does not show it
    auto value_of = [&](std::string_view a) -> std::string {
      auto it = out.find(std::string{a});
      return it == out.end() ? std::string{} : it->second;
    };
    for (auto it = out.begin(); it != out.end();) {
      const auto& conditions = attribute_conditions(it->first);
      bool shown = conditions.empty()
                   || std::any_of(conditions.begin(), conditions.end(),
                                  [&](std::string_view c) { return condition_holds(c, value_of); });
      it = shown ? std::next(it) : out.erase(it);
    }
    finish_node(out);
  }
  return out;
}

void cluster_view::finish_node(attr_map& attrs) const {
  for (const char* list : {"postscripts", "postbootscripts"}) {
    if (xcatdefaults_) { // lsdef -z leaves them out (DBobjectdefs.pm defls)
      attrs[list] = prepend(txn_.meta(std::string{"xcatdefaults."} + list), attrs[list]);
    }
  }
  for (auto it = attrs.begin(); it != attrs.end();) {
    it = it->second.empty() ? attrs.erase(it) : std::next(it);
  }
}

} // namespace cws::store

#include "store/definitions.hpp"

#include <algorithm>
#include <cstdio>

#include "base/text.hpp"
#include "store/credentials.hpp"
#include "store/error.hpp"
#include "store/policy.hpp"
#include "store/regex_value.hpp"
#include "store/templates.hpp"

namespace cws::store {

namespace {

constexpr std::string_view some_errors
  = "One or more errors occured when attempting to create or modify xCAT object definitions.";

/// "" and blank values clear an attribute.
std::string normalize_value(std::string_view v) {
  if (v.find_first_not_of(" \t") == std::string_view::npos) {
    return {};
  }
  return std::string{v};
}

std::string created_message(size_t n) {
  return std::to_string(n) + " object definitions have been created or modified.";
}

bool is_policy_priority(std::string_view s) {
  bool digit = false;
  bool dot = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digit;
}

/// The first character of `v` that a value may not hold: a line break or another C0/C1
/// control (TAB excepted), DEL, U+2028 or U+2029; its code point, or -1 if there is none.
/// Such characters start a forged line for a terminal or a line splitter reading lsdef.
long forbidden_character(std::string_view v) {
  for (size_t i = 0; i < v.size(); ++i) {
    auto c = static_cast<unsigned char>(v[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      return c;
    }
    auto next = i + 1 < v.size() ? static_cast<unsigned char>(v[i + 1]) : 0;
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      return next; // U+0080..U+009F (C1, NEL among them) in UTF-8
    }
    if (c == 0xe2 && next == 0x80 && i + 2 < v.size()) {
      auto third = static_cast<unsigned char>(v[i + 2]);
      if (third == 0xa8 || third == 0xa9) {
        return 0x2000 + third - 0x80; // U+2028, U+2029
      }
    }
  }
  return -1;
}

/// One object a change writes: pointers into a change_request (whose objects share their
/// attributes: no copy per node of a large noderange) or into an object_change.
struct target {
  object_type type;
  const std::string* name;
  const std::vector<attr_change>* attrs;
  /// change_request::check_conditions; also: the scripts of the xcatdefaults row are left out
  /// of postscripts and postbootscripts with xCAT's warning (the table tools keep them).
  bool conditions = true;
};

/// The objects of `req`; site has the single object `clustersite`.
std::vector<target> targets_of(const change_request& req) {
  static const std::string clustersite = "clustersite";
  std::vector<target> out;
  if (req.type == object_type::site) {
    out.push_back({req.type, &clustersite, &req.attrs});
    return out;
  }
  out.reserve(req.names.size());
  for (const auto& n : req.names) {
    out.push_back({req.type, &n, &req.attrs, req.check_conditions});
  }
  return out;
}

/// Validates everything that does not need the database; false with errors filled in. Shared
/// attribute lists are checked once.
bool validate(const std::vector<target>& targets, outcome& out) {
  const std::vector<attr_change>* checked = nullptr;
  for (const auto& tg : targets) {
    if (tg.attrs != checked) {
      for (const auto& a : *tg.attrs) {
        if (!is_valid_attribute(tg.type, a.name)) {
          out.errors.push_back(invalid_attribute_message(a.name, tg.type));
        } else if (auto msg = check_value(tg.type, a.name, a.value); !msg.empty()) {
          out.errors.push_back(std::move(msg));
        }
      }
      checked = tg.attrs;
    }
    if (auto msg = check_object_name(tg.type, *tg.name); !msg.empty()) {
      out.errors.push_back(msg);
    }
  }
  return out.errors.empty();
}

/// The items of a list value: comma-separated, or `::`-separated for `selections` (a dynamic
/// group's wherevals, whose selections may hold commas: DBobjUtils.pm's setobjdefs).
std::vector<std::string> list_items(std::string_view value, bool selections) {
  if (!selections) {
    return base::split_list(value);
  }
  std::vector<std::string> out;
  for (auto one : split_wherevals(value)) {
    if (!base::trim(one).empty()) {
      out.emplace_back(base::trim(one));
    }
  }
  return out;
}

/// The new value of `attr` after applying `value` in `mode`.
std::string apply_list(list_mode mode, const std::string& old, const std::string& value,
                       const std::string& attr, const std::string& obj, bool selections,
                       outcome& out) {
  if (mode == list_mode::set) {
    return value;
  }
  auto items = list_items(old, selections);
  for (const auto& item : list_items(value, selections)) {
    auto it = std::find(items.begin(), items.end(), item);
    if (mode == list_mode::append) {
      if (it == items.end()) {
        items.push_back(item);
      }
    } else if (it != items.end()) {
      items.erase(it);
    } else {
      out.warnings.push_back(item + " is not in the attribute of '" + attr + "' for the '" + obj
                             + "' definition.");
    }
  }
  if (!selections) {
    return base::join_list(items);
  }
  std::string joined;
  for (const auto& item : items) {
    joined += (joined.empty() ? "" : "::") + item;
  }
  return joined;
}

/// `scripts` (the new postscripts or postbootscripts of `obj`) without those every node runs
/// already (the xcatdefaults row), with xCAT's warning for each (DBobjUtils.pm setobjdefs).
std::string without_defaults(const read_txn& t, const std::string& obj, const std::string& attr,
                             const std::string& scripts, outcome& out) {
  auto defaults = base::split_list(t.meta("xcatdefaults." + attr));
  std::vector<std::string> kept;
  for (auto& s : base::split_list(scripts)) {
    if (std::find(defaults.begin(), defaults.end(), s) != defaults.end()) {
      out.warnings.push_back(obj + ": " + attr + " '" + s
                             + "' is already included in the 'xcatdefaults'.");
    } else {
      kept.push_back(std::move(s));
    }
  }
  return base::join_list(kept);
}

/// Adds (or removes) group `g` to (from) node `n`'s groups list.
void set_membership(write_txn& t, const std::string& n, const std::string& g, bool member,
                    outcome& out) {
  auto rec = t.get(object_type::node, n);
  if (!rec) {
    out.errors.push_back(not_found_message(n, object_type::node));
    throw rejected{out};
  }
  auto attrs = rec->to_map();
  auto groups = base::split_list(attrs["groups"]);
  auto it = std::find(groups.begin(), groups.end(), g);
  if (member && it == groups.end()) {
    groups.push_back(g);
  } else if (!member && it != groups.end()) {
    groups.erase(it);
  } else {
    return;
  }
  attrs["groups"] = base::join_list(groups);
  t.put(object_type::node, n, attrs);
}

/// Group `members=`: membership lives in the nodes' groups attribute.
void change_members(write_txn& t, const std::string& g, list_mode mode, const std::string& value,
                    outcome& out) {
  auto wanted = base::split_list(value);
  if (mode == list_mode::set) {
    for (const auto& n : t.members(g)) {
      if (std::find(wanted.begin(), wanted.end(), n) == wanted.end()) {
        set_membership(t, n, g, false, out);
      }
    }
  }
  for (const auto& n : wanted) {
    set_membership(t, n, g, mode != list_mode::remove, out);
  }
}

/// The grouptype group `name` has after `changes` (existing attributes `attrs`).
std::string_view final_grouptype(const attr_map& attrs, const std::vector<attr_change>& changes) {
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    if (it->name == "grouptype") {
      return it->value;
    }
  }
  auto it = attrs.find("grouptype");
  return it == attrs.end() ? std::string_view{} : std::string_view{it->second};
}

/// xCAT's only_if (DBobjUtils.pm validate_only_if_attrs): each conditional attribute the
/// target sets must have one of its conditions met by the object as it will be (`attrs`), or
/// for a node by the first of its groups with a value, as the node inherits it. An error
/// per attribute refused.
void check_conditions(const read_txn& t, const target& tg, const attr_map& attrs, outcome& out) {
  std::vector<std::string_view> refused;
  auto value_of = [&](std::string_view attr) -> std::string {
    if (auto it = attrs.find(std::string{attr}); it != attrs.end() && !it->second.empty()) {
      return it->second;
    }
    if (tg.type != object_type::node) {
      return {};
    }
    auto groups = attrs.find("groups");
    for (const auto& g : base::split_list(groups == attrs.end() ? "" : groups->second)) {
      if (auto rec = t.get(object_type::group, g)) {
        if (auto v = rec->find(attr); v && !v->empty()) {
          return std::string{*v};
        }
      }
    }
    return {};
  };
  for (const auto& a : *tg.attrs) {
    if (normalize_value(a.value).empty()
        || std::find(refused.begin(), refused.end(), a.name) != refused.end()) {
      continue; // clearing a value needs no condition
    }
    auto conditions = attribute_conditions(a.name);
    if (conditions.empty()
        || std::any_of(conditions.begin(), conditions.end(),
                       [&](std::string_view c) { return condition_holds(c, value_of); })) {
      continue;
    }
    refused.push_back(a.name);
    out.errors.push_back(condition_refusal(a.name, conditions));
  }
}

/// Applies the target's attributes to it (existing attributes `attrs`) and writes it.
void write_object(write_txn& t, const target& tg, list_mode mode, attr_map attrs, outcome& out) {
  auto key = key_attribute(tg.type);
  // a dynamic group's members are computed from wherevals; xCAT edits members of static
  // groups only (lsdef -z shows them, and restoring them must not touch the nodes)
  bool dynamic
    = tg.type == object_type::group && base::trim(final_grouptype(attrs, *tg.attrs)) == "dynamic";
  for (const auto& a : *tg.attrs) {
    if (a.name == key) {
      continue; // the key is the object's name
    }
    auto value = normalize_value(a.value);
    if (tg.type == object_type::group && a.name == "members") {
      if (!dynamic) {
        change_members(t, *tg.name, mode, value, out);
      }
      continue;
    }
    bool selections = dynamic && a.name == "wherevals";
    auto merged = apply_list(mode, attrs[a.name], value, a.name, *tg.name, selections, out);
    if (tg.conditions && (a.name == "postscripts" || a.name == "postbootscripts")
        && (tg.type == object_type::node || tg.type == object_type::group)) {
      merged = without_defaults(t, *tg.name, a.name, merged, out);
    }
    if (merged.empty()) {
      attrs.erase(a.name);
    } else {
      attrs[a.name] = merged;
    }
  }
  if (dynamic && attrs.count("wherevals") == 0) {
    // xCAT's defmk/defch: a dynamic group is its selections (chdef -m must not take them all)
    out.errors.push_back("The 'where' attributes and values were not provided for dynamic group '"
                         + *tg.name + "'.");
    throw rejected{out};
  }
  if (tg.type == object_type::network) {
    // xCAT's networks check: a network is its address and mask, never one without
    auto net = attrs.find("net");
    auto mask = attrs.find("mask");
    if (net == attrs.end() || net->second.empty() || mask == attrs.end() || mask->second.empty()) {
      out.errors.push_back("Net or mask value should not be empty for xCAT network object '"
                           + *tg.name + "'.");
    }
    if (!out.ok()) {
      throw rejected{out}; // the whole command writes nothing
    }
  }
  if (tg.conditions && (tg.type == object_type::node || tg.type == object_type::group)) {
    check_conditions(t, tg, attrs, out); // (the caller refuses the change if any fails)
  }
  t.put(tg.type, *tg.name, attrs);
}

bool has_groups(const std::vector<attr_change>& attrs) {
  return std::any_of(attrs.begin(), attrs.end(), [](const attr_change& a) {
    return a.name == "groups" && !normalize_value(a.value).empty();
  });
}

/// Puts groups last, so that their `members` may name nodes created by the same change, and
/// returns which targets exist before anything is written (as xCAT's defmk looks them up
/// first): a group is not taken for existing because a node of the same input names it.
std::vector<bool> groups_last(write_txn& t, std::vector<target>& targets) {
  std::stable_partition(targets.begin(), targets.end(),
                        [](const target& tg) { return tg.type != object_type::group; });
  cluster_view view{t};
  std::vector<bool> existed;
  existed.reserve(targets.size());
  for (const auto& tg : targets) {
    existed.push_back(view.exists(tg.type, *tg.name));
  }
  return existed;
}

outcome make_targets(write_txn& t, std::vector<target> targets, bool force) {
  outcome out;
  if (!validate(targets, out)) {
    throw rejected{out};
  }
  for (const auto& tg : targets) {
    if (tg.type == object_type::node && !has_groups(*tg.attrs)) {
      out.errors.push_back("Attribute 'groups' is not specified for node '" + *tg.name
                           + "', skipping to the next node.");
    }
  }
  if (!out.ok()) {
    out.errors.emplace_back(some_errors);
    throw rejected{out};
  }
  auto existed = groups_last(t, targets);
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& tg = targets[i];
    if (existed[i]) {
      if (!force) {
        out.warnings.push_back("A definition for '" + *tg.name
                               + "' already exists. No changes will be made.  Run again with "
                                 "'-f' option to force replace.");
        continue;
      }
      t.erase(tg.type, *tg.name); // -f replaces, it does not merge
    }
    write_object(t, tg, list_mode::set, {}, out);
    ++out.count;
  }
  if (!out.ok()) {
    out.errors.emplace_back(some_errors); // nothing is written (docs/compatibility.md)
    throw rejected{out};
  }
  if (out.count == 0) {
    out.errors.push_back(created_message(0));
  }
  if (!out.ok()) {
    throw rejected{out};
  }
  out.info.push_back(created_message(out.count));
  return out;
}

outcome change_targets(write_txn& t, std::vector<target> targets, list_mode mode) {
  outcome out;
  if (!validate(targets, out)) {
    throw rejected{out};
  }
  auto existed = groups_last(t, targets);
  std::vector<std::string> created;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& tg = targets[i];
    attr_map attrs;
    if (auto rec = t.get(tg.type, *tg.name)) {
      attrs = rec->to_map();
    }
    if (!existed[i]) {
      if (mode == list_mode::remove) {
        out.errors.push_back("The '-m' option is not valid since the '" + *tg.name
                             + "' definition does not exist.");
        continue;
      }
      if (tg.type == object_type::node && !has_groups(*tg.attrs)) {
        out.errors.push_back("Attribute 'groups' is not specified for node '" + *tg.name
                             + "', skipping to the next node.");
        continue;
      }
      created.push_back(*tg.name);
    }
    write_object(t, tg, mode, std::move(attrs), out);
    ++out.count;
  }
  if (!out.ok()) {
    out.errors.emplace_back(some_errors);
    throw rejected{out};
  }
  out.info.push_back(out.count == 0 ? "No object definitions have been created or modified."
                                    : created_message(out.count));
  if (!created.empty()) {
    out.info.push_back("New object definitions '" + base::join_list(created)
                       + "' have been created.");
  }
  return out;
}

std::vector<target> targets_of(const std::vector<object_change>& objects) {
  static const std::string clustersite = "clustersite";
  std::vector<target> out;
  out.reserve(objects.size());
  for (const auto& o : objects) {
    out.push_back({o.type, o.type == object_type::site ? &clustersite : &o.name, &o.attrs});
  }
  return out;
}

} // namespace

std::string not_found_message(std::string_view name, object_type t) {
  return "Could not find an object named '" + std::string{name} + "' of type '"
         + std::string{type_name(t)} + "'.";
}

std::string check_wherevals(std::string_view w) {
  for (auto one : split_wherevals(w)) {
    try {
      if (!selector::parse(one)) {
        return "'" + std::string{one} + "' is not attr==val, attr!=val, attr=~re or attr!~re.";
      }
    } catch (const error& e) {
      return e.what();
    }
  }
  return {};
}

std::string check_value(object_type type, const std::string& attr, std::string_view v) {
  if (auto c = forbidden_character(v); c == '\n' || c == '\r') {
    return "The value of '" + attr + "' cannot contain a line break.";
  } else if (c >= 0) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04lX", static_cast<unsigned long>(c));
    return "The value of '" + attr + "' cannot contain the control character " + code + ".";
  }
  if ((type == object_type::node || type == object_type::group) && regex_value::is_expression(v)
      && !is_nodelist_attribute(attr)) {
    std::string error;
    if (!regex_value::parse(v, error)) {
      return "The value of '" + attr + "' is not a valid xCAT expression: " + error + ".";
    }
  }
  if (type == object_type::group && attr == "wherevals" && !normalize_value(v).empty()) {
    if (auto msg = check_wherevals(v); !msg.empty()) {
      return "The value of 'wherevals' is not valid: " + msg;
    }
  }
  if (type == object_type::policy && attr == "rule" && !normalize_value(v).empty()
      && !is_policy_rule(v)) {
    return "The policy rule '" + std::string{v}
           + "' is not valid: use allow, accept, trusted or deny.";
  }
  if (type == object_type::site && attr == "tokenexpiredays" && !normalize_value(v).empty()
      && !is_token_days(v)) {
    return "The value of 'tokenexpiredays' must be 'never' or a number of days greater than 0 "
           "and at most "
           + std::to_string(max_token_days) + ".";
  }
  return {};
}

std::string check_change_target(object_type t, std::string_view spec,
                                const std::vector<std::string>& names) {
  if (t == object_type::site) {
    return {};
  }
  if ((t == object_type::node || t == object_type::group)
      && spec.find_first_of("'\"") != std::string_view::npos) {
    return "The object name '" + std::string{spec} + "' is not valid.";
  }
  if (names.empty()) {
    return "No object names were provided.";
  }
  return {};
}

std::string check_object_name(object_type t, std::string_view name) {
  bool node_like = t == object_type::node || t == object_type::group;
  std::string_view forbidden = node_like ? ",/\\'\"`[]()@^=~!+*?$&|;<>{}#%" : ",/\\'\"`";
  // `.` and `..` are path steps wherever a name is a path (REST URLs, files named after
  // objects): no object of any type may have them as its name
  bool ok
    = !name.empty() && name.size() <= 255 && name.front() != '-' && name != "." && name != "..";
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    ok = ok && u > 0x20 && u < 0x7f && forbidden.find(c) == std::string_view::npos;
  }
  if (ok && t == object_type::policy && !is_policy_priority(name)) {
    return "The policy priority '" + std::string{name} + "' is not a number.";
  }
  return ok ? std::string{} : "The object name '" + std::string{name} + "' is not valid.";
}

outcome make_objects(write_txn& t, const change_request& req) {
  if (!req.template_name.empty()) {
    change_request from_template = req;
    from_template.attrs = template_changes(t, req);
    from_template.template_name.clear();
    return make_objects(t, from_template);
  }
  if (req.attrs.empty() && req.type != object_type::group) { // (an empty group is a group)
    outcome out;
    std::string msg = "No object definitions have been created or modified: no attributes were "
                      "specified.";
    if (req.type == object_type::node) {
      msg += " The 'groups' attribute is required when creating node definitions.";
    }
    out.errors.push_back(msg);
    throw rejected{out};
  }
  return make_targets(t, targets_of(req), req.force);
}

outcome change_objects(write_txn& t, const change_request& req) {
  return change_targets(t, targets_of(req), req.mode);
}

outcome make_objects(write_txn& t, const std::vector<object_change>& objects, bool force) {
  return make_targets(t, targets_of(objects), force);
}

outcome change_objects(write_txn& t, const std::vector<object_change>& objects, list_mode mode) {
  return change_targets(t, targets_of(objects), mode);
}

std::vector<object_change> stanza_objects(const std::vector<stanza>& stanzas,
                                          std::vector<std::string>& errors) {
  std::vector<object_change> out;
  out.reserve(stanzas.size());
  for (const auto& s : stanzas) {
    auto type = parse_type(s.type);
    if (s.type.empty()) {
      errors.push_back("No objtype value was specified for '" + s.name
                       + "'. Cannot create object definition.");
    } else if (!type) {
      errors.push_back("Type '" + s.type + "' is not a valid xCAT object type.");
    } else {
      object_change o{*type, s.name, {}};
      o.attrs.reserve(s.attrs.size());
      for (const auto& [k, v] : s.attrs) {
        o.attrs.push_back({k, v});
      }
      out.push_back(std::move(o));
    }
  }
  return out;
}

outcome remove_objects(write_txn& t, object_type type, const std::vector<std::string>& names) {
  outcome out;
  if (type == object_type::site) {
    out.errors.emplace_back("The site definition 'clustersite' cannot be removed.");
    throw rejected{out};
  }
  cluster_view view{t};
  for (const auto& n : names) {
    if (!view.exists(type, n)) {
      out.errors.push_back(not_found_message(n, type));
    }
  }
  if (!out.ok()) {
    out.errors.emplace_back("No objects have been removed from the xCAT database.");
    throw rejected{out};
  }
  for (const auto& n : names) {
    if (type == object_type::group) {
      for (const auto& member : t.members(n)) {
        set_membership(t, member, n, false, out);
      }
    }
    t.erase(type, n);
    ++out.count;
  }
  out.info.push_back(std::to_string(out.count) + " object definitions have been removed.");
  return out;
}

outcome rename_object(write_txn& t, object_type type, const std::string& from,
                      const std::string& to) {
  outcome out;
  if (type == object_type::site || type == object_type::group) {
    out.errors.push_back("Objects of type '" + std::string{type_name(type)}
                         + "' cannot be renamed with the -n option.");
    throw rejected{out};
  }
  auto rec = t.get(type, from);
  if (!rec) {
    out.errors.push_back(not_found_message(from, type));
  } else if (auto msg = check_object_name(type, to); !msg.empty()) {
    out.errors.push_back(msg);
  } else if (t.exists(type, to)) {
    out.errors.push_back("A definition for '" + to + "' already exists.");
  }
  if (!out.ok()) {
    throw rejected{out};
  }
  // one record holds every table row of the object; the group index follows the put
  auto attrs = rec->to_map();
  t.erase(type, from);
  t.put(type, to, attrs);
  out.count = 1;
  out.info.push_back("Changed the object name from " + from + " to " + to + ".");
  return out;
}

outcome apply(database& db, const std::function<outcome(write_txn&)>& change) {
  outcome out;
  try {
    db.write([&](write_txn& t) { out = change(t); });
  } catch (const rejected& r) {
    return r.result;
  } catch (const error& e) {
    out = {};
    out.errors.emplace_back(e.what());
  }
  return out;
}

std::vector<std::string> wanted_attributes(object_type t, const std::vector<std::string>* only,
                                           std::vector<std::string>& errors) {
  std::vector<std::string> wanted;
  if (only != nullptr) {
    for (const auto& a : *only) {
      if (is_valid_attribute(t, a)) {
        wanted.push_back(a);
      } else {
        errors.push_back(invalid_attribute_message(a, t));
      }
    }
  }
  return wanted;
}

bool select_attributes(attr_map& attrs, const std::vector<std::string>* wanted,
                       const std::vector<selector>& where) {
  bool pass = std::all_of(where.begin(), where.end(), [&](const selector& s) {
    auto it = attrs.find(s.attribute());
    return it != attrs.end() && s.matches(it->second);
  });
  if (!pass || wanted == nullptr) {
    return pass;
  }
  attr_map picked;
  for (const auto& a : *wanted) {
    if (a.rfind("nic", 0) != 0) {
      auto it = attrs.find(a);
      picked[a] = it == attrs.end() ? std::string{} : it->second;
      continue;
    }
    // xCAT's expandnicsattr prints a line per nic that has a value, none for the others
    std::string per_nic = a + ".";
    for (auto it = attrs.lower_bound(a); it != attrs.end(); ++it) {
      bool same = it->first == a;
      if (!same && it->first.compare(0, per_nic.size(), per_nic) != 0) {
        break;
      }
      if ((same || a.find('.') == std::string::npos) && !it->second.empty()) {
        picked.insert(*it);
      }
    }
  }
  attrs = std::move(picked);
  return true;
}

std::vector<std::string> listing_errors(const cluster_view& view, object_type t,
                                        const std::vector<std::string>& names,
                                        const std::vector<std::string>* only) {
  std::vector<std::string> errors;
  wanted_attributes(t, only, errors);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!view.exists(t, names[i])) {
      errors.push_back(not_found_message(names[i], t));
    }
    if ((i + 1) % read_txn::release_every == 0) {
      view.txn().release_resident_pages(); // (checked before a large listing: see the header)
    }
  }
  return errors;
}

std::vector<std::string> list_objects(const cluster_view& view, object_type t,
                                      const std::vector<std::string>& names,
                                      const std::vector<std::string>* only,
                                      const std::vector<selector>& where,
                                      const std::function<void(listed_object&&)>& sink) {
  std::vector<std::string> errors;
  auto wanted = wanted_attributes(t, only, errors);
  for (const auto& n : names) {
    auto attrs = view.display(t, n);
    if (!attrs) {
      errors.push_back(not_found_message(n, t));
    } else if (select_attributes(*attrs, only != nullptr ? &wanted : nullptr, where)) {
      sink({n, std::move(*attrs)});
    }
  }
  return errors;
}

listing list_objects(const cluster_view& view, object_type t, const std::vector<std::string>& names,
                     const std::vector<std::string>* only, const std::vector<selector>& where) {
  listing out;
  out.errors = list_objects(view, t, names, only, where,
                            [&](listed_object&& o) { out.objects.push_back(std::move(o)); });
  return out;
}

} // namespace cws::store

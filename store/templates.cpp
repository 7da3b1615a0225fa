#include "store/templates.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "store/stanza.hpp"

namespace cws::store {

namespace {

constexpr std::string_view mandatory = "MANDATORY:";
constexpr std::string_view optional = "OPTIONAL:";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::vector<object_template> parse_shipped() {
  auto parsed = parse_stanzas(node_templates_text);
  std::vector<object_template> out;
  for (auto& s : parsed.objects) {
    object_template t;
    t.name = std::move(s.name);
    t.type = parse_type(s.type).value_or(object_type::node);
    for (auto& [k, v] : s.attrs) {
      t.attrs[k] = std::move(v);
    }
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(),
            [](const object_template& a, const object_template& b) { return a.name < b.name; });
  return out;
}

[[noreturn]] void refuse(std::string message) {
  outcome out;
  out.errors.push_back(std::move(message));
  throw rejected{out};
}

/// The template's attributes for `req`, from the shipped templates or an existing object.
attr_map template_source(const read_txn& t, const change_request& req, bool& shipped) {
  const auto& name = req.template_name;
  if (name.find(',') != std::string::npos) {
    refuse("Only 1 template object definition should be specified for mkdef!");
  }
  if (req.type == object_type::site) {
    refuse("The option '--template' can not be used with objects of type 'site'.");
  }
  if (const auto* tmpl = find_template(req.type, name)) {
    shipped = true;
    return tmpl->attrs;
  }
  shipped = false;
  // a user template: an existing object, copied as lsdef -z shows it (its inherited values,
  // not the xcatdefaults postscripts every node gets anyway)
  cluster_view view{t, false};
  auto type = std::string{type_name(req.type)};
  auto all = req.type == object_type::group ? t.group_names() : t.names(req.type);
  if (all.empty()) {
    refuse("Could not get objects of type '" + type + "'.");
  }
  auto attrs = view.display(req.type, name);
  if (!attrs) {
    refuse("Could not find the template object named '" + name + "' of type '" + type + "'.");
  }
  if (std::find(req.names.begin(), req.names.end(), name) != req.names.end()) {
    refuse("The template node cannot be the same as the node to create.");
  }
  attrs->erase(std::string{key_attribute(req.type)});
  return std::move(*attrs);
}

bool given(const std::vector<attr_change>& changes, const std::string& attr) {
  return std::any_of(changes.begin(), changes.end(), [&](const attr_change& a) {
    return a.name == attr && !base::trim(a.value).empty();
  });
}

} // namespace

const std::vector<object_template>& shipped_templates() {
  static const std::vector<object_template> templates = parse_shipped();
  return templates;
}

const object_template* find_template(object_type t, std::string_view name) {
  for (const auto& tmpl : shipped_templates()) {
    if (tmpl.type == t && tmpl.name == name) {
      return &tmpl;
    }
  }
  return nullptr;
}

listing list_templates(const cluster_view& view, object_type t,
                       const std::vector<std::string>& names, const std::vector<std::string>* only,
                       const std::vector<selector>& where) {
  listing out;
  auto wanted = wanted_attributes(t, only, out.errors);
  std::vector<const object_template*> chosen;
  for (const auto& n : names) {
    if (const auto* tmpl = find_template(t, n)) {
      chosen.push_back(tmpl);
    } else {
      out.errors.push_back("Could not find " + n + " in xCAT templates.");
    }
  }
  if (names.empty()) {
    for (const auto& tmpl : shipped_templates()) {
      if (tmpl.type == t) {
        chosen.push_back(&tmpl);
      }
    }
  }
  std::sort(chosen.begin(), chosen.end(), [](auto a, auto b) { return a->name < b->name; });
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  for (const auto* tmpl : chosen) {
    attr_map attrs = tmpl->attrs;
    if (t == object_type::node) {
      view.finish_node(attrs);
    }
    if (select_attributes(attrs, only != nullptr ? &wanted : nullptr, where)) {
      out.objects.push_back({tmpl->name, std::move(attrs)});
    }
  }
  return out;
}

std::vector<attr_change> template_changes(const read_txn& t, const change_request& req) {
  bool shipped = false;
  auto source = template_source(t, req, shipped);
  outcome missing;
  std::vector<attr_change> out;
  for (auto& [k, v] : source) {
    if (given(req.attrs, k)) {
      continue; // the command line's value wins
    }
    if (shipped && starts_with(v, mandatory)) {
      missing.errors.push_back("The attribute \"" + k + "\" must be specified!");
    } else if (!(shipped && starts_with(v, optional))) {
      out.push_back({k, std::move(v)});
    }
  }
  if (!missing.ok()) {
    throw rejected{missing};
  }
  for (const auto& a : req.attrs) {
    if (!base::trim(a.value).empty() || source.count(a.name) == 0) {
      out.push_back(a);
    }
  }
  return out;
}

} // namespace cws::store

#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/cluster_view.hpp"
#include "store/definitions.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"

namespace cws::store {

/// config/node.templates as compiled in: xCAT's shipped node templates in stanza form.
extern const std::string_view node_templates_text;

/// One of xCAT's shipped object definition templates (lsdef --template, mkdef --template).
struct object_template {
  std::string name;
  object_type type = object_type::node;
  /// The attributes as shipped; a value may be `MANDATORY:<what>` (mkdef must be given it)
  /// or `OPTIONAL:<what>` (mkdef may be given it).
  attr_map attrs;
};

/// xCAT's shipped templates, sorted by name, parsed once from node_templates_text.
const std::vector<object_template>& shipped_templates();

/// The shipped template `name` of type `t`, or nullptr.
const object_template* find_template(object_type t, std::string_view name);

/// lsdef --template: the shipped templates of type `t` named in `names` (all when empty), in
/// name order, as lsdef shows an object of that type (a node template with the xcatdefaults
/// postscripts of `view`), selected by `only` and `where` as list_objects does. An error per
/// name that is not a template (`Could not find x in xCAT templates.`) or invalid attribute.
listing list_templates(const cluster_view& view, object_type t,
                       const std::vector<std::string>& names,
                       const std::vector<std::string>* only = nullptr,
                       const std::vector<selector>& where = {});

/// mkdef --template: the attributes `req` gives its new objects. `req.template_name` is a
/// shipped template of `req.type`, or else an existing object of that type in `t` (a user
/// template: its attributes as lsdef -z shows them, inherited values included). Its values
/// come first; an attribute `req` gives with a non-empty value replaces the template's. Of a
/// shipped template, an `OPTIONAL:` value not given is left out, a `MANDATORY:` one not given
/// is an error (`The attribute "ip" must be specified!`).
/// @throws rejected with xCAT's messages (no such template, several templates, a template
///         that is one of the objects to create, a missing mandatory attribute).
std::vector<attr_change> template_changes(const read_txn& t, const change_request& req);

} // namespace cws::store

#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"
#include "store/stanza.hpp"

namespace cws::store {

/// How chdef applies a value: replace it, or add to / remove from a comma list (-p / -m).
enum class list_mode { set, append, remove };

/// One `attr=value` of a definition change, in the order given.
struct attr_change {
  std::string name;
  std::string value;
};

/// A mkdef/chdef request over already expanded object names.
struct change_request {
  object_type type = object_type::node;
  std::vector<std::string> names;
  std::vector<attr_change> attrs;
  list_mode mode = list_mode::set;
  /// mkdef -f: replace an existing definition instead of skipping it.
  bool force = false;
  /// mkdef --template: the template the objects are made from (store/templates.hpp).
  std::string template_name;
  /// Refuse a conditional attribute (bmc, bmcusername, ...) whose condition (mgt=ipmi|...)
  /// the object does not meet, as xCAT's mkdef and chdef do. The table tools write a row
  /// where they are told (chtab ipmi.bmc), as xCAT's chtab does: false.
  bool check_conditions = true;
};

/// What a definition command reports: info lines (stdout), warnings, errors. Any error means
/// nothing was written (exit status 1, HTTP 403).
struct outcome {
  std::vector<std::string> info;
  std::vector<std::string> warnings;
  std::vector<std::string> errors;
  /// Objects created or changed (or removed).
  size_t count = 0;

  bool ok() const noexcept {
    return errors.empty();
  }
};

/// Thrown by a change that must not be written; carries its report. Thrown inside a
/// transaction it aborts it.
struct rejected : std::exception {
  explicit rejected(outcome o) : result(std::move(o)) {
    // nop
  }

  const char* what() const noexcept override {
    return result.errors.empty() ? "rejected" : result.errors.front().c_str();
  }

  outcome result;
};

/// mkdef in transaction `t`: existing objects are skipped with a warning unless `force`
/// replaces them; with `req.template_name`, the template's attributes are the base
/// (template_changes). @throws rejected when nothing may be written.
outcome make_objects(write_txn& t, const change_request& req);

/// chdef in transaction `t`, creating missing objects. @throws rejected.
outcome change_objects(write_txn& t, const change_request& req);

/// One object of a stanza input (mkdef -z, chdef -z): its own type, name and attributes.
struct object_change {
  object_type type = object_type::node;
  std::string name;
  std::vector<attr_change> attrs;
};

/// The objects of parsed stanzas; an error per stanza without a known objtype (xCAT's
/// `No objtype value was specified for 'x'. Cannot create object definition.`).
std::vector<object_change> stanza_objects(const std::vector<stanza>& stanzas,
                                          std::vector<std::string>& errors);

/// mkdef -z in transaction `t`: each object with its own type and attributes, as
/// make_objects does for one request. Groups are written last, so their `members` may name
/// nodes of the same input. @throws rejected when nothing may be written.
outcome make_objects(write_txn& t, const std::vector<object_change>& objects, bool force);

/// chdef -z in transaction `t`, creating missing objects; groups last. @throws rejected.
outcome change_objects(write_txn& t, const std::vector<object_change>& objects, list_mode mode);

/// chdef -n: object `from` of `type` becomes `to`, with all its attributes (a node keeps its
/// groups). Not for groups and the site, as in xCAT; `to` must be a valid, unused name. Other
/// objects naming `from` (a node's vmhost, hcp, ...) are not changed, as in xCAT.
/// @throws rejected.
outcome rename_object(write_txn& t, object_type type, const std::string& from,
                      const std::string& to);

/// rmdef in transaction `t`: every named object, or none if any is missing. @throws rejected.
outcome remove_objects(write_txn& t, object_type type, const std::vector<std::string>& names);

/// Runs one of the changes above in its own transaction of `db` and returns its report (the
/// rejection's report, or a database failure as an error).
outcome apply(database& db, const std::function<outcome(write_txn&)>& change);

/// One object as lsdef shows it.
struct listed_object {
  std::string name;
  attr_map attrs;
};

/// What lsdef lists: the objects found, in the order asked, and an error per missing name.
struct listing {
  std::vector<listed_object> objects;
  std::vector<std::string> errors;
};

/// lsdef, streaming: calls `sink` with each object found, in the order asked, and returns the
/// errors (one per missing object, one per invalid `only` attribute). With `only`, exactly
/// those attributes (unset ones as ""). Objects failing any of `where` are left out.
std::vector<std::string> list_objects(const cluster_view& view, object_type t,
                                      const std::vector<std::string>& names,
                                      const std::vector<std::string>* only,
                                      const std::vector<selector>& where,
                                      const std::function<void(listed_object&&)>& sink);

/// The attributes of `only` that are valid for type `t`; an error for each invalid one.
std::vector<std::string> wanted_attributes(object_type t, const std::vector<std::string>* only,
                                           std::vector<std::string>& errors);

/// lsdef's selection applied to the attributes `attrs` one object shows: false if they fail
/// any of `where`. With `wanted` (the valid -i attributes) only those remain, an unset one as
/// "", except nic attributes (`nicips.eth0`; `nicips` means every `nicips.*`), which xCAT's
/// lsdef -i leaves out when unset.
bool select_attributes(attr_map& attrs, const std::vector<std::string>* wanted,
                       const std::vector<selector>& where);

/// The errors lsdef would give for `names` and `only` (a missing object, an invalid
/// attribute), without reading the objects: checked before a listing is streamed in pages.
std::vector<std::string> listing_errors(const cluster_view& view, object_type t,
                                        const std::vector<std::string>& names,
                                        const std::vector<std::string>* only);

/// lsdef, collected: the same as a listing.
listing list_objects(const cluster_view& view, object_type t, const std::vector<std::string>& names,
                     const std::vector<std::string>* only = nullptr,
                     const std::vector<selector>& where = {});

/// `Could not find an object named 'x' of type 't'.`
std::string not_found_message(std::string_view name, object_type t);

/// Why `wherevals` (a dynamic group's `attr<op>value` selections, `::`-separated) is not
/// valid; "" if it is.
std::string check_wherevals(std::string_view wherevals);

/// Checks value `v` of attribute `attr` for an object of `type`: no line break or other
/// C0/C1 control (TAB excepted), DEL, U+2028 or U+2029 (the message names the character); a
/// policy `rule` must be a known rule, `site.tokenexpiredays` a valid number of days.
/// Returns the error message, or "" if the value may be stored.
std::string check_value(object_type type, const std::string& attr, std::string_view v);

/// Checks what a change (mkdef, chdef, rmdef) names before it runs: `spec` as given and the
/// `names` it expanded to. Refused: quotes in a node or group spec (the noderange grammar
/// drops them, so `x'y` would create `xy`), and a spec that names nothing (the change would
/// do nothing and still succeed). Returns the error message, or "" if valid.
std::string check_change_target(object_type t, std::string_view spec,
                                const std::vector<std::string>& names);

/// Checks an object name: printable ASCII without blanks, quotes, `,` or `/`, never `.` or
/// `..`, and for nodes and groups none of the noderange operators. (That a node's name is not
/// a group's, and the other way round, is checked when a change ends: write_txn::check_names.)
/// Returns the error message, or "" if valid.
std::string check_object_name(object_type t, std::string_view name);

} // namespace cws::store

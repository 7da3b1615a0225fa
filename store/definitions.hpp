#pragma once

#include <string>
#include <utility>
#include <vector>

#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"

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

/// mkdef: creates the objects in one transaction; existing ones are skipped with a warning
/// unless `force` replaces them.
outcome make_objects(database& db, const change_request& req);

/// chdef: changes the objects in one transaction, creating missing ones.
outcome change_objects(database& db, const change_request& req);

/// rmdef: removes every named object in one transaction, or none if any is missing.
outcome remove_objects(database& db, object_type t, const std::vector<std::string>& names);

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

/// lsdef: the named objects. With `only`, exactly those attributes (unset ones as ""), and an
/// error for each invalid name. Objects failing any of `where` are left out.
listing list_objects(const cluster_view& view, object_type t, const std::vector<std::string>& names,
                     const std::vector<std::string>* only = nullptr,
                     const std::vector<selector>& where = {});

/// `Could not find an object named 'x' of type 't'.`
std::string not_found_message(std::string_view name, object_type t);

/// Checks an object name: printable ASCII without blanks, quotes, `,` or `/`, and for nodes
/// and groups none of the noderange operators. Returns the error message, or "" if valid.
std::string check_object_name(object_type t, std::string_view name);

} // namespace cws::store

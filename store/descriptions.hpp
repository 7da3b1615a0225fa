#pragma once

#include <string_view>
#include <vector>

#include "store/schema.hpp"

namespace cws::store {

/// One attribute's description (lsdef -t TYPE -h [-i ATTRS]), from xCAT's Schema.pm.
struct attribute_description {
  std::string_view type;
  std::string_view attr;
  std::string_view text;
};

/// The descriptions of the attributes of type `t` (node, group, network, osimage, policy),
/// in Schema order; none for the site (its keys are free-form).
std::vector<attribute_description> attribute_descriptions(object_type t);

} // namespace cws::store

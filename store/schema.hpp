#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cws::store {

/// The object types the store keeps. passwd and token are internal (no lsdef type).
/// boottarget is xCAT's boottarget table (key bprofile: a kernel, initrd and kcmdline for
/// nodes whose profile, or whose osimage's `boottarget`, names it). The values are stored
/// (LMDB sub-databases and change-log records are keyed by them): new types go at the end.
enum class object_type : uint8_t {
  node,
  group,
  network,
  osimage,
  policy,
  site,
  passwd,
  token,
  boottarget
};

/// Number of object types.
constexpr size_t object_type_count = 9;

/// The lsdef type name of `t` ("node", "group", ...; "site" for globalconf).
std::string_view type_name(object_type t);

/// Parses an lsdef type name; nullopt if it is not a definition type (passwd and token are
/// not definition types).
std::optional<object_type> parse_type(std::string_view name);

/// The name of the key attribute (`node`, `groupname`, `netname`, `imagename`, `priority`,
/// `bprofile`).
/// The key is the object's name; lsdef never prints it.
std::string_view key_attribute(object_type t);

/// Longest attribute name (site key, or `nic<word>.<suffix>`) the store accepts.
constexpr size_t max_key_length = 128;

/// True if `text` may be (part of) an attribute name: 1 to `max_key_length` printable ASCII
/// characters, no blanks, no `=`. lsdef prints names as they are, so a name must never be
/// able to start a line or an `attr=value` of its own.
bool is_key_text(std::string_view text);

/// True if `attr` may be set on an object of type `t` (xcat-compat.md §5). Site keys are
/// free-form; `nic<word>.<ifname>` is validated as its `nic<word>` stem; both obey
/// is_key_text.
bool is_valid_attribute(object_type t, std::string_view attr);

/// The exact xCAT message for an invalid attribute name.
std::string invalid_attribute_message(std::string_view attr, object_type t);

/// The 194 node attribute names of xCAT, in Schema order (includes `node`). clusterws also
/// accepts `sshport` on nodes and groups (the port nodeshell connects to).
const std::vector<std::string_view>& node_attributes();

/// One entry of xCAT's node definition (Schema.pm defspec): attribute `attr` is held in column
/// `column` of table `table` when `only_if` holds (`mgt=ipmi|openbmc`: the attribute's value
/// has one of the words; "" always).
struct attribute_entry {
  std::string_view attr;
  std::string_view table;
  std::string_view column;
  std::string_view only_if;
};

/// Every node attribute entry, in Schema order (an attribute held in several tables under
/// different conditions has several entries).
const std::vector<attribute_entry>& node_attribute_entries();

/// True if an object satisfies condition `only_if` (`mgt=ipmi|openbmc`; "" always holds):
/// `value_of(attr)` of the named attribute, a comma list, has one of the `|`-separated words.
bool condition_holds(std::string_view only_if,
                     const std::function<std::string(std::string_view)>& value_of);

/// The conditions (only_if) under which node attribute `attr` may be set, in Schema order;
/// empty if it has an entry without one (xCAT's validate_only_if_attrs: such an attribute may
/// always be set).
const std::vector<std::string_view>& attribute_conditions(std::string_view attr);

/// xCAT's refusal of conditional attribute `attr` none of whose `conditions` holds:
/// `Cannot set the attr='bmc' attribute unless mgt value is ipmi or openbmc.`
std::string condition_refusal(std::string_view attr,
                              const std::vector<std::string_view>& conditions);

/// True if `attr` is shown as "********" to every reader but root (`bmcpassword`). A caller
/// who may not read it may not test it either: no selector, dynamic group or row filter of
/// theirs may look at its value (docs/security.md N1).
bool is_masked_attribute(std::string_view attr);

/// Node attributes held in xCAT's nodelist table: a node's own, never inherited from groups.
bool is_nodelist_attribute(std::string_view attr);

/// Maps a nodels/noderange column (`nodehm.mgt`, `nodelist.groups`, `vm.memory`, or the
/// short names `groups`, `tags`, `mgt`) to the node attribute it holds.
std::optional<std::string_view> attribute_for_column(std::string_view column);

} // namespace cws::store

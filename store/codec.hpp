#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cws::store {

/// Attributes of one object, sorted by name. Values are strings; an absent name is unset.
using attr_map = std::map<std::string, std::string, std::less<>>;

/// Appends `n` as a LEB128 varint (7 bits a byte, low first).
void put_varint(std::string& out, size_t n);

/// Reads a varint written by put_varint at `pos` (advanced past it); false when `in` ends
/// first or the number is longer than 5 bytes.
bool get_varint(std::string_view in, size_t& pos, size_t& n);

/// Encodes attributes as a sequence of (varint length, bytes) pairs, sorted by name.
std::string encode(const attr_map& attrs);

/// A zero-copy view of an encoded record. Valid as long as the bytes it views.
class record_view {
 public:
  record_view() = default;

  explicit record_view(std::string_view bytes) : bytes_(bytes) {
    // nop
  }

  /// Calls `fn(name, value)` for every attribute in name order.
  /// @throws cws::store::error on a corrupt record.
  void for_each(const std::function<void(std::string_view, std::string_view)>& fn) const;

  /// The value of `name`, if set.
  std::optional<std::string_view> find(std::string_view name) const;

  /// Copies the record into an attr_map.
  attr_map to_map() const;

  bool empty() const noexcept {
    return bytes_.empty();
  }

 private:
  /// Reads the pair at `pos`; returns false at the end.
  bool read(size_t& pos, std::string_view& name, std::string_view& value) const;

  std::string_view bytes_;
};

} // namespace cws::store

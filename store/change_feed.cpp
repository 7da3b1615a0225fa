#include "store/change_feed.hpp"

#include "store/codec.hpp"
#include "store/error.hpp"

namespace cws::store {

namespace {

/// The longest object name the store writes (write_txn::put).
constexpr size_t max_name = 511;

[[noreturn]] void damaged(const std::string& what) {
  throw error{store_errc::database, "damaged change log record: " + what};
}

void put_text(std::string& out, std::string_view text) {
  put_varint(out, text.size());
  out += text;
}

std::string_view get_text(std::string_view in, size_t& pos, size_t max, const char* what) {
  size_t len = 0;
  if (!get_varint(in, pos, len) || len > in.size() - pos) {
    damaged(std::string{what} + " cut short");
  }
  if (len == 0 || len > max) {
    damaged(std::string{what} + " of " + std::to_string(len) + " bytes");
  }
  auto text = in.substr(pos, len);
  pos += len;
  return text;
}

size_t get_count(std::string_view in, size_t& pos, size_t max, size_t min_bytes, const char* what) {
  size_t n = 0;
  if (!get_varint(in, pos, n)) {
    damaged(std::string{what} + " count cut short");
  }
  // each item takes at least `min_bytes`: a count the rest cannot hold is refused before
  // anything is reserved for it
  if (n > max || n > (in.size() - pos) / min_bytes) {
    damaged(std::to_string(n) + " " + what);
  }
  return n;
}

} // namespace

std::string_view change_kind_name(change_kind k) {
  switch (k) {
    case change_kind::created: return "created";
    case change_kind::changed: return "changed";
    case change_kind::removed: return "removed";
  }
  return "changed";
}

std::string encode_changes(const std::vector<logged_change>& changes) {
  std::string out;
  put_varint(out, changes.size());
  for (const auto& c : changes) {
    out.push_back(static_cast<char>(c.type));
    out.push_back(static_cast<char>(c.kind));
    put_text(out, c.name);
    put_varint(out, c.attrs.size());
    for (const auto& a : c.attrs) {
      put_text(out, a);
    }
  }
  return out;
}

std::vector<logged_change> decode_changes(std::string_view bytes) {
  size_t pos = 0;
  // type, kind, a name of one byte and its length, an attribute count: 5 bytes at least
  auto n = get_count(bytes, pos, change_limits::max_changes, 5, "changes");
  std::vector<logged_change> out(n);
  for (auto& c : out) {
    if (bytes.size() - pos < 2) {
      damaged("change cut short");
    }
    auto type = static_cast<uint8_t>(bytes[pos++]);
    auto kind = static_cast<uint8_t>(bytes[pos++]);
    if (type >= object_type_count || kind > static_cast<uint8_t>(change_kind::removed)) {
      damaged("unknown object type or change kind");
    }
    c.type = static_cast<object_type>(type);
    c.kind = static_cast<change_kind>(kind);
    c.name = get_text(bytes, pos, max_name, "object name");
    auto attrs = get_count(bytes, pos, change_limits::max_attrs, 2, "attributes");
    c.attrs.reserve(attrs);
    for (size_t i = 0; i < attrs; ++i) {
      c.attrs.emplace_back(get_text(bytes, pos, max_key_length, "attribute name"));
    }
  }
  if (pos != bytes.size()) {
    damaged("bytes after the last change");
  }
  return out;
}

} // namespace cws::store

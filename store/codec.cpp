#include "store/codec.hpp"

#include <cstdint>

#include "store/error.hpp"

namespace cws::store {

void put_varint(std::string& out, size_t n) {
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
}

bool get_varint(std::string_view in, size_t& pos, size_t& n) {
  n = 0;
  for (int shift = 0; shift < 35 && pos < in.size(); shift += 7) {
    auto byte = static_cast<uint8_t>(in[pos++]);
    n |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

namespace {

[[noreturn]] void corrupt() {
  throw error{store_errc::database, "corrupt record in database"};
}

} // namespace

std::string encode(const attr_map& attrs) {
  std::string out;
  for (const auto& [name, value] : attrs) {
    put_varint(out, name.size());
    out += name;
    put_varint(out, value.size());
    out += value;
  }
  return out;
}

bool record_view::read(size_t& pos, std::string_view& name, std::string_view& value) const {
  if (pos >= bytes_.size()) {
    return false;
  }
  size_t len = 0;
  if (!get_varint(bytes_, pos, len) || len > bytes_.size() - pos) {
    corrupt();
  }
  name = bytes_.substr(pos, len);
  pos += len;
  if (!get_varint(bytes_, pos, len) || len > bytes_.size() - pos) {
    corrupt();
  }
  value = bytes_.substr(pos, len);
  pos += len;
  return true;
}

void record_view::for_each(
  const std::function<void(std::string_view, std::string_view)>& fn) const {
  size_t pos = 0;
  std::string_view name;
  std::string_view value;
  while (read(pos, name, value)) {
    fn(name, value);
  }
}

std::optional<std::string_view> record_view::find(std::string_view wanted) const {
  size_t pos = 0;
  std::string_view name;
  std::string_view value;
  while (read(pos, name, value)) {
    if (name == wanted) {
      return value;
    }
    if (name > wanted) {
      break; // sorted: it is not there
    }
  }
  return std::nullopt;
}

attr_map record_view::to_map() const {
  attr_map out;
  for_each([&](std::string_view n, std::string_view v) { out.emplace(n, v); });
  return out;
}

} // namespace cws::store

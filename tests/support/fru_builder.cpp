#include "fru_builder.hpp"

namespace cws::test {

namespace {

void field(std::vector<uint8_t>& a, const std::string& f) {
  if (f.rfind("6:", 0) == 0) { // 6-bit packed ASCII, 4 characters in 3 bytes
    std::string t = f.substr(2);
    std::vector<uint8_t> packed;
    uint32_t acc = 0;
    int have = 0;
    for (char c : t) {
      acc |= static_cast<uint32_t>((c - 0x20) & 0x3f) << have;
      have += 6;
      while (have >= 8) {
        packed.push_back(static_cast<uint8_t>(acc & 0xff));
        acc >>= 8;
        have -= 8;
      }
    }
    if (have > 0) {
      packed.push_back(static_cast<uint8_t>(acc & 0xff));
    }
    a.push_back(static_cast<uint8_t>(0x80 | packed.size()));
    a.insert(a.end(), packed.begin(), packed.end());
    return;
  }
  a.push_back(static_cast<uint8_t>(0xc0 | f.size()));
  a.insert(a.end(), f.begin(), f.end());
}

/// Ends an area: 0xC1, padding to a multiple of 8 with room for the checksum, the length
/// byte, the checksum.
void finish(std::vector<uint8_t>& a) {
  a.push_back(0xc1);
  while ((a.size() + 1) % 8 != 0) {
    a.push_back(0);
  }
  a[1] = static_cast<uint8_t>((a.size() + 1) / 8);
  uint8_t sum = 0;
  for (auto b : a) {
    sum = static_cast<uint8_t>(sum + b);
  }
  a.push_back(static_cast<uint8_t>(-sum));
}

} // namespace

void fru_builder::chassis(std::vector<std::string> fields, uint8_t type) {
  chassis_ = {1, 0, type};
  for (const auto& f : fields) {
    field(chassis_, f);
  }
  finish(chassis_);
}

void fru_builder::board(uint32_t minutes, std::vector<std::string> fields) {
  board_ = {1,
            0,
            0,
            static_cast<uint8_t>(minutes & 0xff),
            static_cast<uint8_t>((minutes >> 8) & 0xff),
            static_cast<uint8_t>(minutes >> 16)};
  for (const auto& f : fields) {
    field(board_, f);
  }
  finish(board_);
}

void fru_builder::product(std::vector<std::string> fields) {
  product_ = {1, 0, 0};
  for (const auto& f : fields) {
    field(product_, f);
  }
  finish(product_);
}

std::vector<uint8_t> fru_builder::bytes() const {
  std::vector<uint8_t> out(8, 0);
  out[0] = 1;
  size_t at = 1; // in 8-byte units
  auto place = [&](const std::vector<uint8_t>& area, size_t slot) {
    if (area.empty()) {
      return;
    }
    out[slot] = static_cast<uint8_t>(at);
    at += area.size() / 8;
  };
  place(chassis_, 2);
  place(board_, 3);
  place(product_, 4);
  uint8_t sum = 0;
  for (size_t i = 0; i < 7; ++i) {
    sum = static_cast<uint8_t>(sum + out[i]);
  }
  out[7] = static_cast<uint8_t>(-sum);
  out.insert(out.end(), chassis_.begin(), chassis_.end());
  out.insert(out.end(), board_.begin(), board_.end());
  out.insert(out.end(), product_.begin(), product_.end());
  return out;
}

} // namespace cws::test

// The pure FRU code: type/length fields in every encoding, the common header and the chassis,
// board and product areas, broken data, rinv's keywords and lines in xCAT's order.

#include <gtest/gtest.h>

#include "../support/fru_builder.hpp"
#include "ipmi/fru.hpp"

namespace {

using namespace cws::ipmi;
using cws::test::fru_builder;

TEST(fru, field_encodings) {
  const uint8_t text[] = {'A', ' ', ' ', 'B', 0x01, 'C', ' '};
  EXPECT_EQ(fru_field_text(0xc7, text, sizeof text), "A B C"); // xCAT's getascii
  const uint8_t packed[] = {0x91, 0x64, 0x03};                 // "12V" in 6-bit ASCII
  EXPECT_EQ(fru_field_text(0x83, packed, sizeof packed), "12V");
  const uint8_t bcd[] = {0x20, 0x26, 0xb1, 0x1a};
  EXPECT_EQ(fru_field_text(0x44, bcd, sizeof bcd), "2026-11");
  const uint8_t binary[] = {0x01, 0xab};
  EXPECT_EQ(fru_field_text(0x02, binary, sizeof binary), "01 ab ");
}

TEST(fru, parses_the_three_areas) {
  fru_builder b;
  b.chassis({"CH-PART", "CH-SER"}, 23);
  b.board(12345, {"Board Maker", "Board Name", "BRD-SER", "BRD-PART", "", "extra board"});
  b.product({"Prod Maker", "Prod Name", "MODEL-1", "v2", "SYS-SER", "ASSET-9", "", "extra"});
  auto bytes = b.bytes();
  auto p = parse_fru(bytes.data(), bytes.size());
  ASSERT_TRUE(p.info) << p.error;
  const auto& i = *p.info;
  EXPECT_EQ(i.chassis_part->text, "CH-PART");
  EXPECT_EQ(i.chassis_serial->text, "CH-SER");
  EXPECT_EQ(i.board_minutes, 12345u);
  EXPECT_EQ(i.board_maker->text, "Board Maker");
  EXPECT_EQ(i.board_name->text, "Board Name");
  EXPECT_EQ(i.board_serial->text, "BRD-SER");
  EXPECT_EQ(i.board_part->text, "BRD-PART");
  ASSERT_EQ(i.board_extra.size(), 1u);
  EXPECT_EQ(i.board_extra[0].text, "extra board");
  EXPECT_EQ(i.product_maker->text, "Prod Maker");
  EXPECT_EQ(i.product_name->text, "Prod Name");
  EXPECT_EQ(i.product_part->text, "MODEL-1");
  EXPECT_EQ(i.product_version->text, "v2");
  EXPECT_EQ(i.product_serial->text, "SYS-SER");
  EXPECT_EQ(i.product_asset->text, "ASSET-9");
  ASSERT_EQ(i.product_extra.size(), 1u);

  inventory_filter all = *parse_inventory("all");
  auto lines = fru_lines(i, all);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], (std::pair<std::string, std::string>{"System Manufacturer", "Prod Maker"}));
  EXPECT_EQ(lines[1], (std::pair<std::string, std::string>{"System Description", "Prod Name"}));
  EXPECT_EQ(lines[2], (std::pair<std::string, std::string>{"System Model/MTM", "MODEL-1"}));
  auto serial = fru_lines(i, *parse_inventory("serial"));
  ASSERT_EQ(serial.size(), 2u);
  EXPECT_EQ(serial[0].first, "System Serial Number");
  EXPECT_EQ(serial[1].first, "Chassis Serial Number");
  // 12345 minutes after 1996-01-01 00:00 UTC
  auto misc = fru_lines(i, *parse_inventory("misc"));
  bool date = false;
  for (const auto& [k, v] : misc) {
    date = date || (k == "Board manufacture date" && v == "Tue Jan  9 13:45:00 1996");
  }
  EXPECT_TRUE(date);
}

TEST(fru, broken_data_is_said_as_xcat_says_it) {
  const uint8_t empty[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(parse_fru(empty, sizeof empty).error, "clear");
  const uint8_t other[8] = {2, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(parse_fru(other, sizeof other).error, "Unrecognized FRU format");
  EXPECT_EQ(parse_fru(other, 4).error, "Unrecognized FRU format");
  // an area offset past the end, a field running past its area: nothing read, no crash
  const uint8_t past[16] = {1, 0, 0, 200, 1, 0, 0, 0, 1, 1, 0, 0xc9, 'a', 'b', 'c', 'd'};
  auto p = parse_fru(past, sizeof past);
  ASSERT_TRUE(p.info);
  EXPECT_FALSE(p.info->board_maker);
  EXPECT_FALSE(p.info->product_maker);
}

TEST(fru, inventory_keywords) {
  EXPECT_TRUE(parse_inventory("")->model);
  auto vpd = parse_inventory("vpd");
  EXPECT_TRUE(vpd->model && vpd->serial && vpd->deviceid && vpd->mprom);
  EXPECT_FALSE(vpd->guid || vpd->asset);
  EXPECT_FALSE(parse_inventory("guid")->needs_fru());
  EXPECT_TRUE(parse_inventory("firm")->firmware);
  std::string bad;
  EXPECT_FALSE(parse_inventory("model bogus", &bad));
  EXPECT_EQ(bad, "bogus");
}

} // namespace

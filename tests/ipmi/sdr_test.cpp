// The pure SDR code: record parsing, ID strings (8-bit, 6-bit packed, BCD plus), reading
// conversion with M, B and the exponents, xCAT's text of readings and states, the keywords,
// and the SDR cache's keying by the repository's timestamps.

#include <gtest/gtest.h>

#include "ipmi/sdr.hpp"
#include "ipmi/sensors.hpp"

namespace {

using namespace cws::ipmi;

sensor_record full(int m, int b, int r_exp, int b_exp, uint8_t unit, uint8_t format = 0) {
  sensor_record r;
  r.type = sdr_full;
  r.m = m;
  r.b = b;
  r.r_exp = r_exp;
  r.b_exp = b_exp;
  r.unit = unit;
  r.units1 = static_cast<uint8_t>(format << 6);
  return r;
}

TEST(sdr, linear_conversion_uses_mb_and_both_exponents) {
  EXPECT_DOUBLE_EQ(*sensor_value(full(1, 0, 0, 0, 1), 45), 45);
  EXPECT_DOUBLE_EQ(*sensor_value(full(6, 0, -2, 0, 4), 201), 12.06);
  // (M x + B 10^Bexp) 10^Rexp = (2 * 100 + 5 * 10) * 10^-1
  EXPECT_DOUBLE_EQ(*sensor_value(full(2, 5, -1, 1, 4), 100), 25);
  EXPECT_DOUBLE_EQ(*sensor_value(full(-3, 0, 0, 0, 1), 10), -30);
  EXPECT_DOUBLE_EQ(*sensor_value(full(50, 0, 0, 0, 18), 60), 3000);
}

TEST(sdr, signed_analog_formats) {
  EXPECT_DOUBLE_EQ(*sensor_value(full(1, 0, 0, 0, 1, 2), 0xf6), -10); // 2's complement
  EXPECT_DOUBLE_EQ(*sensor_value(full(1, 0, 0, 0, 1, 1), 0xf5), -10); // 1's complement
  EXPECT_DOUBLE_EQ(*sensor_value(full(1, 0, 0, 0, 1, 0), 0xf6), 246); // unsigned
}

TEST(sdr, non_linear_is_said_so_and_compact_records_are_raw) {
  auto r = full(1, 0, 0, 0, 4);
  r.linearization = 7;
  EXPECT_FALSE(sensor_value(r, 10));
  EXPECT_EQ(reading_text(r, 10), "RAW(7) 10 Volts");
  sensor_record c;
  c.type = sdr_compact;
  c.m = 100;
  EXPECT_DOUBLE_EQ(*sensor_value(c, 3), 3);
}

TEST(sdr, reading_text_is_xcats) {
  EXPECT_EQ(reading_text(full(1, 0, 0, 0, 1), 45), "45 C (113 F)");
  EXPECT_EQ(reading_text(full(6, 0, -2, 0, 4), 201), "12.06 Volts");
  EXPECT_EQ(reading_text(full(1, 0, 0, 0, 2), 212), "212 F (100 C)");
  EXPECT_EQ(reading_text(full(2, 0, 0, 0, 6), 100), "200 Watts (683 BTUs/hr)");
  EXPECT_EQ(reading_text(full(50, 0, 0, 0, 18), 60), "3000 RPM");
  EXPECT_EQ(reading_text(full(1, 0, 0, 0, 0), 7), "7 ");
  EXPECT_EQ(perl_number(0.1 * 3), "0.3");
  EXPECT_EQ(unit_name(250), "");
}

TEST(sdr, id_strings) {
  const uint8_t ascii[] = {'C', 'P', 'U', 0, 'x'};
  EXPECT_EQ(decode_id(0xc5, ascii, sizeof ascii), "CPU");
  // sdrcomp packs "12V" as 91 64 03 (6-bit ASCII, least significant bits first)
  const uint8_t packed[] = {0x91, 0x64, 0x03};
  EXPECT_EQ(decode_id(0x83, packed, sizeof packed), "12V");
  const uint8_t bcd[] = {0x12, 0xb3, 0xca};
  EXPECT_EQ(decode_id(0x43, bcd, sizeof bcd), "12-3. ");
  EXPECT_EQ(decode_id(0x02, bcd, 2), "unicode unsupported");
}

TEST(sdr, parses_full_and_compact_records_and_skips_others) {
  // what sdrcomp makes of a temperature sensor named "CPU Temp" and a 6-bit named voltage
  const uint8_t temp[]
    = {0x01, 0x00, 0x51, 0x01, 0x33, 0x20, 0x00, 0x01, 0x03, 0x01, 0x00, 0x00, 0x01, 0x01,
       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
       0x00, 0x00, 0x00, 0x00, 0x00, 0xc8, 'C',  'P',  'U',  ' ',  'T',  'e',  'm',  'p'};
  auto r = parse_sdr(temp, sizeof temp);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, "CPU Temp");
  EXPECT_EQ(r->number, 1);
  EXPECT_EQ(r->sensor_type, 1);
  EXPECT_EQ(r->unit, 1);
  EXPECT_EQ(r->m, 1);
  const uint8_t volt[]
    = {0x02, 0x00, 0x51, 0x01, 0x2e, 0x20, 0x00, 0x02, 0x07, 0x01, 0x00, 0x00, 0x02,
       0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x06, 0x00,
       0x00, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x83, 0x91, 0x64, 0x03};
  auto v = parse_sdr(volt, sizeof volt);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->id, "12V");
  EXPECT_EQ(v->m, 6);
  EXPECT_EQ(v->r_exp, -2);
  EXPECT_EQ(v->b_exp, 0);
  // M and B are 10-bit two's complement: 0x3ff is -1
  uint8_t neg[sizeof volt];
  std::copy(volt, volt + sizeof volt, neg);
  neg[24] = 0xff;
  neg[25] = 0xc0;
  EXPECT_EQ(parse_sdr(neg, sizeof neg)->m, -1);
  // compact record: the name at byte 31
  uint8_t compact[36]
    = {0x05, 0x00, 0x51, 0x02, 31, 0x20, 0x00, 0x09, 0x0a, 0x01, 0, 0, 0x08, 0x6f};
  compact[31] = 0xc4;
  std::copy_n("PS 1", 4, compact + 32);
  auto c = parse_sdr(compact, sizeof compact);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, "PS 1");
  EXPECT_EQ(c->sensor_type, 8);
  const uint8_t fru_locator[] = {0x03, 0x00, 0x51, 0x11, 0x00};
  EXPECT_FALSE(parse_sdr(fru_locator, sizeof fru_locator));
  EXPECT_FALSE(parse_sdr(temp, 30)); // cut short
  EXPECT_FALSE(parse_sdr(temp, 3));
}

TEST(sdr, states_as_xcat_words_them) {
  sensor_record t;
  t.event_type = 0x01;
  EXPECT_EQ(state_text(t, 0x18), "At or above upper critical threshold");
  EXPECT_EQ(state_text(t, 0x02), "At or below lower critical threshold");
  EXPECT_EQ(state_text(t, 0), "");
  sensor_record ps;
  ps.event_type = 0x6f;
  ps.sensor_type = 0x08;
  EXPECT_EQ(state_text(ps, 0x03), "Present,Failed");
  ps.sensor_type = 0x99;
  EXPECT_EQ(state_text(ps, 0x01), "xCAT needs to add support for 153");
}

TEST(sdr, chassis_lines) {
  auto t = chassis_lines({0x21, 0x10, 0x40});
  EXPECT_NE(t.find("Power Status: on\n"), std::string::npos);
  EXPECT_NE(t.find("Power Restore Policy: Last State\n"), std::string::npos);
  EXPECT_NE(t.find("Last Power Event: By Request\n"), std::string::npos);
  EXPECT_NE(t.find("Identify Light: off"), std::string::npos);
  EXPECT_EQ(chassis_lines({0x00}), "Power Status: off");
}

TEST(sdr, vitals_keywords_match_as_xcat_does) {
  auto all = parse_vitals("");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->all && all->chassis && all->leds);
  auto some = parse_vitals("cputemp fanspeed;voltage");
  ASSERT_TRUE(some);
  EXPECT_TRUE(some->temp && some->fan && some->voltage);
  EXPECT_FALSE(some->all || some->watt || some->chassis);
  EXPECT_TRUE(parse_vitals("power")->power);
  EXPECT_FALSE(parse_vitals("bogus"));
  EXPECT_TRUE(parse_vitals("bogus temp")); // xCAT ignores unknown words next to known ones
}

TEST(sdr, cache_is_keyed_by_the_repository_timestamps) {
  sdr_cache cache{2};
  auto repo = std::make_shared<sdr_repository>();
  repo->added = 100;
  repo->erased = 5;
  repo->count = 3;
  cache.store("a:623", repo);
  EXPECT_EQ(cache.find("a:623", 100, 5, 3), repo);
  EXPECT_FALSE(cache.find("a:623", 101, 5, 3)); // something was added since
  EXPECT_FALSE(cache.find("a:623", 100, 6, 3));
  EXPECT_FALSE(cache.find("b:623", 100, 5, 3));
  cache.store("b:623", repo);
  EXPECT_TRUE(cache.find("a:623", 100, 5, 3)); // a is now the most recently used
  cache.store("c:623", repo);                  // evicts b
  EXPECT_FALSE(cache.find("b:623", 100, 5, 3));
  EXPECT_TRUE(cache.find("c:623", 100, 5, 3));
  auto s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 4u);
  sdr_cache none{0};
  none.store("a:623", repo);
  EXPECT_FALSE(none.find("a:623", 100, 5, 3));
}

} // namespace

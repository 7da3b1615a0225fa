#include <gtest/gtest.h>

#include "store/codec.hpp"
#include "store/error.hpp"

using namespace cws::store;

TEST(codec, round_trips_sorted_attributes) {
  attr_map in{
    {"mgt", "kvm"}, {"groups", "all,compute"}, {"empty", ""}, {"long", std::string(300, 'x')}};
  auto bytes = encode(in);
  record_view view{bytes};
  EXPECT_EQ(view.to_map(), in);
  EXPECT_EQ(view.find("mgt").value_or("?"), "kvm");
  EXPECT_EQ(view.find("long")->size(), 300u);
  EXPECT_FALSE(view.find("absent").has_value());
  EXPECT_TRUE(record_view{encode({})}.empty());
}

TEST(codec, corrupt_record_is_an_error_not_a_crash) {
  std::string bytes = encode({{"name", "value"}});
  bytes.resize(bytes.size() - 2);
  record_view view{bytes};
  EXPECT_THROW(view.to_map(), error);
  std::string huge_len = "\xff\xff\xff\xff\x0f";
  EXPECT_THROW(record_view{huge_len}.to_map(), error);
}

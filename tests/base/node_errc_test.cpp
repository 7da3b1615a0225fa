// The per-node error vocabulary: every code has one spelling, and it reads back.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/node_errc.hpp"

namespace {

using cws::base::node_errc;

TEST(node_errc, every_code_has_a_distinct_spelling_that_parses_back) {
  std::set<std::string> seen;
  for (auto i = static_cast<int>(node_errc::none); i <= static_cast<int>(node_errc::boot_state);
       ++i) {
    auto e = static_cast<node_errc>(i);
    auto text = std::string{to_string(e)};
    EXPECT_EQ(text.empty(), e == node_errc::none) << i;
    EXPECT_TRUE(seen.insert(text).second) << text;
    EXPECT_EQ(cws::base::parse_node_errc(text), e) << text;
  }
}

TEST(node_errc, the_wire_spellings_are_the_ones_clients_know) {
  EXPECT_EQ(to_string(node_errc::connect_timeout), "connect-timeout");
  EXPECT_EQ(to_string(node_errc::host_key), "host-key");
  EXPECT_EQ(to_string(node_errc::not_found), "not-found");
  EXPECT_EQ(to_string(node_errc::no_bmc), "no-bmc");
  EXPECT_EQ(to_string(node_errc::no_vmhost), "no-vmhost");
  EXPECT_EQ(to_string(node_errc::cancelled), "cancelled");
  EXPECT_EQ(to_string(node_errc::servicenode), "servicenode");
  EXPECT_FALSE(cws::base::parse_node_errc("connect_timeout").has_value());
}

} // namespace

#include "base/text.hpp"

#include <gtest/gtest.h>

namespace {

using sv = std::string_view;

TEST(text, split_words_drops_empty_words_between_any_separator) {
  EXPECT_EQ(cws::base::split_words("temp, volt;;fan  ", " ,;"),
            (std::vector<sv>{"temp", "volt", "fan"}));
  EXPECT_TRUE(cws::base::split_words("", " ,;").empty());
  EXPECT_TRUE(cws::base::split_words(" ;, ", " ,;").empty());
  EXPECT_EQ(cws::base::split_words("all", " "), (std::vector<sv>{"all"}));
}

} // namespace

// xCAT's per-node attribute expressions, evaluated as Table.pm's getNodeAttribs does.

#include <gtest/gtest.h>

#include "store/regex_value.hpp"

namespace {

using cws::store::regex_value;

std::string eval(const std::string& expr, const std::string& node) {
  std::string error;
  auto v = regex_value::parse(expr, error);
  EXPECT_TRUE(v) << expr << ": " << error;
  return v ? v->evaluate(node) : std::string{};
}

std::string refusal(const std::string& expr) {
  std::string error;
  auto v = regex_value::parse(expr, error);
  EXPECT_FALSE(v) << expr << " was accepted";
  return error;
}

TEST(regex_value, only_values_in_either_form_are_expressions) {
  for (const char* yes : {"/\\z/-bmc/", "|node(\\d+)|10.0.0.($1+0)|", "///", "|||", "/a/b/c/"}) {
    EXPECT_TRUE(regex_value::is_expression(yes)) << yes;
  }
  for (const char* no : {"", "/", "//", "/install", "/install/", "|a|", "10.0.0.1", "a/b/c/"}) {
    EXPECT_FALSE(regex_value::is_expression(no)) << no;
  }
}

TEST(regex_value, slash_form_replaces_the_first_match_literally) {
  EXPECT_EQ(eval("/\\z/-bmc/", "cn12"), "cn12-bmc");
  EXPECT_EQ(eval("/cn/bmc/", "cn12"), "bmc12");
  EXPECT_EQ(eval("/^/r1-/", "cn12"), "r1-cn12");
  EXPECT_EQ(eval("/(\\d+)/x$1/", "cn12"), "cnx$1") << "xCAT does not expand $1 here";
  EXPECT_EQ(eval("/a/b/c/", "xa"), "xb/c") << "the replacement is the rest after the pattern";
  EXPECT_EQ(eval("/zz/q/", "cn12"), "cn12") << "no match: the name itself";
  EXPECT_EQ(eval("/.*//", "cn12"), "") << "empty: unset";
}

TEST(regex_value, bar_form_evaluates_arithmetic_groups_over_the_captures) {
  EXPECT_EQ(eval("|node(\\d+)|10.0.0.($1+0)|", "node012"), "10.0.0.12");
  EXPECT_EQ(eval("|node(\\d+)|10.0.($1/256).($1%256)|", "node300"), "10.0.1.44");
  EXPECT_EQ(eval("|\\D+(\\d+)|192.168.1.($1*2+1)|", "cn7"), "192.168.1.15");
  EXPECT_EQ(eval("|r(\\d+)n(\\d+)|10.($1).($2+100)|", "r3n04"), "10.3.104");
  EXPECT_EQ(eval("|node(\\d+)|(-$1-1)|", "node5"), "-6");
  EXPECT_EQ(eval("|node(\\d+)|((($1+1))*2)|", "node5"), "12");
  EXPECT_EQ(eval("|node(\\d+)|${1}|", "node5"), "${1}") << "no group: a literal";
  EXPECT_EQ(eval("|node(\\d+)|(${1}+1)|", "node5"), "6");
  EXPECT_EQ(eval("|node(\\d+)|(sprintf(\"%03d\",$1))|", "node5"), "005");
  EXPECT_EQ(eval("|node(\\d+)|bmc(sprintf('%x',$1+0))|", "node255"), "bmcff");
  EXPECT_EQ(eval("|node(\\d+)|(sprintf(\"%04s\",$1))|", "node5"), "0005");
}

TEST(regex_value, a_partial_match_keeps_the_rest_of_the_name_as_xcat_does) {
  // xCAT replaces the match inside the name by each group's value, then the match by the
  // whole text: the unmatched parts appear in both places (checked against perl)
  EXPECT_EQ(eval("|(\\d+)|($1+1)|", "cn5x"), "cncn6xx");
  EXPECT_EQ(eval("|(\\d+)|ip($1+1)|", "cn5x"), "cnipcn6xx");
  EXPECT_EQ(eval("|zz(\\d+)|($1)|", "cn5"), "cn5") << "no match: the name itself";
}

TEST(regex_value, division_by_zero_gives_an_empty_group_and_nothing_crashes) {
  EXPECT_EQ(eval("|node(\\d+)|a($1/0)b|", "node5"), "ab");
  EXPECT_EQ(eval("|node(\\d+)|($1%0)|", "node5"), "");
  EXPECT_EQ(eval("|n(\\d+)|($1*$1*$1*$1*$1*$1*$1*$1*$1)|", "n99999999"), "-5102542766852740865")
    << "wraps like Perl's use integer";
}

TEST(regex_value, bad_expressions_are_refused_with_what_is_wrong) {
  EXPECT_NE(refusal("|node(\\d+|10.0.0.($1)|").find("missing )"), std::string::npos);
  EXPECT_NE(refusal("|node(\\d+)|10.0.0.($1 + 1)|").find("no spaces"), std::string::npos);
  EXPECT_NE(refusal("|node(\\d+)|(system(\"ls\"))|").find("integer arithmetic"), std::string::npos);
  EXPECT_NE(refusal("|node(\\d+)|($1+)|").find("is not integer arithmetic"), std::string::npos);
  EXPECT_NE(refusal("|node(\\d+)|($1))|").find("unbalanced ')'"), std::string::npos);
  EXPECT_NE(refusal("|node(\\d+)|(($1)|").find("unbalanced '('"), std::string::npos);
  EXPECT_FALSE(refusal("|n(\\d+)|(sprintf(\"%d%d\",$1))|").empty()) << "one conversion only";
  EXPECT_FALSE(refusal("/(a)\\1/b/").empty()) << "backreferences: not linear time";
  EXPECT_NE(refusal("/" + std::string(regex_value::max_length, 'a') + "/b/").find("longer"),
            std::string::npos);
  std::string deep = "|n(\\d+)|" + std::string(200, '(') + "$1" + std::string(200, ')') + "|";
  EXPECT_FALSE(refusal(deep).empty()) << "nesting is bounded";
}

} // namespace

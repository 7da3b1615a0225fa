// rcons's keystroke parser (cli/rcons_escape.hpp): conserver's ^Ec escapes taken out of what
// is typed, the rest sent as it came, across any split of the input.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/rcons_escape.hpp"

namespace {

using cws::cli::rcons_action;
using cws::cli::rcons_escape;
using cws::cli::rcons_event;

std::vector<rcons_event> parse(const std::string& keys, size_t piece = 0) {
  rcons_escape p;
  std::vector<rcons_event> out;
  if (piece == 0) {
    p.feed(keys, out);
  } else {
    for (size_t i = 0; i < keys.size(); i += piece) {
      p.feed(std::string_view{keys}.substr(i, piece), out);
    }
  }
  return out;
}

rcons_event send(std::string b) {
  return {rcons_action::send, std::move(b)};
}

rcons_event act(rcons_action a, std::string b = {}) {
  return {a, std::move(b)};
}

TEST(rcons_escape, plain_keys_go_out_as_typed_in_one_piece) {
  EXPECT_EQ(parse("ls -l\r"), (std::vector<rcons_event>{send("ls -l\r")}));
  EXPECT_TRUE(parse("").empty());
}

TEST(rcons_escape, each_command_of_conserver_that_rcons_has_is_recognized) {
  EXPECT_EQ(parse("ab\x05"
                  "c.cd"),
            (std::vector<rcons_event>{send("ab"), act(rcons_action::quit), send("cd")}));
  EXPECT_EQ(parse("\x05"
                  "cf"),
            (std::vector<rcons_event>{act(rcons_action::force)}));
  EXPECT_EQ(parse("\x05"
                  "cs"),
            (std::vector<rcons_event>{act(rcons_action::spy)}));
  EXPECT_EQ(parse("\x05"
                  "ca"),
            (std::vector<rcons_event>{act(rcons_action::attach)}));
  EXPECT_EQ(parse("\x05"
                  "cl0"),
            (std::vector<rcons_event>{act(rcons_action::send_break)}));
  EXPECT_EQ(parse("\x05"
                  "cl?"),
            (std::vector<rcons_event>{act(rcons_action::break_list)}));
  EXPECT_EQ(parse("\x05"
                  "c?"),
            (std::vector<rcons_event>{act(rcons_action::help)}));
  EXPECT_EQ(parse("\x05"
                  "c\r"),
            (std::vector<rcons_event>{act(rcons_action::ignored)}));
}

TEST(rcons_escape, an_unknown_command_discards_its_keys) {
  EXPECT_EQ(parse("\x05"
                  "czx"),
            (std::vector<rcons_event>{act(rcons_action::unknown, "z"), send("x")}));
  EXPECT_EQ(parse("\x05"
                  "cl5"),
            (std::vector<rcons_event>{act(rcons_action::unknown, "l5")}));
}

TEST(rcons_escape, control_e_not_followed_by_c_is_sent_with_the_next_key) {
  EXPECT_EQ(parse("a\x05xb"), (std::vector<rcons_event>{send("a\x05xb")}));
  // a second ^E sends the first and may begin the escape itself
  EXPECT_EQ(parse("\x05\x05"
                  "c."),
            (std::vector<rcons_event>{send("\x05"), act(rcons_action::quit)}));
}

TEST(rcons_escape, an_octal_code_sends_that_character_so_control_e_can_be_sent) {
  EXPECT_EQ(parse("\x05"
                  "c\\005c"),
            (std::vector<rcons_event>{send("\x05"
                                           "c")}));
  EXPECT_EQ(parse("\x05"
                  "c\\101"),
            (std::vector<rcons_event>{send("A")}));
  EXPECT_EQ(parse("\x05"
                  "c\\08"),
            (std::vector<rcons_event>{act(rcons_action::unknown, "\\08")}));
  EXPECT_EQ(parse("\x05"
                  "c\\4"),
            (std::vector<rcons_event>{act(rcons_action::unknown, "\\4")}));
}

TEST(rcons_escape, an_escape_typed_one_key_at_a_time_is_held_until_complete) {
  rcons_escape p;
  std::vector<rcons_event> out;
  p.feed("\x05", out);
  EXPECT_TRUE(p.pending());
  EXPECT_TRUE(out.empty());
  p.feed("c", out);
  p.feed("l", out);
  EXPECT_TRUE(p.pending());
  p.feed("0", out);
  EXPECT_FALSE(p.pending());
  EXPECT_EQ(out, (std::vector<rcons_event>{act(rcons_action::send_break)}));
  auto keys = std::string{"x\x05"
                          "cfy\x05"
                          "c\\101z\x05"
                          "c.w"};
  for (size_t piece = 1; piece < keys.size(); ++piece) {
    auto got = parse(keys, piece);
    std::string sent;
    std::vector<rcons_action> acts;
    for (auto& e : got) {
      if (e.action == rcons_action::send) {
        sent += e.bytes;
      } else {
        acts.push_back(e.action);
      }
    }
    EXPECT_EQ(sent, "xyAzw") << piece;
    EXPECT_EQ(acts, (std::vector<rcons_action>{rcons_action::force, rcons_action::quit})) << piece;
  }
}

} // namespace

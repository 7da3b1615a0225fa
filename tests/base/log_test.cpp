#include "base/log.hpp"

#include <gtest/gtest.h>

#include "base/log_burst.hpp"

namespace {

using cws::base::log_level;

/// What `fn` writes to stderr (the log's stream).
template<class Fn>
std::string logged(Fn fn) {
  testing::internal::CaptureStderr();
  fn();
  return testing::internal::GetCapturedStderr();
}

struct log_test : ::testing::Test {
  ~log_test() override {
    cws::base::set_log_level(log_level::info);
  }
};

TEST_F(log_test, one_line_per_message_with_its_level_below_the_threshold_only) {
  auto out = logged([] {
    cws::base::log(log_level::error, "disk\nfull\tnow");
    cws::base::log(log_level::debug, "not written at info");
  });
  // 2026-11-23T22:00:24Z error: disk full now
  ASSERT_EQ(out.size(), 21 + std::string{"error: disk full now\n"}.size()) << out;
  EXPECT_EQ(out.substr(19, 2), "Z ");
  EXPECT_EQ(out.substr(21), "error: disk full now\n");
  cws::base::set_log_level(log_level::warning);
  out = logged([] {
    cws::base::log(log_level::notice, "listening");
    cws::base::log(log_level::warning, "careful");
  });
  EXPECT_EQ(out.substr(21), "warning: careful\n");
}

TEST_F(log_test, levels_parse_by_name) {
  EXPECT_EQ(cws::base::parse_log_level("debug"), log_level::debug);
  EXPECT_EQ(cws::base::parse_log_level("error"), log_level::error);
  EXPECT_FALSE(cws::base::parse_log_level("loud"));
  EXPECT_FALSE(cws::base::parse_log_level("ERROR"));
}

TEST_F(log_test, a_burst_is_one_line_then_a_summary_per_period) {
  cws::base::log_burst burst{log_level::warning, "TLS handshake failed"};
  auto out = logged([&] {
    for (int i = 0; i < 5; ++i) {
      burst.note("10.0.0." + std::to_string(i) + ": bad");
    }
    burst.flush(std::chrono::seconds(60));
    burst.flush(std::chrono::seconds(60)); // nothing more happened: nothing written
    burst.note("10.0.0.9: bad");           // a new period: written at once
  });
  EXPECT_NE(out.find("warning: TLS handshake failed: 10.0.0.0: bad\n"), std::string::npos) << out;
  EXPECT_NE(out.find("warning: TLS handshake failed 4 more times in the last 60 s (last: "
                     "10.0.0.4: bad)\n"),
            std::string::npos)
    << out;
  EXPECT_NE(out.find("warning: TLS handshake failed: 10.0.0.9: bad\n"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;
}

} // namespace

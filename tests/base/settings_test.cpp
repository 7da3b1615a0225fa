// The settings schema: every bad line of a configuration file is refused with its file,
// line and key; nothing is ignored or read halfway.

#include <gtest/gtest.h>

#include <fstream>

#include "api/settings.hpp"
#include "base/settings.hpp"
#include "base/text.hpp"

namespace {

using namespace cws;

struct conf_file {
  std::filesystem::path path = std::filesystem::temp_directory_path()
                               / ("cws-settings-" + std::to_string(::getpid()) + ".conf");

  explicit conf_file(const std::string& text) {
    std::ofstream{path} << text;
  }

  ~conf_file() {
    std::filesystem::remove(path);
  }
};

/// The error loading `text` gives ("" if it loads).
std::string error_of(const std::string& text) {
  conf_file f{text};
  try {
    api::load_settings(f.path);
    return {};
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    auto at = msg.find(f.path.string());
    return at == std::string::npos ? msg : "FILE" + msg.substr(at + f.path.string().size());
  }
}

TEST(settings, defaults_come_from_the_schema) {
  conf_file f{"# nothing set\n\n"};
  auto s = api::load_settings(f.path);
  EXPECT_EQ(s.number("commit_wait_us"), 1000u);
  EXPECT_EQ(s.number("ssh_port"), 22u);
  EXPECT_EQ(s.text("listen"), "127.0.0.1:8443");
  EXPECT_EQ(s.text("audit_log"), ""); // computed from the home
  auto shell = api::shell_settings(s, "/h");
  EXPECT_EQ(shell.key_dir, "/h/ssh");
  EXPECT_EQ(api::engine_settings(s, "/h").known_hosts, "/h/ssh/known_hosts");
}

TEST(settings, sn_copy_max_bounds_the_copy_a_share_carries_on_both_sides) {
  conf_file f{"sn_copy_max = 4096\ncopy_files_max = 12\n"};
  auto s = api::load_settings(f.path);
  EXPECT_EQ(api::delegation_settings_from(s).copy_max, 4096u);
  auto limits = api::sn_request_limits(s);
  EXPECT_EQ(limits.max_copy_bytes, 4096u);
  EXPECT_EQ(limits.max_copy_files, 12u);
  // past the 64 MiB a received request may have: refused
  EXPECT_NE(error_of("sn_copy_max = 67108864\n"), "");
}

TEST(settings, values_are_read_with_comments_and_blanks) {
  conf_file f{"  ssh_port = 2222   # a comment\nlisten=[::1]:0\n"};
  auto s = api::load_settings(f.path);
  EXPECT_EQ(s.number("ssh_port"), 2222u);
  EXPECT_EQ(s.text("listen"), "[::1]:0");
}

TEST(settings, bad_lines_are_refused_naming_file_line_and_key) {
  EXPECT_EQ(error_of("noderange_mx = 10\n"), "FILE:1: unknown setting 'noderange_mx'");
  EXPECT_EQ(error_of("\nnoderange_max = 1e6\n"),
            "FILE:2: 'noderange_max' must be a whole number, not '1e6'");
  EXPECT_EQ(error_of("ssh_port = 70000\n"),
            "FILE:1: 'ssh_port' must be between 1 and 65535, not 70000");
  EXPECT_EQ(error_of("ssh_port = -1\n"), "FILE:1: 'ssh_port' must be a whole number, not '-1'");
  EXPECT_EQ(error_of("io_threads = 99999999999999999999999\n"),
            "FILE:1: 'io_threads' must be a whole number, not '99999999999999999999999'");
  EXPECT_EQ(error_of("io_threads = 2\nio_threads = 3\n"), "FILE:2: 'io_threads' is set twice");
  EXPECT_EQ(error_of("just words\n"), "FILE:1: expected 'key = value', not 'just words'");
  EXPECT_EQ(error_of("ssh_host_key_policy = maybe\n"),
            "FILE:1: 'ssh_host_key_policy' must be one of strict|accept-new|off, not 'maybe'");
  EXPECT_EQ(error_of("ssh_fanout =\n"), "FILE:1: 'ssh_fanout' must be a whole number, not ''");
}

TEST(settings, retired_keys_are_accepted_ignored_and_named) {
  conf_file f{"caf_threads = 4\nssh_port = 2200\ncaf_aggressive_polls = lots\n"};
  auto s = api::load_settings(f.path);
  EXPECT_EQ(s.number("ssh_port"), 2200u);
  ASSERT_EQ(s.retired_given().size(), 2u);
  EXPECT_EQ(s.retired_given()[0]->key, "caf_threads");
  EXPECT_EQ(s.retired_given()[1]->key, "caf_aggressive_polls");
  EXPECT_THROW(s.number("caf_threads"), std::logic_error);                // nothing reads one
  EXPECT_TRUE(s.changed(api::load_settings("/nonexistent")).size() == 1); // ssh_port only
  EXPECT_EQ(error_of("caf_threads = 1\ncaf_threads = 2\n"), "FILE:2: 'caf_threads' is set twice");
  auto written = base::settings::commented(api::settings_schema(), "test");
  EXPECT_EQ(written.find("caf_"), std::string::npos);
}

TEST(settings, overrides_are_checked_like_lines) {
  base::settings s{api::settings_schema()};
  s.set("io_threads", "4", "--io-threads");
  EXPECT_EQ(s.number("io_threads"), 4u);
  EXPECT_THROW(s.set("io_threads", "0", "--io-threads"), std::invalid_argument);
  EXPECT_EQ(s.number("io_threads"), 4u); // a refused value changes nothing
  EXPECT_THROW(s.number("no_such_key"), std::logic_error);
}

TEST(settings, the_commented_file_loads_to_the_defaults) {
  conf_file f{base::settings::commented(api::settings_schema(), "test")};
  auto s = api::load_settings(f.path);
  for (const auto& spec : api::settings_schema()) {
    if (spec.kind == base::setting_kind::number) {
      EXPECT_EQ(std::to_string(s.number(spec.key)), spec.fallback) << spec.key;
    }
  }
  // every default is inside its own range
  for (const auto& spec : api::settings_schema()) {
    base::settings fresh{api::settings_schema()};
    EXPECT_NO_THROW(fresh.set(spec.key, spec.fallback.empty() && spec.choices.empty()
                                          ? std::string_view{"x"}
                                          : spec.fallback))
      << spec.key;
  }
}

TEST(text, lists_lines_and_numbers) {
  EXPECT_EQ(base::split_list(" a, ,b ,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(base::join_list({"a", "b"}), "a,b");
  EXPECT_EQ(base::output_lines("x\r\ny\n"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(base::output_lines("x\n\nz"), (std::vector<std::string>{"x", "", "z"}));
  unsigned long long n = 0;
  EXPECT_TRUE(base::parse_unsigned("0042", n));
  EXPECT_EQ(n, 42u);
  EXPECT_FALSE(base::parse_unsigned("+1", n));
  EXPECT_FALSE(base::parse_unsigned("1 ", n));
  EXPECT_FALSE(base::parse_unsigned("18446744073709551616", n));
}

} // namespace

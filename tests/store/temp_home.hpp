#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

namespace cws::test {

/// A temporary directory removed at the end of the test.
struct temp_dir {
  std::filesystem::path path;

  temp_dir() {
    std::string templ = (std::filesystem::temp_directory_path() / "cws-test-XXXXXX").string();
    path = mkdtemp(templ.data());
  }

  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

} // namespace cws::test

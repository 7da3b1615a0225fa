#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "daemon.hpp"

namespace cws::test {

/// What a browser test script did: its exit status, its output (stdout and stderr) and its
/// wall time.
struct browser_result {
  int rc = -1;
  std::string out;
  double seconds = 0;
};

/// Whether the browser tests can run here: /usr/bin/chromium (Debian's `chromium`) and
/// playwright-core in web/node_modules (the build's `npm ci`).
bool browser_available();

/// Where a browser test saves its screenshots: docs/web/ in the source tree when the
/// environment has CWS_SAVE_SHOTS=1 (they are the pictures of docs/web.md), else `scratch`
/// (the test's temporary directory, removed with it).
std::filesystem::path shots_dir(const std::filesystem::path& scratch);

/// Runs `node tests/web/<script>` against the running daemon `d` with CWS_URL
/// (https://127.0.0.1:<port>), CWS_USER, CWS_PASSWORD and CWS_SHOTS (`shots`) set, plus `env`;
/// killed after `limit`. Prints the script's wall time.
browser_result run_browser(const daemon& d, const std::string& script, const std::string& user,
                           const std::string& password, const std::filesystem::path& shots,
                           const std::vector<std::pair<std::string, std::string>>& env = {},
                           std::chrono::seconds limit = std::chrono::seconds(120));

} // namespace cws::test

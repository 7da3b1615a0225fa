#include "browser.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace cws::test {

namespace {

/// `s` in single quotes for sh.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  }
  return out + "'";
}

const std::filesystem::path source_dir{CWS_WEB_SOURCE_DIR};

} // namespace

bool browser_available() {
  return std::filesystem::exists("/usr/bin/chromium")
         && std::filesystem::exists(source_dir / "web/node_modules/playwright-core");
}

std::filesystem::path shots_dir(const std::filesystem::path& scratch) {
  const char* save = std::getenv("CWS_SAVE_SHOTS");
  if (save != nullptr && std::string{save} == "1") {
    return source_dir / "docs/web";
  }
  return scratch / "shots";
}

browser_result run_browser(const daemon& d, const std::string& script, const std::string& user,
                           const std::string& password, const std::filesystem::path& shots,
                           const std::vector<std::pair<std::string, std::string>>& env,
                           std::chrono::seconds limit) {
  std::string cmd = "cd " + quoted(source_dir.string()) + " && env";
  cmd += " CWS_URL=" + quoted("https://127.0.0.1:" + std::to_string(d.port()));
  cmd += " CWS_USER=" + quoted(user) + " CWS_PASSWORD=" + quoted(password);
  cmd += " CWS_SHOTS=" + quoted(shots.string());
  for (const auto& [k, v] : env) {
    cmd += " " + k + "=" + quoted(v);
  }
  cmd += " timeout -k 5 " + std::to_string(limit.count()) + " node " + quoted("tests/web/" + script)
         + " 2>&1";
  browser_result r;
  auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    r.out = "popen failed";
    return r;
  }
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    r.out.append(buf, n);
  }
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "browser test " << script << ": " << r.seconds << " s wall time (exit " << r.rc
            << ")" << std::endl;
  return r;
}

} // namespace cws::test

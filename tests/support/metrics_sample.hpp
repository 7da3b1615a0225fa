#pragma once

// Reading the daemon's metrics page in whole-daemon tests.

#include <string>

namespace cws::test {

/// The value of `series` (a family name, with its labels as the page writes them:
/// `clusterws_ipmi_nodes_total{result="ok"}`) on metrics page `page`; -1 if it is not there.
inline double metric_sample(const std::string& page, const std::string& series) {
  auto at = page.find("\n" + series + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stod(page.substr(at + series.size() + 2));
}

/// How much `series` grew from page `before` to page `after` (absent counts as 0).
inline double metric_growth(const std::string& before, const std::string& after,
                            const std::string& series) {
  auto b = metric_sample(before, series);
  auto a = metric_sample(after, series);
  return (a < 0 ? 0 : a) - (b < 0 ? 0 : b);
}

} // namespace cws::test

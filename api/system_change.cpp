#include "api/system_change.hpp"

#include "base/published_file.hpp"

namespace cws::api {

std::string system_change::dry_run_text(std::string* error) const {
  std::string out;
  for (const auto& f : files) {
    std::string old;
    if (auto ec = base::read_file(f.path, read_limit, old)) {
      if (error && error->empty())
        *error = "cannot read " + f.path.string() + ": " + ec.message();
      continue;
    }
    auto diff = base::unified_diff(old, f.content, f.path.string(), f.path.string());
    if (diff.empty())
      out += f.path.string() + ": unchanged\n";
    else
      out += diff;
  }
  for (const auto& a : actions)
    out += "would run: " + a.description + "\n";
  return out;
}

std::error_code system_change::apply(std::string& message) const {
  std::vector<base::file_to_publish> batch;
  batch.reserve(files.size());
  for (const auto& f : files)
    batch.push_back({f.path, f.content, f.mode});
  std::size_t failed = 0;
  if (auto ec = base::publish_files(batch, &failed)) {
    message = "cannot write " + files[failed].path.string() + ": " + ec.message();
    return ec;
  }
  for (const auto& a : actions) {
    std::string detail;
    std::error_code ec = a.run ? a.run(detail) : std::error_code{};
    if (ec) {
      message = a.description + ": " + (detail.empty() ? ec.message() : detail);
      return ec;
    }
  }
  return {};
}

} // namespace cws::api

#include "api/copy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace cws::api {

namespace {

namespace fs = std::filesystem;

api_result refuse(const std::string& message) {
  return api_result::failure(errc::bad_request, message + " Nothing was copied.");
}

/// Reads the builder's sources: one file or directory tree at a time.
class builder {
 public:
  builder(const copy_request& req, const copy_config& cfg, ssh::copy_spec& spec)
      : req_(req), cfg_(cfg), spec_(spec) {
    if (req.confined) {
      std::error_code ec;
      root_ = fs::canonical(cfg.root, ec);
    }
  }

  /// Adds `source` (as named) to `g`.
  api_result add(const std::string& source, ssh::copy_group& g) {
    if (source.empty() || source.find('\n') != std::string::npos) {
      return refuse("A source path is empty or has a line break.");
    }
    fs::path p{source};
    if (req_.confined) {
      if (root_.empty()) {
        return refuse("Copies are not possible: copy_root (" + cfg_.root.string()
                      + ") does not exist.");
      }
      if (!p.is_absolute() || !inside_root(p, root_)) {
        return refuse("The source " + source + " is not inside " + root_.string()
                      + " (copy_root).");
      }
      p = fs::canonical(p);
    }
    auto name = p.filename().string();
    if (name.empty() || name == "." || name == "..") {
      name = fs::weakly_canonical(p).filename().string();
    }
    if (name.empty()) {
      return refuse("The source " + source + " names no file.");
    }
    return add_path(p, name, source, g, true);
  }

 private:
  api_result add_path(const fs::path& p, const std::string& name, const std::string& shown,
                      ssh::copy_group& g, bool top) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      return refuse(shown + ": " + std::strerror(errno) + ".");
    }
    if (++count_ > cfg_.files_max) {
      return refuse("More than " + std::to_string(cfg_.files_max)
                    + " files and directories (copy_files_max).");
    }
    ssh::copy_file f;
    f.name = name;
    f.mode = st.st_mode & 07777;
    if (req_.preserve) {
      f.atime = st.st_atime;
      f.mtime = st.st_mtime;
    }
    if (S_ISDIR(st.st_mode)) {
      if (!req_.recursive) {
        return refuse(shown + " is a directory: -R copies directories.");
      }
      f.directory = true;
      f.mode |= 0700; // the copy must be able to fill it
      g.files.push_back(std::move(f));
      std::error_code ec;
      std::vector<fs::path> children;
      for (fs::directory_iterator it{p, ec}, end; !ec && it != end; it.increment(ec)) {
        children.push_back(it->path());
      }
      if (ec) {
        return refuse(shown + ": " + ec.message() + ".");
      }
      std::sort(children.begin(), children.end());
      for (const auto& c : children) {
        if (req_.confined && !inside_root(c, root_)) {
          return refuse("The source " + c.string() + " is not inside " + root_.string()
                        + " (copy_root).");
        }
        auto r = add_path(c, name + "/" + c.filename().string(), c.string(), g, false);
        if (!r.ok()) {
          return r;
        }
      }
      return {};
    }
    if (!S_ISREG(st.st_mode)) {
      return refuse(shown + " is not a regular file.");
    }
    (void)top;
    auto size = static_cast<size_t>(st.st_size);
    if (::access(p.c_str(), R_OK) != 0) {
      return refuse(shown + ": " + std::strerror(errno) + ".");
    }
    if (size <= cfg_.memory_max - std::min(cfg_.memory_max, in_memory_)) {
      std::ifstream in{p, std::ios::binary};
      auto data = std::make_shared<std::string>();
      data->resize(size);
      if (!in.read(data->data(), static_cast<std::streamsize>(size))) {
        return refuse(shown + ": cannot be read.");
      }
      in_memory_ += size;
      f.data = std::move(data);
    } else {
      f.local = fs::absolute(p);
    }
    g.files.push_back(std::move(f));
    return {};
  }

  const copy_request& req_;
  const copy_config& cfg_;
  ssh::copy_spec& spec_;
  fs::path root_;
  size_t count_ = 0;
  size_t in_memory_ = 0;
};

} // namespace

std::string describe(const copy_request& req, const std::string& command) {
  std::string s = req.execute ? "xdsh -e" : "xdcp";
  s += req.recursive ? " -R" : "";
  s += req.preserve ? " -p" : "";
  s += req.pull ? " -P" : "";
  for (const auto& e : req.entries) {
    for (const auto& src : e.sources) {
      s += " " + src;
    }
    s += req.execute ? "" : (req.entries.size() > 1 ? " ->" : "") + std::string{" "} + e.target;
  }
  return req.execute && !command.empty() ? s + " " + command : s;
}

std::string parse_synclist(const std::string& text, std::vector<copy_entry>& out) {
  std::istringstream in{text};
  std::string line;
  size_t number = 0;
  std::vector<copy_entry> entries;
  while (std::getline(in, line)) {
    ++number;
    auto where = "line " + std::to_string(number) + ": ";
    std::istringstream words{line};
    std::vector<std::string> w;
    for (std::string word; words >> word;) {
      if (word.front() == '#') {
        break;
      }
      w.push_back(word);
    }
    if (w.empty()) {
      continue;
    }
    if (w.size() == 1 && w.front().back() == ':') {
      return where + "the " + w.front()
             + " section is not supported (only `source... -> destination` lines are).";
    }
    auto arrow = std::find(w.begin(), w.end(), "->");
    if (arrow != w.end() && arrow + 1 != w.end() && arrow[1].front() == '(') {
      return where + "node lists in a synclist line are not supported.";
    }
    if (arrow == w.end() || arrow == w.begin() || arrow + 2 != w.end() || arrow[1] == "->") {
      return where + "expected `source... -> destination`.";
    }
    copy_entry e;
    e.sources.assign(w.begin(), arrow);
    e.target = arrow[1];
    entries.push_back(std::move(e));
  }
  if (entries.empty()) {
    return "the synclist has no `source -> destination` line.";
  }
  out = std::move(entries);
  return {};
}

bool inside_root(const fs::path& path, const fs::path& root) {
  std::error_code ec;
  auto real = fs::canonical(path, ec);
  if (ec) {
    return false;
  }
  auto r = root.string();
  auto s = real.string();
  if (r == "/") {
    return true;
  }
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && s[r.size()] == '/');
}

api_result build_copy(const copy_request& req, const copy_config& cfg,
                      std::shared_ptr<const ssh::copy_spec>& out) {
  auto spec = std::make_shared<ssh::copy_spec>();
  spec->chunk = cfg.chunk;
  spec->preserve = req.preserve;
  spec->execute = req.execute;
  if (req.entries.empty() || req.entries.front().sources.empty()) {
    return api_result::failure(errc::missing_data, "Lack of operation data.");
  }
  if (req.pull) {
    const auto& e = req.entries.front();
    if (req.entries.size() != 1 || e.sources.size() != 1) {
      return refuse("-P pulls one file per run.");
    }
    auto remote = e.sources.front();
    // `dir/` names `dir`: the local name is its last component
    while (remote.size() > 1 && remote.back() == '/') {
      remote.pop_back();
    }
    if (remote.empty() || remote.find('\n') != std::string::npos) {
      return refuse("The remote file name is empty or has a line break.");
    }
    if (remote == "/" || remote == "." || remote == ".."
        || (remote.size() > 2 && remote.compare(remote.size() - 3, 3, "/..") == 0)
        || (remote.size() > 1 && remote.compare(remote.size() - 2, 2, "/.") == 0)) {
      return refuse("The remote path " + remote + " has no name to pull it as.");
    }
    std::error_code ec;
    if (!fs::is_directory(e.target, ec)) {
      return refuse("The target " + e.target + " must be an existing directory for -P.");
    }
    spec->pull = remote;
    spec->pull_dir = fs::absolute(e.target);
    spec->pull_tree = req.recursive;
    spec->pull_entries_max = cfg.files_max;
    out = std::move(spec);
    return {};
  }
  builder b{req, cfg, *spec};
  for (const auto& e : req.entries) {
    if (e.target.empty() || e.target.find('\n') != std::string::npos) {
      return refuse("The target path is empty or has a line break.");
    }
    ssh::copy_group g;
    g.target = e.target;
    g.into = e.sources.size() > 1 || e.target.back() == '/';
    for (const auto& s : e.sources) {
      if (auto r = b.add(s, g); !r.ok()) {
        return r;
      }
    }
    if (g.target.size() > 1 && g.target.back() == '/') {
      g.target.pop_back();
    }
    spec->push.push_back(std::move(g));
  }
  if (req.execute) {
    if (spec->push.size() != 1 || spec->push.front().files.size() != 1
        || spec->push.front().files.front().directory) {
      return refuse("-e runs one script file.");
    }
    spec->push.front().files.front().mode |= 0700;
    spec->push.front().files.front().atime = -1;
    spec->push.front().files.front().mtime = -1;
  }
  out = std::move(spec);
  return {};
}

} // namespace cws::api

#include "api/sn_sync.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

#include "base/published_file.hpp"

namespace cws::api {

namespace {

namespace fs = std::filesystem;

/// A user name as a key directory may be named: 1 to 64 of [A-Za-z0-9._-], not starting with
/// '.' or '-' (it becomes a path and a word of a shell command on the service node).
bool valid_user(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-';
  });
}

/// An absolute path without `.`/`..` parts or characters a shell word would need quoting for
/// beyond shell_quote's.
bool valid_home(const std::string& home) {
  if (home.size() < 2 || home.front() != '/' || home.size() > 1024) {
    return false;
  }
  for (auto& part : fs::path{home}) {
    if (part == "." || part == "..") {
      return false;
    }
  }
  return home.find('\0') == std::string::npos && home.find('\n') == std::string::npos;
}

bool regular(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

} // namespace

std::string plan_sn_sync(const fs::path& key_dir, const std::string& remote_home,
                         const std::function<bool(const std::string&)>& user_exists,
                         sn_sync_plan& out) {
  out = {};
  auto home = remote_home;
  while (home.size() > 1 && home.back() == '/') {
    home.pop_back();
  }
  if (!valid_home(home)) {
    return "'" + remote_home + "' is no absolute path for the service node's home";
  }
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(key_dir, ec)) {
    std::error_code ec2;
    if (e.symlink_status(ec2).type() == fs::file_type::directory) {
      names.push_back(e.path().filename().string());
    }
  }
  if (ec) {
    return "cannot read " + key_dir.string() + ": " + ec.message();
  }
  std::sort(names.begin(), names.end());
  auto spec = std::make_shared<ssh::copy_spec>();
  ssh::copy_group group;
  group.target = home + "/ssh/";
  group.into = true;
  auto ssh_dir = ssh::shell_quote(home + "/ssh");
  out.prepare = "umask 077; test -d " + ssh::shell_quote(home) + " || { echo 'no service-node home "
                + home
                + " here (copy the one clusterctl sn add wrote first)' >&2; exit 1; }; mkdir -p "
                + ssh_dir + " && chmod 0700 " + ssh_dir;
  for (const auto& user : names) {
    if (!valid_user(user)) {
      out.skipped.emplace_back(user, "not a user name");
      continue;
    }
    auto key = key_dir / user / "id_ed25519";
    if (!regular(key)) {
      out.skipped.emplace_back(user, "no regular file " + key.string());
      continue;
    }
    if (!user_exists(user)) {
      out.skipped.emplace_back(user, "no API user or Unix account '" + user + "' on this head");
      continue;
    }
    std::vector<std::pair<std::string, std::shared_ptr<const std::string>>> files;
    bool read = true;
    for (const char* f : {"id_ed25519", "id_ed25519.pub"}) {
      auto path = key_dir / user / f;
      if (std::string(f) != "id_ed25519" && !regular(path)) {
        continue; // the public key is optional (nodeshell derives it)
      }
      std::string text;
      bool exists = false;
      if (base::read_file(path, sn_sync_file_max, text, &exists) || !exists) {
        out.skipped.emplace_back(user, "cannot read " + path.string());
        read = false;
        break;
      }
      files.emplace_back(f, std::make_shared<const std::string>(std::move(text)));
    }
    if (!read) {
      continue;
    }
    out.users.push_back(user);
    auto dir = ssh::shell_quote(home + "/ssh/" + user);
    out.prepare += " && mkdir -p " + dir + " && chmod 0700 " + dir;
    ssh::copy_file d;
    d.name = user;
    d.directory = true;
    d.mode = 0700;
    group.files.push_back(std::move(d));
    for (auto& [name, data] : files) {
      ssh::copy_file f;
      f.name = user + "/" + name;
      f.mode = 0600;
      f.data = std::move(data);
      f.local = key_dir / user / name;
      out.files.push_back("ssh/" + f.name);
      group.files.push_back(std::move(f));
    }
  }
  spec->push.push_back(std::move(group));
  out.copy = std::move(spec);
  return {};
}

} // namespace cws::api

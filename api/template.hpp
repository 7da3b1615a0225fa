#pragma once

// Install templates (kickstart, preseed) in xCAT's template language (Template.pm), the
// subset clusterws renders: `#TABLE:tab:$NODE|THISNODE|key=v,...:col#`,
// `#TABLEBLANKOKAY:...#`, `#HOSTNAME#`, `#SHORTNAME#`,
// `#CRYPT:passwd:key=system,username=root:password#`, `#INCLUDE:file#`, and clusterws's
// `#CWSVAR:name#` (the install token, the status and server URLs the boot listener knows).
// A template is parsed once (includes read then, bounded in depth and size) into a compiled
// form rendered per node with no parsing. `#COMMAND:...#` (a shell command on the management
// node, in xCAT) is refused when the template is parsed. Any other text, unknown `#...#`
// included, is copied as it is (kickstart comments start with '#').

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "store/cluster_view.hpp"

namespace cws::api {

/// The bounds of a template and its includes (settings `template_max_bytes`,
/// `template_include_depth`).
struct template_limits {
  /// Bytes of the template and every file it includes, together.
  size_t max_bytes = 1 << 20;
  /// Nested #INCLUDE# levels (0: no include at all).
  size_t max_depth = 8;
};

/// A template that cannot be parsed or rendered, with the reason.
struct template_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads an included file: its whole text, or throws template_error. `path` is as the
/// template names it, made absolute against the including file's directory.
using include_reader = std::function<std::string(const std::filesystem::path& path)>;

/// Reads files from the file system, refusing any larger than `max_bytes`.
include_reader file_reader(size_t max_bytes);

/// Where a compiled template's values come from, for one node.
class template_values {
 public:
  virtual ~template_values() = default;
  /// `#TABLE:table:$NODE:column#`: the node's row (group values inherited); nullopt if unset.
  virtual std::optional<std::string> node_column(std::string_view table,
                                                 std::string_view column) const = 0;
  /// `#TABLE:table:key=v,...:column#`: the first matching row's column; nullopt if none.
  virtual std::optional<std::string> row_column(std::string_view table, std::string_view keys,
                                                std::string_view column) const = 0;
  /// `#CRYPT:table:keys:column#`: the value as a crypt(3) hash (SHA-512 `$6$`), never clear.
  virtual std::optional<std::string> crypted(std::string_view table, std::string_view keys,
                                             std::string_view column) const = 0;
  /// `#CWSVAR:name#`: "" when the renderer has none of that name.
  virtual std::string variable(std::string_view name) const = 0;
};

/// A parsed template. Cheap to render many times; immutable, so shared between threads.
class compiled_template {
 public:
  /// Parses `text` (from `origin`, whose directory relative includes are read from).
  /// @throws template_error: `#COMMAND#`, a malformed directive, an include past the depth,
  ///         the total past `max_bytes`, an unreadable include.
  static compiled_template parse(std::string_view text, const std::filesystem::path& origin,
                                 const template_limits& limits, const include_reader& read);

  /// The text for node `node`. @throws template_error naming a `#TABLE#` value that is
  /// unset (xCAT's `Unable to find requested <col> from <table>, with <key>`).
  std::string render(std::string_view node, const template_values& values) const;

  /// Directives held (tests, diagnostics).
  size_t directives() const noexcept;

  /// Bytes the compiled form holds (the template cache's bound).
  size_t bytes() const noexcept;

  /// The parts, for the renderer (public for the tests' and fuzzer's eyes only).
  struct part {
    enum class kind : uint8_t { text, table, hostname, shortname, crypt, variable };
    kind what = kind::text;
    std::string text; ///< text: the literal; variable: the name
    std::string table;
    std::string key; ///< `$NODE` (THISNODE too) or `a=v,...`
    std::string column;
    bool blank_ok = false;
  };

 private:
  std::vector<part> parts_;
};

/// Values from a store snapshot for node rows (store/tables), rows by keys, `#CRYPT#` through
/// api::system_password_hash (only `passwd` `key=system[,username=U]` column `password`;
/// anything else renders as unset), and the variables given.
class store_template_values : public template_values {
 public:
  store_template_values(const store::cluster_view& view, std::string node,
                        std::map<std::string, std::string> variables);
  std::optional<std::string> node_column(std::string_view table,
                                         std::string_view column) const override;
  std::optional<std::string> row_column(std::string_view table, std::string_view keys,
                                        std::string_view column) const override;
  std::optional<std::string> crypted(std::string_view table, std::string_view keys,
                                     std::string_view column) const override;
  std::string variable(std::string_view name) const override;

 private:
  const store::cluster_view& view_;
  std::string node_;
  std::map<std::string, std::string> variables_;
};

/// The template directory of an os (xCAT's platform): `debian` (debian*), `ubuntu`, `sles`,
/// `rh` (rhels, rhel, centos, rocky, alma, ol, fedora, and anything else).
std::string template_platform(std::string_view os);

/// The template of `profile` for `os` and `arch` in the first of `dirs` (each a platform
/// directory, the site's custom one first) that has one, tried in xCAT's get_tmpl_file_name
/// order: profile.os.arch, profile.osmajor.arch, profile.osname.arch, profile.arch,
/// profile.os, profile.osmajor, profile.osname, profile (each `.tmpl`); rhels9.2 has the major
/// `rhels9` and the name `rhels`. nullopt when none has one.
std::optional<std::filesystem::path>
find_template_file(const std::vector<std::filesystem::path>& dirs, std::string_view profile,
                   std::string_view os, std::string_view arch);

} // namespace cws::api

// libFuzzer: a noderange expanded for a caller who may not read masked attributes
// (noderange_options::hide_secrets, docs/security.md N1) never reads a masked value: over two
// clusters that differ only in their BMC passwords the answer is the same (the nodes, or the
// same refusal), and the universe aborts if a masked attribute is ever read.

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "store/error.hpp"
#include "store/noderange.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"

namespace {

using namespace cws::store;

/// Four nodes, static groups, and dynamic groups over mgt and over bmcpassword; `secret` is
/// the BMC password of every node.
class secret_universe : public node_universe {
 public:
  explicit secret_universe(std::string secret) : secret_(std::move(secret)) {
    attrs_["cn1"] = {{"groups", "compute,all"}, {"mgt", "ipmi"}};
    attrs_["cn2"] = {{"groups", "compute,all"}, {"mgt", "kvm"}};
    attrs_["sv1"] = {{"groups", "service,all"}, {"mgt", "ipmi"}};
    attrs_["sv2"] = {{"groups", "service,all"}, {"mgt", "kvm"}};
    for (const auto& [n, a] : attrs_) {
      names_.push_back(n);
    }
    static_ = {{"compute", {"cn1", "cn2"}},
               {"service", {"sv1", "sv2"}},
               {"all", {"cn1", "cn2", "sv1", "sv2"}}};
    dynamic_ = {
      {"virt", "mgt==kvm"}, {"leak", "mgt==ipmi::bmcpassword=~^S"}, {"leak2", "ipmi.password!=x"}};
  }

  const std::vector<std::string>& nodes() const override {
    return names_;
  }

  bool is_node(std::string_view n) const override {
    return attrs_.count(std::string{n}) > 0;
  }

  std::optional<std::vector<std::string>> group(std::string_view g) const override {
    if (auto it = static_.find(std::string{g}); it != static_.end()) {
      return it->second;
    }
    auto it = dynamic_.find(std::string{g});
    if (it == dynamic_.end()) {
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& n : names_) {
      bool ok = true;
      for (auto one : split_wherevals(it->second)) {
        auto s = selector::parse(one);
        ok = ok && s && s->matches(attribute(n, s->attribute()));
      }
      if (ok) {
        out.push_back(n);
      }
    }
    return out;
  }

  std::string attribute(std::string_view n, std::string_view a) const override {
    if (is_masked_attribute(a)) {
      if (hidden) {
        std::abort(); // a masked value read for a caller who may not read it
      }
      return is_node(n) ? secret_ : std::string{};
    }
    auto it = attrs_.find(std::string{n});
    if (it == attrs_.end()) {
      return {};
    }
    auto v = it->second.find(std::string{a});
    return v == it->second.end() ? std::string{} : v->second;
  }

  std::vector<std::string> dynamic_tests(std::string_view g) const override {
    std::vector<std::string> out;
    if (auto it = dynamic_.find(std::string{g}); it != dynamic_.end()) {
      for (auto one : split_wherevals(it->second)) {
        if (auto s = selector::parse(one)) {
          out.push_back(s->attribute());
        }
      }
    }
    return out;
  }

  /// Set while a hidden expansion runs: reading a masked attribute then aborts.
  bool hidden = false;

 private:
  std::string secret_;
  std::vector<std::string> names_;
  std::map<std::string, std::map<std::string, std::string>> attrs_;
  std::map<std::string, std::vector<std::string>> static_;
  std::map<std::string, std::string> dynamic_;
};

/// The whole answer of one expansion: the nodes and missing names, or the refusal.
std::string answer(const std::string& range, secret_universe& u, bool hide) {
  noderange_options opts;
  opts.max_nodes = 20000;
  opts.max_regex = 256;
  opts.hide_secrets = hide;
  u.hidden = hide;
  std::string out;
  try {
    auto r = expand_noderange(range, u, opts);
    for (const auto& n : r.nodes) {
      out += n + ",";
    }
    out += "|";
    for (const auto& n : r.missing) {
      out += n + ",";
    }
  } catch (const error& e) {
    if (hide && e.code() == store_errc::forbidden && e.what() == std::string{}) {
      std::abort(); // a refusal says why
    }
    out = std::string{"refused:"} + e.what();
  }
  u.hidden = false;
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string range{reinterpret_cast<const char*>(data), size};
  static secret_universe a{"Sekret123"};
  static secret_universe b{"other"};
  if (answer(range, a, true) != answer(range, b, true)) {
    std::abort(); // the answer depends on a value the caller may not read
  }
  answer(range, a, false); // root's expansion: still no crash
  return 0;
}

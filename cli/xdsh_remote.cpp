// xdsh for a caller who cannot open the store: nodeshell over clusterwsd's local socket, printed
// as xdsh's direct path prints it (cli/xdsh.cpp).

#include <algorithm>

#include "base/text.hpp"
#include "cli/remote.hpp"

namespace cws::cli {

namespace {

void print_lines(std::ostream& os, const std::string& node, const std::string& text) {
  for (const auto& line : base::output_lines(text)) {
    os << node << ": " << line << '\n';
  }
}

} // namespace

int xdsh_remote(const std::filesystem::path& socket, const parsed_args& args,
                const std::string& command, io& streams) {
  long long fanout = args.values.count("f") ? std::stoll(args.value("f")) : 0;
  long long timeout = args.values.count("t") ? std::stoll(args.value("t")) : -1;
  if (fanout < 0 || timeout < -1) {
    throw usage_error("-f and -t take whole numbers.");
  }
  size_t failed = 0;
  std::vector<std::string> timed_out;
  remote{socket}.nodeshell(
    args.positional.front(), command, fanout, timeout, [&](base::node_result res) {
      print_lines(streams.out, res.name, res.out);
      print_lines(streams.err, res.name, res.err);
      if (res.error == "timeout") {
        timed_out.push_back(res.name); // reported together at the end, as xCAT's -t does
      } else if (!res.error.empty()) {
        streams.err << res.name << ": " << res.message << '\n';
      }
      failed += res.failed() ? 1 : 0;
      streams.out.flush();
    });
  if (!timed_out.empty()) { // xCAT's DSHCLI text (its ' ' after 'Error:' included)
    std::sort(timed_out.begin(), timed_out.end());
    std::string names;
    for (const auto& n : timed_out) {
      names += " " + n;
    }
    streams.err << "Error:  Timed out waiting for response from child processes for the "
                   "following nodes.\nError: "
                << names << '\n';
  }
  return static_cast<int>(std::min<size_t>(failed, 255));
}

} // namespace cws::cli

// clusterctl events: tails the daemon's change feed (GET /clusterws/events) over the local
// socket, one line per object change, for administrators and scripts.

#include <simdjson.h>

#include "cli/commands.hpp"
#include "cli/local_client.hpp"

namespace cws::cli {

namespace {

/// The string `key` of `e`, or "".
std::string_view field(simdjson::dom::element e, const char* key) {
  std::string_view v;
  return e[key].get(v) == simdjson::SUCCESS ? v : std::string_view{};
}

/// Reads Server-Sent Events from pieces of a stream and prints each as lines.
class event_printer {
 public:
  explicit event_printer(io& streams) : streams_(streams) {
    // nop
  }

  void feed(std::string_view piece) {
    pending_.append(piece);
    size_t end;
    while ((end = pending_.find("\n\n")) != std::string::npos) {
      print(std::string_view{pending_}.substr(0, end));
      pending_.erase(0, end + 2);
    }
  }

 private:
  void print(std::string_view block) {
    std::string event;
    std::string data;
    while (!block.empty()) {
      auto nl = block.find('\n');
      auto line = block.substr(0, nl);
      block = nl == std::string_view::npos ? std::string_view{} : block.substr(nl + 1);
      if (line.rfind("event: ", 0) == 0) {
        event = line.substr(7);
      } else if (line.rfind("data: ", 0) == 0) {
        data = line.substr(6);
      }
    }
    simdjson::dom::element doc;
    if (data.empty() || parser_.parse(data).get(doc) != simdjson::SUCCESS) {
      return; // a heartbeat (a comment), or nothing this tool knows
    }
    if (event == "reset") {
      streams_.out << "reset: " << field(doc, "reason") << '\n';
    } else if (event == "job") {
      // job ID EVENT STATE OPERATION FINISHED/TARGETS FAILED USER
      uint64_t targets = 0;
      uint64_t finished = 0;
      uint64_t failed = 0;
      if (doc["targets"].get(targets) != simdjson::SUCCESS
          || doc["finished"].get(finished) != simdjson::SUCCESS
          || doc["failed"].get(failed) != simdjson::SUCCESS) {
        return;
      }
      streams_.out << "job " << field(doc, "job") << ' ' << field(doc, "event") << ' '
                   << field(doc, "state") << ' ' << field(doc, "operation") << ' ' << finished
                   << '/' << targets << ' ' << failed << ' ' << field(doc, "user") << '\n';
    } else if (event == "power") {
      streams_.out << "power " << field(doc, "node") << ' ' << field(doc, "power") << '\n';
    } else if (event == "servicenode") {
      // servicenode NAME joined|left [REASON] (docs/service-nodes.md)
      auto why = field(doc, "reason");
      streams_.out << "servicenode " << field(doc, "name") << ' ' << field(doc, "event")
                   << (why.empty() ? "" : " ") << why << '\n';
    } else if (event == "console") {
      streams_.out << "console " << field(doc, "node") << ' ' << field(doc, "console") << ' '
                   << field(doc, "user") << ' ' << field(doc, "mode") << '\n';
    } else if (event == "changes") {
      uint64_t seq = 0;
      if (doc["seq"].get(seq) != simdjson::SUCCESS) {
        return;
      }
      simdjson::dom::array changes;
      if (doc["changes"].get(changes) != simdjson::SUCCESS) {
        return;
      }
      for (auto c : changes) {
        streams_.out << seq << ' ' << field(c, "type") << ' ' << field(c, "name") << ' '
                     << field(c, "change");
        simdjson::dom::array attrs;
        if (c["attributes"].get(attrs) == simdjson::SUCCESS && attrs.size() > 0) {
          const char* sep = " ";
          for (auto a : attrs) {
            std::string_view text;
            if (a.get(text) == simdjson::SUCCESS) {
              streams_.out << sep << text;
              sep = ",";
            }
          }
        }
        streams_.out << '\n';
      }
    }
    streams_.out.flush();
  }

  io& streams_;
  std::string pending_;
  simdjson::dom::parser parser_;
};

} // namespace

int events(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home", "types", "after"}, {}, {}});
  if (args.has("help")) {
    streams.out
      << "Usage: clusterctl events [--types T,...] [--after ID] [NODERANGE]\n"
         "Prints the changes the daemon publishes (GET /clusterws/events) as they are made,\n"
         "by the API or by the tools, one line per object: ID TYPE NAME created|changed|removed\n"
         "[ATTRIBUTES]. --types: node, group, network, osimage, policy, site, passwd, job,\n"
         "power, console. Jobs: job ID created|progress|ended STATE OPERATION FINISHED/TARGETS\n"
         "FAILED USER; power: power NODE on|off; console: console NODE attached|detached USER\n"
         "MODE; servicenode NAME joined|left [REASON] (root, no --types or NODERANGE) (live\n"
         "only: not replayed with --after).\n"
         "--after ID: first what followed event ID. Runs until interrupted; needs clusterwsd.\n";
    return 0;
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional.back() + "'.");
  }
  auto home = store::home::resolve(args.value("home"));
  std::string target = "/clusterws/events?";
  if (auto t = args.value("types"); !t.empty()) {
    target += "types=" + url_encode(t) + "&";
  }
  if (auto a = args.value("after"); !a.empty()) {
    target += "after=" + url_encode(a) + "&";
  }
  if (!args.positional.empty()) {
    target += "noderange=" + url_encode(args.positional.front());
  }
  local_client client{local_socket_path(home)};
  event_printer printer{streams};
  std::string refusal;
  auto status = client.request("GET", target, {}, [&](unsigned st, std::string_view piece) {
    if (st == 200) {
      printer.feed(piece);
    } else {
      refusal.append(piece);
    }
  });
  if (status != 200) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    std::string_view message = refusal;
    if (parser.parse(refusal).get(doc) == simdjson::SUCCESS) {
      simdjson::dom::array list; // 403s carry a list of messages
      std::string_view first;
      if (doc["error"].get(list) == simdjson::SUCCESS && list.size() > 0
          && list.at(0).get(first) == simdjson::SUCCESS) {
        message = first;
      } else if (auto one = field(doc, "error"); !one.empty()) {
        message = one;
      }
    }
    streams.err << "Error: " << message << '\n';
    return 1;
  }
  return 0;
}

} // namespace cws::cli

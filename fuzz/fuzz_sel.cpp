// libFuzzer: reventlog's and rbeacon's parsers of BMC answers (ipmi/sel_record.hpp,
// ipmi/sel.hpp, ipmi/beacon.hpp) take any bytes without reading past them or crashing. The
// first byte picks what is searched: 0 a SEL record's text; 1 a whole reventlog conversation,
// the rest being BMC answers ([length][command][completion code][data...] each); 2 the
// identify state of a Get Chassis Status answer; 3 reventlog's words.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "ipmi/beacon.hpp"
#include "ipmi/sel.hpp"
#include "ipmi/sel_record.hpp"

namespace {

using namespace cws::ipmi;

void conversation(const uint8_t* data, size_t size) {
  sel_request what;
  what.clear = size > 0 && (data[0] & 1) != 0;
  what.count = size > 0 ? data[0] >> 4 : 0;
  what.newest_first = size > 0 && (data[0] & 2) != 0;
  sel_limits limits;
  limits.max_entries = 64;
  limits.clear_polls = 4;
  auto a = eventlog_action(what, limits);
  auto req = a->first();
  size_t at = size > 0 ? 1 : 0;
  for (int steps = 0; steps < 1000 && at + 3 <= size; ++steps) {
    size_t len = data[at];
    response r;
    r.netfn = req.netfn;
    r.cmd = data[at + 1];
    r.code = data[at + 2];
    at += 3;
    len = len < size - at ? len : size - at;
    r.data.assign(data + at, data + at + len);
    at += len;
    auto s = a->next(r);
    if (!s.next) {
      // an answer, or an error with words: never both empty
      if (s.out.empty() && s.message.empty()) {
        std::abort();
      }
      return;
    }
    req = *s.next;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t* rest = data + 1;
  size_t n = size - 1;
  switch (data[0] % 4) {
    case 0: {
      auto text = sel_record_text(rest, n, static_cast<int64_t>(n) * 3600);
      if (text.has_value() != (n >= sel_record_size) || (text && text->empty())) {
        std::abort();
      }
      break;
    }
    case 1: conversation(rest, n); break;
    case 2: {
      auto state = identify_state(bytes(rest, rest + n));
      if (state && *state != "on" && *state != "off" && *state != "blink") {
        std::abort();
      }
      break;
    }
    default: (void)parse_eventlog(std::string(reinterpret_cast<const char*>(rest), n)); break;
  }
  return 0;
}

// libFuzzer: the noderange parser and expander never crash, hang or expand past the cap.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/error.hpp"
#include "store/noderange.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string range{reinterpret_cast<const char*>(data), size};
  cws::store::empty_universe universe;
  for (bool verify : {true, false}) {
    cws::store::noderange_options opts;
    opts.verify = verify;
    opts.max_nodes = 20000;
    opts.max_regex = 256;
    try {
      auto r = cws::store::expand_noderange(range, universe, opts);
      if (r.nodes.size() > opts.max_nodes) {
        std::abort(); // expanded past the cap
      }
      if (!verify) {
        cws::store::fold_nodes(r.nodes);
      }
    } catch (const cws::store::error&) {
      // a clear refusal is a fine answer
    }
  }
  return 0;
}

#pragma once

// The fuzz targets' way to drive an IPMI conversation (ipmi::action) with answers cut from the
// input: a completion code, a length, that many data bytes, again and again.

#include <cstddef>
#include <cstdint>

#include "ipmi/engine.hpp"

namespace cws::fuzz {

/// Feeds `a` answers cut from [p, p + n) until it ends, the input does, or `max_steps` passed.
inline void converse(ipmi::action& a, const uint8_t* p, size_t n, int max_steps) {
  ipmi::request q = a.first();
  for (int steps = 0; steps < max_steps && n >= 2; ++steps) {
    ipmi::response r;
    r.netfn = q.netfn;
    r.cmd = q.cmd;
    r.code = p[0];
    size_t len = p[1] < n - 2 ? p[1] : n - 2;
    r.data.assign(p + 2, p + 2 + len);
    p += 2 + len;
    n -= 2 + len;
    auto s = a.next(r);
    if (!s.next) {
      return;
    }
    q = *s.next;
  }
}

} // namespace cws::fuzz

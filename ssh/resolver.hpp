#pragma once

#include <vector>

#include "ssh/engine.hpp"

namespace cws::ssh {

/// Fills in the address of every job that has none, looking each node name up once with
/// the system resolver. A name that does not resolve keeps its empty address (the job then
/// fails with error `resolve`). Blocks: getaddrinfo may wait for a name server.
void resolve_addresses(std::vector<job>& jobs);

} // namespace cws::ssh

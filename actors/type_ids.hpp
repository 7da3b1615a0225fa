#pragma once

// The message types that may leave the process (api/wire.hpp), registered with an actor
// system under portable names. Everything else in actors/atoms.hpp is
// CAF_ALLOW_UNSAFE_MESSAGE_TYPE: it never crosses a process boundary.

#include <caf/actor_system_config.hpp>

#include <cstddef>
#include <string>

#include "api/sn_link.hpp"
#include "api/wire.hpp"

namespace cws::actors {

/// Registers every wire type (and CAF's vector of each) with `cfg`, before the actor
/// system is made from it: daemon/main.cpp and the tests call it.
void add_wire_types(caf::actor_system_config& cfg);

/// The most bytes one serialized wire message may have: checked before a byte is read,
/// because CAF 0.17's deserializer trusts the length prefixes it reads (docs/security.md).
constexpr size_t wire_max_bytes = 64u << 20;

/// Reads a job request from `size` bytes at `data` (caf::binary_serializer's format), then
/// checks it (api::wire::check).
/// @returns "" with `out` set, or why the bytes are no request that can be run.
std::string read_job_request(caf::actor_system& sys, const char* data, size_t size,
                             api::wire::job_request& out, size_t max_bytes = wire_max_bytes);

} // namespace cws::actors

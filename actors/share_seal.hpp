#pragma once

// The seal of a delegated share (docs/service-nodes.md "Trust model", layer 3): the head seals
// each share under the receiving service node's secret just before it is sent; the service
// node verifies it before it runs anything. The seal covers the share's bytes (CAF's binary
// form of every field but `sealed`: the targets with their users and BMC credentials, the
// command, the service node's name), a request id and an expiry (api/sn_seal.hpp).

#include <cstdint>
#include <string>
#include <string_view>

#include "api/sn_seal.hpp"
#include "api/wire.hpp"

namespace cws::actors {

/// The bytes a share's seal covers: `share` serialized with `sealed` empty.
std::string share_payload(const api::wire::share_request& share);

/// Seals `share` for its service node under `secret`, valid until `expires_ms` (its id is the
/// share's id): fills `share.sealed`.
void seal_share(api::wire::share_request& share, std::string_view secret, int64_t expires_ms);

/// Checks `share`'s seal as service node `name` with its `secret` at `now_ms`: the MAC (a
/// share for another service node, or changed, fails), the expiry, and the replay cache `seen`
/// (a share seen before fails; a new one is recorded there until it expires).
/// @returns "" or why the share is refused.
std::string verify_share(const api::wire::share_request& share, std::string_view name,
                         std::string_view secret, int64_t now_ms, api::sn_replay_cache& seen);

} // namespace cws::actors

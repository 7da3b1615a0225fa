#pragma once

// xdcp, nodecopy and xdsh -e through a service node (docs/service-nodes.md, "Copies"): the
// head reads the files once, as for its own nodes (api/copy.hpp, with the caller's rights),
// and their bytes go inside the share (api::wire::job_request::files), bounded by
// sn_copy_max and covered by the share's seal; the service node writes them from there, never
// from a path of its own. A copy past the bound is not sent: its delegated nodes get a
// per-node error naming the bound, and the head's own nodes copy as usual.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/delegation.hpp"
#include "api/result.hpp"
#include "api/wire.hpp"
#include "ssh/transfer.hpp"

namespace cws::api {

/// Puts the files of `spec` (api::build_copy's, on the head), with their bytes, into `out`:
/// the ones held in memory as they are, the streamed ones read whole through their open
/// descriptor. A pull (xdcp -P) is not delegated.
/// @returns "" or why the copy cannot go to a service node (a pull, more than `max_bytes`
/// of contents, a source that cannot be read), in words that follow "service node sn1 was
/// not sent the request: ".
std::string carry_copy(const ssh::copy_spec& spec, uint64_t max_bytes,
                       std::vector<wire::copy_group>& out);

/// The service node's side: the copy `job` carries, as the ssh::copy_spec each node's job
/// shares (its contents in memory, written in chunks of `chunk` bytes). A job without a copy
/// gets null.
/// @returns a failure when the job names a copy and carries no files, or asks for a pull.
api_result bind_copy(const wire::job_request& job, size_t chunk,
                     std::shared_ptr<const ssh::copy_spec>& out);

/// Moves every node of `plan`'s shares into `plan.refused` (the head's nodes stay): nothing
/// goes to a service node, and each of those nodes gets error `servicenode` "service node
/// NAME was not sent the request: `why`; nothing was run".
void refuse_shares(delegation_plan& plan, const std::string& why);

} // namespace cws::api

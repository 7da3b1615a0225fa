#include "actors/share_seal.hpp"

#include <caf/binary_serializer.hpp>

#include <vector>

namespace cws::actors {

std::string share_payload(const api::wire::share_request& share) {
  // (no handle inside a share: no actor system is needed to write it)
  auto copy = share;
  copy.sealed.clear();
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  if (auto err = sink(copy)) {
    return {}; // (writing plain fields to memory does not fail)
  }
  return std::string{buf.begin(), buf.end()};
}

void seal_share(api::wire::share_request& share, std::string_view secret, int64_t expires_ms) {
  auto payload = share_payload(share);
  share.sealed = api::to_text(
    api::seal_sn_request(secret, share.service_node, share.job.id, expires_ms, payload));
}

std::string verify_share(const api::wire::share_request& share, std::string_view name,
                         std::string_view secret, int64_t now_ms, api::sn_replay_cache& seen) {
  if (share.sealed.empty()) {
    return "the request is not sealed";
  }
  return api::verify_sn_request(secret, name, share.sealed, share_payload(share), now_ms, seen);
}

} // namespace cws::actors

// libFuzzer: any bytes read as a service node's job request (api/wire.hpp), and as a share of
// one (share_request, what the head's delegation sends), are refused with a reason or accepted
// as a request that passes api::wire::check; no length prefix allocates
// more than the input holds (a request is at most actors::wire_max_bytes before a byte is
// read), and what is accepted serializes into bytes that read back the same.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "actors/type_ids.hpp"

namespace {

caf::actor_system& wire_system() {
  // made once and never destroyed: CAF's own statics may be gone at exit
  static auto* sys = [] {
    auto* cfg = new caf::actor_system_config;
    cfg->set("scheduler.policy", caf::atom("testing")); // no threads
    cfg->set("logger.file-verbosity", caf::atom("quiet"));
    cws::actors::add_wire_types(*cfg);
    return new caf::actor_system{*cfg};
  }();
  return *sys;
}

template<class T>
std::vector<char> bytes_of(caf::actor_system& sys, T r) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (sink(r)) {
    std::abort();
  }
  return buf;
}

} // namespace

/// The same bytes as a share: one that reads and passes its check serializes back the same.
void read_share(caf::actor_system& sys, const uint8_t* data, size_t size) {
  if (size > cws::actors::wire_max_bytes) {
    return;
  }
  caf::binary_deserializer source{sys, reinterpret_cast<const char*>(data), size};
  cws::api::wire::share_request s;
  if (source(s) || source.remaining() != 0 || !cws::api::wire::check(s).empty()) {
    return;
  }
  auto once = bytes_of(sys, s);
  caf::binary_deserializer again_source{sys, once.data(), once.size()};
  cws::api::wire::share_request again;
  if (again_source(again) || bytes_of(sys, again) != once) {
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& sys = wire_system();
  read_share(sys, data, size);
  cws::api::wire::job_request r;
  auto why = cws::actors::read_job_request(sys, reinterpret_cast<const char*>(data), size, r);
  if (!why.empty()) {
    return 0;
  }
  if (!cws::api::wire::check(r).empty()) {
    std::abort();
  }
  auto once = bytes_of(sys, r);
  cws::api::wire::job_request again;
  if (!cws::actors::read_job_request(sys, once.data(), once.size(), again).empty()
      || bytes_of(sys, again) != once) {
    std::abort();
  }
  return 0;
}

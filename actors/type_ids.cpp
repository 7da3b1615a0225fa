#include "actors/type_ids.hpp"

#include "actors/service_node_actor.hpp"

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>

namespace cws::actors {

void add_wire_types(caf::actor_system_config& cfg) {
  namespace w = api::wire;
  cfg.add_message_type<w::target>("cws::wire::target");
  cfg.add_message_type<w::copy_item>("cws::wire::copy_item");
  cfg.add_message_type<w::copy_file>("cws::wire::copy_file");
  cfg.add_message_type<w::copy_group>("cws::wire::copy_group");
  cfg.add_message_type<w::job_request>("cws::wire::job_request");
  cfg.add_message_type<w::node_result>("cws::wire::node_result");
  cfg.add_message_type<w::result_batch>("cws::wire::result_batch");
  cfg.add_message_type<w::credit>("cws::wire::credit");
  cfg.add_message_type<w::cancel>("cws::wire::cancel");
  // service nodes (issue #31): a share of a job, its end (docs/service-nodes.md)
  cfg.add_message_type<w::share_request>("cws::wire::share_request");
  cfg.add_message_type<w::share_end>("cws::wire::share_end");
  // the handles a share carries across the link (actors/service_node_actor.hpp)
  cfg.add_message_type<sn_sink_actor>("cws::sn_sink_actor");
  cfg.add_message_type<sn_executor_actor>("cws::sn_executor_actor");
  // the service-node link (api/sn_link.hpp): registration and heartbeats
  cfg.add_message_type<w::sn_hello>("cws::wire::sn_hello");
  cfg.add_message_type<w::sn_challenge>("cws::wire::sn_challenge");
  cfg.add_message_type<w::sn_join>("cws::wire::sn_join");
  cfg.add_message_type<w::sn_welcome>("cws::wire::sn_welcome");
  cfg.add_message_type<w::sn_heartbeat>("cws::wire::sn_heartbeat");
}

std::string read_job_request(caf::actor_system& sys, const char* data, size_t size,
                             api::wire::job_request& out, size_t max_bytes) {
  if (size > max_bytes) {
    return "a wire message of " + std::to_string(size) + " bytes: at most "
           + std::to_string(max_bytes);
  }
  // Every length prefix is bounded by the bytes that remain: a string longer than the input
  // fails, and each element of a sequence reads at least one byte, so a hostile count ends
  // at the input's end (tests/actors/wire_test.cpp, fuzz/fuzz_wire.cpp).
  caf::binary_deserializer source{sys, data, size};
  api::wire::job_request r;
  if (auto err = source(r)) {
    return "not a job request: " + sys.render(err);
  }
  if (source.remaining() != 0) {
    return "not a job request: " + std::to_string(source.remaining()) + " bytes after it";
  }
  if (auto why = api::wire::check(r); !why.empty()) {
    return why;
  }
  out = std::move(r);
  return {};
}

} // namespace cws::actors

#include "actors/executor_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>

#include "store/definitions.hpp"

namespace cws::actors {

namespace {

struct pending_shell {
  api_call_ptr call;
  caf::typed_response_promise<api_result> rp;
  std::vector<node_output> outputs;
};

struct executor_state {
  std::unordered_map<uint64_t, pending_shell> shells;
  uint64_t next_id = 1;
  static inline const char* name = "executor";
};

using self_ptr = executor_actor::stateful_pointer<executor_state>;
using promise = caf::typed_response_promise<api_result>;

api_result failed(std::vector<std::string> messages) {
  api_result r;
  r.status = api_status::failed;
  r.messages = std::move(messages);
  return r;
}

node_output to_output(const std::string& name, const ssh::result& r) {
  return {name, r.rc, r.out, r.err, r.error, r.message, r.truncated};
}

void nodeshell(self_ptr self, const store_actor& store, const std::shared_ptr<ssh::engine>& eng,
               const executor_config& cfg, api_call_ptr call, promise rp) {
  self->request(store, cfg.store_timeout, targets_atom::value, call)
    .then(
      [=](targets_reply& t) mutable {
        if (t.error == "stale") {
          rp.deliver(api_result::failure(api_status::stale, t.error, "2"));
          return;
        }
        if (!t.error.empty()) {
          rp.deliver(failed({t.error}));
          return;
        }
        if (!t.missing.empty()) {
          rp.deliver(failed({store::missing_nodes_message(t.missing)}));
          return;
        }
        auto key = user_key(cfg, call->user);
        if (!std::filesystem::exists(key)) {
          rp.deliver(failed({"No SSH key is configured for user '" + call->user + "' ("
                             + key.string() + " does not exist); nothing was run."}));
          return;
        }
        auto pub = key;
        pub += ".pub";
        std::chrono::milliseconds timeout = call->timeout_ms >= 0
                                              ? std::chrono::milliseconds(call->timeout_ms)
                                              : cfg.command_timeout;
        std::vector<ssh::job> jobs;
        jobs.reserve(t.nodes.size());
        for (auto& n : t.nodes) {
          ssh::job j;
          j.node = n.name;
          j.address = n.address;
          j.port = n.port != 0 ? n.port : cfg.port;
          j.user = call->user; // identity: always the authenticated user
          j.private_key = key;
          j.public_key = std::filesystem::exists(pub) ? pub : std::filesystem::path{};
          j.command = call->command;
          j.command_timeout = timeout;
          jobs.push_back(std::move(j));
        }
        auto id = self->state.next_id++;
        auto& p = self->state.shells[id];
        p.call = call;
        p.rp = rp;
        p.outputs.resize(t.nodes.size());
        for (size_t i = 0; i < t.nodes.size(); ++i) {
          p.outputs[i].name = t.nodes[i].name;
        }
        size_t fanout = call->fanout > 0 ? call->fanout : cfg.fanout;
        auto me = caf::actor_cast<executor_actor>(self);
        // the engine calls back on its own thread: hand over by message
        eng->run(
          std::move(jobs), std::min(fanout, cfg.fanout_max),
          [me, id](size_t index, ssh::result r) {
            caf::anon_send(me, node_atom::value, id, index,
                           ssh_result_ptr{std::make_shared<ssh::result>(std::move(r))});
          },
          [me, id] { caf::anon_send(me, done_atom::value, id); });
      },
      [=](caf::error& e) mutable {
        rp.deliver(api_result::failure(api_status::unavailable, self->system().render(e), "2"));
      });
}

/// DELETE of a noderange: slices of the range are checked in parallel (removed / not found
/// per node), then the store removes the whole range in one transaction.
void remove_nodes(self_ptr self, const store_actor& store, const executor_config& cfg,
                  api_call_ptr call, promise rp) {
  self->request(store, cfg.store_timeout, expand_atom::value, call->target, false)
    .then(
      [=](store::noderange_result& x) mutable {
        struct gather {
          std::vector<std::string> names;
          std::vector<std::vector<std::string>> missing;
          size_t remaining = 0;
        };
        auto g = std::make_shared<gather>();
        g->names = std::move(x.nodes);
        size_t slices = std::max<size_t>(1, std::min(cfg.delete_workers, g->names.size()));
        size_t per = (g->names.size() + slices - 1) / std::max<size_t>(1, slices);
        if (g->names.empty()) {
          rp.deliver(failed({"No objects have been removed from the xCAT database."}));
          return;
        }
        slices = (g->names.size() + per - 1) / per;
        g->missing.resize(slices);
        g->remaining = slices;
        auto finish = [=]() mutable {
          std::vector<std::string> missing;
          for (auto& m : g->missing) {
            missing.insert(missing.end(), m.begin(), m.end());
          }
          std::sort(missing.begin(), missing.end());
          std::vector<std::string> found;
          std::set_difference(g->names.begin(), g->names.end(), missing.begin(), missing.end(),
                              std::back_inserter(found));
          if (!missing.empty() && !call->detail) {
            std::vector<std::string> msgs;
            for (const auto& m : missing) {
              msgs.push_back(store::not_found_message(m, store::object_type::node));
            }
            msgs.emplace_back("No objects have been removed from the xCAT database.");
            rp.deliver(failed(std::move(msgs)));
            return;
          }
          auto removal = std::make_shared<api_call>(*call);
          removal->names = found;
          auto report = [=](api_result r) mutable {
            if (call->detail && r.status == api_status::ok) {
              for (const auto& n : g->names) {
                bool gone = std::binary_search(found.begin(), found.end(), n);
                r.nodes.push_back({n,
                                   gone ? 0 : 1,
                                   {},
                                   {},
                                   gone ? "" : "not-found",
                                   gone ? "removed" : "not found",
                                   false});
              }
            }
            rp.deliver(std::move(r));
          };
          if (found.empty()) {
            report(api_result{});
            return;
          }
          self->request(store, cfg.store_timeout, exec_atom::value, api_call_ptr{removal})
            .then(report, [=](caf::error& e) mutable {
              rp.deliver(
                api_result::failure(api_status::unavailable, self->system().render(e), "2"));
            });
        };
        for (size_t s = 0; s < slices; ++s) {
          auto begin = g->names.begin() + static_cast<long>(s * per);
          auto end = g->names.begin() + static_cast<long>(std::min(g->names.size(), (s + 1) * per));
          std::vector<std::string> slice(begin, end);
          self->request(store, cfg.store_timeout, exists_atom::value, std::move(slice))
            .then(
              [=](std::vector<std::string>& missing) mutable {
                g->missing[s] = std::move(missing);
                if (--g->remaining == 0) {
                  finish();
                }
              },
              [=](caf::error& e) mutable {
                rp.deliver(
                  api_result::failure(api_status::unavailable, self->system().render(e), "2"));
              });
        }
      },
      [=](caf::error& e) mutable {
        // a malformed or oversized noderange
        rp.deliver(failed({self->system().render(e)}));
      });
}

executor_actor::behavior_type executor_impl(self_ptr self, store_actor store,
                                            std::shared_ptr<ssh::engine> eng, executor_config cfg) {
  return {
    [=](exec_atom, api_call_ptr call) -> promise {
      auto rp = self->make_response_promise<api_result>();
      if (call->op == operation::nodeshell) {
        if (!eng) {
          rp.deliver(api_result::failure(api_status::unavailable,
                                         "nodeshell is not enabled on this service.", "2"));
        } else {
          nodeshell(self, store, eng, cfg, call, rp);
        }
      } else {
        remove_nodes(self, store, cfg, call, rp);
      }
      return rp;
    },
    [=](node_atom, uint64_t id, size_t index, ssh_result_ptr r) {
      auto it = self->state.shells.find(id);
      if (it == self->state.shells.end() || index >= it->second.outputs.size()) {
        return;
      }
      auto& out = it->second.outputs[index];
      out = to_output(out.name, *r);
      if (it->second.call->sink) {
        it->second.call->sink->push(out);
      }
    },
    [=](done_atom, uint64_t id) {
      auto it = self->state.shells.find(id);
      if (it == self->state.shells.end()) {
        return;
      }
      api_result r;
      r.status = api_status::created;
      r.nodes = std::move(it->second.outputs);
      it->second.rp.deliver(std::move(r));
      self->state.shells.erase(it);
    },
  };
}

} // namespace

void apply_ssh_settings(const std::map<std::string, std::string>& settings,
                        const std::filesystem::path& home, executor_config& exec,
                        ssh::engine_config& engine) {
  auto get = [&](const char* key, const std::string& fallback) {
    auto it = settings.find(key);
    return it == settings.end() ? fallback : it->second;
  };
  auto number = [&](const char* key, long long fallback) {
    auto text = get(key, std::to_string(fallback));
    char* end = nullptr;
    auto v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < 0) {
      throw std::invalid_argument(std::string{"clusterws.conf: '"} + key
                                  + "' must be a whole number, not '" + text + "'");
    }
    return v;
  };
  exec.key_dir = get("ssh_key_dir", (home / "ssh").string());
  exec.port = static_cast<uint16_t>(number("ssh_port", 22));
  exec.fanout = static_cast<size_t>(std::max(1LL, number("ssh_fanout", 64)));
  exec.fanout_max = static_cast<size_t>(std::max(1LL, number("ssh_fanout_max", 1024)));
  exec.command_timeout = std::chrono::seconds(number("ssh_command_timeout", 0));
  engine.known_hosts = get("ssh_known_hosts", (home / "ssh" / "known_hosts").string());
  engine.host_keys = ssh::parse_host_key_policy(get("ssh_host_key_policy", "accept-new"));
  engine.connect_timeout = std::chrono::seconds(number("ssh_connect_timeout", 10));
  engine.pool_idle = std::chrono::seconds(number("ssh_pool_idle", 60));
  engine.max_pooled = static_cast<size_t>(number("ssh_max_pooled", 4096));
  engine.output_max = static_cast<size_t>(number("ssh_output_max", 1024 * 1024));
}

std::filesystem::path user_key(const executor_config& cfg, const std::string& user) {
  return cfg.key_dir / user / "id_ed25519";
}

executor_actor spawn_executor(caf::actor_system& sys, store_actor store,
                              std::shared_ptr<ssh::engine> engine, executor_config cfg) {
  return sys.spawn(executor_impl, std::move(store), std::move(engine), std::move(cfg));
}

} // namespace cws::actors

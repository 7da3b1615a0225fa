#include "api/shell.hpp"

#include "api/targets.hpp"

namespace cws::api {

namespace {

/// The call's command on its nodes, run by the SSH engine.
class shell_operation : public node_operation {
 public:
  shell_operation(std::shared_ptr<ssh::engine> engine, std::vector<ssh::job> jobs, size_t fanout)
      : engine_(std::move(engine)), jobs_(std::move(jobs)), fanout_(fanout) {
    names_.reserve(jobs_.size());
    for (const auto& j : jobs_) {
      names_.push_back(j.node);
    }
  }

  const std::vector<std::string>& nodes() const override {
    return names_;
  }

  void start(result_fn on_result, std::function<void()> on_done) override {
    auto id = engine_->run(std::move(jobs_), fanout_, std::move(on_result), std::move(on_done),
                           std::move(on_output_));
    run_.store(id);
  }

  void stream_output(output_fn f) override {
    on_output_ = std::move(f);
  }

  void cancel() override {
    if (auto id = run_.load(); id != 0) {
      engine_->cancel(id);
    }
  }

 private:
  std::shared_ptr<ssh::engine> engine_;
  std::vector<ssh::job> jobs_;
  std::vector<std::string> names_;
  size_t fanout_;
  output_fn on_output_;
  std::atomic<uint64_t> run_{0};
};

} // namespace

std::filesystem::path user_key(const shell_config& cfg, const std::string& user) {
  return cfg.key_dir / user / "id_ed25519";
}

api_result plan_shell(const api_call& call, const std::string& user,
                      std::vector<node_target> targets, const shell_config& cfg,
                      std::shared_ptr<ssh::engine> engine, node_operation_ptr& out,
                      std::shared_ptr<const ssh::copy_spec> copy) {
  auto key = user_key(cfg, user);
  if (!std::filesystem::exists(key)) {
    return api_result::failure({"No SSH key is configured for user '" + user + "' (" + key.string()
                                + " does not exist); nothing was run."});
  }
  auto pub = key;
  pub += ".pub";
  if (!std::filesystem::exists(pub)) {
    pub.clear();
  }
  auto timeout
    = call.timeout_ms >= 0 ? std::chrono::milliseconds(call.timeout_ms) : cfg.command_timeout;
  std::vector<ssh::job> jobs;
  jobs.reserve(targets.size());
  for (auto& t : targets) {
    ssh::job j;
    j.node = std::move(t.name);
    j.address = std::move(t.address);
    j.port = t.port != 0 ? t.port : cfg.port;
    j.user = user;
    j.private_key = key;
    j.public_key = pub;
    j.command = call.command;
    j.command_timeout = timeout;
    j.copy = copy;
    jobs.push_back(std::move(j));
  }
  auto fanout = effective_fanout(call.fanout, cfg.fanout, cfg.fanout_max);
  out = std::make_shared<shell_operation>(std::move(engine), std::move(jobs), fanout);
  return {};
}

} // namespace cws::api

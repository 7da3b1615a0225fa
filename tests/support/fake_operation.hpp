#pragma once

// A per-node operation whose nodes end when the test says so: results pushed from the test
// thread, so the fan-out executor (and what runs on it) is tested under CAF's deterministic
// test coordinator, without an sshd, a BMC or a clock. It keeps api::node_operation's
// contract: one result per node, then `on_done`, whether nodes finish or are cancelled.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/node_operation.hpp"
#include "api/result.hpp"

namespace cws::test {

class fake_operation : public api::node_operation {
 public:
  explicit fake_operation(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {
    ended_.resize(nodes_.size(), false);
  }

  const std::vector<std::string>& nodes() const override {
    return nodes_;
  }

  void start(result_fn on_result, std::function<void()> on_done) override {
    std::lock_guard<std::mutex> guard{mu_};
    on_result_ = std::move(on_result);
    on_done_ = std::move(on_done);
    started_ = true;
    if (nodes_.empty()) {
      on_done_();
    }
  }

  void stream_output(output_fn f) override {
    std::lock_guard<std::mutex> guard{mu_};
    on_output_ = std::move(f);
  }

  /// Ends every node not ended yet with error `cancelled`, then the operation.
  void cancel() override {
    std::lock_guard<std::mutex> guard{mu_};
    cancelled_ = true;
    if (!started_) {
      return;
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!ended_[i]) {
        base::node_result r;
        r.error = "cancelled";
        r.message = "cancelled";
        end(i, std::move(r));
      }
    }
  }

  /// From the test thread: node `index` ends with `r` (its name is filled in); after the last
  /// node the operation ends. A node ended already is left alone (as an engine would).
  void finish(size_t index, base::node_result r) {
    std::lock_guard<std::mutex> guard{mu_};
    if (started_ && index < nodes_.size() && !ended_[index]) {
      end(index, std::move(r));
    }
  }

  /// Node `index` ends with exit status `rc` and `out` on stdout.
  void finish(size_t index, int rc, std::string out = {}) {
    base::node_result r;
    r.rc = rc;
    r.out = std::move(out);
    finish(index, std::move(r));
  }

  /// Node `index` wrote `data` on `stream` (xdsh -s).
  void output(size_t index, int stream, const std::string& data) {
    std::lock_guard<std::mutex> guard{mu_};
    if (on_output_) {
      on_output_(index, stream, data.data(), data.size());
    }
  }

  bool started() const {
    std::lock_guard<std::mutex> guard{mu_};
    return started_;
  }

  bool cancelled() const {
    std::lock_guard<std::mutex> guard{mu_};
    return cancelled_;
  }

 private:
  void end(size_t index, base::node_result r) {
    ended_[index] = true;
    ++ended_count_;
    r.name = nodes_[index];
    on_result_(index, std::move(r));
    if (ended_count_ == nodes_.size()) {
      on_done_();
    }
  }

  std::vector<std::string> nodes_;
  mutable std::mutex mu_;
  std::vector<bool> ended_;
  size_t ended_count_ = 0;
  bool started_ = false;
  bool cancelled_ = false;
  result_fn on_result_;
  std::function<void()> on_done_;
  output_fn on_output_;
};

/// Binds each call to a new fake_operation over the call's target read as a comma list of
/// node names (no database is read), and keeps them for the test to drive. Use `bind()` as
/// the executor's bind function (actors::bind_fn's signature).
class fake_binder {
 public:
  /// A failure to answer every bind with instead (none: bind).
  api::api_result refuse_with;

  template<class Database, class Call, class Auth, class Opts>
  api::api_result operator()(const Database&, const Call& call, const Auth&, const Opts&,
                             api::node_operation_ptr& out) {
    if (!refuse_with.ok()) {
      return refuse_with;
    }
    std::vector<std::string> names;
    std::string rest = call.target;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      names.push_back(rest.substr(0, comma));
      rest = comma == std::string::npos ? std::string{} : rest.substr(comma + 1);
    }
    auto op = std::make_shared<fake_operation>(std::move(names));
    {
      std::lock_guard<std::mutex> guard{mu_};
      ops_.push_back(op);
    }
    out = op;
    return {};
  }

  /// The operations bound so far, in order.
  std::vector<std::shared_ptr<fake_operation>> ops() const {
    std::lock_guard<std::mutex> guard{mu_};
    return ops_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<fake_operation>> ops_;
};

} // namespace cws::test

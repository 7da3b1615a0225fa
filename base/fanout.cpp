#include "base/fanout.hpp"

#include <algorithm>
#include <utility>

namespace cws::base {

fanout_state::fanout_state(size_t jobs, size_t fanout, std::function<void()> on_done)
    : state_(jobs, job_state::waiting), fanout_(std::max<size_t>(1, fanout)), undelivered_(jobs),
      on_done_(std::move(on_done)) {
  if (jobs == 0) {
    done_ = true;
    on_done_();
  }
}

std::optional<size_t> fanout_state::next_to_start() {
  std::lock_guard<std::mutex> guard{mu_};
  if (cancel_ || running_ >= fanout_ || next_ >= state_.size()) {
    return std::nullopt;
  }
  auto index = next_++;
  state_[index] = job_state::running;
  ++running_;
  return index;
}

size_t fanout_state::running() const {
  std::lock_guard<std::mutex> guard{mu_};
  return running_;
}

size_t fanout_state::unstarted() const {
  std::lock_guard<std::mutex> guard{mu_};
  return state_.size() - next_;
}

bool fanout_state::request_cancel() noexcept {
  cancel_ = true;
  return !done_;
}

bool fanout_state::claim(size_t index) {
  std::lock_guard<std::mutex> guard{mu_};
  if (index >= state_.size() || state_[index] == job_state::ended) {
    return false;
  }
  if (state_[index] == job_state::running) {
    --running_;
  }
  state_[index] = job_state::ended;
  return true;
}

void fanout_state::end_unstarted(node_errc why, std::string_view message) {
  end_where(false, why, message);
}

void fanout_state::end_all(node_errc why, std::string_view message) {
  end_where(true, why, message);
}

void fanout_state::end_where(bool running_too, node_errc why, std::string_view message) {
  std::vector<size_t> ended;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (size_t i = running_too ? 0 : next_; i < state_.size(); ++i) {
      if (state_[i] == job_state::ended) {
        continue;
      }
      if (state_[i] == job_state::running) {
        --running_;
      }
      state_[i] = job_state::ended;
      ended.push_back(i);
    }
    next_ = state_.size();
  }
  for (auto i : ended) {
    deliver_failure(i, why, message);
  }
}

void fanout_state::delivered() {
  if (--undelivered_ == 0) {
    done_ = true;
    on_done_();
  }
}

void fanout_state::end_on_destruction() {
  end_all(node_errc::disconnected, node_message::stopping);
}

fanout_run::failure_fn node_failures(std::vector<std::string> names) {
  return [names = std::move(names)](size_t index, node_errc why, std::string_view message) {
    return node_result::failure(index < names.size() ? names[index] : std::string{}, why, message);
  };
}

uint64_t run_registry::add(const std::shared_ptr<fanout_state>& run) {
  std::lock_guard<std::mutex> guard{mu_};
  if (runs_.size() >= prune_at_) {
    prune();
  }
  auto id = next_id_++;
  run->id_ = id;
  runs_.emplace(id, run);
  return id;
}

std::shared_ptr<fanout_state> run_registry::cancel(uint64_t id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto it = runs_.find(id);
  if (it == runs_.end()) {
    return nullptr;
  }
  auto run = it->second.lock();
  if (!run || !run->request_cancel()) {
    runs_.erase(it);
    return nullptr;
  }
  return run;
}

std::vector<std::shared_ptr<fanout_state>> run_registry::cancel_all() {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<std::shared_ptr<fanout_state>> all;
  for (auto& [id, weak] : runs_) {
    if (auto run = weak.lock(); run && run->request_cancel()) {
      all.push_back(std::move(run));
    }
  }
  return all;
}

size_t run_registry::size() const {
  std::lock_guard<std::mutex> guard{mu_};
  size_t n = 0;
  for (const auto& [id, weak] : runs_) {
    auto run = weak.lock();
    n += run && !run->done() ? 1 : 0;
  }
  return n;
}

void run_registry::prune() {
  for (auto it = runs_.begin(); it != runs_.end();) {
    auto run = it->second.lock();
    it = !run || run->done() ? runs_.erase(it) : std::next(it);
  }
  // amortized O(1) per add: the next prune after as many adds again as runs are left
  prune_at_ = std::max<size_t>(64, 2 * runs_.size());
}

} // namespace cws::base

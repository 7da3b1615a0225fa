#include "base/event_loop.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utility>

namespace cws::base {

namespace {

/// The key of the loop's own eventfd.
constexpr uint64_t wake_key = ~uint64_t{0};

} // namespace

event_loop::event_loop(handlers h) : h_(std::move(h)) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epfd_ < 0 || evfd_ < 0) {
    auto why = std::string{std::strerror(errno)};
    if (epfd_ >= 0) {
      ::close(epfd_);
    }
    if (evfd_ >= 0) {
      ::close(evfd_);
    }
    throw std::runtime_error("event loop: cannot create epoll/eventfd: " + why);
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = wake_key;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev);
  thread_ = std::thread([this] { loop(); });
}

event_loop::~event_loop() {
  stop();
  ::close(evfd_);
  ::close(epfd_);
}

bool event_loop::post(task t) {
  bool from_loop = in_loop();
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (ended_) {
      return false;
    }
    posted_.push_back(std::move(t));
  }
  if (!from_loop) {
    wake(); // the loop itself runs its queue before it sleeps again
  }
  return true;
}

void event_loop::stop() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void event_loop::wake() {
  uint64_t one = 1;
  (void)!::write(evfd_, &one, sizeof one);
}

void event_loop::watch(int fd, uint32_t events, uint64_t key) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = key;
  if (epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) {
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  }
}

void event_loop::unwatch(int fd) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
}

bool event_loop::run_posted() {
  for (;;) {
    std::vector<task> batch;
    bool stopping;
    {
      std::lock_guard<std::mutex> guard{mu_};
      batch.swap(posted_);
      stopping = stopping_;
    }
    if (batch.empty()) {
      return stopping;
    }
    for (auto& t : batch) {
      t();
    }
  }
}

void event_loop::loop() {
  loop_id_ = std::this_thread::get_id();
  std::vector<epoll_event> events(1024);
  while (!run_posted()) {
    auto now = clock::now();
    for (auto key : timers_.take_due(now)) {
      if (h_.deadline) {
        h_.deadline(key);
      }
    }
    std::optional<clock::time_point> wake_at = timers_.next();
    if (h_.turn) {
      if (auto at = h_.turn(); at && (!wake_at || *at < *wake_at)) {
        wake_at = at;
      }
    }
    int timeout = -1;
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (!posted_.empty() || stopping_) {
        timeout = 0; // posted by the handlers above
      }
    }
    if (timeout != 0 && wake_at) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*wake_at - clock::now());
      // +1: wake after the deadline, not just before it (milliseconds round down)
      timeout = static_cast<int>(std::clamp<long long>(ms.count() + 1, 0, 60000));
    }
    int n = epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), timeout);
    for (int i = 0; i < n; ++i) {
      auto key = events[static_cast<size_t>(i)].data.u64;
      if (key == wake_key) {
        uint64_t drained;
        (void)!::read(evfd_, &drained, sizeof drained);
      } else if (h_.ready) {
        h_.ready(key, events[static_cast<size_t>(i)].events);
      }
    }
  }
  if (h_.stopped) {
    h_.stopped();
  }
  run_posted();              // what `stopped` posted (its jobs' follow-ups) still runs
  std::vector<task> dropped; // destroyed outside the lock: a capture's destructor may post
  std::lock_guard<std::mutex> guard{mu_};
  ended_ = true;
  dropped.swap(posted_);
}

} // namespace cws::base

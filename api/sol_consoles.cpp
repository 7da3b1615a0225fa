#include "api/sol_consoles.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

namespace cws::api {

namespace {

bool numeric(const std::string& a) {
  in6_addr buf{};
  return inet_pton(AF_INET, a.c_str(), &buf) == 1 || inet_pton(AF_INET6, a.c_str(), &buf) == 1;
}

/// The first address of `host` (IPv4 first, as the hardware engine does), or "".
std::string lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) {
    return {};
  }
  std::string out;
  for (auto* p = res; p && out.empty(); p = p->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (p->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, buf, sizeof buf);
      out = buf;
    }
  }
  for (auto* p = res; p && out.empty(); p = p->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (p->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, buf, sizeof buf);
      out = buf;
    }
  }
  freeaddrinfo(res);
  return out;
}

bool ends(ipmi::sol_event::kind k) {
  using k_ = ipmi::sol_event::kind;
  return k == k_::already_active || k == k_::error || k == k_::lost || k == k_::closed;
}

console_io_event convert(const ipmi::sol_event& e) {
  using s = ipmi::sol_event::kind;
  using c = console_io_event::kind;
  console_io_event out;
  out.message = e.message;
  out.count = e.count;
  switch (e.what) {
    case s::active: out.what = c::up; break;
    case s::already_active: out.what = c::already_active; break;
    case s::error: out.what = c::error; break;
    case s::lost: out.what = c::lost; break;
    case s::closed: out.what = c::closed; break;
    case s::dropped: out.what = c::dropped; break;
    case s::break_detected: out.what = c::break_detected; break;
  }
  return out;
}

} // namespace

sol_consoles::sol_consoles(config c) : cfg_(std::move(c)) {
}

sol_consoles::~sol_consoles() {
  names_.stop();
  sessions_.reset();
  kvm_.reset();
}

std::shared_ptr<sol_consoles::log_entry> sol_consoles::log_of(const std::string& node) {
  std::lock_guard lock{mu_};
  auto& e = logs_[node];
  if (!e) {
    e = std::make_shared<log_entry>(cfg_.log, node);
  }
  return e;
}

void sol_consoles::on_output(uint64_t id, std::string bytes) {
  std::shared_ptr<log_entry> e;
  {
    std::lock_guard lock{mu_};
    auto it = open_.find(id);
    if (it != open_.end()) {
      e = it->second;
    }
  }
  if (e) {
    std::lock_guard lock{e->mu};
    e->log.append(bytes, std::chrono::system_clock::now());
  }
  if (h_.output) {
    h_.output(id, std::move(bytes));
  }
}

void sol_consoles::ended(uint64_t id) {
  std::lock_guard lock{mu_};
  open_.erase(id);
  kvm_ids_.erase(id);
}

bool sol_consoles::is_kvm(uint64_t id) {
  std::lock_guard lock{mu_};
  return kvm_ids_.count(id) != 0;
}

virt::console_streams& sol_consoles::kvm() {
  std::lock_guard lock{mu_};
  if (!kvm_) {
    virt::console_streams::callbacks cb;
    cb.output = [this](uint64_t id, std::string bytes) {
      on_output(id, std::move(bytes));
    };
    cb.event = [this](uint64_t id, const virt::console_event& ev) {
      using v = virt::console_event::kind;
      using c = console_io_event::kind;
      console_io_event out{c::up, ev.message, ev.count};
      switch (ev.what) {
        case v::up: out.what = c::up; break;
        case v::already_active: out.what = c::already_active; break;
        case v::error: out.what = c::error; break;
        case v::lost: out.what = c::lost; break;
        case v::closed: out.what = c::closed; break;
        case v::dropped: out.what = c::dropped; break;
      }
      if (ev.what != v::up && ev.what != v::dropped) {
        ended(id);
      }
      if (h_.event) {
        h_.event(id, out);
      }
    };
    kvm_ = std::make_unique<virt::console_streams>(std::move(cb), cfg_.kvm);
  }
  return *kvm_;
}

void sol_consoles::start(handlers h) {
  h_ = std::move(h);
  ipmi::console_sessions::callbacks cb;
  cb.output = [this](uint64_t id, std::string bytes) {
    on_output(id, std::move(bytes));
  };
  cb.event = [this](uint64_t id, const ipmi::sol_event& ev) {
    if (ends(ev.what)) {
      ended(id);
    }
    if (h_.event) {
      h_.event(id, convert(ev));
    }
  };
  sessions_ = std::make_unique<ipmi::console_sessions>(std::move(cb));
}

void sol_consoles::open(uint64_t id, const console_spec& spec, bool force) {
  auto e = log_of(spec.node);
  {
    std::lock_guard lock{mu_};
    open_[id] = e;
    if (spec.method == "kvm") {
      kvm_ids_.insert(id);
    }
  }
  if (spec.method == "kvm") {
    kvm().open(id, spec.vm.uri, spec.vm.domain, force);
    return;
  }
  ipmi::console_target t;
  t.address = spec.bmc.address;
  t.port = spec.bmc.port;
  t.user = spec.bmc.user;
  t.password = spec.bmc.password;
  t.options = cfg_.options;
  t.options.force = force;
  if (numeric(t.address)) {
    sessions_->open(id, std::move(t));
    return;
  }
  // a name: looked up off the loop (getaddrinfo may wait for name servers)
  names_.post([this, id, t = std::move(t)]() mutable {
    auto addr = lookup(t.address);
    if (addr.empty()) {
      {
        std::lock_guard lock{mu_};
        open_.erase(id);
      }
      if (h_.event) {
        h_.event(id, {console_io_event::kind::error, "Cannot resolve the BMC " + t.address, 0});
      }
      return;
    }
    t.address = addr;
    sessions_->open(id, std::move(t));
  });
}

void sol_consoles::write(uint64_t id, std::string keys) {
  if (is_kvm(id)) {
    kvm().write(id, std::move(keys));
    return;
  }
  sessions_->write(id, std::move(keys));
}

void sol_consoles::send_break(uint64_t id) {
  if (is_kvm(id)) {
    return; // libvirt's console stream carries bytes only: no break (docs/consoles.md)
  }
  sessions_->send_break(id);
}

void sol_consoles::close(uint64_t id) {
  if (is_kvm(id)) {
    kvm().close(id);
    return;
  }
  sessions_->close(id);
}

void sol_consoles::note(const std::string& node, std::string text) {
  auto e = log_of(node);
  std::lock_guard lock{e->mu};
  e->log.note(text, std::chrono::system_clock::now());
}

void sol_consoles::forget(const std::string& node) {
  std::lock_guard lock{mu_};
  logs_.erase(node); // an open session keeps its entry until it ends
}

} // namespace cws::api

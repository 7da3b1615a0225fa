#include "http/event_hub.hpp"

#include <algorithm>

namespace cws::http {

event_hub::event_hub(net::any_io_executor ex, event_hub_config cfg)
    : ex_(std::move(ex)), cfg_(cfg), heartbeat_(ex_), flush_(ex_) {
  // nop
}

event_hub::~event_hub() = default; // the feed's subscription ends with feed_

bool event_hub::start(const actors::dispatcher& svc) {
  // the handlers run on actor threads, not always the same: posted through a strand, which
  // keeps their order (a plain post from an io thread waits in that thread's private queue
  // until its handler ends, and a later one from another thread overtook it: ids went
  // backwards under load, bench/events.sh). They hold the hub weakly: the feed's bridge holds
  // them, and the hub holds the bridge's subscription.
  std::weak_ptr<event_hub> weak = shared_from_this();
  auto strand = net::make_strand(ex_);
  auto on_io = [weak, strand](auto f) {
    if (auto hub = weak.lock()) {
      net::post(strand, [hub = std::move(hub), f = std::move(f)] { f(*hub); });
    }
  };
  actors::event_handlers h;
  h.on_changes = [on_io](actors::change_set_ptr set, uint64_t stream) {
    on_io([set = std::move(set), stream](event_hub& hub) { hub.on_changes(set, stream); });
  };
  h.on_reset = [on_io](uint64_t seq, uint64_t stream) {
    on_io([seq, stream](event_hub& hub) { hub.on_reset(seq, stream); });
  };
  h.on_joined = [on_io](uint64_t stream) {
    on_io([stream](event_hub& hub) { hub.on_joined(stream); });
  };
  h.on_activity = [on_io](actors::activity_ptr a) {
    on_io([a = std::move(a)](event_hub& hub) { hub.on_activity(*a); });
  };
  feed_ = svc.subscribe(std::move(h));
  if (!feed_) {
    return false;
  }
  beat(); // arms the first heartbeat
  return true;
}

uint64_t event_hub::join(std::unique_ptr<event_reader> reader, uint64_t after) {
  auto id = next_id_++;
  members_.push_back({id, std::move(reader), false});
  feed_->join(id, after);
  return id;
}

void event_hub::leave(uint64_t id) {
  auto it
    = std::find_if(members_.begin(), members_.end(), [id](const member& m) { return m.id == id; });
  if (it == members_.end()) {
    return;
  }
  if (handing_) {
    it->gone = true; // removed once the loop ends (it may be the reader being called)
    left_ = true;
  } else {
    members_.erase(it);
  }
}

template<class F>
void event_hub::each(uint64_t stream, F f) {
  handing_ = true;
  // (a reader that joins from its handler is appended: not called this time)
  for (size_t i = 0, n = members_.size(); i < n; ++i) {
    auto& m = members_[i];
    bool picked = stream == every ? true : stream == 0 ? m.joined : m.id == stream;
    if (!m.gone && picked) {
      f(*m.reader);
    }
  }
  handing_ = false;
  if (left_) {
    left_ = false;
    members_.erase(
      std::remove_if(members_.begin(), members_.end(), [](const member& m) { return m.gone; }),
      members_.end());
  }
}

void event_hub::on_changes(const actors::change_set_ptr& set, uint64_t stream) {
  change_texts texts{set};
  each(stream, [&](event_reader& r) { r.on_changes(texts); });
  flush_soon();
}

void event_hub::on_reset(uint64_t seq, uint64_t stream) {
  each(stream, [&](event_reader& r) { r.on_reset(seq); });
  flush_soon();
}

void event_hub::on_joined(uint64_t stream) {
  for (auto& m : members_) {
    if (m.id == stream) {
      m.joined = true;
    }
  }
}

void event_hub::on_activity(const actors::activity& a) {
  each(0, [&](event_reader& r) { r.on_activity(a); });
  flush_soon();
}

void event_hub::beat() {
  each(0, [](event_reader& r) {
    r.on_heartbeat();
    r.flush();
  });
  heartbeat_.expires_after(cfg_.heartbeat);
  heartbeat_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto hub = weak.lock();
    if (!ec && hub) {
      hub->beat();
    }
  });
}

void event_hub::flush_soon() {
  if (flush_armed_) {
    return;
  }
  flush_armed_ = true;
  auto then = [weak = weak_from_this()](beast::error_code ec = {}) {
    auto hub = weak.lock();
    if (!ec && hub) {
      hub->flush_all();
    }
  };
  if (cfg_.flush.count() == 0) {
    net::post(ex_, [then] { then(); }); // after what the strand hands over in this turn
  } else {
    flush_.expires_after(cfg_.flush);
    flush_.async_wait(then);
  }
}

void event_hub::flush_all() {
  flush_armed_ = false;
  // the streams of one filter that keep up queued the same shared texts since the last
  // flush: one joined text for all of them, not a copy each
  shared_joins joins;
  each(every, [&](event_reader& r) { r.flush_shared(joins); });
}

std::shared_ptr<event_hub> event_hubs::of(const net::any_io_executor& ex,
                                          const actors::dispatcher& svc, event_hub_config cfg) {
  const void* key = &net::query(ex, net::execution::context);
  std::lock_guard lock{mutex_};
  // the hubs of threads whose last stream left are gone: dropped here
  hubs_.erase(std::remove_if(hubs_.begin(), hubs_.end(),
                             [&](const auto& h) { return h.first != key && h.second.expired(); }),
              hubs_.end());
  auto it = std::find_if(hubs_.begin(), hubs_.end(), [&](const auto& h) { return h.first == key; });
  if (it != hubs_.end()) {
    if (auto hub = it->second.lock()) {
      return hub;
    }
  }
  auto hub = std::make_shared<event_hub>(ex, cfg);
  if (!hub->start(svc)) {
    return nullptr;
  }
  if (it != hubs_.end()) {
    it->second = hub;
  } else {
    hubs_.emplace_back(key, hub);
  }
  return hub;
}

} // namespace cws::http

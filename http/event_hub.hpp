#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "actors/dispatcher.hpp"
#include "http/beast.hpp"
#include "http/event_stream.hpp"

namespace cws::http {

/// An event stream as the hub of its io thread sees it (an SSE response, a WebSocket
/// session). Each call comes on that thread, in the order the feed sent.
class event_reader {
 public:
  virtual ~event_reader() = default;
  /// A change set; `texts` renders it once per filter for the streams of this thread. What
  /// passes is queued: `flush` writes it.
  virtual void on_changes(change_texts& texts) = 0;
  /// Changes were missed; the stream goes on after number `seq`.
  virtual void on_reset(uint64_t seq) = 0;
  virtual void on_activity(const actors::activity& a) = 0;
  virtual void on_heartbeat() = 0;
  /// Writes what was queued since the last write (the events of a burst in one write).
  virtual void flush() = 0;
  /// The same in a flush of the hub's streams: a join the stream's write needs is taken from
  /// `joins`, shared with the streams that queued the same texts.
  virtual void flush_shared(shared_joins& joins) {
    (void)joins;
    flush();
  }
};

/// How a hub delivers.
struct event_hub_config {
  /// A heartbeat to every stream this often.
  std::chrono::milliseconds heartbeat{15000};
  /// What a stream queued is written this long after the first event of a burst at most
  /// (0: once the events handed over together are queued).
  std::chrono::milliseconds flush{0};
};

/// The change feed's delivery to the event streams of one io thread: one subscriber of the
/// feed (actors::dispatcher::subscribe) for all of them, so a change set is one actor message
/// and one post per thread, not per stream; rendered once per filter (change_texts); written
/// to each stream at most once per `flush` interval, what came meanwhile joined into that
/// write (one TLS record and system call instead of one per change set); one heartbeat
/// timer. Lives on its thread (made there by event_hubs); the feed's messages come through a
/// strand, in the order the feed sent them.
class event_hub : public std::enable_shared_from_this<event_hub> {
 public:
  event_hub(net::any_io_executor ex, event_hub_config cfg);
  ~event_hub();
  event_hub(const event_hub&) = delete;
  event_hub& operator=(const event_hub&) = delete;

  /// Subscribes to the feed of `svc`; false when the service has none.
  bool start(const actors::dispatcher& svc);

  /// `reader` joins after number `after` (`actors::from_now`: new changes only): what the log
  /// holds past it first (or a reset), then what the feed publishes. Its number in the hub.
  uint64_t join(std::unique_ptr<event_reader> reader, uint64_t after);

  /// Stream `id` leaves: nothing more is handed to it (also when called from its handler).
  void leave(uint64_t id);

 private:
  struct member {
    uint64_t id = 0;
    std::unique_ptr<event_reader> reader;
    /// Its backlog was sent: what the feed sends every stream is its too.
    bool joined = false;
    /// It left while the hub was handing something to its members.
    bool gone = false;
  };

  void on_changes(const actors::change_set_ptr& set, uint64_t stream);
  void on_reset(uint64_t seq, uint64_t stream);
  void on_joined(uint64_t stream);
  void on_activity(const actors::activity& a);
  void beat();
  void flush_soon();
  void flush_all();
  /// `each`'s stream for every member, joined or not.
  static constexpr uint64_t every = ~uint64_t{0};
  /// Calls `f(reader)` for stream `stream`, or (0) for every stream that joined.
  template<class F>
  void each(uint64_t stream, F f);

  net::any_io_executor ex_;
  event_hub_config cfg_;
  std::unique_ptr<actors::event_subscription> feed_;
  std::vector<member> members_;
  uint64_t next_id_ = 1;
  /// Handing something to the members: a stream that leaves meanwhile is removed after.
  bool handing_ = false;
  bool left_ = false;
  net::steady_timer heartbeat_;
  net::steady_timer flush_;
  bool flush_armed_ = false;
};

/// The hubs of the io threads: one per thread, made when its
/// first stream joins, gone with its last (session_context::hubs).
class event_hubs {
 public:
  /// The hub of the io thread `ex` runs on (call on that thread); null when `svc` has no feed.
  std::shared_ptr<event_hub> of(const net::any_io_executor& ex, const actors::dispatcher& svc,
                                event_hub_config cfg);

 private:
  std::mutex mutex_;
  /// io_context -> its hub.
  std::vector<std::pair<const void*, std::weak_ptr<event_hub>>> hubs_;
};

/// A stream's place in its hub: it leaves when this is destroyed.
class event_membership {
 public:
  event_membership(std::shared_ptr<event_hub> hub, uint64_t id) : hub_(std::move(hub)), id_(id) {
    // nop
  }
  ~event_membership() {
    hub_->leave(id_);
  }
  event_membership(const event_membership&) = delete;
  event_membership& operator=(const event_membership&) = delete;

 private:
  std::shared_ptr<event_hub> hub_;
  uint64_t id_;
};

} // namespace cws::http

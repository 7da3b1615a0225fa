#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cws::http {

/// `data` as one chunk of a chunked answer (its size in hex, the data, CRLF).
std::string chunk(std::string_view data);

/// A text on its way to the socket, shared by the streams that send it (an event rendered
/// once for every stream of its filter) and held until its write is done.
using shared_text = std::shared_ptr<const std::string>;

/// The joined writes of one flush of many streams (http/event_hub): streams whose waiting
/// texts are the same shared texts, in the same order (the subscribers of one filter that
/// keep up), get one joined text, made once, instead of a copy each. Lives for one flush.
class shared_joins {
 public:
  /// `parts` joined, the same text for the same parts (compared by identity).
  shared_text join(const std::vector<shared_text>& parts);

 private:
  /// Distinct joins kept: past that, a join is made for its stream alone.
  static constexpr size_t max_kept = 8;
  struct kept {
    std::vector<shared_text> parts; // (held: an address is not reused meanwhile)
    shared_text joined;
  };
  std::vector<kept> kept_;
};

/// A streamed answer as text waiting for the socket (chunked NDJSON of a fan-out call, the
/// Server-Sent Events of GET /events, a listing sent in pages): the head, then chunks, one
/// write at a time, what waits joined into the next write. No I/O: the session writes what
/// `begin_write` gives and says when it is done. Joining matters when text piles up (a burst
/// of events to a client a write behind, a fast fan-out): one TLS record and one system call
/// for many chunks instead of one each.
class response_stream {
 public:
  /// At most this many bytes are joined into one write (a longer text goes alone).
  static constexpr size_t max_join = 64 * 1024;

  /// The answer's head is the first text; the stream is under way with `status`.
  void start(unsigned status, std::string head);

  /// Text after what waits; nothing is taken once the stream ended.
  void push(std::string text);
  /// The same, a text other streams may send too (not copied).
  void push(shared_text text);

  /// The last text: the stream ends after it.
  void finish(std::string last);

  /// The stream ends with what waits (its client is gone, or an error cut it short).
  void end() noexcept {
    ended_ = true;
  }

  /// An event stream's text, unless `limit` bytes wait already (the write under way
  /// included): then what waits goes (not the write under way), `last` is queued and the
  /// stream ends. False when it was cut off so.
  bool push_within(shared_text text, size_t limit, std::string last);
  bool push_within(std::string text, size_t limit, std::string last) {
    return push_within(std::make_shared<const std::string>(std::move(text)), limit,
                       std::move(last));
  }
  /// The same, with the last text made only when it is needed (`last()`: a std::string).
  template<class Last>
  bool push_within_or(shared_text text, size_t limit, Last&& last) {
    if (ended_ || waiting_ < limit) {
      push(std::move(text));
      return true;
    }
    return push_within(std::move(text), limit, last());
  }

  /// The next write (what waits, joined up to max_join bytes), or null while a write is
  /// under way or nothing waits. Valid until `write_done`. A text that waits alone is written
  /// as it is (a shared one is not copied); `joins` makes a join that other streams share.
  const std::string* begin_write(shared_joins* joins = nullptr);

  /// The write under way was written.
  void write_done() noexcept;

  /// What waits goes (a write failed: the connection ends).
  void drop() noexcept;

  /// Ready for the next answer (after `complete`).
  void reset() noexcept;

  bool started() const noexcept {
    return started_;
  }
  bool ended() const noexcept {
    return ended_;
  }
  bool writing() const noexcept {
    return writing_;
  }
  unsigned status() const noexcept {
    return status_;
  }
  /// Texts between the source and the socket, the write under way counted as one.
  size_t in_flight() const noexcept {
    return queue_.size() + (writing_ ? 1 : 0);
  }
  /// Bytes not yet written, the write under way included.
  size_t waiting_bytes() const noexcept {
    return waiting_;
  }
  /// Everything was written and nothing more comes: the answer is complete.
  bool complete() const noexcept {
    return ended_ && !writing_ && queue_.empty();
  }

 private:
  std::deque<shared_text> queue_;
  shared_text write_;
  /// The texts of the join being made (kept: its capacity is reused).
  std::vector<shared_text> parts_;
  size_t waiting_ = 0;
  unsigned status_ = 200;
  bool started_ = false;
  bool ended_ = false;
  bool writing_ = false;
};

} // namespace cws::http

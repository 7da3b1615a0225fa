#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace cws::http {

/// `data` as one chunk of a chunked answer (its size in hex, the data, CRLF).
std::string chunk(std::string_view data);

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

  /// The last text: the stream ends after it.
  void finish(std::string last);

  /// The stream ends with what waits (its client is gone, or an error cut it short).
  void end() noexcept {
    ended_ = true;
  }

  /// An event stream's text, unless `limit` bytes wait already (the write under way
  /// included): then what waits goes (not the write under way), `last` is queued and the
  /// stream ends. False when it was cut off so.
  bool push_within(std::string text, size_t limit, std::string last);
  /// The same, with the last text made only when it is needed (`last()`: a std::string).
  template<class Last>
  bool push_within_or(std::string text, size_t limit, Last&& last) {
    if (ended_ || waiting_ < limit) {
      push(std::move(text));
      return true;
    }
    return push_within(std::move(text), limit, last());
  }

  /// The next write (what waits, joined up to max_join bytes), or null while a write is
  /// under way or nothing waits. Valid until `write_done`.
  const std::string* begin_write();

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
  std::deque<std::string> queue_;
  std::string write_;
  size_t waiting_ = 0;
  unsigned status_ = 200;
  bool started_ = false;
  bool ended_ = false;
  bool writing_ = false;
};

} // namespace cws::http

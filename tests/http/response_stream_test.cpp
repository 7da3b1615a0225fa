// The text of a streamed answer on its way to the socket: order, one write at a time, what
// waits joined into the next write, the end, and an event stream's bound.

#include <gtest/gtest.h>

#include "http/response_stream.hpp"

namespace {

using cws::http::response_stream;
using cws::http::shared_joins;
using cws::http::shared_text;

shared_text text(const char* t) {
  return std::make_shared<const std::string>(t);
}

TEST(response_stream, writes_one_at_a_time_and_joins_what_waited_in_order) {
  response_stream s;
  s.start(201, "HEAD");
  EXPECT_TRUE(s.started());
  EXPECT_EQ(s.status(), 201u);
  const auto* w = s.begin_write();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(*w, "HEAD");
  s.push("a");
  s.push("b");
  s.push("c");
  EXPECT_EQ(s.begin_write(), nullptr) << "a write is under way";
  EXPECT_EQ(s.in_flight(), 4u);
  EXPECT_EQ(s.waiting_bytes(), 7u);
  s.write_done();
  w = s.begin_write();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(*w, "abc"); // three chunks, one write
  s.write_done();
  EXPECT_EQ(s.begin_write(), nullptr);
  EXPECT_EQ(s.waiting_bytes(), 0u);
  EXPECT_FALSE(s.complete()) << "not ended";
}

TEST(response_stream, a_join_stops_at_max_join_and_a_long_text_goes_alone) {
  response_stream s;
  std::string big(response_stream::max_join, 'x');
  s.push("a");
  s.push(big);
  s.push("b");
  EXPECT_EQ(*s.begin_write(), "a");
  s.write_done();
  EXPECT_EQ(s.begin_write()->size(), big.size());
  s.write_done();
  EXPECT_EQ(*s.begin_write(), "b");
}

TEST(response_stream, the_answer_is_complete_once_the_last_text_was_written) {
  response_stream s;
  s.start(200, "H");
  s.finish("LAST");
  s.push("late"); // nothing after the end
  EXPECT_TRUE(s.ended());
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(*s.begin_write(), "HLAST");
  EXPECT_FALSE(s.complete()) << "still being written";
  s.write_done();
  EXPECT_TRUE(s.complete());
  s.reset();
  EXPECT_FALSE(s.started());
  EXPECT_FALSE(s.ended());
  EXPECT_EQ(s.begin_write(), nullptr);
}

TEST(response_stream, an_event_stream_past_its_bound_keeps_the_write_under_way_then_ends) {
  response_stream s;
  s.start(200, "HEAD");
  ASSERT_NE(s.begin_write(), nullptr); // HEAD on its way
  EXPECT_TRUE(s.push_within("e1", 10, "RESET"));
  EXPECT_TRUE(s.push_within("e2", 10, "RESET")); // 8 bytes wait
  EXPECT_TRUE(s.push_within("e3", 10, "RESET"));
  EXPECT_FALSE(s.push_within("e4", 10, "RESET")); // 10 wait: cut off
  EXPECT_TRUE(s.ended());
  EXPECT_EQ(s.waiting_bytes(), 4u + 5u); // HEAD (under way) and RESET
  s.write_done();
  EXPECT_EQ(*s.begin_write(), "RESET"); // e1..e3 went
  s.write_done();
  EXPECT_TRUE(s.complete());
  EXPECT_TRUE(s.push_within("e5", 10, "RESET")) << "after the end: ignored, not cut again";
  EXPECT_EQ(s.begin_write(), nullptr);
}

TEST(response_stream, a_failed_write_drops_what_waits) {
  response_stream s;
  s.push("a");
  ASSERT_NE(s.begin_write(), nullptr);
  s.push("b");
  s.write_done();
  s.drop();
  EXPECT_EQ(s.begin_write(), nullptr);
  EXPECT_EQ(s.waiting_bytes(), 0u);
}

TEST(response_stream, a_text_waiting_alone_is_written_as_it_is_not_copied) {
  response_stream s;
  auto t = text("id: 1\n\n");
  s.push(t);
  EXPECT_EQ(s.begin_write(), t.get());
  s.write_done();
  EXPECT_EQ(s.waiting_bytes(), 0u);
}

TEST(response_stream, streams_that_queued_the_same_texts_share_one_joined_write) {
  // three subscribers of one filter that keep up, one with an event of its own between
  auto e1 = text("e1"), e2 = text("e2"), own = text("own");
  response_stream a, b, c;
  for (auto* s : {&a, &b, &c}) {
    s->push(e1);
    if (s == &c) {
      s->push(own);
    }
    s->push(e2);
  }
  shared_joins joins;
  const auto* wa = a.begin_write(&joins);
  const auto* wb = b.begin_write(&joins);
  const auto* wc = c.begin_write(&joins);
  ASSERT_NE(wa, nullptr);
  EXPECT_EQ(*wa, "e1e2");
  EXPECT_EQ(wb, wa) << "the same texts: one join, not a copy each";
  EXPECT_EQ(*wc, "e1owne2") << "other texts: a join of its own";
  EXPECT_NE(wc, wa);
  // a join outlives the flush that made it while its stream writes it
  joins = shared_joins{};
  a.write_done();
  EXPECT_EQ(*wb, "e1e2");
  b.write_done();
  c.write_done();
  EXPECT_EQ(a.waiting_bytes() + b.waiting_bytes() + c.waiting_bytes(), 0u);
}

TEST(response_stream, equal_texts_that_are_not_the_same_are_not_taken_for_them) {
  // joins match by identity: a stream's own "e1" is its own text, whatever it holds
  response_stream a, b;
  a.push(text("e1"));
  a.push(text("e2"));
  b.push(text("e1"));
  b.push(text("e2"));
  shared_joins joins;
  const auto* wa = a.begin_write(&joins);
  const auto* wb = b.begin_write(&joins);
  EXPECT_NE(wa, wb);
  EXPECT_EQ(*wa, *wb);
}

} // namespace

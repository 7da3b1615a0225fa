// The event stream's text: one Server-Sent Event per change set, filtered by type and node,
// users' names only for root; reset events; the types= parameter.

#include <gtest/gtest.h>

#include "http/event_stream.hpp"
#include "http/response_stream.hpp"

namespace {

using namespace cws;
using store::change_kind;
using store::object_type;

store::change_set sample() {
  return {42,
          {{object_type::node, "cn1", change_kind::created, {"groups", "mgt"}},
           {object_type::node, "cn2", change_kind::changed, {"os"}},
           {object_type::network, "net1", change_kind::removed, {"net"}},
           {object_type::passwd, "alice", change_kind::changed, {"password"}}}};
}

TEST(event_stream, a_change_set_is_one_event_with_its_number) {
  http::event_filter all;
  all.sees_users = true;
  EXPECT_EQ(http::sse_changes(sample(), all),
            "id: 42\nevent: changes\ndata: {\"seq\":42,\"changes\":["
            "{\"type\":\"node\",\"name\":\"cn1\",\"change\":\"created\","
            "\"attributes\":[\"groups\",\"mgt\"]},"
            "{\"type\":\"node\",\"name\":\"cn2\",\"change\":\"changed\",\"attributes\":[\"os\"]},"
            "{\"type\":\"network\",\"name\":\"net1\",\"change\":\"removed\","
            "\"attributes\":[\"net\"]},"
            "{\"type\":\"passwd\",\"name\":\"alice\",\"change\":\"changed\","
            "\"attributes\":[\"password\"]}]}\n\n");
}

TEST(event_stream, filters_keep_what_was_asked_and_users_only_for_root) {
  http::event_filter f; // not root: no passwd
  auto text = http::sse_changes(sample(), f);
  EXPECT_EQ(text.find("alice"), std::string::npos) << text;
  EXPECT_NE(text.find("net1"), std::string::npos);
  ASSERT_EQ(http::parse_event_types("node", f), std::nullopt);
  f.nodes_only = true;
  f.nodes = {"cn2"};
  text = http::sse_changes(sample(), f);
  EXPECT_EQ(text.find("cn1"), std::string::npos) << text;
  EXPECT_EQ(text.find("net1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\":\"cn2\""), std::string::npos) << text;
  f.nodes = {"cn9"};
  EXPECT_EQ(http::sse_changes(sample(), f), ""); // nothing passes: no event at all
}

TEST(event_stream, a_console_event_goes_to_root_and_to_its_own_user_only) {
  http::event_filter f;
  f.user = "alice";
  EXPECT_EQ(http::console_json("n1", "attached", "alice", "rw", f),
            R"({"node":"n1","console":"attached","user":"alice","mode":"rw"})");
  EXPECT_EQ(http::console_json("n1", "attached", "bob", "rw", f), "");
  f.user = "root";
  EXPECT_NE(http::console_json("n1", "detached", "bob", "ro", f), "");
  http::event_filter g;
  g.user = "root";
  EXPECT_EQ(http::parse_event_types("power", g), std::nullopt);
  EXPECT_EQ(http::console_json("n1", "attached", "bob", "rw", g), "");
}

TEST(event_stream, unknown_types_are_named) {
  http::event_filter f;
  EXPECT_EQ(http::parse_event_types("node,bogus", f),
            "Unknown event type 'bogus': use node, group, network, osimage, policy, site, "
            "passwd, job, power or console.");
  http::event_filter g;
  EXPECT_EQ(http::parse_event_types("site,osimage", g), std::nullopt);
  EXPECT_EQ(g.types, (std::vector<object_type>{object_type::site, object_type::osimage}));
}

TEST(event_stream, job_events_go_to_their_user_and_root_and_power_events_to_the_noderange) {
  api::job_info j;
  j.id = "00000000000000aa";
  j.user = "alice";
  j.operation = "nodeshell";
  j.state = api::job_state::running;
  j.targets = 2;
  j.finished = 1;
  http::event_filter f;
  f.user = "alice";
  EXPECT_EQ(http::sse_job(j, "progress", f),
            "event: job\ndata: {\"job\":\"00000000000000aa\",\"event\":\"progress\",\"user\":"
            "\"alice\",\"operation\":\"nodeshell\",\"state\":\"running\",\"targets\":2,"
            "\"finished\":1,\"failed\":0}\n\n");
  f.user = "bob";
  EXPECT_EQ(http::sse_job(j, "progress", f), "");
  f.user = "root";
  EXPECT_NE(http::sse_job(j, "progress", f), "");
  EXPECT_EQ(http::sse_power("n1", "on", f),
            "event: power\ndata: {\"node\":\"n1\",\"power\":\"on\"}\n\n");
  f.nodes_only = true;
  f.nodes = {"n2"};
  EXPECT_EQ(http::sse_power("n1", "on", f), "");
  http::event_filter g;
  ASSERT_EQ(http::parse_event_types("job", g), std::nullopt);
  g.user = "root";
  EXPECT_NE(http::sse_job(j, "ended", g), "");
  EXPECT_EQ(http::sse_power("n1", "off", g), "") << "types=job: no power events";
  store::change_set set;
  set.seq = 3;
  set.changes.push_back({object_type::node, "n1", store::change_kind::created, {}});
  EXPECT_EQ(http::sse_changes(set, g), "") << "types=job: no object changes";
}

TEST(event_stream, a_reset_names_where_the_stream_goes_on_and_why) {
  EXPECT_EQ(http::sse_reset(7, "the change log no longer holds event 3"),
            "id: 7\nevent: reset\ndata: {\"seq\":7,\"reason\":\"the change log no longer holds "
            "event 3\"}\n\n");
  EXPECT_EQ(http::sse_reset(std::nullopt, "too slow"),
            "event: reset\ndata: {\"reason\":\"too slow\"}\n\n"); // no id: resume as before
  EXPECT_EQ(http::sse_heartbeat(), ": keep-alive\n\n");
}

TEST(event_stream, a_set_rendered_once_still_answers_each_filter_as_its_own) {
  auto set = std::make_shared<const store::change_set>(sample());
  http::event_filter root, user, networks, cn2, root_too;
  root.sees_users = true;
  root_too.sees_users = true;
  networks.types = {object_type::network};
  cn2.nodes_only = true;
  cn2.nodes = {"cn2"};
  // the streams of one thread in turn, each in both forms: each gets what sse_changes and
  // changes_json give it, never another's
  http::change_texts texts{set};
  for (int round = 0; round < 2; ++round) {
    for (const auto* f : {&root, &user, &networks, &cn2, &root_too}) {
      EXPECT_EQ(texts.sse_chunk(*f), http::chunk(http::sse_changes(*set, *f)));
      EXPECT_EQ(texts.ws_frame(*f),
                http::ws_event(set->seq, "changes", http::changes_json(*set, *f)));
    }
  }
  // a filter that lets nothing through gets nothing, in either form
  http::event_filter sites;
  sites.types = {object_type::site};
  EXPECT_EQ(texts.sse_chunk(sites), "");
  EXPECT_EQ(texts.ws_frame(sites), "");
  EXPECT_EQ(texts.sse_text(sites), nullptr);
  // streams of one filter queue one shared text; a noderange's is its own
  EXPECT_EQ(texts.sse_text(root), texts.sse_text(root_too));
  EXPECT_EQ(*texts.sse_text(root), texts.sse_chunk(root));
  http::event_filter cn2_too = cn2;
  EXPECT_NE(texts.sse_text(cn2), texts.sse_text(cn2_too));
}

TEST(event_stream, a_websocket_frame_holds_the_sse_events_id_event_and_data) {
  http::event_filter f;
  f.types = {object_type::network};
  EXPECT_EQ(http::ws_event(42, "changes", http::changes_json(sample(), f)),
            "{\"id\":42,\"event\":\"changes\",\"data\":{\"seq\":42,\"changes\":["
            "{\"type\":\"network\",\"name\":\"net1\",\"change\":\"removed\","
            "\"attributes\":[\"net\"]}]}}");
  EXPECT_EQ(http::ws_event(std::nullopt, "reset", http::reset_json(std::nullopt, "slow \"x\"")),
            "{\"event\":\"reset\",\"data\":{\"reason\":\"slow \\\"x\\\"\"}}");
  f.types = {object_type::osimage};
  EXPECT_EQ(http::changes_json(sample(), f), ""); // nothing passes: no frame
}

TEST(event_stream, an_allowed_filter_sees_users_for_root_and_the_nodes_policy_expanded) {
  http::event_request req;
  req.filter.nodes_only = true;
  auto f = http::allowed_filter(req, "alice", {"cn2", "cn1"});
  EXPECT_FALSE(f.sees_users);
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"cn1", "cn2"}));
  auto text = http::changes_json(sample(), f);
  EXPECT_NE(text.find("cn1"), std::string::npos) << text;
  http::event_request all;
  EXPECT_TRUE(http::allowed_filter(all, "root", {}).sees_users);
}

} // namespace

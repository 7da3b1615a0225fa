// Routing, query/body parsing and rendering: pure functions, no sockets.

#include <gtest/gtest.h>

#include "http/framing.hpp"
#include "http/json_writer.hpp"
#include "http/query.hpp"
#include "http/render.hpp"
#include "http/resources.hpp"
#include "http/router.hpp"

namespace {

using namespace cws::http;
using cws::api::operation;
namespace api = cws::api;
using cws::store::object_type;

/// A routed request whose own answer (if any) is rendered as the session sends it.
struct routed_text : routed {
  std::optional<response_text> answer;
};

routed_text go(std::string method, std::string target, std::string body = {}) {
  http_input in;
  in.method = std::move(method);
  in.target = std::move(target);
  in.body = std::move(body);
  in.content_type = "application/json";
  in.client = "127.0.0.1";
  routed_text t;
  static_cast<routed&>(t) = route(in, router_limits{});
  if (t.routed::answer) {
    t.answer = render(t, *t.routed::answer);
  }
  return t;
}

TEST(router, resource_list_needs_no_credentials_and_alias_works) {
  for (auto base : {"/clusterws", "/clusterws/", "/xcatws"}) {
    auto r = go("GET", base);
    ASSERT_TRUE(r.answer) << base;
    EXPECT_EQ(r.answer->status, 200u);
    EXPECT_NE(r.answer->body.find("\"nodes\""), std::string::npos);
  }
}

TEST(router, unsupported_resource_and_method_are_answered_before_authentication) {
  auto r = go("GET", "/clusterws/bogus?userName=root&userPW=wrong&xyz=1");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 404u);
  EXPECT_EQ(r.answer->body, "{\"error\":\"Unsupported resource.\",\"errorcode\":\"2\"}\n");
  EXPECT_EQ(go("GET", "/other/nodes").answer.value().status, 404u);
  auto unknown = go("GET", "/clusterws/nodes/n1/nosuchthing");
  ASSERT_TRUE(unknown.answer);
  EXPECT_EQ(unknown.answer->status, 404u);
  r = go("PATCH", "/clusterws/nodes/n1");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 405u);
  EXPECT_EQ(r.answer->body, "{\"error\":\"request method 'PATCH' is not supported on resource "
                            "'/nodes/n1'\",\"errorcode\":\"2\"}\n");
  EXPECT_EQ(go("DELETE", "/clusterws/groups/g").answer.value().status, 405u);
  EXPECT_EQ(go("PUT", "/clusterws/tokens").answer.value().status, 405u); // (GET lists one's tokens)
}

TEST(router, node_routes_map_to_operations_and_commands) {
  auto r = go("GET", "/clusterws/nodes/node%5B1-3%5D?userName=root&userPW=pw");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, operation::show);
  EXPECT_EQ(r.call->target, "node[1-3]");
  EXPECT_EQ(r.call->policy_command, "lsdef");
  EXPECT_EQ(r.call->creds.user, "root");
  EXPECT_EQ(r.call->creds.password, "pw");
  r = go("GET", "/clusterws/nodes/n1,n2/attrs/mgt;bmc");
  EXPECT_EQ(r.call->attrs, (std::vector<std::string>{"mgt", "bmc"}));
  EXPECT_TRUE(r.call->only_attrs);
  EXPECT_EQ(go("GET", "/clusterws/nodes/all/nodels").call->op, operation::nodels);
  EXPECT_EQ(go("GET", "/clusterws/nodes/all/nodels").call->policy_command, "nodels");
  r = go("GET", "/clusterws/nodes/compute/nodestat");
  EXPECT_EQ(r.call->op, operation::nodestat);
  EXPECT_EQ(r.call->target, "compute");
  EXPECT_EQ(r.call->policy_command, "nodestat");
  EXPECT_TRUE(cws::api::is_fan_out(r.call->op));
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1/nodestat", "{}").answer.value().status, 405u);
  r = go("PUT", "/clusterws/nodes/n1", R"({"mgt":"kvm","id":" "})");
  EXPECT_EQ(r.call->op, operation::change);
  EXPECT_EQ(r.call->policy_command, "chdef");
  ASSERT_EQ(r.call->changes.size(), 2u);
  EXPECT_EQ(r.call->changes[1].value, " ");
  r = go("POST", "/clusterws/nodes/n1", R"({"groups":["all","compute"]})");
  EXPECT_EQ(r.call->op, operation::make);
  EXPECT_TRUE(r.post);
  EXPECT_EQ(r.call->changes[0].value, "all,compute");
  EXPECT_EQ(go("DELETE", "/clusterws/nodes/n1").call->policy_command, "rmdef");
  EXPECT_EQ(go("POST", "/clusterws/policy/7", "{\"name\":\"a\"}").call->op, operation::change);
  EXPECT_EQ(go("GET", "/clusterws/nodes/ALLRESOURCES").call->target, "all");
  EXPECT_EQ(go("PUT", "/clusterws/nodes/ALLRESOURCES", "{}").answer.value().status, 404u);
}

TEST(router, host_routes_are_makehosts_and_dryrun_is_a_200_listing) {
  auto r = go("POST", "/clusterws/nodes/compute/host");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, operation::make_hosts);
  EXPECT_EQ(r.call->target, "compute");
  EXPECT_EQ(r.call->type, object_type::node);
  EXPECT_EQ(r.call->policy_command, "makehosts");
  EXPECT_FALSE(r.call->dry_run);
  EXPECT_TRUE(r.post); // 201, as xcatws.cgi
  r = go("POST", "/clusterws/services/host?dryrun=1");
  EXPECT_EQ(r.call->op, operation::make_hosts);
  EXPECT_EQ(r.call->target, ""); // every node
  EXPECT_EQ(r.call->type, object_type::node);
  EXPECT_TRUE(r.call->dry_run);
  EXPECT_FALSE(r.post); // the diff answers 200
  EXPECT_EQ(go("GET", "/clusterws/services/host").answer.value().status, 405u);
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1/host", "{}").answer.value().status, 405u);
  EXPECT_EQ(go("POST", "/clusterws/services/dhcpx").answer.value().status, 404u);
}

TEST(router, provision_is_rinstall_and_bootstate_dryrun_is_a_read_listing) {
  auto r = go("PUT", "/clusterws/nodes/compute/provision", R"({"osimage":"img","uefimode":"1"})");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, operation::provision);
  EXPECT_EQ(r.call->command, "osimage=img -u");
  EXPECT_EQ(r.call->policy_command, "rinstall");
  r = go("PUT", "/clusterws/nodes/compute/provision", "{}");
  EXPECT_EQ(r.call->command, "osimage"); // each node's provmethod, as rinstall
  r = go("PUT", "/clusterws/nodes/compute/provision", R"({"action":"boot"})");
  EXPECT_EQ(r.call->command, "boot");
  EXPECT_EQ(go("GET", "/clusterws/nodes/n1/provision").answer.value().status, 405u);
  // nodeset --dry-run over REST: a read (bootstate) of what the PUT would change
  r = go("PUT", "/clusterws/nodes/n1/bootstate?dryrun=1", R"({"state":"offline"})");
  EXPECT_EQ(r.call->op, operation::bootstate);
  EXPECT_TRUE(r.call->dry_run);
  EXPECT_EQ(r.call->command, "offline");
  EXPECT_EQ(r.call->policy_command, "nodeset");
  r = go("PUT", "/clusterws/nodes/n1/bootstate", R"({"state":"offline"})");
  EXPECT_EQ(r.call->op, operation::nodeset);
  EXPECT_FALSE(r.call->dry_run);
}

TEST(router, general_parameters_leave_the_body_and_the_query_wins) {
  auto r = go("PUT", "/clusterws/nodes/n1?mgt=ipmi&userPW=q",
              R"({"userName":"bob","userPW":"b","mgt":"kvm","pretty":"1"})");
  EXPECT_EQ(r.call->creds.user, "bob");
  EXPECT_EQ(r.call->creds.password, "q");
  ASSERT_EQ(r.call->changes.size(), 1u);
  EXPECT_EQ(r.call->changes[0].value, "ipmi");
  // unknown parameters are ignored on GET
  EXPECT_FALSE(go("GET", "/clusterws/nodes?xyz=1").answer);
}

TEST(router, token_and_basic_credentials) {
  http_input in;
  in.method = "GET";
  in.target = "/clusterws/nodes";
  in.authorization = "Basic YWxpY2U6czNjcmV0OnBhcnQ="; // alice:s3cret:part
  in.token = "tok";
  auto r = route(in, {});
  EXPECT_EQ(r.call->creds.user, "alice");
  EXPECT_EQ(r.call->creds.password, "s3cret:part");
  EXPECT_EQ(r.call->creds.token, "tok");
}

TEST(router, the_local_socket_names_the_caller_and_refuses_credentials) {
  http_input in;
  in.method = "GET";
  in.target = "/clusterws/nodes/n1";
  in.local = true;
  in.peer_user = "alice";
  auto r = route(in, {});
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->creds.peer_user, "alice");
  EXPECT_TRUE(r.call->creds.user.empty());
  // nothing in the request may name anyone there
  for (auto change : {+[](http_input& i) { i.target += "?userName=root&userPW=x"; },
                      +[](http_input& i) { i.token = "tok"; },
                      +[](http_input& i) { i.authorization = "Basic YWxpY2U6eA=="; },
                      +[](http_input& i) {
                        i.method = "PUT";
                        i.body = R"({"userName":"root","os":"x"})";
                      }}) {
    auto bad = in;
    change(bad);
    auto refused = route(bad, {});
    ASSERT_TRUE(refused.answer);
    EXPECT_EQ(refused.answer->error, api::errc::bad_request);
  }
  auto tokens = in;
  tokens.method = "POST";
  tokens.target = "/clusterws/tokens";
  auto t = route(tokens, {});
  ASSERT_TRUE(t.answer);
  EXPECT_EQ(t.answer->error, api::errc::bad_request);
  // over HTTPS a peer user can never be set
  in.local = false;
  EXPECT_TRUE(route(in, {}).call->creds.peer_user.empty());
}

TEST(router, bad_bodies_are_400_with_a_clear_message) {
  auto r = go("PUT", "/clusterws/nodes/n1", "{\"mgt\":");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 400u);
  EXPECT_NE(r.answer->body.find("Malformed JSON body"), std::string::npos);
  r = go("PUT", "/clusterws/nodes/n1", "[1,2]");
  EXPECT_EQ(
    r.answer->body,
    "{\"error\":\"put or post data must be a json object (hash/dict).\",\"errorcode\":\"2\"}\n");
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1", R"({"a":"1","a":"2"})").answer.value().status, 400u);
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1", R"({"mgt":{"x":1}})").answer.value().status, 400u);
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1", R"({"mgt":["a"]})").answer.value().status, 400u);
  EXPECT_EQ(go("PUT", "/clusterws/nodes/n1", R"({"mgt":"kvm"} trailing)").answer.value().status,
            400u);
  std::string deep(100, '[');
  r = go("PUT", "/clusterws/nodes/n1", "{\"a\":" + deep + std::string(100, ']') + "}");
  EXPECT_EQ(r.answer->status, 400u);
  EXPECT_NE(r.answer->body.find("nested deeper"), std::string::npos);
  // an encoded '/' only inside a noderange (`/regex`), never a path separator
  EXPECT_EQ(go("GET", "/clusterws/networks/a%2Fb").answer.value().status, 404u);
  EXPECT_EQ(go("GET", "/clusterws/nodes/n1/attrs/a%2Fb").answer.value().status, 404u);
  EXPECT_EQ(go("GET", "/clusterws/nodes%2Fn1").answer.value().status, 404u);
  EXPECT_EQ(go("GET", "/clusterws%2Fnodes/n1").answer.value().status, 404u);
  auto regex = go("GET", "/clusterws/nodes/%2Fcn0%5B1-3%5D/nodels");
  EXPECT_FALSE(regex.answer);
  EXPECT_EQ(regex.call->target, "/cn0[1-3]");
  EXPECT_EQ(go("GET", "/clusterws/nodes/a%00b").answer.value().status, 404u);
  EXPECT_EQ(go("GET", "/clusterws/nodes/a%zz").answer.value().status, 404u);
}

TEST(router, nodeshell_needs_a_command_and_refuses_identity_changes) {
  auto r = go("POST", "/clusterws/nodes/n1/nodeshell", "{}");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->body, "{\"error\":\"Lack of operation data.\",\"errorcode\":3}\n");
  r = go("POST", "/clusterws/nodes/n1/nodeshell", R"({"command":["date","ls"]})");
  EXPECT_EQ(r.call->command, "date;ls");
  EXPECT_EQ(r.call->policy_command, "xdsh");
  r = go("POST", "/clusterws/nodes/n1/nodeshell",
         R"({"command":"id","ENV":{"DSH_TO_USERID":"root"}})");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 400u);
}

TEST(router, nodecopy_takes_xcats_body_confined_to_copy_root) {
  auto r
    = go("POST", "/clusterws/nodes/n[1-2]/nodecopy", R"({"src":["/c/a","/c/b"],"target":"/etc/"})");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, cws::api::operation::nodecopy);
  EXPECT_EQ(r.call->policy_command, "xdcp");
  ASSERT_TRUE(r.call->copy);
  EXPECT_TRUE(r.call->copy->confined);
  ASSERT_EQ(r.call->copy->entries.size(), 1u);
  EXPECT_EQ(r.call->copy->entries[0].sources, (std::vector<std::string>{"/c/a", "/c/b"}));
  EXPECT_EQ(r.call->copy->entries[0].target, "/etc/");
  r = go("POST", "/clusterws/nodes/n1/nodecopy", R"({"src":"/c/a","target":"/t"})");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->copy->entries[0].sources, std::vector<std::string>{"/c/a"});
  for (const auto* body : {R"({"src":["/c/a"]})", R"({"target":"/t"})", "{}"}) {
    r = go("POST", "/clusterws/nodes/n1/nodecopy", body);
    ASSERT_TRUE(r.answer) << body;
    EXPECT_EQ(r.answer->body, "{\"error\":\"Lack of operation data.\",\"errorcode\":3}\n");
  }
  r = go("POST", "/clusterws/nodes/n1/nodecopy", R"({"src":"/c/a","target":"/t","raw":"-l x"})");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 400u);
  r = go("POST", "/clusterws/nodes/n1/nodecopy?fanout=x", R"({"src":"/c/a","target":"/t"})");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 400u);
  r = go("GET", "/clusterws/nodes/n1/nodecopy");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 405u);
}

TEST(router, nodecopy_from_root_on_the_local_socket_is_not_confined_and_takes_r_and_p) {
  auto local = [](const std::string& user, bool is_local) {
    http_input in;
    in.method = "POST";
    in.target = "/clusterws/nodes/n1/nodecopy?stream=1";
    in.body = R"({"src":["/etc/hosts"],"target":"/t","recursive":"1","preserve":"1"})";
    in.content_type = "application/json";
    in.client = "local";
    in.local = is_local;
    in.peer_user = user;
    return route(in, router_limits{});
  };
  auto r = local("root", true);
  ASSERT_FALSE(r.answer);
  ASSERT_TRUE(r.call->copy);
  EXPECT_FALSE(r.call->copy->confined); // root's xdcp on a head with service nodes
  EXPECT_TRUE(r.call->copy->recursive);
  EXPECT_TRUE(r.call->copy->preserve);
  EXPECT_TRUE(r.stream);
  // anyone else on the socket, and every HTTPS caller (root included), stays confined
  EXPECT_TRUE(local("alice", true).call->copy->confined);
  EXPECT_TRUE(local("root", false).call->copy->confined);
  auto plain = go("POST", "/clusterws/nodes/n1/nodecopy", R"({"src":"/c/a","target":"/t"})");
  EXPECT_FALSE(plain.call->copy->recursive);
  EXPECT_FALSE(plain.call->copy->preserve);
  EXPECT_FALSE(plain.stream);
}

TEST(router, nodestat_streams_and_takes_format_detail) {
  auto r = go("GET", "/clusterws/nodes/n1/nodestat?stream=1&format=detail");
  ASSERT_FALSE(r.answer);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.call->detail);
  r = go("GET", "/clusterws/nodes/n1/nodestat");
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.call->detail);
}

TEST(json_writer, pretty_layout_is_perls_indent) {
  json_writer w{true};
  w.begin_object();
  w.key("node1");
  w.begin_object();
  w.key("arch");
  w.value("x86_64");
  w.key("list");
  w.begin_array();
  w.value("a");
  w.end_array();
  w.key("empty");
  w.begin_object();
  w.end_object();
  w.end_object();
  w.end_object();
  EXPECT_EQ(w.str(), "{\n   \"node1\":{\n      \"arch\":\"x86_64\",\n      \"list\":[\n         "
                     "\"a\"\n      ],\n      \"empty\":{}\n   }\n}");
}

TEST(json_writer, escapes_and_repairs_utf8) {
  std::string out;
  json_writer::quote(out, "a\"b\\c\n\x01 \xc3\xa9 \xff");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001 \xc3\xa9 \xef\xbf\xbd\"");
}

TEST(render, status_codes_and_shapes) {
  routed r;
  r.out = output::objects;
  cws::api::api_result res;
  using obj = cws::api::object_record;
  res.objects
    = {obj{"n2", {{"mgt", "kvm"}}}, obj{"n1", {{"mgt", "kvm"}}}, obj{"n3", {{"mgt", "ipmi"}}}};
  EXPECT_EQ(render(r, res).body,
            "{\"n1\":{\"mgt\":\"kvm\"},\"n2\":{\"mgt\":\"kvm\"},\"n3\":{\"mgt\":\"ipmi\"}}\n");
  r.render.xcoll = true;
  EXPECT_EQ(render(r, res).body, "{\"n1,n2\":{\"mgt\":\"kvm\"},\"n3\":{\"mgt\":\"ipmi\"}}\n");
  r.render = {};
  r.render.ver1 = true;
  res.objects = {obj{"n1", {{"groups", "all,compute"}}}};
  EXPECT_EQ(render(r, res).body, "{\"n1\":{\"groups\":[\"all\",\"compute\"]}}\n");
  res = cws::api::api_result::failure(cws::api::errc::failed, "nope");
  auto t = render(r, res);
  EXPECT_EQ(t.status, 403u);
  EXPECT_EQ(t.body, "{\"error\":[\"nope\"],\"errorcode\":\"1\"}\n");
  res.error = cws::api::errc::unauthorized;
  EXPECT_EQ(render(r, res).status, 401u);
  EXPECT_EQ(render(r, res).body, "{\"error\":\"Authentication failure\",\"errorcode\":\"2\"}\n");
  r.out = output::none;
  r.post = true;
  res = {};
  EXPECT_EQ(render(r, res).status, 201u);
  EXPECT_EQ(render(r, res).body, "");
}

TEST(router, tokens_list_create_revoke_and_nothing_deeper) {
  auto r = go("GET", "/clusterws/tokens");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, operation::token_list);
  EXPECT_EQ(go("POST", "/clusterws/tokens").call->op, operation::token_create);
  r = go("DELETE", "/clusterws/tokens/abc");
  EXPECT_EQ(r.call->op, operation::token_revoke);
  EXPECT_EQ(r.call->target, "abc");
  for (auto m : {"GET", "POST", "DELETE"}) {
    auto deep = go(m, "/clusterws/tokens/a/b");
    ASSERT_TRUE(deep.answer) << m;
    EXPECT_EQ(deep.answer->status, 404u) << m;
  }
}

TEST(framing, only_a_single_final_chunked_coding_is_accepted) {
  using list = std::vector<std::string_view>;
  EXPECT_FALSE(check_framing({}, true));
  EXPECT_FALSE(check_framing({}, false));
  EXPECT_FALSE(check_framing(list{"chunked"}, false));
  EXPECT_FALSE(check_framing(list{" Chunked "}, false));
  EXPECT_FALSE(check_framing(list{", chunked,"}, false)); // empty list elements are ignored
  for (auto te : {"gzip", "xchunked", "chunked, identity", "chunked;x=1", "", ","}) {
    auto bad = check_framing(list{te}, false);
    ASSERT_TRUE(bad) << te;
    EXPECT_EQ(bad->code, api::errc::bad_request) << te;
  }
  auto twice = check_framing(list{"chunked", "chunked"}, false); // two fields
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->code, api::errc::bad_request);
  auto both = check_framing(list{"chunked"}, true);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->message, "Transfer-Encoding and Content-Length cannot be used together.");
  auto gzip = check_framing(list{"gzip", "chunked"}, false);
  ASSERT_TRUE(gzip);
  EXPECT_EQ(gzip->code, api::errc::not_implemented);
  EXPECT_EQ(gzip->message, "The transfer coding 'gzip' is not supported.");
  auto odd = check_framing(list{"a'b\x01, chunked"}, false);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->message, "The transfer coding 'a?b?' is not supported.");
}

} // namespace

namespace {

using cws::http::query_params;

TEST(query, decoding_flags_and_numbers) {
  query_params q;
  ASSERT_TRUE(q.parse("a=1&b=x%20y+z&&c&a=2&n=17&big=100001&neg=-1&t=1e6"));
  EXPECT_EQ(*q.find("a"), "2"); // the last wins
  EXPECT_EQ(*q.find("b"), "x y z");
  EXPECT_TRUE(q.find("c") != nullptr);
  EXPECT_FALSE(q.flag("c")); // present but empty
  EXPECT_TRUE(q.flag("a"));
  EXPECT_EQ(q.find("zz"), nullptr);
  EXPECT_EQ(q.number("n", 100, 5), 17);
  EXPECT_EQ(q.number("absent", 100, 5), 5);
  EXPECT_FALSE(q.number("big", 100000, 0));
  EXPECT_FALSE(q.number("neg", 100, 0));
  EXPECT_FALSE(q.number("t", 100, 0));
  query_params bad;
  EXPECT_FALSE(bad.parse("a=%zz"));
}

TEST(resources, every_row_matches_only_its_shape) {
  auto kind = [](std::vector<std::string> segs) {
    return match_resource(segs);
  };
  ASSERT_TRUE(kind({"nodes"}));
  EXPECT_EQ(kind({"nodes", "n1", "attrs", "a;b"})->attrs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(kind({"nodes", "n1", "nodeshell"})->kind, resource_kind::nodeshell);
  EXPECT_TRUE(kind({"nodes", "n1", "nodeshell"})->allows("POST"));
  EXPECT_FALSE(kind({"nodes", "n1", "nodeshell"})->allows("GET"));
  EXPECT_FALSE(kind({"nodes", "n1", "nodeshell"})->allows("POS"));
  EXPECT_FALSE(kind({"nodes", ""}));                // an empty name is no resource
  EXPECT_FALSE(kind({"nodes", "n1", "attrs", ""})); // nor an empty attribute list
  EXPECT_FALSE(kind({"nodes", "n1", "attrs"}));
  EXPECT_FALSE(kind({"groups", "g", "nodels"})); // nodels is a node resource only
  EXPECT_EQ(kind({"globalconf", "attrs", "xcatdport"})->kind, resource_kind::site_attrs);
  EXPECT_FALSE(kind({"globalconf", "x"}));
  EXPECT_EQ(kind({"tokens", "abc"})->type, cws::store::object_type::token);
  for (const auto& c : collections()) {
    // everything GET / lists exists (templates under /templates/node, as in xcatws)
    EXPECT_TRUE(c == "templates" ? kind({c, "node"}) : kind({c})) << c;
  }
  EXPECT_FALSE(kind({"templates"}));
}

TEST(router, templates_and_options_become_template_calls) {
  auto t = go("GET", "/clusterws/templates/node/all?userName=root&userPW=x");
  ASSERT_FALSE(t.answer);
  EXPECT_EQ(t.call->op, operation::template_list);
  EXPECT_EQ(t.call->policy_command, "lsdef");
  t = go("GET", "/clusterws/templates/node", R"({"options":{"--template":"a,b","-t":"x"}})");
  ASSERT_FALSE(t.answer);
  EXPECT_EQ(t.call->op, operation::template_show);
  EXPECT_EQ(t.call->template_name, "a,b");
  t = go("POST", "/clusterws/nodes/n1", R"({"options":{"--template":"x86_64-template"},"ip":"1"})");
  ASSERT_FALSE(t.answer);
  EXPECT_EQ(t.call->op, operation::make);
  EXPECT_EQ(t.call->template_name, "x86_64-template");
  ASSERT_EQ(t.call->changes.size(), 1u); // options are not an attribute
  EXPECT_EQ(t.call->changes[0].name, "ip");
  t = go("POST", "/clusterws/nodes/n1", R"({"options":{"--template":""}})");
  ASSERT_TRUE(t.answer);
  EXPECT_EQ(t.answer->status, 403u);
  t = go("POST", "/clusterws/nodes/n1", R"({"options":"--template x"})");
  ASSERT_TRUE(t.answer);
  EXPECT_EQ(t.answer->body,
            "{\"error\":\"The value of 'options' must be an object.\",\"errorcode\":\"2\"}\n");
  EXPECT_EQ(go("PUT", "/clusterws/templates/node").answer.value().status, 405u);
  EXPECT_EQ(go("GET", "/clusterws/templates/group").answer.value().status, 404u);
}

} // namespace

namespace {

TEST(router, makedns_routes_are_xcatws_dns_resources) {
  auto r = go("POST", "/clusterws/services/dns?userName=root&userPW=x&dryrun=1");
  ASSERT_FALSE(r.answer) << r.answer->body;
  EXPECT_EQ(r.call->op, cws::api::operation::dns_service);
  EXPECT_TRUE(r.call->dry_run);
  EXPECT_FALSE(r.post); // a dry run creates nothing: 200
  EXPECT_EQ(r.call->policy_command, "makedns");
  r = go("POST", "/clusterws/nodes/n1,n2/dns?userName=root&userPW=x");
  ASSERT_FALSE(r.answer) << r.answer->body;
  EXPECT_EQ(r.call->op, cws::api::operation::dns_apply);
  EXPECT_EQ(r.call->target, "n1,n2");
  EXPECT_EQ(r.call->command, "");
  r = go("DELETE", "/clusterws/nodes/n1/dns?userName=root&userPW=x");
  ASSERT_FALSE(r.answer) << r.answer->body;
  EXPECT_EQ(r.call->op, cws::api::operation::dns_delete);
  r = go("GET", "/clusterws/services/dns?userName=root&userPW=x");
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(r.answer->status, 405u);
}

} // namespace

// The real daemon on 127.0.0.1 with a temporary home, over TLS validated with the generated
// CA: every endpoint, every error row, auth and policy, and API/CLI consistency.

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::reply;
using cws::test::run_tool;
using cws::test::slurp;

class service_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    // many deliberate failures below: backoff itself is tested in actors_test
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app} << "login_backoff_after = 1000\n";
    auto r = run_tool(home(), "mkdef -t group compute mgt=kvm os=rhels9 arch=x86_64");
    r = run_tool(home(), "mkdef 'cn[1-3]' groups=compute,all vmmemory=4096");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(home(), "mkdef sn1 groups=service,all mgt=ipmi os=sles15 arch=ppc64le");
    r = run_tool(home(), "echo alicepw | clusterctl passwd alice --password-stdin");
    ASSERT_EQ(r.rc, 0) << r.out;
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  static const std::filesystem::path& home() {
    return d_->home();
  }

  reply get(const std::string& path, const std::string& extra = {}) {
    return client.get(d_->url(path, extra));
  }

  reply send(const std::string& method, const std::string& path, const std::string& body,
             const std::string& extra = {}) {
    return client.request(method, d_->url(path, extra), body);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* service_test::dir_ = nullptr;
cws::test::daemon* service_test::d_ = nullptr;

TEST_F(service_test, resource_list_and_alias) {
  auto r = client.get("/clusterws");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "[\"globalconf\",\"groups\",\"networks\",\"nodes\",\"osimages\",\"policy\","
                    "\"tables\",\"templates\",\"tokens\"]\n");
  EXPECT_EQ(r.headers["Content-Type"], "application/json");
  EXPECT_EQ(client.get("/xcatws/nodes?userName=root&userPW=rootpw").body, get("/nodes").body);
}

TEST_F(service_test, globalconf_groups_and_nodes) {
  auto r = get("/globalconf");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("{\"clustersite\":{"), std::string::npos);
  EXPECT_NE(r.body.find("\"tftpdir\":\"/tftpboot\""), std::string::npos);
  EXPECT_EQ(get("/globalconf/attrs/tftpdir,nosuchkey").body,
            "{\"clustersite\":{\"tftpdir\":\"/tftpboot\"}}\n");
  EXPECT_EQ(get("/globalconf/attrs/nosuchkey").body, "");
  EXPECT_EQ(get("/groups").body, "[\"all\",\"compute\",\"service\"]\n");
  EXPECT_EQ(get("/nodes").body, "[\"cn1\",\"cn2\",\"cn3\",\"sn1\"]\n");
  r = get("/nodes/cn[1-2]");
  EXPECT_EQ(r.body,
            "{\"cn1\":{\"arch\":\"x86_64\",\"groups\":\"compute,all\",\"mgt\":\"kvm\",\"os\":"
            "\"rhels9\",\"postbootscripts\":\"otherpkgs\",\"postscripts\":\"syslog,remoteshell,"
            "syncfiles\",\"vmmemory\":\"4096\"},\"cn2\":{\"arch\":\"x86_64\",\"groups\":\"compute,"
            "all\",\"mgt\":\"kvm\",\"os\":\"rhels9\",\"postbootscripts\":\"otherpkgs\","
            "\"postscripts\":\"syslog,remoteshell,syncfiles\",\"vmmemory\":\"4096\"}}\n");
  EXPECT_EQ(get("/nodes/cn1+1/nodels").body, "[\"cn1\",\"cn2\"]\n");
  EXPECT_EQ(get("/nodes/mgt==kvm/nodels").body, "[\"cn1\",\"cn2\",\"cn3\"]\n");
  EXPECT_EQ(
    get("/nodes/cn1,sn1/attrs/os,bmc").body,
    "{\"cn1\":{\"bmc\":\"\",\"os\":\"rhels9\"},\"sn1\":{\"bmc\":\"\",\"os\":\"sles15\"}}\n");
  EXPECT_EQ(get("/groups/compute/attrs/members").body,
            "{\"compute\":{\"members\":\"cn1,cn2,cn3\"}}\n");
  EXPECT_EQ(get("/nodes", "&xyz=1").status, 200u); // unknown parameters ignored
}

TEST_F(service_test, unset_attributes_read_as_xcatws_renders_lsdef_i) {
  // defout: `    bmc=` is an attribute with an empty value ...
  EXPECT_EQ(get("/nodes/cn2/attrs/bmc").body, "{\"cn2\":{\"bmc\":\"\"}}\n");
  // ... an unset nic attribute prints no line at all, so neither it nor an object left
  // without attributes is in the answer
  ASSERT_EQ(send("PUT", "/nodes/cn1", R"({"nicips.eth0":"10.9.0.1"})").status, 200u);
  EXPECT_EQ(get("/nodes/cn1,cn2/attrs/nicips.eth0").body,
            "{\"cn1\":{\"nicips.eth0\":\"10.9.0.1\"}}\n");
  EXPECT_EQ(get("/nodes/cn1/attrs/nicips").body, "{\"cn1\":{\"nicips.eth0\":\"10.9.0.1\"}}\n");
  auto r = get("/nodes/cn2/attrs/nicips.eth0");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(get("/nodes/cn2/attrs/nicips.eth0,mgt").body, "{\"cn2\":{\"mgt\":\"kvm\"}}\n");
  EXPECT_EQ(run_tool(home(), "lsdef cn1,cn2 -i nicips.eth0,mgt").out,
            "Object name: cn1\n    mgt=kvm\n    nicips.eth0=10.9.0.1\n"
            "Object name: cn2\n    mgt=kvm\n");
  // ver=1.0: an empty list is no array, it is left out
  ASSERT_EQ(run_tool(home(), "mkdef -t group lonely mgt=kvm").rc, 0);
  EXPECT_EQ(get("/groups/lonely/attrs/members").body, "{\"lonely\":{\"members\":\"\"}}\n");
  EXPECT_EQ(get("/groups/lonely/attrs/members,mgt", "&ver=1.0").body,
            "{\"lonely\":{\"mgt\":\"kvm\"}}\n");
  EXPECT_EQ(get("/groups/lonely/attrs/members", "&ver=1.0").body, "");
  EXPECT_EQ(get("/groups/compute/attrs/members", "&ver=1.0").body,
            "{\"compute\":{\"members\":[\"cn1\",\"cn2\",\"cn3\"]}}\n");
  run_tool(home(), "rmdef -t group lonely");
  run_tool(home(), "chdef cn1 nicips.eth0=");
}

TEST_F(service_test, pretty_and_xcoll) {
  EXPECT_EQ(get("/nodes/cn1/attrs/os,arch", "&pretty=1").body,
            "{\n   \"cn1\":{\n      \"arch\":\"x86_64\",\n      \"os\":\"rhels9\"\n   }\n}\n\n");
  EXPECT_EQ(get("/nodes/cn1,cn2,sn1/attrs/os", "&xcoll=1").body,
            "{\"cn1,cn2\":{\"os\":\"rhels9\"},\"sn1\":{\"os\":\"sles15\"}}\n");
}

TEST_F(service_test, networks_osimages_policy) {
  auto r = send("POST", "/networks/net1", R"({"net":"10.0.0.0","mask":"255.0.0.0","mtu":"9000"})");
  EXPECT_EQ(r.status, 201u);
  EXPECT_EQ(get("/networks").body, "[\"net1\"]\n");
  EXPECT_EQ(get("/networks/net1/attrs/mtu").body, "{\"net1\":{\"mtu\":\"9000\"}}\n");
  EXPECT_EQ(send("PUT", "/networks/net1", R"({"mtu":"1500"})").status, 200u);
  EXPECT_EQ(get("/networks/net1/attrs/mtu").body, "{\"net1\":{\"mtu\":\"1500\"}}\n");
  r = send("POST", "/osimages/rhels9-x86_64-install-compute",
           R"({"osvers":"rhels9","osarch":"x86_64","profile":"compute","provmethod":"install"})");
  EXPECT_EQ(r.status, 201u);
  EXPECT_EQ(get("/osimages").body, "[\"rhels9-x86_64-install-compute\"]\n");
  r = get("/osimages/rhels9-x86_64-install-compute", "&pretty=1");
  EXPECT_NE(r.body.find("      \"osarch\":\"x86_64\",\n"), std::string::npos) << r.body;
  r = get("/osimages/nosuch");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, "{\"error\":[\"Could not find an object named 'nosuch' of type "
                    "'osimage'.\"],\"errorcode\":\"1\"}\n");
  EXPECT_EQ(send("DELETE", "/osimages/rhels9-x86_64-install-compute", "").status, 200u);
  EXPECT_EQ(send("DELETE", "/networks/net1", "").status, 200u);
  EXPECT_EQ(get("/policy").body.substr(0, 14), "[\"1\",\"1.2\",\"2\"");
  EXPECT_EQ(get("/policy/1").body, "{\"1\":{\"name\":\"root\",\"rule\":\"allow\"}}\n");
}

TEST_F(service_test, node_create_change_clear_delete) {
  auto r = send("PUT", "/nodes/new1", R"({"groups":"all","mgt":"kvm","id":"5"})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(get("/nodes/new1/attrs/id").body, "{\"new1\":{\"id\":\"5\"}}\n");
  EXPECT_EQ(send("PUT", "/nodes/new1", R"({"id":" "})").status, 200u);
  EXPECT_EQ(get("/nodes/new1/attrs/id").body, "{\"new1\":{\"id\":\"\"}}\n");
  r = send("POST", "/nodes/new2", R"({"groups":"all"})");
  EXPECT_EQ(r.status, 201u);
  r = send("POST", "/nodes/new2", R"({"groups":"all"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(
    r.body,
    "{\"error\":[\"0 object definitions have been created or modified.\"],\"errorcode\":\"1\"}\n");
  r = send("POST", "/nodes/new3", R"({"mgt":"kvm"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Attribute 'groups' is not specified for node 'new3', skipping to the "
                        "next node."),
            std::string::npos);
  EXPECT_NE(r.body.find("One or more errors occured"), std::string::npos);
  EXPECT_EQ(send("DELETE", "/nodes/new[1-2]", "").status, 200u);
  EXPECT_EQ(get("/nodes/new1").status, 403u);
}

TEST_F(service_test, error_rows) {
  auto r = client.get("/clusterws/nodes?userName=root&userPW=wrong");
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(r.body, "{\"error\":\"Authentication failure\",\"errorcode\":\"2\"}\n");
  r = client.get("/clusterws/bogus?userName=root&userPW=wrong&xyz=1");
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.body, "{\"error\":\"Unsupported resource.\",\"errorcode\":\"2\"}\n");
  r = client.request("HEAD", "/clusterws/nodes");
  EXPECT_EQ(r.status, 405u);
  r = send("PUT", "/nodes/cn1", R"({"nosuchattr":"1"})", "&debug=1");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, "{\"error\":[\"'nosuchattr' is not a valid attribute name for an object "
                    "type of 'node'.\"],\"errorcode\":\"1\"}\n");
  EXPECT_EQ(r.body.find("rootpw"), std::string::npos); // debug never echoes credentials
  r = get("/nodes/cn1,ghost,phantom/nodels");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, "{\"error\":[\"Invalid nodes and/or groups in noderange: ghost,phantom\"],"
                    "\"errorcode\":\"1\"}\n");
  r = send("PUT", "/nodes/cn1", "{\"mgt\":");
  EXPECT_EQ(r.status, 400u);
  r = get("/nodes/node[1-99999999]/nodels");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("more than 1000000"), std::string::npos);
  // port 1 on loopback: nothing listens
  ASSERT_EQ(send("PUT", "/nodes/shell1", R"({"groups":"x","ip":"127.0.0.1","sshport":"1"})").status,
            200u);
  r = send("POST", "/nodes/shell1/nodeshell", R"({"command":"id"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("shell1: ssh: connect to host shell1 port 1: Connection refused"),
            std::string::npos)
    << r.body;
  EXPECT_EQ(send("DELETE", "/nodes/shell1", "").status, 200u);
}

TEST_F(service_test, limits_give_clear_errors) {
  std::string big(2 * 1024 * 1024, ' ');
  auto r = send("PUT", "/nodes/cn1", "{\"mgt\":\"" + big + "\"}");
  EXPECT_EQ(r.status, 413u);
  EXPECT_NE(r.body.find("larger than"), std::string::npos);
  r = client.request("GET", d_->url("/nodes"), "", {{"X-Filler", std::string(40000, 'x')}});
  EXPECT_EQ(r.status, 431u);
  // the service is still there
  EXPECT_EQ(get("/nodes").status, 200u);
}

TEST_F(service_test, tokens_basic_auth_and_no_credentials) {
  auto r = client.request("POST", "/clusterws/tokens", R"({"userName":"root","userPW":"rootpw"})");
  ASSERT_EQ(r.status, 201u);
  auto id_pos = r.body.find("\"id\":\"");
  ASSERT_NE(id_pos, std::string::npos);
  auto id = r.body.substr(id_pos + 6, 36);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", {{"X-Auth-Token", id}}).status, 200u);
  EXPECT_EQ(
    client.request("GET", "/clusterws/nodes", "", {{"Authorization", "Basic cm9vdDpyb290cHc="}})
      .status,
    200u);
  EXPECT_EQ(client.get("/clusterws/nodes").status, 401u);
  EXPECT_EQ(
    client.request("POST", "/clusterws/tokens", R"({"userName":"root","userPW":"x"})").status,
    401u);
  EXPECT_EQ(client.request("DELETE", "/clusterws/tokens/" + id, "", {{"X-Auth-Token", id}}).status,
            200u);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", {{"X-Auth-Token", id}}).status, 401u);
}

TEST_F(service_test, non_root_needs_a_policy_row_set_with_the_cli) {
  auto alice = [&] {
    return client.get("/clusterws/nodes?userName=alice&userPW=alicepw");
  };
  EXPECT_EQ(alice().status, 401u);
  auto r = run_tool(home(), "mkdef -t policy -o 6 name=alice rule=allow commands=lsdef");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(alice().status, 200u);
  // lsdef only: a change is still refused
  EXPECT_EQ(
    client.request("PUT", "/clusterws/nodes/cn1?userName=alice&userPW=alicepw", R"({"mgt":"ipmi"})")
      .status,
    401u);
  run_tool(home(), "rmdef -t policy -o 6");
  EXPECT_EQ(alice().status, 401u);
}

TEST_F(service_test, regex_group_rows_are_evaluated_per_node_and_checked_when_written) {
  auto r = send("PUT", "/groups/compute", R"({"ip":"|cn(\\d+)|10.1.0.($1*2)|"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(get("/nodes/cn1,cn3/attrs/ip").body,
            "{\"cn1\":{\"ip\":\"10.1.0.2\"},\"cn3\":{\"ip\":\"10.1.0.6\"}}\n");
  EXPECT_EQ(run_tool(home(), "lsdef cn3 -i ip -c").out, "cn3: ip=10.1.0.6\n");
  r = send("PUT", "/groups/compute", R"({"ip":"|cn(\\d+)|10.1.0.(`id`)|"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("The value of 'ip' is not a valid xCAT expression"), std::string::npos)
    << r.body;
  EXPECT_EQ(get("/nodes/cn1/attrs/ip").body, "{\"cn1\":{\"ip\":\"10.1.0.2\"}}\n");
  EXPECT_EQ(send("PUT", "/groups/compute", R"({"ip":""})").status, 200u);
  // issue #32: a BMC attribute needs a mgt that selects its table (compute has mgt=kvm)
  r = send("PUT", "/groups/compute", R"({"bmc":"10.1.0.9"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Cannot set the attr='bmc' attribute unless mgt value is ipmi or openbmc."),
            std::string::npos)
    << r.body;
}

// issue #32: a table row keyed by a group name (before the group has members) is what its
// members read over REST.
TEST_F(service_test, a_table_row_keyed_by_a_group_is_read_by_its_members) {
  ASSERT_EQ(run_tool(home(), "chtab node=kvmhosts vm.host=hv9").rc, 0);
  ASSERT_EQ(send("PUT", "/nodes/cn2", R"({"groups":"compute,all,kvmhosts"})").status, 200u);
  EXPECT_EQ(get("/nodes/cn2/attrs/vmhost").body, "{\"cn2\":{\"vmhost\":\"hv9\"}}\n");
  EXPECT_EQ(get("/tables/vm/nodes/cn2").body.find("hv9") != std::string::npos, true);
  ASSERT_EQ(send("PUT", "/nodes/cn2", R"({"groups":"compute,all"})").status, 200u);
  ASSERT_EQ(run_tool(home(), "chtab -d node=kvmhosts vm").rc, 0);
}

TEST_F(service_test, templates_are_listed_shown_and_used_as_xcatws_does) {
  auto r = get("/templates/node/all");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body.substr(0, 33), "[\"cec-template\",\"cumulusswitch\",\"");
  r = send("GET", "/templates/node", R"({"options":{"--template":"switch-template"}})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body,
            "{\"switch-template\":{\"groups\":\"switch\",\"ip\":\"OPTIONAL:the ip address of "
            "the switch\",\"mac\":\"OPTIONAL:the MAC address of the switch\",\"mgt\":"
            "\"switch\",\"nodetype\":\"switch\",\"postbootscripts\":\"otherpkgs\","
            "\"postscripts\":\"syslog,remoteshell,syncfiles\",\"switchtype\":\"OPTIONAL:"
            "The type of switch. It is used to identify the file name that implements the "
            "functions for this swithc. The valid values are: Mellanox, Cisco, BNT and "
            "Juniper.\",\"usercomment\":\"the switch definition template\"}}\n");
  r = send("GET", "/templates/node", R"({"options":{"--template":"nosuch"}})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body,
            "{\"error\":[\"Could not find nosuch in xCAT templates.\"],\"errorcode\":\"1\"}\n");

  // POST /nodes with options: mkdef --template
  r = send("POST", "/nodes/tk1", R"({"options":{"--template":"x86_64kvmguest-template"}})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("The attribute \\\"ip\\\" must be specified!"), std::string::npos)
    << r.body;
  r = send("POST", "/nodes/tk1",
           R"({"options":{"--template":"x86_64kvmguest-template"},"ip":"10.1.0.1",)"
           R"("vmhost":"hv1","vmnics":"br0","groups":"all"})");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(get("/nodes/tk1/attrs/vmhost,vmmemory,ip").body,
            "{\"tk1\":{\"ip\":\"10.1.0.1\",\"vmhost\":\"hv1\",\"vmmemory\":\"4096\"}}\n");
  r = send("POST", "/nodes/tk2", R"({"options":{"--template":"tk1"},"ip":"10.1.0.2"})");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(get("/nodes/tk2/attrs/vmhost,ip").body,
            "{\"tk2\":{\"ip\":\"10.1.0.2\",\"vmhost\":\"hv1\"}}\n");
  EXPECT_EQ(run_tool(home(), "lsdef tk2 -i vmnics -c").out, "tk2: vmnics=br0\n");

  // options elsewhere, or ones clusterws does not take, are refused before anything is done
  r = send("PUT", "/nodes/tk1", R"({"options":{"--template":"tk2"},"mgt":"ipmi"})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, "{\"error\":\"'options' is not accepted on this resource.\","
                    "\"errorcode\":\"2\"}\n");
  r = send("POST", "/nodes/tk3", R"({"options":{"-f":""},"groups":"all"})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("The option '-f' is not supported."), std::string::npos);
  EXPECT_EQ(get("/nodes/tk1/attrs/mgt").body, "{\"tk1\":{\"mgt\":\"kvm\"}}\n");
  EXPECT_EQ(send("DELETE", "/nodes/tk1,tk2", "").status, 200u);
}

TEST_F(service_test, rename_a_node_as_xcatws_does) {
  auto r = send("PUT", "/nodes/sn1/rename", R"({"newNode":"sn9"})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "[\"Changed the object name from sn1 to sn9.\"]\n");
  EXPECT_EQ(get("/nodes/sn9/attrs/mgt").body, "{\"sn9\":{\"mgt\":\"ipmi\"}}\n");
  EXPECT_EQ(run_tool(home(), "nodels service").out, "sn9\n");
  r = send("PUT", "/nodes/sn9/rename", R"({"newNode":"cn1"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("A definition for 'cn1' already exists."), std::string::npos) << r.body;
  r = send("PUT", "/nodes/sn9/rename", R"({"other":"x"})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, "{\"error\":\"Lack of operation data.\",\"errorcode\":3}\n");
  EXPECT_EQ(send("GET", "/nodes/sn9/rename", "").status, 405u);
  EXPECT_EQ(send("PUT", "/nodes/sn9/rename", R"({"newNode":"sn1"})").status, 200u);
  EXPECT_EQ(run_tool(home(), "nodels service").out, "sn1\n");
}

TEST_F(service_test, tables_routes_in_xcat_shapes_over_the_same_store) {
  // nodes: values as the node reads them (compute's mgt inherited), name for the key
  auto r = get("/tables/nodehm,vm/nodes/cn1-cn2");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "{\"nodehm\":[{\"mgt\":\"kvm\",\"name\":\"cn1\"},{\"mgt\":\"kvm\","
                    "\"name\":\"cn2\"}],\"vm\":[{\"memory\":\"4096\",\"name\":\"cn1\"},"
                    "{\"memory\":\"4096\",\"name\":\"cn2\"}]}\n");
  EXPECT_EQ(get("/tables/nodetype/nodes/sn1/os").body,
            "{\"nodetype\":[{\"name\":\"sn1\",\"os\":\"sles15\"}]}\n");
  // PUT nodes: {"table":{column:value}}; a table not in the URI is a 400
  r = send("PUT", "/tables/nodehm/nodes/cn3", R"({"nodehm":{"power":"ipmi"}})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(run_tool(home(), "lsdef cn3 -i power -c").out, "cn3: power=ipmi\n");
  r = send("PUT", "/tables/nodehm/nodes/cn3", R"({"vm":{"memory":"1"}})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, "{\"error\":\"The table vm is NOT in the URI.\",\"errorcode\":\"2\"}\n");
  // rows: setAttribs creates or changes, getAttribs answers the first match, delEntries
  EXPECT_EQ(send("PUT", "/tables/site/rows/key=tabletest", R"({"value":"7"})").status, 200u);
  EXPECT_EQ(get("/tables/site/rows/key=tabletest").body,
            "{\"site\":[{\"key\":\"tabletest\",\"value\":\"7\"}]}\n");
  EXPECT_EQ(run_tool(home(), "lsdef -t site -i tabletest -c").out, "clustersite: tabletest=7\n");
  EXPECT_EQ(send("DELETE", "/tables/site/rows/key=tabletest", "").status, 200u);
  r = get("/tables/site/rows/key=tabletest");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, "{\"error\":[\"No table rows matched specified keys or attributes\"],"
                    "\"errorcode\":\"1\"}\n");
  r = get("/tables/nosuch/rows");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("No such table: nosuch"), std::string::npos);
  r = get("/tables");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("\"nodelist\",\"nodepos\""), std::string::npos) << r.body;
  EXPECT_EQ(get("/tables/site,nodehm/rows/key=x").status, 400u);
  // passwd: hashes for root only
  r = get("/tables/passwd/rows/username=root");
  EXPECT_NE(r.body.find("$y$"), std::string::npos) << r.body;
  ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 6.7 name=alice rule=allow").rc, 0);
  r = client.get("/clusterws/tables/passwd/rows/username=root?userName=alice&userPW=alicepw");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body.find("$y$"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("********"), std::string::npos) << r.body;
  run_tool(home(), "rmdef -t policy -o 6.7");
  run_tool(home(), "chdef cn3 power=");
}

TEST_F(service_test, an_unknown_column_in_a_row_filter_matches_no_rows_as_in_xcat) {
  // getAttribs' SQL fails on a column the table lacks, so xcatws.cgi answers "no rows"
  auto no_rows = "{\"error\":[\"No table rows matched specified keys or attributes\"],"
                 "\"errorcode\":\"1\"}\n";
  auto r = get("/tables/site/rows/nosuchcolumn=x");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, no_rows);
  r = get("/tables/nodehm/rows/node=cn1,mgtt=kvm/mgt");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, no_rows);
  // a known column still filters
  EXPECT_EQ(get("/tables/site/rows/key=master").status, 200u);
}

TEST_F(service_test, post_networks_defines_the_service_hosts_networks) {
  // the networks makenetworks -d computes on this host are the ones POST /networks writes
  auto expected = run_tool(home(), "makenetworks -d").out;
  std::vector<std::string> names;
  std::istringstream lines{expected};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == ':') {
      names.push_back(line.substr(0, line.size() - 1));
    }
  }
  ASSERT_FALSE(names.empty()) << "this host has no IPv4 network besides loopback";
  auto r = send("POST", "/networks", "");
  EXPECT_EQ(r.status, 201u) << r.body;
  for (const auto& n : names) {
    auto got = get("/networks/" + n);
    EXPECT_EQ(got.status, 200u) << n;
    EXPECT_NE(got.body.find("\"mgtifname\""), std::string::npos) << got.body;
  }
  EXPECT_EQ(send("POST", "/networks", "").status, 201u); // again: nothing new, no error
  std::string list;
  for (const auto& n : names) {
    list += (list.empty() ? "" : ",") + n;
  }
  EXPECT_EQ(run_tool(home(), "rmdef -t network -o " + list).rc, 0);
}

TEST_F(service_test, groups_policy_and_globalconf_writes) {
  EXPECT_EQ(send("PUT", "/groups/compute", R"({"vmmemory":"2048"})").status, 200u);
  EXPECT_EQ(get("/nodes/cn2/attrs/vmmemory").body, "{\"cn2\":{\"vmmemory\":\"4096\"}}\n");
  EXPECT_EQ(get("/groups/compute/attrs/vmmemory").body, "{\"compute\":{\"vmmemory\":\"2048\"}}\n");
  EXPECT_EQ(send("PUT", "/groups/compute", R"({"vmmemory":""})").status, 200u);
  EXPECT_EQ(send("POST", "/policy/9", R"({"name":"bob","rule":"allow"})").status, 201u);
  EXPECT_EQ(send("PUT", "/policy/9", R"({"commands":"lsdef"})").status, 200u);
  EXPECT_EQ(get("/policy/9").body,
            "{\"9\":{\"commands\":\"lsdef\",\"name\":\"bob\",\"rule\":\"allow\"}}\n");
  EXPECT_EQ(send("DELETE", "/policy/9", "").status, 200u);
  EXPECT_EQ(get("/policy/9").status, 403u);
  EXPECT_EQ(
    send("PUT", "/globalconf/attrs/domain", R"({"domain":"cluster.local","ntp":"x"})").status,
    200u);
  EXPECT_EQ(get("/globalconf/attrs/domain,ntp").body,
            "{\"clustersite\":{\"domain\":\"cluster.local\",\"ntp\":\"x\"}}\n");
  EXPECT_EQ(send("DELETE", "/globalconf/attrs/domain,ntp", "").status, 200u);
  EXPECT_EQ(get("/globalconf/attrs/domain,ntp").body, "");
  EXPECT_EQ(run_tool(home(), "lsdef -t site -i domain -c").out, "clustersite: domain=\n");
}

TEST_F(service_test, audit_log_records_changes_and_no_secret_anywhere) {
  ASSERT_EQ(send("PUT", "/nodes/audited1", R"({"groups":"all"})").status, 200u);
  client.get("/clusterws/nodes?userName=root&userPW=wrongpw123"); // a failed login
  client.request("PUT", "/clusterws/nodes/audited1?userName=root&userPW=wrongpw123",
                 R"({"mgt":"kvm"})");
  auto tok
    = client.request("POST", "/clusterws/tokens", R"({"userName":"root","userPW":"rootpw"})");
  auto id = tok.body.substr(tok.body.find("\"id\":\"") + 6, 36);
  client.request("DELETE", "/clusterws/tokens/" + id, "", {{"X-Auth-Token", id}});
  ASSERT_EQ(send("DELETE", "/nodes/audited1", "").status, 200u);
  auto audit = slurp(home() / "audit.log");
  EXPECT_NE(audit.find("\"user\":\"root\",\"method\":\"PUT\",\"path\":\"/clusterws/nodes/"
                       "audited1\",\"noderange\":\"audited1\",\"status\":200}"),
            std::string::npos)
    << audit;
  // a refusal for bad credentials is counted for the summary, not written on its own line
  EXPECT_EQ(audit.find("\"noderange\":\"audited1\",\"status\":401}"), std::string::npos);
  // an authenticated user's refused change is
  client.request("PUT", "/clusterws/nodes/audited1?userName=alice&userPW=alicepw",
                 R"({"mgt":"kvm"})");
  audit = slurp(home() / "audit.log");
  EXPECT_NE(audit.find("\"user\":\"alice\",\"method\":\"PUT\",\"path\":\"/clusterws/nodes/"
                       "audited1\",\"noderange\":\"audited1\",\"status\":401}"),
            std::string::npos)
    << audit;
  EXPECT_NE(audit.find("\"method\":\"DELETE\",\"path\":\"/clusterws/nodes/audited1\""),
            std::string::npos);
  // no password, no token, no query string: in the audit log or the daemon's own log
  for (const auto& text : {audit, slurp(d_->log())}) {
    EXPECT_EQ(text.find("rootpw"), std::string::npos);
    EXPECT_EQ(text.find("wrongpw123"), std::string::npos);
    EXPECT_EQ(text.find("userPW"), std::string::npos);
    EXPECT_EQ(text.find(id), std::string::npos);
  }
}

TEST_F(service_test, tabdump_and_tabprune_auditlog_are_the_audit_log_the_daemon_writes) {
  const std::string header = "#recid,audittime,userid,clientname,clienttype,command,noderange,"
                             "args,status,comments,disable\n";
  auto rows = [&](const std::string& dump) {
    std::vector<long long> ids;
    std::istringstream lines{dump};
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line[0] == '"') {
        ids.push_back(std::stoll(line.substr(1)));
      }
    }
    return ids;
  };
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(send("PUT", "/nodes/pruned" + std::to_string(i), R"({"groups":"all"})").status, 200u);
  }
  // Schema.pm's auditlog columns, one row per line of the log, recids in order
  auto r = run_tool(home(), "tabdump auditlog");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.substr(0, header.size()), header);
  EXPECT_NE(r.out.find(",\"root\",\"127.0.0.1\",\"rest\",\"PUT /clusterws/nodes/pruned3\","
                       "\"pruned3\",,\"Allowed\",\"HTTP 200\","),
            std::string::npos)
    << r.out;
  auto ids = rows(r.out);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()); // unique
  EXPECT_EQ(rows(run_tool(home(), "tabdump -n 2 auditlog").out),
            std::vector<long long>(ids.end() - 2, ids.end()));
  // -n N: the N oldest; -i ID: those below ID
  r = run_tool(home(), "tabprune auditlog -n 1");
  EXPECT_EQ(r.out, "tabprune of auditlog complete.\n");
  auto after = rows(run_tool(home(), "tabdump auditlog").out);
  EXPECT_EQ(after, std::vector<long long>(ids.begin() + 1, ids.end()));
  r = run_tool(home(), "tabprune auditlog -V -i " + std::to_string(ids.back()));
  EXPECT_EQ(rows(r.out), std::vector<long long>(ids.begin() + 1, ids.end() - 1)); // shown
  EXPECT_EQ(rows(run_tool(home(), "tabdump auditlog").out), std::vector<long long>{ids.back()});
  // the daemon goes on writing at the new end, numbering on
  ASSERT_EQ(send("DELETE", "/nodes/pruned0", "").status, 200u);
  after = rows(run_tool(home(), "tabdump auditlog").out);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_GT(after.back(), ids.back());
  auto text = slurp(home() / "audit.log");
  EXPECT_EQ(text.find('\0'), std::string::npos); // no hole where the cut lines were
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  // REST reads of the same view (xcatws.cgi's tablerowhdl): every row, or getAttribs' first
  auto rest = get("/tables/auditlog/rows");
  EXPECT_EQ(rest.status, 200u) << rest.body;
  EXPECT_NE(rest.body.find("\"recid\":\"" + std::to_string(after.back()) + "\""), std::string::npos)
    << rest.body;
  EXPECT_NE(rest.body.find("\"command\":\"DELETE /clusterws/nodes/pruned0\""), std::string::npos)
    << rest.body;
  rest = get("/tables/auditlog/rows/recid=" + std::to_string(after.back()) + "/command,status");
  EXPECT_EQ(rest.body, "{\"auditlog\":[{\"command\":\"DELETE /clusterws/nodes/pruned0\","
                       "\"status\":\"Allowed\"}]}\n");
  rest = get("/tables/auditlog/rows/recid=1");
  EXPECT_EQ(rest.status, 403u); // pruned: no rows matched
  rest = get("/tables/auditlog/rows/nosuch=1");
  EXPECT_EQ(rest.status, 403u);
  EXPECT_EQ(get("/tables/eventlog/rows").body, "{\"eventlog\":[]}\n");
  // -a: every row
  EXPECT_EQ(run_tool(home(), "tabprune auditlog -a").rc, 0);
  EXPECT_EQ(run_tool(home(), "tabdump auditlog").out, header);
  ASSERT_EQ(send("DELETE", "/nodes/pruned1", "").status, 200u);
  EXPECT_EQ(rows(run_tool(home(), "tabdump auditlog").out),
            std::vector<long long>{after.back() + 1});
  // xCAT's checks
  r = run_tool(home(), "tabprune auditlog -a -n 2");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Only one option -p or -i or -n or -a maybe used at a time."),
            std::string::npos);
  r = run_tool(home(), "tabprune auditlog");
  EXPECT_NE(r.out.find("One option -p or -i or -n or -a or -d must be supplied."),
            std::string::npos);
  // eventlog: its columns, no records (reventlog reads the BMCs' SEL when asked)
  r = run_tool(home(), "tabdump eventlog");
  EXPECT_EQ(r.out, "#recid,eventtime,eventtype,monitor,monnode,node,application,component,id,"
                   "severity,message,rawdata,comments,disable\n");
  EXPECT_EQ(run_tool(home(), "tabprune eventlog -n 5").out,
            "Nothing to prune from eventlog.\ntabprune of eventlog complete.\n");
  for (int i = 2; i < 4; ++i) {
    run_tool(home(), "rmdef pruned" + std::to_string(i));
  }
}

TEST_F(service_test, sighup_continues_the_audit_log_in_a_new_file_after_logrotate) {
  auto log = home() / "audit.log";
  auto rotated = home() / "audit.log.1";
  ASSERT_EQ(send("PUT", "/nodes/rotated1", R"({"groups":"all"})").status, 200u);
  std::filesystem::rename(log, rotated); // what logrotate does, then its postrotate:
  ASSERT_EQ(::kill(d_->pid(), SIGHUP), 0);
  // the daemon creates the new file when it handles the signal
  for (int i = 0; i < 500 && !std::filesystem::exists(log); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(std::filesystem::exists(log)) << "no new audit log after SIGHUP";
  EXPECT_EQ(std::filesystem::status(log).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_EQ(send("DELETE", "/nodes/rotated1", "").status, 200u);
  auto old_log = slurp(rotated);
  auto new_log = slurp(log);
  EXPECT_NE(old_log.find("\"method\":\"PUT\",\"path\":\"/clusterws/nodes/rotated1\""),
            std::string::npos)
    << old_log;
  EXPECT_EQ(old_log.find("\"method\":\"DELETE\",\"path\":\"/clusterws/nodes/rotated1\""),
            std::string::npos);
  EXPECT_NE(new_log.find("\"method\":\"DELETE\",\"path\":\"/clusterws/nodes/rotated1\""),
            std::string::npos)
    << new_log;
  EXPECT_EQ(get("/nodes/cn1").status, 200u) << "the daemon goes on serving after SIGHUP";
}

TEST_F(service_test, authorization_matrix_every_route_every_identity) {
  ASSERT_EQ(run_tool(home(), "echo bobpw | clusterctl passwd bob --password-stdin").rc, 0);
  ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 6.5 name=alice rule=allow").rc, 0);
  // an expired token: issued with a lifetime of a moment
  run_tool(home(), "chdef -t site tokenexpiredays=0.00001");
  auto tok
    = client.request("POST", "/clusterws/tokens", R"({"userName":"root","userPW":"rootpw"})");
  run_tool(home(), "chdef -t site tokenexpiredays=1");
  auto expired = tok.body.substr(tok.body.find("\"id\":\"") + 6, 36);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));

  // a node nodeshell can reach without DNS: loopback, closed port
  run_tool(home(), "mkdef mxshell groups=mx ip=127.0.0.1 sshport=1");
  struct identity {
    const char* name;
    std::string query;
    std::map<std::string, std::string> headers;
    bool authenticated;
    bool allowed;
  };
  const identity who[] = {
    {"root", "userName=root&userPW=rootpw", {}, true, true},
    {"alice (policy row)", "userName=alice&userPW=alicepw", {}, true, true},
    {"bob (no policy row)", "userName=bob&userPW=bobpw", {}, true, false},
    {"no credentials", "", {}, false, false},
    {"bad password", "userName=root&userPW=nope", {}, false, false},
    {"expired token", "", {{"X-Auth-Token", expired}}, false, false},
  };
  struct route {
    const char* method;
    std::string path;
    std::string body;
  };
  int i = 0;
  for (const auto& id : who) {
    auto n = "mx" + std::to_string(i++);
    const route routes[] = {
      {"GET", "/nodes", ""},
      {"GET", "/nodes/cn1", ""},
      {"GET", "/nodes/cn1/attrs/mgt", ""},
      {"GET", "/nodes/cn1/nodels", ""},
      {"PUT", "/nodes/" + n, R"({"groups":"mx"})"},
      {"POST", "/nodes/" + n + "b", R"({"groups":"mx"})"},
      {"DELETE", "/nodes/" + n + "b", ""},
      {"POST", "/nodes/mxshell/nodeshell", R"({"command":"true"})"},
      {"GET", "/groups", ""},
      {"GET", "/groups/compute", ""},
      {"PUT", "/groups/compute", R"({"usercomment":"x"})"},
      {"GET", "/networks", ""},
      {"POST", "/networks/" + n, R"({"mtu":"1500"})"},
      {"DELETE", "/networks/" + n, ""},
      {"GET", "/osimages", ""},
      {"GET", "/policy", ""},
      {"GET", "/policy/1", ""},
      {"GET", "/globalconf", ""},
      {"PUT", "/globalconf/attrs/" + n, "{\"" + n + "\":\"1\"}"},
      {"DELETE", "/globalconf/attrs/" + n, ""},
      {"POST", "/tokens", ""},
      {"GET", "/tables/nodehm/nodes/cn1", ""},
      {"PUT", "/tables/nodehm/nodes/cn1", R"({"nodehm":{"power":"ipmi"}})"},
      {"GET", "/tables/site/rows/key=domain", ""},
      {"PUT", "/tables/site/rows/key=" + n, R"({"value":"1"})"},
      {"DELETE", "/tables/site/rows/key=" + n, ""},
    };
    for (const auto& r : routes) {
      auto url = "/clusterws" + r.path + (id.query.empty() ? "" : "?" + id.query);
      auto got = client.request(r.method, url, r.body, id.headers);
      // a token needs authentication only: it grants no more than its user's policy
      bool allowed = r.path == "/tokens" ? id.authenticated : id.allowed;
      if (allowed) {
        EXPECT_NE(got.status, 401u) << id.name << " " << r.method << " " << r.path << got.body;
      } else {
        EXPECT_EQ(got.status, 401u) << id.name << " " << r.method << " " << r.path << got.body;
      }
    }
  }
  run_tool(home(), "rmdef 'mx[0-1]',mxshell"); // the allowed identities' PUTs created these
  run_tool(home(), "rmdef -t policy -o 6.5");
}

TEST_F(service_test, api_and_cli_see_the_same_store) {
  EXPECT_EQ(send("PUT", "/nodes/both1", R"({"groups":"all","vmmemory":"2048"})").status, 200u);
  auto r = run_tool(home(), "lsdef both1");
  EXPECT_NE(r.out.find("Object name: both1"), std::string::npos);
  EXPECT_NE(r.out.find("    vmmemory=2048\n"), std::string::npos);
  r = run_tool(home(), "chdef both1 mgt=ipmi");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(get("/nodes/both1/attrs/mgt").body, "{\"both1\":{\"mgt\":\"ipmi\"}}\n");
  EXPECT_EQ(send("DELETE", "/nodes/both1", "").status, 200u);
  r = run_tool(home(), "lsdef both1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Could not find an object named 'both1'"), std::string::npos);
}

TEST_F(service_test, curl_validates_with_the_ca_and_old_tls_is_refused) {
  auto port = std::to_string(d_->port());
  auto r = run_tool(home(), "curl -s --cacert '" + d_->ca().string() + "' https://127.0.0.1:" + port
                              + "/clusterws");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("nodes"), std::string::npos);
  r = run_tool(home(), "curl -s https://127.0.0.1:" + port + "/clusterws"); // no CA: refused
  EXPECT_NE(r.rc, 0);
  r = run_tool(home(), "echo | openssl s_client -connect 127.0.0.1:" + port + " -tls1_1");
  EXPECT_NE(r.rc, 0);
  r = run_tool(home(), "curl -s http://127.0.0.1:" + port + "/clusterws");
  EXPECT_EQ(r.out.find("nodes"), std::string::npos); // plaintext HTTP gets nothing
}

TEST_F(service_test, keep_alive_reuses_the_connection) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(get("/nodes").status, 200u);
  }
  EXPECT_EQ(client.connects(), 1);
}

} // namespace

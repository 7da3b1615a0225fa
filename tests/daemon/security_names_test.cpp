// The selector and naming findings of the second adversarial test (issue #27: N1, N3, N13,
// `.` and `..`), replayed against a real clusterwsd over TLS and its local Unix socket with a
// real non-root Unix user: the attack as it was seen, then what must hold now.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::as_user;
using cws::test::run_tool;

constexpr const char* local_user = "cwsselector";

/// `s` percent-encoded for a URL path segment (everything but letters and digits).
std::string enc(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

class security_names_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    users_ok_ = cws::test::ensure_user(local_user);
    const auto& h = d_->home();
    std::ofstream{h / "clusterws.conf", std::ios::app}
      << "login_backoff_after = 1000\nlogin_backoff_user_after = 1000\n"
         "login_backoff_client_after = 1000\n";
    ASSERT_EQ(run_tool(h, "mkdef 'cn[1-3]' groups=compute,all mgt=ipmi bmcpassword=Cpass1").rc, 0);
    ASSERT_EQ(run_tool(h, "mkdef sv1 groups=service,all mgt=ipmi bmcpassword=Sekret123").rc, 0);
    for (const char* u : {"bob", "carol", "dave"}) {
      ASSERT_EQ(
        run_tool(h, std::string{"echo "} + u + "pw | clusterctl passwd " + u + " --password-stdin")
          .rc,
        0);
    }
    // bob may read everything (and nothing else); carol may read the compute nodes only
    ASSERT_EQ(
      run_tool(h, "mkdef -t policy -o 6 name=bob rule=allow "
                  "commands=lsdef,nodels,getTablesNodesAttribs,getAttribs,getTablesAllRowAttribs")
        .rc,
      0);
    ASSERT_EQ(run_tool(h, "mkdef -t policy -o 6.1 name=carol noderange=compute rule=allow "
                          "commands=lsdef,nodels")
                .rc,
              0);
    // dave may change every node but the service nodes, and none named sv-something
    ASSERT_EQ(run_tool(h, "mkdef -t policy -o 6.2 name=dave 'noderange=/sv.*' rule=deny").rc, 0);
    ASSERT_EQ(run_tool(h, "mkdef -t policy -o 6.3 name=dave noderange=all,-service rule=allow "
                          "commands=chdef,lsdef,nodels")
                .rc,
              0);
    // a dynamic group selecting on the BMC password (made by whoever may make groups)
    ASSERT_EQ(
      run_tool(h, "mkdef -t group -o leak grouptype=dynamic 'wherevals=bmcpassword=~^Sek'").rc, 0);
    if (users_ok_) {
      ASSERT_EQ(run_tool(h, std::string{"mkdef -t policy -o 6.4 name="} + local_user
                              + " rule=allow commands=lsdef,nodels")
                  .rc,
                0);
    }
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

  cws::test::reply as(const std::string& user, const std::string& method, const std::string& path,
                      const std::string& body = {}) {
    return client.request(
      method, "/clusterws/" + path + "?userName=" + user + "&userPW=" + user + "pw", body);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  static bool users_ok_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* security_names_test::dir_ = nullptr;
cws::test::daemon* security_names_test::d_ = nullptr;
bool security_names_test::users_ok_ = false;

// N1: `nodels 'sv1@bmcpassword=~^Sek'` told bob, who sees "********", whether the password
// starts with Sek (a 9-character password in 370 queries). Now every test of a masked
// attribute by someone other than root is refused, with one answer whether it matches or not.
TEST_F(security_names_test, masked_selectors_are_refused_over_rest_whatever_the_value) {
  auto hit = as("bob", "GET", "nodes/" + enc("sv1@bmcpassword=~^Sek") + "/nodels");
  auto miss = as("bob", "GET", "nodes/" + enc("sv1@bmcpassword=~^Xyz") + "/nodels");
  EXPECT_EQ(hit.status, 403u) << hit.body;
  EXPECT_EQ(miss.status, hit.status);
  EXPECT_EQ(miss.body, hit.body);
  EXPECT_NE(hit.body.find("'bmcpassword', whose value only root may read"), std::string::npos)
    << hit.body;
  for (std::string sel : {"all@bmcpassword==Sekret123", "all@ipmi.password=~S", "bmcpassword!~^S",
                          "bmcpassword!=x", "cn1,(sv1@openbmc.password=~S)"}) {
    auto r = as("bob", "GET", "nodes/" + enc(sel));
    EXPECT_EQ(r.status, 403u) << sel << ": " << r.body;
    EXPECT_EQ(r.body.find("sv1"), std::string::npos) << sel << ": " << r.body;
  }
  // the tables API: a noderange over a node table, and a row filter on a masked column
  auto t = as("bob", "GET", "tables/ipmi/nodes/" + enc("sv1@bmcpassword=~^Sek"));
  EXPECT_EQ(t.status, 403u) << t.body;
  for (std::string keys : {"node=sv1,password=Sekret123", "node=sv1,password=x"}) {
    auto r = as("bob", "GET", "tables/ipmi/rows/" + enc(keys));
    EXPECT_EQ(r.status, 403u) << r.body;
    EXPECT_NE(r.body.find("'ipmi.password', whose value only root may read"), std::string::npos)
      << r.body;
  }
  // what bob may read still works, the password masked
  auto plain = as("bob", "GET", "nodes/" + enc("sv1@mgt==ipmi"));
  EXPECT_EQ(plain.status, 200u) << plain.body;
  EXPECT_NE(plain.body.find("********"), std::string::npos) << plain.body;
  // root's selections are unchanged
  auto root = client.get(d_->url("/nodes/" + enc("all@bmcpassword=~^Sek") + "/nodels"));
  EXPECT_EQ(root.status, 200u) << root.body;
  EXPECT_NE(root.body.find("sv1"), std::string::npos) << root.body;
  EXPECT_EQ(root.body.find("cn1"), std::string::npos) << root.body;
}

// N1: carol, confined to compute, learnt sv1's password through the allow/deny difference
// (`cn1,sv1@bmcpassword=~^S`: allowed when only cn1 is named, denied when sv1 joins it). The
// noderange policy expands is refused the same way.
TEST_F(security_names_test, a_confined_user_cannot_probe_through_policy) {
  auto hit = as("carol", "GET", "nodes/" + enc("cn1,sv1@bmcpassword=~^Sek") + "/nodels");
  auto miss = as("carol", "GET", "nodes/" + enc("cn1,sv1@bmcpassword=~^Xyz") + "/nodels");
  EXPECT_EQ(hit.status, 403u) << hit.body;
  EXPECT_EQ(miss.status, hit.status);
  EXPECT_EQ(miss.body, hit.body);
  auto own = as("carol", "GET", "nodes/cn1/nodels");
  EXPECT_EQ(own.status, 200u) << own.body;
}

// N1: a dynamic group whose wherevals test a masked attribute is refused to anyone but root,
// as a noderange and as a listing of its members, whether or not any node matches.
TEST_F(security_names_test, a_dynamic_group_over_a_masked_attribute_is_refused_to_others) {
  for (std::string path : {"nodes/leak/nodels", "nodes/leak", "groups/leak", "nodes/all,-leak"}) {
    auto r = as("bob", "GET", path);
    EXPECT_EQ(r.status, 403u) << path << ": " << r.body;
    EXPECT_NE(r.body.find("The dynamic group 'leak' tests 'bmcpassword'"), std::string::npos)
      << path << ": " << r.body;
  }
  auto root = client.get(d_->url("/groups/leak"));
  EXPECT_EQ(root.status, 200u) << root.body;
  EXPECT_NE(root.body.find("sv1"), std::string::npos) << root.body;
}

// N1 over the local socket: a user other than root reaches nodels and lsdef there too.
TEST_F(security_names_test, masked_selectors_are_refused_over_the_local_socket) {
  if (!users_ok_) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  auto hit = as_user(home(), local_user, "nodels 'sv1@bmcpassword=~^Sek'");
  auto miss = as_user(home(), local_user, "nodels 'sv1@bmcpassword=~^Xyz'");
  EXPECT_EQ(hit.rc, 1) << hit.out;
  EXPECT_EQ(miss.rc, hit.rc);
  EXPECT_EQ(miss.out, hit.out);
  EXPECT_NE(hit.out.find("whose value only root may read"), std::string::npos) << hit.out;
  // selections the tool applies itself, on what the daemon sent ("********")
  for (std::string cmd : {"lsdef -w 'bmcpassword=~^S'", "nodels all 'ipmi.password=~^S'",
                          "nodels all 'bmcpassword==********'", "lsdef leak", "nodels leak"}) {
    auto r = as_user(home(), local_user, cmd);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("only root may read"), std::string::npos) << cmd << ": " << r.out;
  }
  auto ok = as_user(home(), local_user, "nodels 'all@mgt==ipmi'");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_NE(ok.out.find("sv1"), std::string::npos) << ok.out;
}

// N3: dave, allowed chdef on `all,-service`, renamed a node of his to `service`: from then on
// `-service` excluded only that node. Now a node may not take a group's name (nor a group a
// node's) on any path, and a rename's new name must pass the caller's policy rows.
TEST_F(security_names_test, a_node_cannot_take_a_groups_name) {
  auto r = as("dave", "PUT", "nodes/cn3/rename", R"({"newNode":"service"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("The node name 'service' is already a group name."), std::string::npos)
    << r.body;
  r = as("dave", "PUT", "nodes/cn3/rename", R"({"newNode":"all"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  // the service node stays out of dave's reach
  r = as("dave", "PUT", "nodes/sv1", R"({"comments":"owned"})");
  EXPECT_EQ(r.status, 401u) << r.body;
  // the same rule on every path that makes names (as root)
  struct attempt {
    const char* cmd;
    const char* message;
  };
  for (const auto& a : std::initializer_list<attempt>{
         {"chdef cn2 groups=compute,cn1", "The group name 'cn1' is already a node name."},
         {"mkdef -t group -o cn1 grouptype=static", "The group name 'cn1' is already a node name."},
         {"chdef -t node -o cn3 -n compute", "The node name 'compute' is already a group name."},
         {"nodeadd newnode groups=newnode", "The node name 'newnode' is already a group name."},
         {"chtab node=x1 nodelist.groups=cn1", "The group name 'cn1' is already a node name."},
         {"printf 'x2:\\n objtype=node\\n groups=x3\\nx3:\\n objtype=node\\n groups=all\\n' | "
          "mkdef -z",
          "The node name 'x3' is already a group name."}}) {
    auto res = run_tool(home(), a.cmd);
    EXPECT_EQ(res.rc, 1) << a.cmd << ": " << res.out;
    EXPECT_NE(res.out.find(a.message), std::string::npos) << a.cmd << ": " << res.out;
  }
  // a group over REST: the members' groups name it
  r = client.request("PUT", d_->url("/nodes/cn2"), R"({"groups":"compute,all,sv1"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("The group name 'sv1' is already a node name."), std::string::npos)
    << r.body;
  EXPECT_EQ(run_tool(home(), "nodels service").out, "sv1\n");
  EXPECT_EQ(run_tool(home(), "lsdef -t node -i groups cn2").out,
            "Object name: cn2\n    groups=compute,all\n");
}

// N3: the rename's new name is decided on by the caller's policy rows, in the cluster as it
// would be after the rename: dave may not give his node a name his rows deny.
TEST_F(security_names_test, a_rename_is_checked_against_the_callers_policy_rows) {
  auto r = as("dave", "PUT", "nodes/cn3/rename", R"({"newNode":"sv9"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("policy does not allow chdef on the new name 'sv9'"), std::string::npos)
    << r.body;
  EXPECT_EQ(run_tool(home(), "nodels cn3").out, "cn3\n");
  // a name his rows allow goes through (and back)
  r = as("dave", "PUT", "nodes/cn3/rename", R"({"newNode":"cn4"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = as("dave", "PUT", "nodes/cn4/rename", R"({"newNode":"cn3"})");
  EXPECT_EQ(r.status, 200u) << r.body;
}

// N13: a site key `objtype` or `#...` broke the stanza round trip (lsdef -z, mkdef -z).
TEST_F(security_names_test, site_keys_that_break_stanzas_are_refused) {
  for (std::string cmd : {"chdef -t site objtype=node", "chdef -t site '#x=1'",
                          "chtab key=objtype site.value=node", "chtab 'key=#c' site.value=1"}) {
    auto r = run_tool(home(), cmd);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("is not a valid attribute name for an object type of 'site'"),
              std::string::npos)
      << cmd << ": " << r.out;
  }
  auto r = client.request("PUT", d_->url("/globalconf/attrs/objtype"), R"({"objtype":"node"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  auto stanza = run_tool(home(), "lsdef -t site -z");
  EXPECT_EQ(stanza.out.find("    objtype=node"), std::string::npos) << stanza.out;
}

// Also: `.` and `..` are no object names, on any path that makes or renames objects.
TEST_F(security_names_test, dot_and_dot_dot_are_no_object_names) {
  for (std::string cmd :
       {"mkdef .. groups=all", "mkdef -t network -o . net=10.9.0.0 mask=255.255.0.0",
        "mkdef -t osimage -o .. imagetype=linux", "chdef cn1 groups=compute,all,..",
        "chdef -t node -o cn1 -n .", "nodeadd . groups=all",
        "printf '..:\\n objtype=osimage\\n imagetype=linux\\n' | mkdef -z",
        "chtab node=.. nodelist.groups=all"}) {
    auto r = run_tool(home(), cmd);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("name '."), std::string::npos) << cmd << ": " << r.out;
  }
  auto r
    = client.request("POST", d_->url("/networks/.."), R"({"net":"10.8.0.0","mask":"255.255.0.0"})");
  EXPECT_NE(r.status, 201u) << r.body;
  r = as("dave", "PUT", "nodes/cn3/rename", R"({"newNode":".."})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_EQ(run_tool(home(), "lsdef -t network,osimage -s").out.find(".."), std::string::npos);
}

} // namespace

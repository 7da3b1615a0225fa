// The table view (store/tables.hpp) over a real LMDB store: rows read from objects, table
// writes seen as definition changes, xCAT's conditions, CSV in and out.

#include <gtest/gtest.h>

#include "store/credentials.hpp"
#include "store/tables.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

std::vector<std::string> names_of(const table_def& t) {
  std::vector<std::string> out;
  for (const auto& c : t.columns) {
    out.push_back(c.name);
  }
  return out;
}

TEST(table_catalog, xcat_columns_keys_and_sources) {
  const auto* nodelist = find_table("nodelist");
  ASSERT_NE(nodelist, nullptr);
  EXPECT_EQ(names_of(*nodelist),
            (std::vector<std::string>{"node", "groups", "status", "statustime", "appstatus",
                                      "appstatustime", "primarysn", "hidden", "updatestatus",
                                      "updatestatustime", "zonename", "comments", "disable"}));
  const auto* ipmi = find_table("ipmi");
  ASSERT_NE(ipmi, nullptr);
  EXPECT_EQ(ipmi->columns[*ipmi->column("username")].sources.front().attr, "bmcusername");
  EXPECT_TRUE(ipmi->columns[*ipmi->column("bmcid")].sources.empty()); // not kept
  const auto* networks = find_table("networks");
  ASSERT_NE(networks, nullptr);
  EXPECT_EQ(networks->keys, (std::vector<std::string>{"net", "mask"}));
  // the service nodes' table as xCAT's lsdef and tabdump show it (docs/service-nodes.md)
  const auto* servicenode = find_table("servicenode");
  ASSERT_NE(servicenode, nullptr);
  EXPECT_EQ(names_of(*servicenode),
            (std::vector<std::string>{"node", "nameserver", "dhcpserver", "tftpserver", "nfsserver",
                                      "conserver", "monserver", "ldapserver", "ntpserver",
                                      "ftpserver", "nimserver", "ipforward", "dhcpinterfaces",
                                      "proxydhcp", "comments", "disable"}));
  EXPECT_EQ(servicenode->columns[*servicenode->column("dhcpserver")].sources.front().attr,
            "setupdhcp");
  EXPECT_TRUE(servicenode->columns[*servicenode->column("monserver")].sources.empty());
  EXPECT_EQ(find_table("ppcdirect"), nullptr);
  EXPECT_EQ(find_table("bogus"), nullptr);
  // sorted, as tabdump lists them
  const auto& all = table_catalog();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

class tables_test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apply(db, [](write_txn& t) {
                  change_request g;
                  g.type = object_type::group;
                  g.names = {"compute"};
                  g.attrs = {{"mgt", "ipmi"}};
                  change_objects(t, g);
                  change_request n;
                  n.names = {"n1", "n2"};
                  n.attrs = {{"groups", "compute,all"}, {"bmc", "10.0.0.1"}};
                  return make_objects(t, n);
                }).ok());
  }

  /// tabdump's lines of table `name`, without the header.
  std::vector<std::string> dump(const std::string& name, bool passwords = true) {
    auto txn = db.read();
    cluster_view view{txn};
    std::vector<std::string> out;
    scan_rows(view, *find_table(name), passwords,
              [&](std::string_view, table_row&& row) { out.push_back(csv_line(row)); });
    return out;
  }

  outcome set(const std::string& table, const key_values& keys,
              const std::vector<column_change>& changes) {
    return apply(db, [&](write_txn& t) { return set_rows(t, *find_table(table), keys, changes); });
  }

  std::string attribute(const std::string& node, const std::string& attr) {
    auto txn = db.read();
    return cluster_view{txn}.attribute(node, attr);
  }

  cws::test::temp_dir dir;
  database db{dir.path};
};

TEST_F(tables_test, rows_are_the_objects_own_values_group_rows_included) {
  EXPECT_EQ(dump("nodelist"), (std::vector<std::string>{R"("n1","compute,all",,,,,,,,,,,)",
                                                        R"("n2","compute,all",,,,,,,,,,,)"}));
  // the group's row holds its own value; nodes inherit it but have no row of their own
  EXPECT_EQ(dump("nodehm"), (std::vector<std::string>{R"("compute",,"ipmi",,,,,,,,,,,,,)"}));
}

TEST_F(tables_test, a_conditional_attribute_shows_in_the_table_its_condition_picks) {
  // bmc is ipmi.bmc for mgt=ipmi (inherited from compute here), openbmc.bmc for mgt=openbmc
  EXPECT_EQ(dump("ipmi").size(), 2u);
  EXPECT_TRUE(dump("openbmc").empty());
  ASSERT_TRUE(set("nodehm", {{"node", "n2"}}, {{"mgt", "openbmc"}}).ok());
  EXPECT_EQ(dump("ipmi"), (std::vector<std::string>{R"("n1","10.0.0.1",,,,,,,)"}));
  EXPECT_EQ(dump("openbmc"), (std::vector<std::string>{R"("n2","10.0.0.1",,,,,,)"}));
}

TEST_F(tables_test, writes_are_definition_changes) {
  ASSERT_TRUE(set("nodetype", {{"node", "n1"}}, {{"os", "rhels9"}, {"arch", "x86_64"}}).ok());
  EXPECT_EQ(attribute("n1", "os"), "rhels9");
  ASSERT_TRUE(set("nodelist", {{"node", "n1"}}, {{"groups", "rack1", list_mode::append}}).ok());
  EXPECT_EQ(attribute("n1", "groups"), "compute,all,rack1");
  ASSERT_TRUE(set("nodelist", {{"node", "n1"}}, {{"groups", "all", list_mode::remove}}).ok());
  EXPECT_EQ(attribute("n1", "groups"), "compute,rack1");
  // a group row: the value every member inherits
  ASSERT_TRUE(set("vm", {{"node", "compute"}}, {{"memory", "4096"}}).ok());
  EXPECT_EQ(attribute("n2", "vmmemory"), "4096");
  // a site row is a site attribute; a networks row a network named after its keys
  ASSERT_TRUE(set("site", {{"key", "domain"}}, {{"value", "cluster.local"}}).ok());
  ASSERT_TRUE(
    set("networks", {{"net", "10.0.0.0"}, {"mask", "255.0.0.0"}}, {{"gateway", "10.0.0.254"}})
      .ok());
  auto txn = db.read();
  EXPECT_EQ(txn.get(object_type::site, "clustersite")->find("domain").value_or(""),
            "cluster.local");
  auto net = txn.get(object_type::network, "10_0_0_0-255_0_0_0");
  ASSERT_TRUE(net.has_value());
  EXPECT_EQ(net->find("gateway").value_or(""), "10.0.0.254");
}

TEST_F(tables_test, refusals_change_nothing) {
  auto before = dump("nodehm");
  auto o = set("nodehm", {{"node", "n1"}}, {{"power", "ipmi"}, {"comments", "x"}});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.errors.front(), "clusterws does not keep nodehm.comments (no definition attribute "
                              "holds it).");
  o = set("nodehm", {{"node", "n1"}}, {{"power", "a\nb"}});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.errors.front(), "The value of 'power' cannot contain a line break.");
  o = set("nodehm", {{"bogus", "n1"}}, {{"power", "x"}});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.errors.front(), "Unkown key bogus to nodehm");
  o = set("passwd", {{"key", "vmware"}, {"username", "admin"}}, {{"password", "x"}});
  ASSERT_FALSE(o.ok());
  o = set("passwd", {{"key", "ipmi"}, {"username", "admin"}}, {{"comments", "x"}});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(dump("nodehm"), before);
  EXPECT_EQ(dump("passwd").size(), 0u);
}

TEST_F(tables_test, passwd_ipmi_row_is_kept_apart_from_the_api_users) {
  auto o = set("passwd", {{"key", "ipmi"}, {"username", "ADMIN"}}, {{"password", "bmcpw"}});
  ASSERT_TRUE(o.ok()) << (o.errors.empty() ? "" : o.errors.front());
  auto rows = dump("passwd");
  ASSERT_EQ(rows.size(), 1u);
  // kept as given (the BMC needs it), and never as a passwd (API login) record
  EXPECT_EQ(rows.front(), R"("ipmi","ADMIN","bmcpw",,,,)");
  EXPECT_EQ(dump("passwd", false).front(), R"("ipmi","ADMIN","********",,,,)");
  auto txn = db.read();
  EXPECT_FALSE(txn.exists(cws::store::object_type::passwd, "ADMIN"));
  EXPECT_FALSE(txn.exists(cws::store::object_type::passwd, "ipmi"));
  auto rec = txn.get(cws::store::object_type::site, cws::store::bmc_credentials_object);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->find("password").value_or(""), "bmcpw");
  EXPECT_EQ(rec->find("username").value_or(""), "ADMIN");
}

TEST_F(tables_test, deleting_rows) {
  ASSERT_TRUE(set("nodehm", {{"node", "n1"}}, {{"power", "ipmi"}}).ok());
  auto del = [&](const std::string& table, const key_values& keys) {
    size_t n = 0;
    apply(db, [&](write_txn& t) {
      n = delete_rows(t, *find_table(table), keys);
      return outcome{};
    });
    return n;
  };
  // a node table row: the object's attributes that table holds go, the object stays
  EXPECT_EQ(del("nodehm", {{"node", "n1"}}), 1u);
  EXPECT_EQ(attribute("n1", "power"), "");
  EXPECT_EQ(attribute("n1", "bmc"), "10.0.0.1");
  // a nodelist row is the node
  EXPECT_EQ(del("nodelist", {{"node", "n2"}}), 1u);
  EXPECT_FALSE(db.read().exists(object_type::node, "n2"));
  EXPECT_EQ(del("nodelist", {{"node", "nope"}}), 0u);
}

// issue #32: a row keyed by a name that is no node is a group's row (xCAT keys rows by any
// name), written before any node joins the group; its members inherit it, and `chtab -d`
// takes it away again.
TEST_F(tables_test, a_row_keyed_by_a_name_that_is_no_node_is_a_groups_row) {
  auto o = set("vm", {{"node", "kvms"}}, {{"host", "hv1"}, {"storage", "dir:///var/lib/vms"}});
  ASSERT_TRUE(o.ok()) << o.errors.front();
  ASSERT_TRUE(set("nodehm", {{"node", "somegroup"}}, {{"mgt", "openbmc"}}).ok());
  {
    auto txn = db.read();
    EXPECT_TRUE(txn.exists(object_type::group, "kvms"));
    EXPECT_FALSE(txn.exists(object_type::node, "kvms"));
    EXPECT_FALSE(txn.exists(object_type::node, "somegroup"));
  }
  EXPECT_EQ(dump("nodehm"), (std::vector<std::string>{R"("compute",,"ipmi",,,,,,,,,,,,,)",
                                                      R"("somegroup",,"openbmc",,,,,,,,,,,,,)"}));
  ASSERT_EQ(dump("vm").size(), 1u);
  EXPECT_EQ(dump("vm").front().substr(0, 32), R"("kvms",,"hv1",,"dir:///var/lib/v)");
  // a node joining the groups reads their values (its first group wins, as always)
  ASSERT_TRUE(
    set("nodelist", {{"node", "n1"}}, {{"groups", "kvms,somegroup", list_mode::append}}).ok());
  EXPECT_EQ(attribute("n1", "vmhost"), "hv1");
  EXPECT_EQ(attribute("n1", "vmstorage"), "dir:///var/lib/vms");
  EXPECT_EQ(attribute("n1", "mgt"), "ipmi"); // compute comes first in n1's groups
  // a nodelist row keyed by a new name is still a new node
  ASSERT_TRUE(set("nodelist", {{"node", "n3"}}, {{"groups", "somegroup"}}).ok());
  EXPECT_EQ(attribute("n3", "mgt"), "openbmc");
  // chtab -d node=kvms vm: the group's row goes, and with it what the members inherited
  size_t deleted = 0;
  apply(db, [&](write_txn& t) {
    deleted = delete_rows(t, *find_table("vm"), {{"node", "kvms"}});
    return outcome{};
  });
  EXPECT_EQ(deleted, 1u);
  EXPECT_TRUE(dump("vm").empty());
  EXPECT_EQ(attribute("n1", "vmhost"), "");
}

TEST_F(tables_test, passwd_rows_are_api_users_with_hashed_passwords) {
  ASSERT_TRUE(set("passwd", {{"key", "xcat"}, {"username", "bob"}}, {{"password", "s3cret"}}).ok());
  auto stored = db.read().get(object_type::passwd, "bob")->find("password");
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(verify_password("s3cret", *stored));
  EXPECT_EQ(dump("passwd", false), (std::vector<std::string>{R"("xcat","bob","********",,,,)"}));
  EXPECT_NE(dump("passwd", true).front().find("$y$"), std::string::npos);
}

TEST_F(tables_test, csv_round_trip_and_restore_replaces_the_rows) {
  const auto& nodelist = *find_table("nodelist");
  std::string text = "#node,groups,comments\n\"n1\",\"compute\",\n\"n3\",\"all\",\n";
  csv_table rows;
  ASSERT_EQ(parse_csv(text, nodelist, rows), "");
  ASSERT_EQ(rows.rows.size(), 2u);
  ASSERT_TRUE(apply(db, [&](write_txn& t) { return restore_rows(t, nodelist, rows, false); }).ok());
  // n2 is not in the data: gone; n1 keeps its other tables' values; n3 is new
  EXPECT_EQ(dump("nodelist"),
            (std::vector<std::string>{R"("n1","compute",,,,,,,,,,,)", R"("n3","all",,,,,,,,,,,)"}));
  EXPECT_EQ(attribute("n1", "bmc"), "10.0.0.1");
  // what tabdump writes, tabrestore reads back to the same rows
  std::string dumped = "#node,groups,status,statustime,appstatus,appstatustime,primarysn,hidden,"
                       "updatestatus,updatestatustime,zonename,comments,disable\n";
  for (const auto& l : dump("nodelist")) {
    dumped += l + "\n";
  }
  csv_table again;
  ASSERT_EQ(parse_csv(dumped, nodelist, again), "");
  ASSERT_TRUE(
    apply(db, [&](write_txn& t) { return restore_rows(t, nodelist, again, false); }).ok());
  EXPECT_EQ(dump("nodelist").size(), 2u);
}

TEST(table_csv, quoting_and_xcat_errors) {
  const auto& t = *find_table("site");
  csv_table rows;
  ASSERT_EQ(parse_csv("#key,value\n\"a\",\"say \"\"hi\"\", x\"\nb,plain\n\n", t, rows), "");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows[0][1].value_or(""), "say \"hi\", x");
  EXPECT_EQ(rows.rows[1][1].value_or(""), "plain");
  EXPECT_EQ(csv_line(rows.rows[0]), R"("a","say ""hi"", x")");
  csv_table bad;
  EXPECT_EQ(parse_csv("key,value\n", t, bad), "Data missing header line starting with #");
  EXPECT_EQ(parse_csv("#key,nope\n", t, bad),
            "The header line indicates that column 'nope' should exist, which is not defined "
            "in the schema for 'site'");
  EXPECT_NE(parse_csv("#key,value\n\"a,\"b\n", t, bad).find("CSV unescaped \""), std::string::npos);
  EXPECT_NE(parse_csv("#key,value\n\"a\n", t, bad).find("CSV unmatched \""), std::string::npos);
  EXPECT_NE(parse_csv("#key,value\na,b,c\n", t, bad).find("Too many fields on line 2"),
            std::string::npos);
}

} // namespace

// mkdef/chdef/rmdef/lsdef semantics over a real LMDB store.

#include <gtest/gtest.h>

#include "store/definitions.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

class definitions_test : public ::testing::Test {
 protected:
  cws::test::temp_dir dir;
  database db{dir.path};

  outcome mk(object_type t, std::vector<std::string> names, std::vector<attr_change> attrs,
             bool force = false) {
    change_request r{t, std::move(names), std::move(attrs), list_mode::set, force, {}};
    return apply(db, [&](write_txn& t) { return make_objects(t, r); });
  }

  outcome ch(std::vector<std::string> names, std::vector<attr_change> attrs,
             list_mode mode = list_mode::set, object_type t = object_type::node) {
    change_request r{t, std::move(names), std::move(attrs), mode, false, {}};
    return apply(db, [&](write_txn& t) { return change_objects(t, r); });
  }

  outcome rm(object_type t, std::vector<std::string> names) {
    return apply(db, [&](write_txn& txn) { return remove_objects(txn, t, names); });
  }

  std::optional<attr_map> show(object_type t, const std::string& name) {
    auto txn = db.read();
    cluster_view view{txn};
    return view.display(t, name);
  }

  std::vector<std::string> node_names() {
    return db.read().names(object_type::node);
  }
};

TEST_F(definitions_test, mkdef_creates_and_reports) {
  auto out = mk(object_type::node, {"n1", "n2"}, {{"groups", "all"}, {"mgt", "kvm"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.info,
            (std::vector<std::string>{"2 object definitions have been created or modified."}));
  EXPECT_EQ(show(object_type::node, "n1")->at("mgt"), "kvm");
}

TEST_F(definitions_test, mkdef_invalid_attribute_writes_nothing) {
  auto out = mk(object_type::node, {"n1"}, {{"groups", "all"}, {"bogus", "x"}});
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.errors.front(),
            "'bogus' is not a valid attribute name for an object type of 'node'.");
  EXPECT_TRUE(node_names().empty());
}

TEST_F(definitions_test, mkdef_node_needs_groups) {
  auto out = mk(object_type::node, {"n1"}, {{"mgt", "kvm"}});
  EXPECT_EQ(out.errors, (std::vector<std::string>{
                          "Attribute 'groups' is not specified for node 'n1', skipping to the "
                          "next node.",
                          "One or more errors occured when attempting to create or modify xCAT "
                          "object definitions."}));
  EXPECT_TRUE(node_names().empty());
  out = mk(object_type::node, {"n1"}, {});
  EXPECT_EQ(out.errors.front(),
            "No object definitions have been created or modified: no attributes were "
            "specified. The 'groups' attribute is required when creating node definitions.");
}

TEST_F(definitions_test, mkdef_existing_is_skipped_unless_forced) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}, {"mgt", "kvm"}});
  auto out = mk(object_type::node, {"n1"}, {{"groups", "all"}});
  EXPECT_EQ(out.warnings.front(), "A definition for 'n1' already exists. No changes will be "
                                  "made.  Run again with '-f' option to force replace.");
  EXPECT_EQ(out.errors.front(), "0 object definitions have been created or modified.");
  EXPECT_EQ(show(object_type::node, "n1")->at("mgt"), "kvm");
  out = mk(object_type::node, {"n1"}, {{"groups", "compute"}}, true);
  ASSERT_TRUE(out.ok());
  auto n1 = show(object_type::node, "n1");
  EXPECT_EQ(n1->count("mgt"), 0u); // replaced, not merged
  EXPECT_EQ(n1->at("groups"), "compute");
  // a failed mkdef -f keeps the old definition (and makes nothing of the others)
  out = mk(object_type::node, {"n1", "n2"}, {{"groups", "rack"}, {"bogus", "1"}}, true);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "compute");
  EXPECT_FALSE(show(object_type::node, "n2").has_value());
}

TEST_F(definitions_test, chdef_sets_clears_and_creates) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}, {"id", "7"}, {"mgt", "kvm"}});
  auto out = ch({"n1"}, {{"id", ""}, {"mgt", " "}, {"vmmemory", "4096"}});
  ASSERT_TRUE(out.ok());
  auto n1 = *show(object_type::node, "n1");
  EXPECT_EQ(n1.count("id"), 0u);
  EXPECT_EQ(n1.count("mgt"), 0u);
  EXPECT_EQ(n1.at("vmmemory"), "4096");
  out = ch({"n2"}, {{"groups", "all"}});
  EXPECT_EQ(out.info,
            (std::vector<std::string>{"1 object definitions have been created or modified.",
                                      "New object definitions 'n2' have been created."}));
  out = ch({"n3"}, {{"mgt", "kvm"}});
  EXPECT_FALSE(out.ok());
  EXPECT_FALSE(db.read().exists(object_type::node, "n3"));
}

TEST_F(definitions_test, chdef_append_and_remove_list_items) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}});
  ch({"n1"}, {{"groups", "compute,all"}}, list_mode::append);
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "all,compute");
  EXPECT_EQ(db.read().members("compute"), (std::vector<std::string>{"n1"}));
  auto out = ch({"n1"}, {{"groups", "all,nothere"}}, list_mode::remove);
  EXPECT_EQ(out.warnings.front(),
            "nothere is not in the attribute of 'groups' for the 'n1' definition.");
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "compute");
  EXPECT_TRUE(db.read().members("all").empty());
  out = ch({"absent"}, {{"groups", "x"}}, list_mode::remove);
  EXPECT_EQ(out.errors.front(),
            "The '-m' option is not valid since the 'absent' definition does not exist.");
}

TEST_F(definitions_test, one_bad_object_aborts_the_whole_change) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}});
  auto out = ch({"n1", "newnode"}, {{"mgt", "kvm"}}); // newnode lacks groups
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(show(object_type::node, "n1")->count("mgt"), 0u);
}

TEST_F(definitions_test, rmdef_all_or_nothing) {
  mk(object_type::node, {"n1", "n2"}, {{"groups", "all"}});
  auto out = rm(object_type::node, {"n1", "nosuch"});
  EXPECT_EQ(out.errors,
            (std::vector<std::string>{"Could not find an object named 'nosuch' of type 'node'.",
                                      "No objects have been removed from the xCAT database."}));
  EXPECT_EQ(node_names().size(), 2u);
  out = rm(object_type::node, {"n1", "n2"});
  EXPECT_EQ(out.info.front(), "2 object definitions have been removed.");
  EXPECT_TRUE(node_names().empty());
  EXPECT_TRUE(db.read().group_names().empty());
}

TEST_F(definitions_test, nodes_inherit_from_groups_and_show_default_postscripts) {
  db.write([](write_txn& t) {
    t.set_meta("xcatdefaults.postscripts", "syslog,remoteshell,syncfiles");
    t.set_meta("xcatdefaults.postbootscripts", "otherpkgs");
  });
  mk(object_type::group, {"compute"}, {{"mgt", "ipmi"}, {"os", "rhels9"}});
  mk(object_type::node, {"n1"},
     {{"groups", "compute,all"}, {"os", "sles15"}, {"postscripts", "mine"}});
  auto n1 = *show(object_type::node, "n1");
  EXPECT_EQ(n1.at("mgt"), "ipmi");
  EXPECT_EQ(n1.at("os"), "sles15"); // own value wins
  EXPECT_EQ(n1.at("postscripts"), "syslog,remoteshell,syncfiles,mine");
  EXPECT_EQ(n1.at("postbootscripts"), "otherpkgs");
  auto txn = db.read();
  cluster_view view{txn};
  EXPECT_EQ(view.attribute("n1", "mgt"), "ipmi");
  auto r = expand_noderange("mgt==ipmi", view);
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"n1"}));
}

TEST_F(definitions_test, groups_list_members_and_members_attribute_edits_nodes) {
  mk(object_type::node, {"n1", "n2", "n3"}, {{"groups", "all"}});
  auto out = ch({"rack1"}, {{"members", "n1,n2"}}, list_mode::set, object_type::group);
  ASSERT_TRUE(out.ok()) << out.errors.front();
  EXPECT_EQ(show(object_type::group, "rack1")->at("members"), "n1,n2");
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "all,rack1");
  ch({"rack1"}, {{"members", "n3"}}, list_mode::set, object_type::group);
  EXPECT_EQ(show(object_type::group, "rack1")->at("members"), "n3");
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "all");
  out = rm(object_type::group, {"rack1"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(show(object_type::node, "n3")->at("groups"), "all");
  EXPECT_FALSE(show(object_type::group, "rack1").has_value());
}

TEST_F(definitions_test, dynamic_group) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}, {"mgt", "kvm"}});
  mk(object_type::node, {"n2"}, {{"groups", "all"}, {"mgt", "ipmi"}});
  mk(object_type::group, {"virt"}, {{"grouptype", "dynamic"}, {"wherevals", "mgt==kvm"}});
  auto txn = db.read();
  cluster_view view{txn};
  EXPECT_EQ(expand_noderange("virt", view).nodes, (std::vector<std::string>{"n1"}));
}

// N1 (issue #27): a dynamic group whose wherevals test a masked attribute is refused to a
// caller who may not read it, before its members are computed; root expands it as before.
TEST_F(definitions_test, a_dynamic_group_over_a_masked_attribute_is_refused_when_hidden) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}, {"bmcpassword", "Sekret"}});
  mk(object_type::group, {"leak"},
     {{"grouptype", "dynamic"}, {"wherevals", "mgt==ipmi::bmcpassword=~^Sek"}});
  mk(object_type::group, {"virt"}, {{"grouptype", "dynamic"}, {"wherevals", "mgt==kvm"}});
  auto txn = db.read();
  cluster_view view{txn};
  EXPECT_EQ(view.dynamic_tests("leak"), (std::vector<std::string>{"mgt", "bmcpassword"}));
  EXPECT_TRUE(view.dynamic_tests("all").empty());
  noderange_options hidden;
  hidden.hide_secrets = true;
  for (std::string range : {"leak", "all,-leak", "n1@leak"}) {
    try {
      expand_noderange(range, view, hidden);
      ADD_FAILURE() << range << " was expanded";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), store_errc::forbidden);
      EXPECT_STREQ(e.what(),
                   "The dynamic group 'leak' tests 'bmcpassword', whose value only root may read.");
    }
  }
  EXPECT_TRUE(expand_noderange("virt", view, hidden).nodes.empty());
  EXPECT_TRUE(expand_noderange("leak", view).nodes.empty()); // (n1 has no mgt=ipmi)
}

// N3 (issue #27): a node's name may not be a group's, nor a group's a node's, whichever path
// makes it; checked when the change ends, so the change is refused whole.
TEST_F(definitions_test, a_node_and_a_group_may_not_share_a_name) {
  ASSERT_TRUE(mk(object_type::node, {"n1", "n2"}, {{"groups", "compute,all"}}).ok());
  ASSERT_TRUE(mk(object_type::group, {"service"}, {{"grouptype", "static"}}).ok());
  auto out = mk(object_type::node, {"n3", "compute"}, {{"groups", "all"}});
  EXPECT_EQ(out.errors,
            (std::vector<std::string>{"The node name 'compute' is already a group name."}));
  EXPECT_EQ(node_names(), (std::vector<std::string>{"n1", "n2"}));
  out = mk(object_type::node, {"service"}, {{"groups", "all"}});
  EXPECT_EQ(out.errors,
            (std::vector<std::string>{"The node name 'service' is already a group name."}));
  out = mk(object_type::node, {"self"}, {{"groups", "self"}});
  EXPECT_EQ(out.errors,
            (std::vector<std::string>{"The node name 'self' is already a group name."}));
  out = ch({"n2"}, {{"groups", "compute,n1"}});
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The group name 'n1' is already a node name."}));
  out = mk(object_type::group, {"n1"}, {{"grouptype", "static"}});
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The group name 'n1' is already a node name."}));
  out = apply(db, [](write_txn& t) { return rename_object(t, object_type::node, "n2", "all"); });
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The node name 'all' is already a group name."}));
  EXPECT_EQ(node_names(), (std::vector<std::string>{"n1", "n2"}));
  // a change may pass through a clash it resolves (n1 leaves group n3 before n3 is a node)
  out = apply(db, [](write_txn& t) {
    t.put(object_type::node, "n1", {{"groups", "n3"}});
    t.put(object_type::node, "n3", {{"groups", "all"}});
    t.put(object_type::node, "n1", {{"groups", "all"}});
    return outcome{};
  });
  EXPECT_TRUE(out.ok()) << (out.errors.empty() ? "" : out.errors.front());
}

// Also (issue #27): `.` and `..` name no object of any type, on any path.
TEST_F(definitions_test, dot_and_dot_dot_are_no_object_names) {
  for (auto t :
       {object_type::node, object_type::group, object_type::network, object_type::osimage}) {
    for (std::string n : {".", ".."}) {
      EXPECT_EQ(check_object_name(t, n), "The object name '" + n + "' is not valid.");
    }
  }
  EXPECT_EQ(check_object_name(object_type::node, "...").size(), 0u);
  auto out = apply(db, [](write_txn& t) {
    t.put(object_type::osimage, "..", {{"imagetype", "linux"}});
    return outcome{};
  });
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The object name '..' is not valid."}));
  out = ch({"n1"}, {{"groups", "all,."}});
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The group name '.' is not valid."}));
}

TEST_F(definitions_test, site_is_one_object_and_empty_deletes_a_key) {
  change_request r{object_type::site, {},    {{"tftpdir", "/tftpboot"}, {"custom", "1"}},
                   list_mode::set,    false, {}};
  auto chg = [&] {
    return apply(db, [&](write_txn& t) { return change_objects(t, r); });
  };
  ASSERT_TRUE(chg().ok());
  EXPECT_EQ(show(object_type::site, "clustersite")->at("tftpdir"), "/tftpboot");
  r.attrs = {{"custom", ""}};
  chg();
  EXPECT_EQ(show(object_type::site, "clustersite")->count("custom"), 0u);
}

TEST_F(definitions_test, names_and_values_are_checked) {
  EXPECT_FALSE(mk(object_type::node, {"bad/name"}, {{"groups", "all"}}).ok());
  EXPECT_FALSE(mk(object_type::node, {"a,b"}, {{"groups", "all"}}).ok());
  EXPECT_FALSE(mk(object_type::node, {"n1"}, {{"groups", "all"}, {"mgt", "a\nb"}}).ok());
  EXPECT_FALSE(mk(object_type::policy, {"abc"}, {{"rule", "allow"}}).ok());
  EXPECT_TRUE(mk(object_type::policy, {"6.5"}, {{"name", "bob"}, {"rule", "allow"}}).ok());
  EXPECT_TRUE(node_names().empty());
}

TEST_F(definitions_test, controls_in_values_are_refused_by_name) {
  auto msg = [&](std::string value) {
    auto out = mk(object_type::node, {"n1"}, {{"groups", "all"}, {"usercomment", value}});
    return out.errors.empty() ? std::string{} : out.errors.front();
  };
  EXPECT_EQ(msg("a\x1b[2Jb"),
            "The value of 'usercomment' cannot contain the control character U+001B.");
  EXPECT_EQ(msg("a\x7f"),
            "The value of 'usercomment' cannot contain the control character U+007F.");
  EXPECT_EQ(msg("a\xc2\x85"),
            "The value of 'usercomment' cannot contain the control character U+0085.");
  EXPECT_EQ(msg("a\xe2\x80\xa8"),
            "The value of 'usercomment' cannot contain the control character U+2028.");
  EXPECT_EQ(msg("a\xe2\x80\xa9"),
            "The value of 'usercomment' cannot contain the control character U+2029.");
  EXPECT_EQ(msg(std::string{"a\0b", 3}),
            "The value of 'usercomment' cannot contain the control character U+0000.");
  EXPECT_EQ(msg("a\rb"), "The value of 'usercomment' cannot contain a line break.");
  EXPECT_TRUE(node_names().empty());
  EXPECT_EQ(msg("tab\there, caf\xc3\xa9 \xe2\x82\xac"), ""); // TAB and other Unicode are fine
}

TEST_F(definitions_test, policy_rules_and_token_days_are_checked_when_written) {
  auto out = mk(object_type::policy, {"7"}, {{"name", "eve"}, {"rule", "disallow"}});
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0],
            "The policy rule 'disallow' is not valid: use allow, accept, trusted or deny.");
  EXPECT_TRUE(mk(object_type::policy, {"7"}, {{"name", "eve"}, {"rule", "Deny"}}).ok());
  change_request site{object_type::site, {},    {{"tokenexpiredays", "1e15"}},
                      list_mode::set,    false, {}};
  auto chg = [&] {
    return apply(db, [&](write_txn& t) { return change_objects(t, site); });
  };
  EXPECT_FALSE(chg().ok());
  site.attrs = {{"tokenexpiredays", "never"}};
  EXPECT_TRUE(chg().ok());
}

TEST_F(definitions_test, change_targets_without_quotes_and_not_empty) {
  EXPECT_EQ(check_change_target(object_type::node, "x'y", {"xy"}),
            "The object name 'x'y' is not valid.");
  EXPECT_EQ(check_change_target(object_type::group, "\"g\"", {"g"}),
            "The object name '\"g\"' is not valid.");
  EXPECT_EQ(check_change_target(object_type::node, "n1,-n1", {}), "No object names were provided.");
  EXPECT_EQ(check_change_target(object_type::node, "n1", {"n1"}), "");
  EXPECT_EQ(check_change_target(object_type::site, "", {}), "");
}

TEST_F(definitions_test, lsdef_listing_with_selected_attributes) {
  mk(object_type::node, {"n1"}, {{"groups", "all"}, {"mgt", "kvm"}});
  auto txn = db.read();
  cluster_view view{txn};
  std::vector<std::string> only{"mgt", "bmc", "bogus"};
  auto l = list_objects(view, object_type::node, {"n1", "n9"}, &only);
  ASSERT_EQ(l.objects.size(), 1u);
  EXPECT_EQ(l.objects[0].attrs, (attr_map{{"bmc", ""}, {"mgt", "kvm"}}));
  EXPECT_EQ(l.errors, (std::vector<std::string>{
                        "'bogus' is not a valid attribute name for an object type of 'node'.",
                        "Could not find an object named 'n9' of type 'node'."}));
}

TEST_F(definitions_test, plus_and_minus_use_double_colons_in_a_dynamic_groups_wherevals) {
  ASSERT_TRUE(mk(object_type::group, {"g"},
                 {{"grouptype", "dynamic"}, {"wherevals", "mgt==kvm"}, {"usercomment", "a,b"}})
                .ok());
  ASSERT_TRUE(ch({"g"}, {{"wherevals", "os=~a,b::mgt==kvm"}, {"usercomment", "c"}},
                 list_mode::append, object_type::group)
                .ok());
  auto g = show(object_type::group, "g");
  EXPECT_EQ(g->at("wherevals"), "mgt==kvm::os=~a,b"); // a selection may hold commas
  EXPECT_EQ(g->at("usercomment"), "a,b,c");           // other lists stay comma lists
  auto out = ch({"g"}, {{"wherevals", "mgt==kvm::os=~a,b"}}, list_mode::remove, object_type::group);
  EXPECT_EQ(out.errors.front(),
            "The 'where' attributes and values were not provided for dynamic group 'g'.");
  EXPECT_EQ(show(object_type::group, "g")->at("wherevals"), "mgt==kvm::os=~a,b");
}

} // namespace

namespace {

// issue #32, xCAT's only_if (DBobjUtils.pm validate_only_if_attrs): bmc, bmcusername,
// bmcpassword and their kin live in the table their mgt selects; setting one with no
// qualifying mgt (own or inherited) is refused with xCAT's words, and nothing is written.
TEST_F(definitions_test, a_conditional_attribute_needs_its_condition) {
  const std::vector<std::string> bmc_refused
    = {"Cannot set the attr='bmc' attribute unless mgt value is ipmi or openbmc.",
       "One or more errors occured when attempting to create or modify xCAT object definitions."};
  auto out = mk(object_type::node, {"n1"}, {{"groups", "test"}, {"bmc", "10.0.0.1"}});
  EXPECT_EQ(out.errors, bmc_refused);
  EXPECT_TRUE(node_names().empty()); // no partial object
  EXPECT_FALSE(show(object_type::group, "test"));
  // its own mgt, given in the same command or already set, meets it
  ASSERT_TRUE(
    mk(object_type::node, {"n1"}, {{"groups", "old"}, {"mgt", "openbmc"}, {"bmc", "1.2.3.4"}})
      .ok());
  ASSERT_TRUE(ch({"n1"}, {{"bmcusername", "root"}}).ok());
  // mkdef -f replaces the object: its old mgt does not count, and the old object stays
  out = mk(object_type::node, {"n1"}, {{"groups", "new"}, {"bmc", "5.6.7.8"}}, true);
  EXPECT_EQ(out.errors, bmc_refused);
  auto n1 = show(object_type::node, "n1");
  EXPECT_EQ(n1->at("groups"), "old");
  EXPECT_EQ(n1->at("bmc"), "1.2.3.4");
  // a group's mgt, as the node inherits it, meets it; a group is checked as a node is
  ASSERT_TRUE(ch({"ipmis"}, {{"mgt", "ipmi"}}, list_mode::set, object_type::group).ok());
  ASSERT_TRUE(mk(object_type::node, {"n2"}, {{"groups", "ipmis"}, {"bmcpassword", "pw"}}).ok());
  out = ch({"nomgt"}, {{"bmcpassword", "pw"}}, list_mode::set, object_type::group);
  EXPECT_EQ(out.errors.front(),
            "Cannot set the attr='bmcpassword' attribute unless mgt value is ipmi or openbmc.");
  EXPECT_FALSE(show(object_type::group, "nomgt"));
  // a mgt that selects no BMC table does not meet it; other conditions name their attribute
  out = ch({"n2"}, {{"mgt", "kvm"}, {"bmc", "x"}, {"pprofile", "p"}});
  EXPECT_EQ(out.errors,
            (std::vector<std::string>{
              "Cannot set the attr='bmc' attribute unless mgt value is ipmi or openbmc.",
              "Cannot set the attr='pprofile' attribute unless mgt value is hmc|ivm|fsp.",
              "One or more errors occured when attempting to create or modify xCAT object "
              "definitions."}));
  EXPECT_EQ(show(object_type::node, "n2")->at("mgt"), "ipmi"); // (inherited, unchanged)
  // clearing needs no condition
  EXPECT_TRUE(ch({"n1"}, {{"mgt", "kvm"}, {"bmcusername", ""}}).ok());
  // a group whose members are given keeps them unchanged when refused
  out = mk(object_type::group, {"badgrp"}, {{"members", "n2"}, {"bmc", "10.0.0.1"}});
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(show(object_type::node, "n2")->at("groups"), "ipmis");
  // one bad object among good ones: the command writes nothing (xCAT writes the good ones)
  std::vector<object_change> objects
    = {{object_type::node, "good", {{"groups", "test"}, {"mgt", "openbmc"}, {"bmc", "1.1.1.1"}}},
       {object_type::node, "bad", {{"groups", "test"}, {"bmc", "2.2.2.2"}}}};
  out = apply(db, [&](write_txn& t) { return make_objects(t, objects, false); });
  EXPECT_EQ(out.errors, bmc_refused);
  EXPECT_EQ(node_names(), (std::vector<std::string>{"n1", "n2"}));
}

} // namespace

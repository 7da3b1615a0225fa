// The stanza parser (xcatstanzafile(5)) and mkdef -z / chdef -z over a real LMDB store.

#include <gtest/gtest.h>

#include "store/definitions.hpp"
#include "store/stanza.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;
using attrs = std::vector<std::pair<std::string, std::string>>;

TEST(stanza_parser, lsdef_output_comments_blanks_and_crlf) {
  auto in = parse_stanzas("# <xCAT data object stanza file>\n"
                          "\n"
                          "node1:\n"
                          "    objtype=node\n"
                          "    groups=all,compute\n"
                          "  # a comment line\n"
                          "\tmgt = ipmi \r\n"
                          "net-a :  \r\n"
                          "objtype=network\n"
                          "usercomment=see:\n"
                          "gateway=<xcatmaster>");
  ASSERT_TRUE(in.errors.empty()) << in.errors.front();
  ASSERT_EQ(in.objects.size(), 2u);
  EXPECT_EQ(in.objects[0].name, "node1");
  EXPECT_EQ(in.objects[0].type, "node");
  EXPECT_EQ(in.objects[0].line, 3u);
  EXPECT_EQ(in.objects[0].attrs, (attrs{{"groups", "all,compute"}, {"mgt", "ipmi"}}));
  EXPECT_EQ(in.objects[1].name, "net-a");
  EXPECT_EQ(in.objects[1].type, "network");
  // a value ending in ':' stays a value (xCAT would read a header there)
  EXPECT_EQ(in.objects[1].attrs, (attrs{{"usercomment", "see:"}, {"gateway", "<xcatmaster>"}}));
}

TEST(stanza_parser, quotes_and_first_equals_sign) {
  auto in = parse_stanzas("n:\n objtype=node\n groups=\" all,compute \"\n"
                          " usercomment=a=b\n postscripts=\"x\n kcmdline=y\"\n");
  ASSERT_TRUE(in.errors.empty());
  EXPECT_EQ(
    in.objects[0].attrs,
    (attrs{
      {"groups", "all,compute"}, {"usercomment", "a=b"}, {"postscripts", "x"}, {"kcmdline", "y"}}));
}

TEST(stanza_parser, default_stanzas_apply_to_following_objects_of_their_type) {
  auto in = parse_stanzas("n0:\n objtype=node\n groups=g0\n"
                          "default-node:\n groups=all,compute\n mgt=ipmi\n"
                          "net1:\n objtype=network\n net=10.0.0.0\n"
                          "n1:\n objtype=node\n mgt=kvm\n"
                          "default-node:\n mgt= \n"
                          "n2:\n objtype=node\n");
  ASSERT_TRUE(in.errors.empty());
  ASSERT_EQ(in.objects.size(), 4u);
  EXPECT_EQ(in.objects[0].attrs, (attrs{{"groups", "g0"}})); // defaults only apply later
  EXPECT_EQ(in.objects[1].attrs, (attrs{{"net", "10.0.0.0"}}));
  // the stanza's own value wins over the default
  EXPECT_EQ(in.objects[2].attrs, (attrs{{"groups", "all,compute"}, {"mgt", "kvm"}}));
  // a blank default turns the default off
  EXPECT_EQ(in.objects[3].attrs, (attrs{{"groups", "all,compute"}}));
}

TEST(stanza_parser, syntax_errors_name_the_line) {
  auto in = parse_stanzas("groups=all\nn1:\n objtype=node\njunk here\n\x1b[2J\n");
  ASSERT_EQ(in.errors.size(), 3u);
  EXPECT_EQ(in.errors[0],
            "Line 1 of the stanza input sets an attribute before the first 'name:' header.");
  EXPECT_EQ(in.errors[1], "Line 4 of the stanza input is neither a 'name:' header nor an "
                          "'attr=value' line: 'junk here'.");
  EXPECT_EQ(in.errors[2], "Line 5 of the stanza input is neither a 'name:' header nor an "
                          "'attr=value' line: '?[2J'.");
}

TEST(stanza_parser, unknown_default_type_duplicates_and_long_lines) {
  auto in = parse_stanzas("default-nod:\n mgt=ipmi\n"
                          "n1:\n objtype=node\nn1:\n objtype=node\n"
                          "n2:\n objtype=node\n usercomment="
                          + std::string(max_stanza_line, 'x') + "\n");
  ASSERT_EQ(in.errors.size(), 3u);
  EXPECT_EQ(in.errors[0], "Line 1 of the stanza input names an unknown type: Type 'nod' is not "
                          "a valid xCAT object type.");
  EXPECT_EQ(in.errors[1], "Line 9 of the stanza input is longer than 1048576 characters.");
  EXPECT_EQ(in.errors[2], "Only one stanza can exist for each object name: 'n1' is defined on "
                          "lines 3 and 5.");
}

TEST(stanza_parser, stops_after_max_errors) {
  std::string junk;
  for (int i = 0; i < 1000; ++i) {
    junk += "junk\n";
  }
  auto in = parse_stanzas(junk);
  ASSERT_EQ(in.errors.size(), max_stanza_errors + 1);
  EXPECT_EQ(in.errors.back(), "Too many errors in the stanza input; the first 20 are shown.");
}

class stanza_apply_test : public ::testing::Test {
 protected:
  cws::test::temp_dir dir;
  database db{dir.path};

  outcome mk(const std::string& text, bool force = false) {
    std::vector<std::string> errors;
    auto objects = stanza_objects(parse_stanzas(text).objects, errors);
    if (!errors.empty()) {
      outcome out;
      out.errors = errors;
      return out;
    }
    return apply(db, [&](write_txn& t) { return make_objects(t, objects, force); });
  }

  outcome ch(const std::string& text, list_mode mode = list_mode::set) {
    std::vector<std::string> errors;
    auto objects = stanza_objects(parse_stanzas(text).objects, errors);
    return apply(db, [&](write_txn& t) { return change_objects(t, objects, mode); });
  }

  std::optional<attr_map> show(object_type t, const std::string& name) {
    auto txn = db.read();
    return cluster_view{txn}.display(t, name);
  }
};

TEST_F(stanza_apply_test, objtype_errors_are_xcats) {
  std::vector<std::string> errors;
  auto objects
    = stanza_objects(parse_stanzas("a:\n mgt=ipmi\nb:\n objtype=route\n").objects, errors);
  EXPECT_TRUE(objects.empty());
  EXPECT_EQ(errors, (std::vector<std::string>{
                      "No objtype value was specified for 'a'. Cannot create object definition.",
                      "Type 'route' is not a valid xCAT object type."}));
}

TEST_F(stanza_apply_test, groups_before_their_nodes_and_one_transaction) {
  // the group stanza comes first: its members are nodes of the same input
  auto out = mk("compute:\n objtype=group\n members=n1,n2\n mgt=ipmi\n"
                "n1:\n objtype=node\n groups=all\n"
                "n2:\n objtype=node\n groups=all,compute\n");
  ASSERT_TRUE(out.ok()) << out.errors.front();
  EXPECT_EQ(out.info, (std::vector<std::string>{"3 object definitions have been created or "
                                                "modified."}));
  EXPECT_EQ(show(object_type::node, "n1")->at("groups"), "all,compute");
  EXPECT_EQ(show(object_type::node, "n1")->at("mgt"), "ipmi"); // inherited
  EXPECT_EQ(show(object_type::group, "compute")->at("members"), "n1,n2");
}

TEST_F(stanza_apply_test, one_bad_object_writes_nothing) {
  auto out = mk("n1:\n objtype=node\n groups=all\n"
                "n2:\n objtype=node\n groups=all\n bogus=1\n"
                "net1:\n objtype=network\n net=10.0.0.0\n");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.errors.front(), "'bogus' is not a valid attribute name for an object type of "
                                "'node'.");
  EXPECT_FALSE(show(object_type::node, "n1"));
  EXPECT_FALSE(show(object_type::network, "net1"));
}

TEST_F(stanza_apply_test, dynamic_group_members_do_not_touch_nodes) {
  ASSERT_TRUE(mk("n1:\n objtype=node\n groups=all\n mgt=kvm\n"
                 "n2:\n objtype=node\n groups=all\n"
                 "dyn:\n objtype=group\n grouptype=dynamic\n wherevals=mgt==kvm\n"
                 " members=n1,n2\n")
                .ok());
  EXPECT_EQ(show(object_type::node, "n2")->at("groups"), "all");
  EXPECT_EQ(show(object_type::group, "dyn")->at("members"), "n1");
}

TEST_F(stanza_apply_test, mkdef_skips_existing_unless_forced_chdef_merges_and_creates) {
  ASSERT_TRUE(mk("n1:\n objtype=node\n groups=all\n mgt=ipmi\n arch=x86_64\n").ok());
  auto skipped = mk("n1:\n objtype=node\n groups=all\n mgt=kvm\n");
  ASSERT_FALSE(skipped.ok());
  EXPECT_EQ(skipped.errors.back(), "0 object definitions have been created or modified.");
  EXPECT_EQ(show(object_type::node, "n1")->at("mgt"), "ipmi");

  ASSERT_TRUE(mk("n1:\n objtype=node\n groups=all\n mgt=kvm\n", true).ok());
  EXPECT_EQ(show(object_type::node, "n1")->count("arch"), 0u); // -f replaces

  auto changed = ch("n1:\n objtype=node\n arch=ppc64le\nn3:\n objtype=node\n groups=all\n");
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed.info,
            (std::vector<std::string>{"2 object definitions have been created or modified.",
                                      "New object definitions 'n3' have been created."}));
  EXPECT_EQ(show(object_type::node, "n1")->at("mgt"), "kvm");
  EXPECT_EQ(show(object_type::node, "n1")->at("arch"), "ppc64le");
}

TEST_F(stanza_apply_test, site_stanza_under_any_name_is_clustersite) {
  ASSERT_TRUE(ch("mysite:\n objtype=site\n installdir=/xcatinstall\n").ok());
  EXPECT_EQ(show(object_type::site, "clustersite")->at("installdir"), "/xcatinstall");
  EXPECT_FALSE(show(object_type::site, "mysite"));
}

} // namespace

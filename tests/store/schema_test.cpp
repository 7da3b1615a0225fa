#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/schema.hpp"

using namespace cws::store;

TEST(schema, has_the_194_node_attributes) {
  EXPECT_EQ(node_attributes().size(), 194u);
  EXPECT_TRUE(is_valid_attribute(object_type::node, "sshport")); // clusterws extension
  EXPECT_TRUE(is_valid_attribute(object_type::group, "sshport"));
  for (auto a : {"groups", "mgt", "vmmemory", "id", "os", "arch", "ip", "switchtype",
                 "prescripts-begin", "passwd.HMC", "storagcontroller"}) {
    EXPECT_TRUE(is_valid_attribute(object_type::node, a)) << a;
  }
}

TEST(schema, rejects_unknown_attributes_with_xcats_message) {
  EXPECT_FALSE(is_valid_attribute(object_type::node, "nosuchattr"));
  EXPECT_FALSE(is_valid_attribute(object_type::node, ""));
  EXPECT_EQ(invalid_attribute_message("nosuchattr", object_type::node),
            "'nosuchattr' is not a valid attribute name for an object type of 'node'.");
}

// N13 (issue #27): site keys are free-form, but not `objtype` or `#...`, which a stanza file
// reads as the stanza's type and as a comment (lsdef -z then mkdef -z lost or changed them).
TEST(schema, site_keys_round_trip_through_stanzas) {
  EXPECT_TRUE(is_valid_attribute(object_type::site, "mycustomkey"));
  EXPECT_TRUE(is_valid_attribute(object_type::site, "a#b"));
  EXPECT_FALSE(is_valid_attribute(object_type::site, "objtype"));
  EXPECT_FALSE(is_valid_attribute(object_type::site, "#x"));
  EXPECT_FALSE(is_valid_attribute(object_type::site, "#"));
}

TEST(schema, nic_attributes_validate_by_stem) {
  EXPECT_TRUE(is_valid_attribute(object_type::node, "nicips.eth0"));
  EXPECT_FALSE(is_valid_attribute(object_type::node, "nicbogus.eth0"));
  EXPECT_FALSE(is_valid_attribute(object_type::node, "nicips."));
}

TEST(schema, nic_suffixes_and_site_keys_obey_the_name_rules) {
  EXPECT_TRUE(is_valid_attribute(object_type::node, "nicips.ib0.100"));
  EXPECT_TRUE(is_valid_attribute(object_type::group, "nicnetworks.eth0:1"));
  for (std::string bad : std::vector<std::string>{
         "nicips.eth0\nObject name: x", "nicips.eth0=1", "nicips.eth 0", "nicips.eth\t0",
         "nicips.eth0\xe2\x80\xa8", "nicips.\x7f", std::string{"nicips.e\0x", 10}}) {
    EXPECT_FALSE(is_valid_attribute(object_type::node, bad)) << bad;
    EXPECT_FALSE(is_valid_attribute(object_type::group, bad)) << bad;
    EXPECT_FALSE(is_valid_attribute(object_type::site, bad)) << bad;
  }
  auto longest = "nicips." + std::string(max_key_length - 7, 'a');
  EXPECT_TRUE(is_valid_attribute(object_type::node, longest));
  EXPECT_FALSE(is_valid_attribute(object_type::node, longest + "a"));
  EXPECT_TRUE(is_valid_attribute(object_type::site, std::string(max_key_length, 'k')));
  EXPECT_FALSE(is_valid_attribute(object_type::site, std::string(max_key_length + 1, 'k')));
  EXPECT_FALSE(is_valid_attribute(object_type::site, std::string{"a\0b", 3}));
  EXPECT_FALSE(is_valid_attribute(object_type::site, "a\x1b"));
}

TEST(schema, per_type_attributes) {
  EXPECT_TRUE(is_valid_attribute(object_type::network, "mtu"));
  EXPECT_TRUE(is_valid_attribute(object_type::network, "netname"));
  EXPECT_FALSE(is_valid_attribute(object_type::network, "mgt"));
  EXPECT_TRUE(is_valid_attribute(object_type::policy, "rule"));
  EXPECT_FALSE(is_valid_attribute(object_type::policy, "mtu"));
  EXPECT_TRUE(is_valid_attribute(object_type::osimage, "osvers"));
  EXPECT_TRUE(is_valid_attribute(object_type::group, "mgt"));
  EXPECT_TRUE(is_valid_attribute(object_type::group, "members"));
  EXPECT_FALSE(is_valid_attribute(object_type::group, "status")); // nodelist: node's own
  EXPECT_TRUE(is_valid_attribute(object_type::site, "anything_goes"));
  EXPECT_FALSE(is_valid_attribute(object_type::site, "a=b"));
}

TEST(schema, types_and_columns) {
  EXPECT_EQ(parse_type("osimage"), object_type::osimage);
  EXPECT_FALSE(parse_type("passwd").has_value());
  EXPECT_FALSE(parse_type("bogus").has_value());
  EXPECT_EQ(attribute_for_column("nodehm.mgt").value_or(""), "mgt");
  EXPECT_EQ(attribute_for_column("vm.memory").value_or(""), "vmmemory");
  EXPECT_EQ(attribute_for_column("tags").value_or(""), "groups");
  EXPECT_EQ(attribute_for_column("nodetype.os").value_or(""), "os");
  EXPECT_FALSE(attribute_for_column("nodehm.bogus").has_value());
}

// xCAT's shipped templates and mkdef --template over a real LMDB store.

#include <gtest/gtest.h>

#include "store/templates.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

class templates_test : public ::testing::Test {
 protected:
  cws::test::temp_dir dir;
  database db{dir.path};

  outcome mk(std::vector<std::string> names, std::vector<attr_change> attrs, std::string from = {},
             object_type t = object_type::node) {
    change_request r{t, std::move(names), std::move(attrs), list_mode::set, false, from};
    return apply(db, [&](write_txn& txn) { return make_objects(txn, r); });
  }

  attr_map show(const std::string& node) {
    auto txn = db.read();
    return cluster_view{txn, false}.display(object_type::node, node).value_or(attr_map{});
  }
};

TEST_F(templates_test, the_shipped_set_is_xcats_with_valid_node_attributes) {
  std::vector<std::string> names;
  for (const auto& t : shipped_templates()) {
    names.push_back(t.name);
    EXPECT_EQ(t.type, object_type::node);
    EXPECT_EQ(t.attrs.count("objtype"), 0u) << t.name;
    for (const auto& [k, v] : t.attrs) {
      EXPECT_TRUE(is_valid_attribute(object_type::node, k)) << t.name << ": " << k;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                     "cec-template", "cumulusswitch", "hmc-template", "onieswitch",
                     "ppc64le-openbmc-template", "ppc64le-template", "ppc64lekvmguest-template",
                     "switch-template", "x86_64-template", "x86_64kvmguest-template"}));
  const auto* kvm = find_template(object_type::node, "x86_64kvmguest-template");
  ASSERT_NE(kvm, nullptr);
  EXPECT_EQ(kvm->attrs.at("vmhost"), "MANDATORY:the hostname or ip address of the KVM hypervisor");
  EXPECT_EQ(find_template(object_type::group, "x86_64kvmguest-template"), nullptr);
}

TEST_F(templates_test, listing_selects_like_lsdef_and_names_missing_templates) {
  auto txn = db.read();
  cluster_view view{txn, false};
  std::vector<std::string> only{"mgt", "ip"};
  auto found = list_templates(view, object_type::node, {"switch-template", "nosuch"}, &only);
  ASSERT_EQ(found.objects.size(), 1u);
  EXPECT_EQ(found.objects[0].attrs,
            (attr_map{{"ip", "OPTIONAL:the ip address of the switch"}, {"mgt", "switch"}}));
  EXPECT_EQ(found.errors, (std::vector<std::string>{"Could not find nosuch in xCAT templates."}));
  auto kvm = list_templates(view, object_type::node, {}, nullptr,
                            {*selector::parse("mgt==kvm", 1024, false)});
  ASSERT_EQ(kvm.objects.size(), 2u);
  EXPECT_EQ(kvm.objects[1].name, "x86_64kvmguest-template");
  EXPECT_EQ(kvm.objects[1].attrs.count("hcp"), 0u); // empty values are not shown
}

TEST_F(templates_test, mandatory_attributes_must_be_given_and_optional_ones_are_dropped) {
  auto out = mk({"kvm1"}, {{"vmhost", "hv1"}}, "x86_64kvmguest-template");
  EXPECT_EQ(out.errors, (std::vector<std::string>{"The attribute \"ip\" must be specified!",
                                                  "The attribute \"vmnics\" must be specified!"}));
  EXPECT_TRUE(db.read().names(object_type::node).empty());

  out = mk({"kvm1", "kvm2"},
           {{"ip", "10.0.0.1"},
            {"vmhost", "hv1"},
            {"vmnics", "br0"},
            {"vmmemory", ""},
            {"groups", "kvm,all"}},
           "x86_64kvmguest-template");
  ASSERT_TRUE(out.ok()) << out.errors.front();
  auto kvm2 = show("kvm2");
  EXPECT_EQ(kvm2.at("vmhost"), "hv1");
  EXPECT_EQ(kvm2.at("groups"), "kvm,all"); // given values win
  EXPECT_EQ(kvm2.at("vmmemory"), "4096");  // an empty one does not
  EXPECT_EQ(kvm2.count("mac"), 0u);        // OPTIONAL and not given
  EXPECT_EQ(kvm2.at("usercomment"), "the system X kvm node definition");
}

TEST_F(templates_test, an_existing_object_is_a_template_with_its_inherited_values) {
  ASSERT_TRUE(mk({"rack1"}, {{"mgt", "ipmi"}}, {}, object_type::group).ok());
  ASSERT_TRUE(mk({"n1"}, {{"groups", "rack1,all"}, {"bmc", "n1-bmc"}}).ok());
  ASSERT_TRUE(mk({"n2"}, {{"groups", "all"}, {"bmc", "n2-bmc"}}, "n1").ok());
  auto n2 = show("n2");
  EXPECT_EQ(n2.at("mgt"), "ipmi"); // copied, though n2 is not in rack1
  EXPECT_EQ(n2.at("bmc"), "n2-bmc");
  EXPECT_EQ(n2.count("postscripts"), 0u); // the xcatdefaults stay xcatdefaults

  EXPECT_EQ(mk({"n3"}, {}, "n9").errors,
            (std::vector<std::string>{"Could not find the template object named 'n9' of type "
                                      "'node'."}));
  EXPECT_EQ(mk({"n1", "n3"}, {}, "n1").errors,
            (std::vector<std::string>{"The template node cannot be the same as the node to "
                                      "create."}));
  EXPECT_EQ(mk({"n3"}, {}, "n1,n2").errors,
            (std::vector<std::string>{"Only 1 template object definition should be specified "
                                      "for mkdef!"}));
  EXPECT_EQ(mk({"img2"}, {}, "img1", object_type::osimage).errors,
            (std::vector<std::string>{"Could not get objects of type 'osimage'."}));
}

} // namespace

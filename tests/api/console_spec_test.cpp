// api/console: which consoles are held and how they are reached, for cons=kvm (a libvirt
// domain's console, found as rpower finds it: resolve_vm) beside cons=ipmi.

#include <gtest/gtest.h>

#include <memory>

#include "../store/temp_home.hpp"
#include "api/console.hpp"
#include "api/hardware.hpp"
#include "store/database.hpp"

namespace {

using namespace cws;
using store::object_type;

class console_spec_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_shared<store::database>(dir.path);
  }

  void put(object_type type, const std::string& name, store::attr_map attrs) {
    db->write([&](store::write_txn& t) { t.put(type, name, attrs); });
  }

  api::console_spec only(const std::string& node) {
    for (auto& s : api::read_consoles(*db, 623)) {
      if (s.node == node) {
        return s;
      }
    }
    ADD_FAILURE() << "no console for " << node;
    return {};
  }

  cws::test::temp_dir dir;
  std::shared_ptr<store::database> db;
};

TEST_F(console_spec_test, a_kvm_console_is_its_vmhosts_libvirt_uri_and_the_domain_named_after_it) {
  put(object_type::node, "vm1", {{"groups", "all"}, {"cons", "kvm"}, {"vmhost", "hv1"}});
  auto s = only("vm1");
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.method, "kvm");
  EXPECT_EQ(s.vm.uri, "qemu+ssh://root@hv1/system"); // as xCAT's kvm plugin builds it
  EXPECT_EQ(s.vm.domain, "vm1");
  EXPECT_EQ(s.bmc.address, "");
}

TEST_F(console_spec_test, a_vmhost_that_is_a_uri_is_used_as_it_is_and_inherited_from_a_group) {
  put(object_type::group, "virt",
      {{"cons", "kvm"}, {"vmhost", "qemu+unix:///system?socket=/tmp/x/libvirt-sock"}});
  put(object_type::node, "vm2", {{"groups", "virt"}});
  auto s = only("vm2");
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.vm.uri, "qemu+unix:///system?socket=/tmp/x/libvirt-sock");
  EXPECT_EQ(s.vm.domain, "vm2");
}

TEST_F(console_spec_test, rpower_and_the_console_server_resolve_a_vm_alike) {
  put(object_type::node, "vm3", {{"groups", "all"}, {"vmhost", "hv3"}});
  auto txn = db->read();
  store::cluster_view view{txn};
  api::vm_access vm;
  std::string error;
  ASSERT_TRUE(api::resolve_vm(view, "vm3", vm, error)) << error;
  EXPECT_EQ(vm.uri, "qemu+ssh://root@hv3/system");
  EXPECT_EQ(vm.domain, "vm3");
}

TEST_F(console_spec_test, a_kvm_console_without_vmhost_and_an_unknown_method_are_errors_per_node) {
  put(object_type::node, "vm4", {{"groups", "all"}, {"cons", "kvm"}});
  put(object_type::node, "lp1", {{"groups", "all"}, {"cons", "hmc"}});
  EXPECT_EQ(only("vm4").error, "Unable to identify vmhost for vm4 (set its vmhost attribute)");
  EXPECT_EQ(only("lp1").error,
            "Console method 'hmc' is not supported (cons=ipmi and cons=kvm are)");
}

TEST_F(console_spec_test, a_changed_vmhost_changes_the_console_and_matters_to_the_server) {
  put(object_type::node, "vm5", {{"groups", "all"}, {"cons", "kvm"}, {"vmhost", "hv1"}});
  auto before = only("vm5");
  put(object_type::node, "vm5", {{"groups", "all"}, {"cons", "kvm"}, {"vmhost", "hv2"}});
  EXPECT_NE(before, only("vm5")); // the console server opens it again

  store::change_set set;
  set.changes.push_back({object_type::group, "virt", store::change_kind::changed, {"vmhost"}});
  EXPECT_TRUE(api::consoles_affected(set).all);
  set.changes = {{object_type::node, "vm5", store::change_kind::changed, {"vmhost"}}};
  EXPECT_EQ(api::consoles_affected(set).nodes, std::vector<std::string>{"vm5"});
  set.changes = {{object_type::node, "vm5", store::change_kind::changed, {"comments"}}};
  EXPECT_TRUE(api::consoles_affected(set).empty());
}

} // namespace

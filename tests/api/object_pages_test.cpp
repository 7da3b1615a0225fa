// A large listing read in pages: name order, every object once, one snapshot throughout.

#include <gtest/gtest.h>

#include <memory>

#include "../store/temp_home.hpp"
#include "api/object_pages.hpp"
#include "store/codec.hpp"
#include "store/definitions.hpp"

namespace {

using namespace cws;
using store::object_type;

class object_pages_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_shared<store::database>(dir.path);
    db->write([](store::write_txn& t) {
      for (int i = 1; i <= 7; ++i) {
        t.put(object_type::node, "n" + std::to_string(i),
              {{"groups", "all"}, {"os", "os" + std::to_string(i)}});
      }
    });
  }

  api::object_pages pages(std::vector<std::string> names, std::vector<std::string> only = {}) {
    bool only_attrs = !only.empty();
    return api::object_pages{
      db, db->read(), object_type::node, std::move(names), std::move(only), only_attrs};
  }

  /// "name:encoded attributes" of each object, in the order given.
  static std::vector<std::string> flat(const std::vector<api::object_record>& objects) {
    std::vector<std::string> out;
    for (const auto& o : objects) {
      out.push_back(o.name + ":" + o.encoded);
    }
    return out;
  }

  cws::test::temp_dir dir;
  std::shared_ptr<store::database> db;
};

TEST_F(object_pages_test, pages_are_in_name_order_and_hold_every_object_once) {
  auto p = pages({"n5", "n1", "n3", "n1", "n7", "n2", "n4", "n6"});
  EXPECT_EQ(p.size(), 7u); // the duplicate n1 counted once
  std::vector<api::object_record> all;
  std::vector<size_t> sizes;
  for (auto page = p.next(3); !page.empty(); page = p.next(3)) {
    sizes.push_back(page.size());
    std::move(page.begin(), page.end(), std::back_inserter(all));
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 1}));
  EXPECT_TRUE(p.next(3).empty()); // and stays empty

  // the same objects as the whole listing
  auto txn = db->read();
  store::cluster_view view{txn};
  auto whole
    = store::list_objects(view, object_type::node, {"n1", "n2", "n3", "n4", "n5", "n6", "n7"});
  std::vector<api::object_record> expected;
  for (auto& o : whole.objects) {
    expected.emplace_back(o.name, o.attrs);
  }
  EXPECT_EQ(flat(all), flat(expected));
}

TEST_F(object_pages_test, every_page_reads_the_snapshot_taken_at_the_start) {
  auto p = pages({"n1", "n2", "n3", "n4"});
  auto first = p.next(2);
  db->write([](store::write_txn& t) {
    t.put(object_type::node, "n3", {{"groups", "all"}, {"os", "changed"}});
    t.erase(object_type::node, "n4");
  });
  auto second = p.next(2);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].name, "n3");
  EXPECT_NE(second[0].encoded.find("os3"), std::string::npos);
  EXPECT_EQ(second[1].name, "n4"); // erased after the listing began: still listed
}

TEST_F(object_pages_test, only_the_attributes_asked_for_unset_ones_empty) {
  auto p = pages({"n2", "n1"}, {"os", "arch"});
  auto page = p.next(10);
  ASSERT_EQ(page.size(), 2u);
  auto txn = db->read();
  store::cluster_view view{txn};
  std::vector<std::string> only{"os", "arch"};
  auto whole = store::list_objects(view, object_type::node, {"n1", "n2"}, &only);
  ASSERT_EQ(whole.objects.size(), 2u);
  EXPECT_EQ(flat(page), (std::vector<std::string>{"n1:" + store::encode(whole.objects[0].attrs),
                                                  "n2:" + store::encode(whole.objects[1].attrs)}));
  EXPECT_EQ(whole.objects[0].attrs.count("arch"), 1u); // asked for, unset: listed as ""
}

} // namespace

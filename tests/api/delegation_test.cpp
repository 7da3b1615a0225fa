// Which nodes go where (api/delegation.hpp): xCAT's `servicenode` (a comma list, the first
// one up wins, the rest are backups), the nodes that stay on the head, sn_fallback, and the
// fanout split across the engines.

#include <gtest/gtest.h>

#include <numeric>

#include "api/delegation.hpp"

namespace {

using namespace cws::api;

service_nodes registry(std::initializer_list<std::pair<const char*, bool>> sns) {
  service_nodes s;
  for (const auto& [name, up] : sns) {
    s.known[name] = up;
  }
  s.head = {"mgmt", "mgmt.cluster", "10.0.0.1"};
  return s;
}

std::vector<uint32_t> share_of(const delegation_plan& p, const std::string& sn) {
  for (const auto& s : p.shares) {
    if (s.service_node == sn) {
      return s.indexes;
    }
  }
  return {};
}

TEST(delegation, nodes_go_to_their_first_service_node_that_is_up_keeping_their_indexes) {
  auto sns = registry({{"sn1", true}, {"sn2", true}});
  auto p = plan_delegation({"n0", "n1", "n2", "n3", "n4"}, {"sn1", "sn2", "sn1,sn2", "sn2,sn1", ""},
                           sns);
  EXPECT_EQ(share_of(p, "sn1"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(share_of(p, "sn2"), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(p.head, (std::vector<uint32_t>{4}));
  EXPECT_TRUE(p.refused.empty());
  ASSERT_EQ(p.shares.size(), 2u);
  EXPECT_EQ(p.shares[0].service_node, "sn1") << "shares come by service node name";
}

TEST(delegation, a_backup_takes_the_nodes_of_a_primary_that_is_down_or_unknown) {
  auto sns = registry({{"sn1", false}, {"sn2", true}});
  auto p = plan_delegation({"n0", "n1"}, {"sn1,sn2", " snX , sn2 "}, sns);
  EXPECT_EQ(share_of(p, "sn2"), (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(share_of(p, "sn1").empty());
  EXPECT_TRUE(p.head.empty());
}

TEST(delegation, nodes_naming_the_head_and_service_nodes_themselves_run_from_the_head) {
  auto sns = registry({{"sn1", true}, {"sn2", false}});
  auto p
    = plan_delegation({"n0", "n1", "sn1", "sn2", "n4", "n5"},
                      {"mgmt", "10.0.0.1,sn1", "sn2", "sn1", "sn2,mgmt.cluster,sn1", ","}, sns);
  EXPECT_EQ(p.head, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(p.all_on_head());
}

TEST(delegation, a_node_whose_every_service_node_is_down_is_refused_naming_them) {
  auto sns = registry({{"sn1", false}, {"sn2", false}});
  auto p = plan_delegation({"n0", "n1", "n2"}, {"sn1,sn2", "", "sn3"}, sns);
  EXPECT_EQ(p.head, (std::vector<uint32_t>{1}));
  ASSERT_EQ(p.refused.size(), 2u);
  EXPECT_EQ(p.refused[0].index, 0u);
  EXPECT_EQ(p.refused[0].message,
            "service nodes sn1, sn2 are not registered or down; nothing was run on this node "
            "(sn_fallback = fail)");
  EXPECT_EQ(p.refused[1].index, 2u);
  EXPECT_EQ(p.refused[1].message,
            "service node sn3 is not registered or down; nothing was run on this node "
            "(sn_fallback = fail)");
  EXPECT_TRUE(p.shares.empty());
}

TEST(delegation, fallback_direct_runs_the_nodes_of_service_nodes_that_are_down_from_the_head) {
  auto sns = registry({{"sn1", false}, {"sn2", true}});
  sns.fallback = sn_fallback::direct;
  auto p = plan_delegation({"n0", "n1", "n2"}, {"sn1", "sn2", "sn9"}, sns);
  EXPECT_EQ(p.head, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(share_of(p, "sn2"), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(p.refused.empty());
}

TEST(delegation, every_node_lands_in_exactly_one_place) {
  auto sns = registry({{"sn1", true}, {"sn2", false}, {"sn3", true}});
  std::vector<std::string> names;
  std::vector<std::string> values;
  const char* pool[] = {"", "sn1", "sn2", "sn3", "sn2,sn3", "mgmt", "sn2,sn4"};
  for (int i = 0; i < 700; ++i) {
    names.push_back("n" + std::to_string(i));
    values.push_back(pool[i % 7]);
  }
  auto p = plan_delegation(names, values, sns);
  std::vector<int> seen(names.size(), 0);
  for (auto i : p.head) {
    ++seen[i];
  }
  for (const auto& s : p.shares) {
    EXPECT_TRUE(std::is_sorted(s.indexes.begin(), s.indexes.end()));
    for (auto i : s.indexes) {
      ++seen[i];
    }
  }
  for (const auto& r : p.refused) {
    ++seen[r.index];
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], 1) << i;
  }
  EXPECT_EQ(share_of(p, "sn3").size(), 200u); // "sn3" and "sn2,sn3"
  EXPECT_EQ(p.refused.size(), 200u);          // "sn2" and "sn2,sn4"
}

TEST(delegation, fanout_is_split_in_proportion_to_nodes_with_at_least_one_each) {
  EXPECT_EQ(split_fanout(64, {100, 300, 0}), (std::vector<size_t>{16, 48, 0}));
  EXPECT_EQ(split_fanout(10, {1000, 1, 1}), (std::vector<size_t>{8, 1, 1}));
  EXPECT_EQ(split_fanout(2, {5, 5, 5}), (std::vector<size_t>{1, 1, 1}))
    << "each engine with nodes still gets one";
  EXPECT_EQ(split_fanout(100, {3, 4}), (std::vector<size_t>{3, 4})) << "never more than its nodes";
  EXPECT_EQ(split_fanout(5, {0, 0}), (std::vector<size_t>{0, 0}));
  auto parts = split_fanout(1000, {3333, 3333, 3334});
  EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), size_t{0}), 1000u);
  parts = split_fanout(7, {10, 20, 30, 40});
  EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), size_t{0}), 7u);
  for (auto part : parts) {
    EXPECT_GE(part, 1u);
  }
}

} // namespace

// The seal of a delegated share (actors/share_seal.hpp): sealed by the head under the service
// node's secret, verified by the service node. A changed field (a BMC password, a user), a
// share relayed to another service node, a replay and an expired seal are refused.

#include <gtest/gtest.h>

#include "actors/share_seal.hpp"
#include "api/sn_seal.hpp"

namespace {

using namespace cws;

api::wire::share_request share_for(const std::string& sn) {
  api::wire::share_request s;
  s.service_node = sn;
  s.job.id = 77;
  s.job.operation = "power";
  s.job.command = "on";
  api::wire::target t;
  t.name = "b1";
  t.bmc = "10.1.0.1";
  t.bmc_user = "admin";
  t.bmc_password = "pw1";
  s.job.targets.push_back(t);
  return s;
}

class share_seal_test : public ::testing::Test {
 protected:
  std::string secret1 = api::make_sn_secret();
  std::string secret2 = api::make_sn_secret();
  int64_t now = api::sn_now_ms();
  api::sn_replay_cache seen{16};
};

TEST_F(share_seal_test, a_sealed_share_verifies_once_and_a_replay_is_refused) {
  auto s = share_for("sn1");
  actors::seal_share(s, secret1, now + 60000);
  EXPECT_EQ(s.sealed.rfind("v1.77.", 0), 0u) << s.sealed;
  EXPECT_EQ(actors::verify_share(s, "sn1", secret1, now, seen), "");
  auto again = actors::verify_share(s, "sn1", secret1, now, seen);
  EXPECT_NE(again.find("seen before"), std::string::npos) << again;
}

TEST_F(share_seal_test, a_changed_field_fails_the_seal_and_never_names_the_password) {
  auto s = share_for("sn1");
  actors::seal_share(s, secret1, now + 60000);
  auto changed = s;
  changed.job.targets[0].bmc_password = "other";
  auto why = actors::verify_share(changed, "sn1", secret1, now, seen);
  EXPECT_NE(why.find("does not verify"), std::string::npos) << why;
  EXPECT_EQ(why.find("pw1"), std::string::npos);
  changed = s;
  changed.job.targets[0].user = "root";
  EXPECT_NE(actors::verify_share(changed, "sn1", secret1, now, seen), "");
  EXPECT_EQ(seen.size(), 0u) << "nothing of an unverified seal is remembered";
}

TEST_F(share_seal_test, a_share_relayed_to_another_service_node_is_refused) {
  auto s = share_for("sn1");
  actors::seal_share(s, secret1, now + 60000);
  // sn2 checks with its own name and secret; renaming the share breaks the MAC as well
  EXPECT_NE(actors::verify_share(s, "sn2", secret2, now, seen), "");
  s.service_node = "sn2";
  EXPECT_NE(actors::verify_share(s, "sn2", secret2, now, seen), "");
}

TEST_F(share_seal_test, an_expired_or_unsealed_share_is_refused) {
  auto s = share_for("sn1");
  actors::seal_share(s, secret1, now - 1);
  EXPECT_NE(actors::verify_share(s, "sn1", secret1, now, seen).find("expired"), std::string::npos);
  auto bare = share_for("sn1");
  EXPECT_EQ(actors::verify_share(bare, "sn1", secret1, now, seen), "the request is not sealed");
}

} // namespace

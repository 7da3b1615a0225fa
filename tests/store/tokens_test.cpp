// The token table: binding to the password, expiry capped by the parent, listing, revoking.

#include <gtest/gtest.h>

#include "store/credentials.hpp"
#include "store/tokens.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

class tokens_test : public ::testing::Test {
 protected:
  tokens_test() {
    set_password("alice", "pw1");
    db.write([](write_txn& t) {
      t.put(object_type::site, "clustersite", {{"tokenexpiredays", "2"}});
    });
  }

  void set_password(const std::string& user, const std::string& pw) {
    db.write([&](write_txn& t) {
      t.put(object_type::passwd, user, {{"password", hash_password(pw)}});
    });
  }

  std::pair<std::string, token_record> create(const std::string& parent = {}, int64_t now = 1000) {
    std::pair<std::string, token_record> out;
    db.write([&](write_txn& t) { out = create_token(t, "alice", parent, now); });
    return out;
  }

  token_record find(const std::string& id, int64_t now = 1000) {
    return find_token(db.read(), sha256_hex(id), now);
  }

  cws::test::temp_dir dir;
  database db{dir.path};
};

TEST_F(tokens_test, a_token_lives_as_the_site_says_and_dies_with_the_password) {
  auto [id, rec] = create();
  EXPECT_EQ(rec.expires, 1000 + 2 * 86400);
  EXPECT_EQ(find(id).user, "alice");
  EXPECT_TRUE(find(id, rec.expires + 1).user.empty()); // expired
  set_password("alice", "pw2");
  EXPECT_TRUE(find(id).user.empty()); // bound to the old password
  auto [id2, rec2] = create();
  EXPECT_EQ(find(id2).user, "alice");
  db.write([](write_txn& t) { t.erase(object_type::passwd, "alice"); });
  EXPECT_TRUE(find(id2).user.empty()); // the user is gone
}

TEST_F(tokens_test, a_token_made_by_a_token_expires_no_later_than_its_parent) {
  auto [parent, prec] = create({}, 1000);
  db.write([](write_txn& t) {
    t.put(object_type::site, "clustersite", {{"tokenexpiredays", "never"}});
  });
  auto [child, crec] = create(sha256_hex(parent), 5000);
  EXPECT_EQ(crec.expires, prec.expires);
  auto [grandchild, grec] = create(sha256_hex(child), 9000);
  EXPECT_EQ(grec.expires, prec.expires);
  auto [free, frec] = create({}, 9000); // a password login gets the site's life
  EXPECT_EQ(frec.expires, 0);
}

TEST_F(tokens_test, listing_shows_handles_and_revoking_by_handle_or_user) {
  auto a = create({}, 1000).second;
  auto b = create({}, 2000).second;
  set_password("bob", "pw");
  db.write([](write_txn& t) { create_token(t, "bob", {}, 3000); });
  auto all = list_tokens(db.read());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].created, 1000);
  EXPECT_EQ(list_tokens(db.read(), "alice").size(), 2u);
  EXPECT_EQ(a.handle().size(), 16u);
  EXPECT_EQ(a.key.compare(0, 16, a.handle()), 0);
  size_t n = 0;
  db.write([&](write_txn& t) { n = revoke_tokens_by_handle(t, a.handle(), "bob"); });
  EXPECT_EQ(n, 0u); // not bob's
  db.write([&](write_txn& t) { n = revoke_tokens_by_handle(t, a.handle().substr(0, 7), {}); });
  EXPECT_EQ(n, 0u); // too short to name one token
  db.write([&](write_txn& t) { n = revoke_tokens_by_handle(t, a.handle(), {}); });
  EXPECT_EQ(n, 1u);
  db.write([&](write_txn& t) { n = revoke_user_tokens(t, "alice"); });
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(list_tokens(db.read()).size(), 1u);
  (void)b;
}

} // namespace

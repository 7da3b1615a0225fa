// The passwd table's key=system row (OpenHPC's `chtab key=system passwd.username=root
// passwd.password=...`) and its rendering as #CRYPT:passwd:key=system,username=root:password#.

#include <gtest/gtest.h>

#include <crypt.h>

#include "../store/temp_home.hpp"
#include "api/passwords.hpp"
#include "store/credentials.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws::store;
using cws::api::system_password_hash;

class passwords_test : public ::testing::Test {
 protected:
  outcome set(const key_values& keys, const std::vector<column_change>& changes) {
    try {
      return apply(db,
                   [&](write_txn& t) { return set_rows(t, *find_table("passwd"), keys, changes); });
    } catch (const rejected& r) {
      return r.result;
    }
  }
  std::vector<std::string> dump(bool passwords) {
    auto txn = db.read();
    cluster_view view{txn};
    std::vector<std::string> out;
    scan_rows(view, *find_table("passwd"), passwords,
              [&](std::string_view, table_row&& row) { out.push_back(csv_line(row)); });
    return out;
  }
  std::string hash(std::string_view key, std::string_view user, std::string* error) {
    auto txn = db.read();
    return system_password_hash(txn, key, user, error);
  }

  cws::test::temp_dir dir;
  database db{dir.path};
};

TEST_F(passwords_test, system_row_is_stored_apart_and_shown_to_root_only) {
  auto o = set({{"key", "system"}}, {{"username", "root"}, {"password", "cluster"}});
  ASSERT_TRUE(o.ok()) << (o.errors.empty() ? "" : o.errors.front());
  EXPECT_EQ(dump(true), (std::vector<std::string>{R"("system","root","cluster",,,,)"}));
  EXPECT_EQ(dump(false), (std::vector<std::string>{R"("system","root","********",,,,)"}));
  // never an API user: no passwd record, so no login
  auto txn = db.read();
  EXPECT_FALSE(txn.exists(object_type::passwd, "root"));
  EXPECT_FALSE(txn.exists(object_type::passwd, "system"));
  // OpenHPC's spelling, keys in the row: chtab key=system passwd.username=root ...
  o = set({{"key", "system"}, {"username", "root"}}, {{"password", "other"}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(dump(true), (std::vector<std::string>{R"("system","root","other",,,,)"}));
  // other keys are still refused, naming the three kept
  o = set({{"key", "vmware"}, {"username", "u"}}, {{"password", "p"}});
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.errors.front().find("key=system row (the nodes' root password)"), std::string::npos);
}

TEST_F(passwords_test, crypt_renders_sha512_of_a_clear_password_and_keeps_a_stored_hash) {
  ASSERT_TRUE(set({{"key", "system"}}, {{"username", "root"}, {"password", "cluster"}}).ok());
  std::string error;
  auto h = hash("system", "root", &error);
  ASSERT_EQ(h.rfind("$6$", 0), 0u) << error;
  // a valid crypt(3) hash of the password
  crypt_data data{};
  EXPECT_EQ(std::string{crypt_r("cluster", h.c_str(), &data)}, h);
  // a fresh salt each time, never the clear text
  EXPECT_NE(hash("system", "root", &error), h);
  EXPECT_EQ(h.find("cluster"), std::string::npos);
  // any user name when none is asked
  EXPECT_EQ(hash("system", "", &error).rfind("$6$", 0), 0u);

  for (std::string kept : {"$6$salt$abc", "$5$salt$abc", "$1$salt$abc"}) {
    ASSERT_TRUE(set({{"key", "system"}}, {{"password", kept}}).ok());
    EXPECT_EQ(hash("system", "root", &error), kept);
  }
}

TEST_F(passwords_test, crypt_of_a_missing_row_user_or_key_is_xcats_error) {
  std::string error;
  EXPECT_EQ(hash("system", "root", &error), "");
  EXPECT_EQ(error, "Unable to find requested password from passwd in this context");
  ASSERT_TRUE(set({{"key", "system"}}, {{"username", "root"}, {"password", "cluster"}}).ok());
  error.clear();
  EXPECT_EQ(hash("system", "admin", &error), "");
  EXPECT_EQ(error, "Unable to find requested password from passwd in this context");
  // the API users' hashes are never served
  error.clear();
  EXPECT_EQ(hash("xcat", "root", &error), "");
  EXPECT_NE(error.find("Only the passwd table's key=system row"), std::string::npos);
}

} // namespace

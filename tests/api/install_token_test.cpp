// The install token: armed by nodeset, derived from the key file and the stored nonce,
// checked in constant time; the database never holds the token.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "../store/temp_home.hpp"
#include "api/install_token.hpp"
#include "api/nodeset.hpp"
#include "store/credentials.hpp"
#include "store/database.hpp"

namespace {

using namespace cws;

class install_token_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_unique<store::database>(dir.path / "db");
    db->write([](store::write_txn& w) {
      w.put(store::object_type::node, "n1", {{"groups", "all"}});
      w.put(store::object_type::node, "n2", {{"groups", "all"}});
      w.put(store::object_type::osimage, "img",
            {{"provmethod", "install"},
             {"osvers", "debian12"},
             {"osarch", "x86_64"},
             {"profile", "compute"}});
    });
  }

  void nodeset(const std::vector<std::string>& nodes, const std::string& word) {
    std::string error;
    auto a = api::parse_nodeset_action(word, error);
    ASSERT_TRUE(a) << error;
    db->write([&](store::write_txn& w) { api::set_boot_state(w, nodes, *a); });
  }

  test::temp_dir dir;
  std::unique_ptr<store::database> db;
};

TEST_F(install_token_test, nodeset_osimage_arms_a_token_each_node_and_only_it_passes) {
  auto key = api::install_token_key::load_or_create(dir.path / api::install_token_key_file);
  EXPECT_EQ(key.token(db->read(), "n1"), ""); // nothing armed yet
  EXPECT_FALSE(key.check(db->read(), "n1", ""));
  nodeset({"n1", "n2"}, "osimage=img");
  auto t1 = key.token(db->read(), "n1");
  auto t2 = key.token(db->read(), "n2");
  ASSERT_EQ(t1.size(), 64u);
  EXPECT_NE(t1, t2);
  EXPECT_TRUE(key.check(db->read(), "n1", t1));
  EXPECT_FALSE(key.check(db->read(), "n1", ""));               // none
  EXPECT_FALSE(key.check(db->read(), "n1", t2));               // another node's
  EXPECT_FALSE(key.check(db->read(), "n1", t1.substr(0, 63))); // wrong
  EXPECT_FALSE(key.check(db->read(), "n1", t1.substr(0, 63) + (t1[63] == '0' ? "1" : "0")));
  // a second nodeset: a fresh token, the old one void
  nodeset({"n1"}, "osimage=img");
  auto again = key.token(db->read(), "n1");
  EXPECT_NE(again, t1);
  EXPECT_FALSE(key.check(db->read(), "n1", t1));
  // the same key file gives the same tokens (the daemon and the tools share it)
  auto reread = api::install_token_key::load_or_create(dir.path / api::install_token_key_file);
  EXPECT_EQ(reread.token(db->read(), "n1"), again);
  // another key gives other tokens: the database alone never yields one
  api::install_token_key other{std::string(64, 'a')};
  EXPECT_NE(other.token(db->read(), "n1"), again);
  // boot ends it (as `installed` does through the listener)
  nodeset({"n1"}, "boot");
  EXPECT_FALSE(api::install_token_armed(db->read(), "n1"));
  EXPECT_FALSE(key.check(db->read(), "n1", again));
  EXPECT_TRUE(key.check(db->read(), "n2", t2));
}

TEST_F(install_token_test, the_key_file_is_root_only_and_the_database_never_holds_a_token) {
  auto path = dir.path / api::install_token_key_file;
  auto key = api::install_token_key::load_or_create(path);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  nodeset({"n1"}, "osimage=img");
  auto token = key.token(db->read(), "n1");
  db.reset();
  std::ifstream in{dir.path / "db" / "data.mdb", std::ios::binary};
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_GT(bytes.str().size(), 0u);
  EXPECT_EQ(bytes.str().find(token), std::string::npos);
  // a damaged key file is refused, not silently replaced
  std::ofstream{path} << "not a key\n";
  EXPECT_THROW(api::install_token_key::load_or_create(path), std::runtime_error);
}

TEST_F(install_token_test, the_token_is_hmac_sha256_of_node_and_nonce_under_the_key) {
  // the prepared HMAC (pads hashed once) gives what store::hmac_sha256_hex gives, for keys
  // shorter than, as long as (the key file's 64 hex digits) and longer than a SHA-256 block
  nodeset({"n1", "n2"}, "osimage=img");
  auto txn = db->read();
  for (const auto& bytes : {std::string(20, 'k'), store::random_hex(32), std::string(100, 'z')}) {
    api::install_token_key key{bytes};
    for (const char* node : {"n1", "n2"}) {
      auto nonce = api::install_token_nonce(txn, node);
      ASSERT_FALSE(nonce.empty());
      auto want = store::hmac_sha256_hex(bytes, "clusterws install token\n" + std::string{node}
                                                  + "\n" + nonce);
      EXPECT_EQ(key.token(txn, node), want) << bytes.size();
      EXPECT_TRUE(key.check(txn, node, want));
    }
  }
}

} // namespace

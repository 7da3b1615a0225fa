// Install templates: xCAT's directives compiled once and rendered per node from a store
// snapshot (golden text), includes bounded, #COMMAND# refused, #CRYPT# never in clear.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../store/temp_home.hpp"
#include "api/template.hpp"
#include "store/credentials.hpp"
#include "store/database.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws;

class template_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_unique<store::database>(dir.path / "db");
    db->write([](store::write_txn& w) {
      w.put(store::object_type::group, "compute", {{"serialport", "0"}, {"serialspeed", "115200"}});
      w.put(store::object_type::node, "cn01.cluster",
            {{"groups", "compute"}, {"xcatmaster", "10.0.0.1"}});
      w.put(store::object_type::site, "clustersite", {{"master", "10.0.0.254"}});
    });
  }

  /// chtab key=system passwd.username=root passwd.password=PASSWORD
  void set_system_password(const std::string& password) {
    auto o = store::apply(*db, [&](store::write_txn& t) {
      return store::set_rows(t, *store::find_table("passwd"), {{"key", "system"}},
                             {{"username", "root"}, {"password", password}});
    });
    ASSERT_TRUE(o.ok());
  }

  api::compiled_template compile(const std::string& text, api::template_limits limits = {}) {
    return api::compiled_template::parse(text, dir.path / "compute.tmpl", limits,
                                         api::file_reader(1 << 20));
  }

  std::string render(const api::compiled_template& t,
                     std::map<std::string, std::string> vars = {}) {
    auto txn = db->read();
    store::cluster_view view{txn};
    api::store_template_values values{view, "cn01.cluster", std::move(vars)};
    return t.render("cn01.cluster", values);
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream{dir.path / name} << text;
  }

  test::temp_dir dir;
  std::unique_ptr<store::database> db;
};

TEST_F(template_test, xcat_directives_render_from_the_store) {
  write("net.inc", "d-i netcfg/get_hostname string #SHORTNAME#\n");
  auto t
    = compile("# comment #platform=x86\n"
              "d-i preseed/early_command string wget #CWSVAR:status_url#/installing?"
              "token=#CWSVAR:token#\n"
              "#INCLUDE:net.inc#"
              "console=ttyS#TABLE:nodehm:$NODE:serialport#,#TABLE:nodehm:THISNODE:serialspeed#\n"
              "master #TABLE:noderes:$NODE:xcatmaster# site #TABLE:site:key=master:value#\n"
              "mgt [#TABLEBLANKOKAY:nodehm:$NODE:mgt#] host #HOSTNAME#\n");
  EXPECT_EQ(t.directives(), 9u);
  EXPECT_EQ(
    render(t, {{"status_url", "http://10.0.0.1:8080/boot/cn01.cluster/status"}, {"token", "abc"}}),
    "# comment #platform=x86\n"
    "d-i preseed/early_command string wget "
    "http://10.0.0.1:8080/boot/cn01.cluster/status/installing?token=abc\n"
    "d-i netcfg/get_hostname string cn01\n"
    "console=ttyS0,115200\n"
    "master 10.0.0.1 site 10.0.0.254\n"
    "mgt [] host cn01.cluster\n");
}

TEST_F(template_test, an_unset_table_value_is_xcats_error) {
  auto t = compile("#TABLE:nodehm:$NODE:mgt#\n");
  try {
    render(t);
    FAIL();
  } catch (const api::template_error& e) {
    EXPECT_STREQ(e.what(), "Unable to find requested mgt from nodehm, with node=cn01.cluster");
  }
  EXPECT_THROW(render(compile("#TABLE:site:key=nosuch:value#")), api::template_error);
}

TEST_F(template_test, command_is_refused_and_malformed_directives_name_their_line) {
  try {
    compile("line one\n#COMMAND:cat /etc/shadow#\n");
    FAIL();
  } catch (const api::template_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("compute.tmpl:2: #COMMAND# is not supported"), std::string::npos) << what;
  }
  EXPECT_THROW(compile("#TABLE:nodehm#\n"), api::template_error);
  EXPECT_THROW(compile("#TABLE:nodehm:$NODE:mgt\n#"), api::template_error);
  EXPECT_THROW(compile("#INCLUDE:nosuch.inc#"), api::template_error);
}

TEST_F(template_test, includes_are_bounded_in_depth_and_size) {
  write("self.inc", "x#INCLUDE:self.inc#");
  try {
    compile("#INCLUDE:self.inc#", {1 << 20, 3});
    FAIL();
  } catch (const api::template_error& e) {
    EXPECT_NE(std::string{e.what()}.find("nested deeper than 3 levels (template_include_depth)"),
              std::string::npos)
      << e.what();
  }
  write("big.inc", std::string(3000, 'a'));
  EXPECT_EQ(render(compile("#INCLUDE:big.inc#", {4096, 3})).size(), 3000u);
  try {
    compile("#INCLUDE:big.inc##INCLUDE:big.inc#", {4096, 3});
    FAIL();
  } catch (const api::template_error& e) {
    EXPECT_NE(std::string{e.what()}.find("template_max_bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile("#INCLUDE:big.inc#", {4096, 0}), api::template_error);
}

TEST_F(template_test, crypt_gives_a_sha512_hash_never_the_clear_password) {
  // the one #CRYPT# function (api::system_password_hash): the passwd table's key=system row
  EXPECT_THROW(render(compile("#CRYPT:passwd:key=system,username=root:password#")),
               api::template_error); // no such row yet: as an unset #TABLE#
  set_system_password("s3cret-clear");
  auto out = render(compile("#CRYPT:passwd:key=system,username=root:password#"));
  EXPECT_EQ(out.find("s3cret-clear"), std::string::npos);
  EXPECT_TRUE(store::verify_password("s3cret-clear", out)) << out;
  EXPECT_EQ(out.rfind("$6$", 0), 0u) << out;
  // another user name than the row's is not found
  EXPECT_THROW(render(compile("#CRYPT:passwd:key=system,username=admin:password#")),
               api::template_error);
}

TEST_F(template_test, crypt_never_hands_an_api_users_hash_or_another_tables_value_to_a_node) {
  db->write([](store::write_txn& w) {
    w.put(store::object_type::passwd, "root",
          {{"password", store::hash_password_sha512("api-user-secret")}});
  });
  set_system_password("s3cret-clear");
  for (const char* directive :
       {"#CRYPT:passwd:key=xcat,username=root:password#", "#CRYPT:site:key=master:value#",
        "#CRYPT:passwd:key=system,username=root:username#"}) {
    EXPECT_THROW(render(compile(directive)), api::template_error) << directive;
  }
}

} // namespace

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(template_test, shipped_templates_are_found_as_xcat_finds_them_and_render) {
  auto share = std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "share" / "install";
  EXPECT_EQ(api::template_platform("debian12"), "debian");
  EXPECT_EQ(api::template_platform("rocky9.4"), "rh");
  auto deb = api::find_template_file({dir.path / "custom", share / "debian"}, "compute", "debian12",
                                     "x86_64");
  ASSERT_TRUE(deb);
  EXPECT_EQ(deb->filename(), "compute.debian12.tmpl");
  // rhels9.2 finds compute.rhels9.tmpl; a site's custom one comes first
  auto rh
    = api::find_template_file({dir.path / "custom", share / "rh"}, "compute", "rhels9.2", "x86_64");
  ASSERT_TRUE(rh);
  EXPECT_EQ(rh->filename(), "compute.rhels9.tmpl");
  std::filesystem::create_directories(dir.path / "custom");
  write("custom/compute.x86_64.tmpl", "mine");
  EXPECT_EQ(
    api::find_template_file({dir.path / "custom", share / "rh"}, "compute", "rhels9.2", "x86_64"),
    dir.path / "custom" / "compute.x86_64.tmpl");
  EXPECT_FALSE(api::find_template_file({share / "rh"}, "nosuch", "rhels9", "x86_64"));
  // both render for a node with a root password (the passwd table's key=system row)
  set_system_password("Cl3arPassw0rd");
  std::map<std::string, std::string> vars{
    {"status_url", "http://10.0.0.1:8080/boot/cn01.cluster/status"},
    {"token", "t0ken"},
    {"mirror_host", "10.0.0.1:8080"},
    {"mirror_dir", "/debian"},
    {"repo_url", "http://10.0.0.1:8080/install/rocky9/x86_64"}};
  for (const auto& file : {*deb, *rh}) {
    auto text = slurp(file);
    auto out
      = render(api::compiled_template::parse(text, file, {}, api::file_reader(1 << 20)), vars);
    EXPECT_EQ(out.find("#CWSVAR"), std::string::npos) << out;
    EXPECT_EQ(out.find("Cl3arPassw0rd"), std::string::npos) << out;
    EXPECT_NE(out.find("http://10.0.0.1:8080/boot/cn01.cluster/status"), std::string::npos);
    EXPECT_NE(out.find("state=installing&token=t0ken"), std::string::npos) << out;
  }
}

} // namespace

// xCAT's boottarget table (store/schema, api/nodeset, api/boot_chain), the per-node meta
// records the store removes with their node (the install token, its refusal count), and
// xCAT's xnba files of the compatibility mirror (api/xnba_mirror), golden against xnba.pm.

#include <gtest/gtest.h>

#include <fstream>

#include "../store/temp_home.hpp"
#include "api/boot_chain.hpp"
#include "api/nodeset.hpp"
#include "api/xnba_mirror.hpp"
#include "base/published_file.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws;
using api::boot_fetch;

class boot_target_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_unique<store::database>(dir.path / "db");
    tftp = dir.path / "tftp";
    db->write([&](store::write_txn& w) {
      w.put(store::object_type::node, "cn01", {{"groups", "all"}, {"mac", "52:54:00:aa:00:01"}});
      w.put(store::object_type::node, "cn02", {{"groups", "all"}});
      w.put(store::object_type::osimage, "deb",
            {{"provmethod", "install"},
             {"osvers", "debian12"},
             {"osarch", "x86_64"},
             {"profile", "compute"},
             {"pkgdir", "/srv/deb"}});
      w.put(store::object_type::osimage, "rescue",
            {{"provmethod", "install"},
             {"osvers", "debian12"},
             {"osarch", "x86_64"},
             {"profile", "compute"},
             {"boottarget", "rescue"},
             {"addkcmdline", "ignored=1"}});
      w.put(store::object_type::osimage, "memtest",
            {{"provmethod", "install"},
             {"osvers", "boottarget"},
             {"osarch", "x86_64"},
             {"profile", "memtest"}});
      w.put(store::object_type::boottarget, "rescue",
            {{"kernel", "xcat/rescue/vmlinuz"},
             {"initrd", "xcat/rescue/initrd.img"},
             {"kcmdline", "root=live:http://!myipfn!/rescue.img console=#TABLE:nodehm:$NODE:"
                          "serialport# arch=#NODEATTRIB:nodetype:arch#"}});
      w.put(store::object_type::boottarget, "memtest", {{"kernel", "/xcat/memtest86+.bin"}});
      w.put(store::object_type::site, "clustersite",
            {{"domain", "cluster.test"}, {"master", "10.0.0.1"}, {"tftpdir", tftp.string()}});
    });
  }

  store::outcome nodeset(const std::string& node, const std::string& word) {
    std::string error;
    auto a = api::parse_nodeset_action(word, error);
    EXPECT_TRUE(a) << error;
    store::outcome out;
    db->write([&](store::write_txn& w) { out = api::set_boot_state(w, {node}, *a); });
    return out;
  }

  test::temp_dir dir;
  std::filesystem::path tftp;
  std::unique_ptr<store::database> db;
  api::install_token_key key{std::string(32, 'k')};
};

TEST_F(boot_target_test, the_table_is_xcats_with_its_columns_and_key) {
  auto t = store::find_table("boottarget");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->keys, std::vector<std::string>{"bprofile"});
  std::vector<std::string> cols;
  for (const auto& c : t->columns) {
    cols.push_back(c.name);
  }
  EXPECT_EQ(cols, (std::vector<std::string>{"bprofile", "kernel", "initrd", "kcmdline", "comments",
                                            "disable"}));
  EXPECT_EQ(store::parse_type("boottarget"), store::object_type::boottarget);
  EXPECT_EQ(store::key_attribute(store::object_type::boottarget), "bprofile");
  EXPECT_TRUE(store::is_valid_attribute(store::object_type::boottarget, "kcmdline"));
  EXPECT_FALSE(store::is_valid_attribute(store::object_type::boottarget, "mac"));
}

TEST_F(boot_target_test, an_osimage_naming_a_boottarget_boots_its_kernel_initrd_and_kcmdline) {
  ASSERT_TRUE(nodeset("cn01", "osimage=rescue").errors.empty());
  db->write([](store::write_txn& w) {
    auto rec = w.get(store::object_type::node, "cn01")->to_map();
    rec["serialport"] = "1";
    w.put(store::object_type::node, "cn01", rec);
  });
  auto r = api::boot_script(db->read(), "cn01", "http://10.0.0.1:8080", key);
  ASSERT_EQ(r.status, 200u) << r.body;
  // xnba.pm: the row's kcmdline (its mini-template filled in, !myipfn! the server), then
  // BOOTIF; the osimage's addkcmdline is not added when it names a boottarget (Schema.pm)
  EXPECT_EQ(r.body, "#!ipxe\n#install debian12-x86_64-compute\n"
                    "kernel http://10.0.0.1:8080/boot/node/cn01/kernel initrd=initrd "
                    "root=live:http://10.0.0.1/rescue.img console=1 arch=x86_64 "
                    "BOOTIF=01-${netX/mac:hexhyp}\n"
                    "initrd http://10.0.0.1:8080/boot/node/cn01/initrd\nboot\n");
  // the files are relative to the TFTP root (site.tftpdir here; the setting wins)
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::kernel).file,
            tftp / "xcat/rescue/vmlinuz");
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::initrd, "/srv/other").file,
            std::filesystem::path{"/srv/other/xcat/rescue/initrd.img"});
}

TEST_F(boot_target_test, an_os_of_boottarget_takes_the_row_named_by_its_profile) {
  ASSERT_TRUE(nodeset("cn01", "osimage=memtest").errors.empty());
  auto r = api::boot_script(db->read(), "cn01", "http://10.0.0.1:8080", key);
  ASSERT_EQ(r.status, 200u) << r.body;
  // no initrd: no initrd line, and the kernel line has only BOOTIF (xnba.pm)
  EXPECT_EQ(r.body, "#!ipxe\n#install boottarget-x86_64-memtest\n"
                    "kernel http://10.0.0.1:8080/boot/node/cn01/kernel "
                    "BOOTIF=01-${netX/mac:hexhyp}\nboot\n");
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::kernel).file,
            tftp / "xcat/memtest86+.bin"); // (a leading / is still under the root)
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::initrd).status, 404u);
}

TEST_F(boot_target_test, a_missing_row_or_a_path_out_of_the_root_is_refused) {
  db->write([](store::write_txn& w) {
    w.put(store::object_type::osimage, "nosuchbt",
          {{"provmethod", "install"},
           {"osvers", "boottarget"},
           {"osarch", "x86_64"},
           {"profile", "nope"}});
  });
  try {
    nodeset("cn01", "osimage=nosuchbt");
    FAIL() << "nodeset took a boottarget that is not defined";
  } catch (const store::rejected& r) {
    ASSERT_EQ(r.result.errors.size(), 1u);
    EXPECT_EQ(r.result.errors[0],
              "cn01: nope in nodetype table was not defined in boottarget table");
  }
  {
    auto txn = db->read();
    EXPECT_EQ(api::boot_state_of(store::cluster_view{txn}, "cn01"), "offline");
  }
  db->write([](store::write_txn& w) {
    w.put(store::object_type::boottarget, "rescue", {{"kernel", "../../etc/shadow"}});
  });
  ASSERT_TRUE(nodeset("cn01", "osimage=rescue").errors.empty());
  auto f = api::boot_file(db->read(), "cn01", boot_fetch::kernel);
  EXPECT_EQ(f.status, 404u);
  EXPECT_TRUE(f.file.empty());
}

TEST_F(boot_target_test, rmdef_removes_the_nodes_token_and_refusals_and_mkdef_starts_clean) {
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  auto old = key.token(db->read(), "cn01");
  ASSERT_FALSE(old.empty());
  auto nonce = api::install_token_nonce(db->read(), "cn01");
  db->write([&](store::write_txn& w) { api::count_refused_token(w, "cn01", nonce); });
  EXPECT_EQ(api::refused_token_count(db->read(), "cn01"), 1u);
  db->write(
    [](store::write_txn& w) { store::remove_objects(w, store::object_type::node, {"cn01"}); });
  EXPECT_TRUE(db->read().meta_with_prefix("node/cn01/").empty());
  // the same name again: no token armed, the old one refused, no count carried over
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn01", {{"groups", "all"}});
  });
  EXPECT_FALSE(api::install_token_armed(db->read(), "cn01"));
  EXPECT_FALSE(key.check(db->read(), "cn01", old));
  EXPECT_EQ(api::refused_token_count(db->read(), "cn01"), 0u);
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  EXPECT_FALSE(key.check(db->read(), "cn01", old));
  // another node's records are not touched by a name it starts
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn0", {{"groups", "all"}});
  });
  ASSERT_TRUE(nodeset("cn0", "osimage=deb").errors.empty());
  db->write(
    [](store::write_txn& w) { store::remove_objects(w, store::object_type::node, {"cn0"}); });
  EXPECT_TRUE(api::install_token_armed(db->read(), "cn01"));
}

TEST_F(boot_target_test, refused_tokens_are_counted_in_the_store_and_the_limit_marks_once) {
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  auto nonce = api::install_token_nonce(db->read(), "cn01");
  auto refuse = [&](const std::string& n) {
    api::install_update u;
    u.node = "cn01";
    u.refused_nonce = n;
    u.bad_token_limit = 3;
    std::vector<api::install_update_result> r;
    // each in a transaction of its own, as a restarted daemon's would be
    db->write([&](store::write_txn& w) { r = api::apply_install_updates(w, {u}, key, 1000); });
    return r.at(0);
  };
  EXPECT_FALSE(refuse(nonce).marked);
  EXPECT_FALSE(refuse(nonce).marked);
  EXPECT_EQ(api::refused_token_count(db->read(), "cn01"), 2u);
  EXPECT_FALSE(refuse("stale-nonce").marked); // another install's refusal: not counted
  EXPECT_EQ(api::refused_token_count(db->read(), "cn01"), 2u);
  auto third = refuse(nonce);
  EXPECT_TRUE(third.marked);
  EXPECT_EQ(third.status, "failed");
  {
    auto txn = db->read();
    store::cluster_view view{txn};
    EXPECT_EQ(view.attribute("cn01", "appstatus"), "install=bad install token");
  }
  EXPECT_FALSE(refuse(nonce).marked); // (the 4th: marked once)
  // a new nodeset is a new install: counted afresh
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  EXPECT_EQ(api::refused_token_count(db->read(), "cn01"), 0u);
}

TEST_F(boot_target_test, the_xnba_mirror_writes_xcats_files_per_state) {
  const std::string base = "http://${next-server}:8080";
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  auto files = api::render_xnba_files(db->read(), "cn01", base);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "xcat/xnba/nodes/cn01");
  // xnba.pm setstate: #!gpxe, #<currstate>, imgfetch/imgload/imgargs (kcmdline, BOOTIF),
  // imgfetch initrd, imgexec; never the install token (a TFTP root is anyone's)
  EXPECT_EQ(files[0].second,
            "#!gpxe\n#install debian12-x86_64-compute\n"
            "imgfetch -n kernel http://${next-server}:8080/boot/node/cn01/kernel\n"
            "imgload kernel\n"
            "imgargs kernel auto=true priority=critical "
            "url=http://${next-server}:8080/boot/node/cn01/preseed interface=auto "
            "netcfg/choose_interface=auto hostname=cn01 domain=cluster.test lowmem=+0 "
            "console=ttyS0,115200n8 BOOTIF=01-${netX/mac:hexhyp}\n"
            "imgfetch -n initrd http://${next-server}:8080/boot/node/cn01/initrd\n"
            "imgexec kernel\n");
  EXPECT_EQ(files[1].first, "xcat/xnba/nodes/cn01.uefi");
  EXPECT_EQ(files[1].second,
            "#!gpxe\n"
            "imgfetch -n kernel http://${next-server}:8080/boot/node/cn01/kernel\n"
            "imgload kernel\n"
            "imgargs kernel auto=true priority=critical "
            "url=http://${next-server}:8080/boot/node/cn01/preseed interface=auto "
            "netcfg/choose_interface=auto hostname=cn01 domain=cluster.test lowmem=+0 "
            "console=ttyS0,115200n8 BOOTIF=01-${netX/mac:hexhyp} initrd=initrd\n"
            "imgfetch -n initrd http://${next-server}:8080/boot/node/cn01/initrd\n"
            "imgexec kernel\n");
  EXPECT_EQ(files[0].second.find(key.token(db->read(), "cn01")), std::string::npos);
  // boot: exit, for BIOS and UEFI alike (_write_uefi_exit_script)
  ASSERT_TRUE(nodeset("cn01", "boot").errors.empty());
  files = api::render_xnba_files(db->read(), "cn01", base);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].second, "#!gpxe\n#boot\nexit\n");
  EXPECT_EQ(files[1].second, "#!gpxe\n#boot\nexit\n");
  // a boottarget without an initrd: no UEFI variant (xnba.pm writes one for kernel+initrd)
  ASSERT_TRUE(nodeset("cn01", "osimage=memtest").errors.empty());
  files = api::render_xnba_files(db->read(), "cn01", base);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].second, "#!gpxe\n#install boottarget-x86_64-memtest\n"
                             "imgfetch -n kernel http://${next-server}:8080/boot/node/cn01/kernel\n"
                             "imgload kernel\nimgargs kernel BOOTIF=${netX/mac}\nimgexec kernel\n");
  ASSERT_TRUE(nodeset("cn01", "offline").errors.empty());
  EXPECT_TRUE(api::render_xnba_files(db->read(), "cn01", base).empty());
}

TEST_F(boot_target_test, the_mirror_is_published_rewritten_and_removed_with_the_state) {
  api::xnba_mirror_config cfg = api::xnba_mirror_settings("on", "", "0.0.0.0:80");
  auto node_file = tftp / "xcat/xnba/nodes/cn01";
  auto read = [](const std::filesystem::path& p) {
    std::string text;
    bool exists = false;
    base::read_file(p, 1 << 20, text, &exists);
    return exists ? text : std::string{"(missing)"};
  };
  ASSERT_TRUE(nodeset("cn01", "osimage=deb").errors.empty());
  // --dry-run: the diff, nothing written
  auto dry = api::xnba_mirror_dry_run(db->read(), {"cn01"}, cfg);
  EXPECT_NE(dry.find("+++ " + node_file.string()), std::string::npos) << dry;
  EXPECT_NE(dry.find("+#install debian12-x86_64-compute"), std::string::npos) << dry;
  EXPECT_FALSE(std::filesystem::exists(tftp));
  std::string message;
  ASSERT_FALSE(api::apply_xnba_mirror(db->read(), {"cn01", "cn02"}, cfg, message)) << message;
  EXPECT_EQ(read(node_file).substr(0, 40), "#!gpxe\n#install debian12-x86_64-compute\n");
  EXPECT_NE(read(node_file).find("http://${next-server}/boot/node/cn01/kernel"), std::string::npos)
    << read(node_file); // (port 80: no suffix, as xnba.pm's portsuffix)
  EXPECT_EQ(read(tftp / "xcat/xnba/nodes/cn02"), "(missing)"); // offline: no file
  // nothing changed: nothing to publish
  EXPECT_TRUE(api::xnba_mirror_change(db->read(), {"cn01"}, cfg).files.empty());
  // a stale xCAT file of the node goes with the next write
  std::ofstream{tftp / "xcat/xnba/nodes/cn01.elilo"} << "old";
  ASSERT_TRUE(nodeset("cn01", "boot").errors.empty());
  ASSERT_FALSE(api::apply_xnba_mirror(db->read(), {"cn01"}, cfg, message)) << message;
  EXPECT_EQ(read(node_file), "#!gpxe\n#boot\nexit\n");
  EXPECT_EQ(read(tftp / "xcat/xnba/nodes/cn01.uefi"), "#!gpxe\n#boot\nexit\n");
  EXPECT_EQ(read(tftp / "xcat/xnba/nodes/cn01.elilo"), "(missing)");
  ASSERT_TRUE(nodeset("cn01", "offline").errors.empty());
  dry = api::xnba_mirror_dry_run(db->read(), {"cn01"}, cfg);
  EXPECT_NE(dry.find("-#boot"), std::string::npos) << dry;
  ASSERT_FALSE(api::apply_xnba_mirror(db->read(), {"cn01"}, cfg, message)) << message;
  EXPECT_EQ(read(node_file), "(missing)");
  EXPECT_EQ(read(tftp / "xcat/xnba/nodes/cn01.uefi"), "(missing)");
}

} // namespace

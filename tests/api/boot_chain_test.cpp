// The boot chain's request layer (api/boot_chain): each state's iPXE script (golden), MAC
// lookup, files, templates only with the token, the install status moves, `next` and
// `installed` in either order, bad-token marks and stage deadlines with the clock given.

#include <gtest/gtest.h>

#include <fstream>

#include "../store/temp_home.hpp"
#include "api/boot_chain.hpp"
#include "api/nodeset.hpp"
#include "store/cluster_view.hpp"
#include "store/credentials.hpp"
#include "store/database.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws;
using api::boot_fetch;
using api::install_callback;

class boot_chain_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_unique<store::database>(dir.path / "db");
    db->write([](store::write_txn& w) {
      w.put(store::object_type::node, "cn01",
            {{"groups", "all"}, {"mac", "52:54:00:AA:00:01|52:54:00:aa:01:01!cn01-ib"}});
      w.put(store::object_type::node, "cn02", {{"groups", "all"}, {"mac", "52-54-00-aa-00-02"}});
      w.put(store::object_type::node, "cn03", {{"groups", "all"}});
      w.put(store::object_type::osimage, "deb",
            {{"provmethod", "install"},
             {"osvers", "debian12"},
             {"osarch", "x86_64"},
             {"profile", "compute"},
             {"pkgdir", "/srv/deb"}});
      w.put(store::object_type::osimage, "rocky",
            {{"provmethod", "install"},
             {"osvers", "rhels9"},
             {"osarch", "x86_64"},
             {"profile", "compute"},
             {"pkgdir", "/srv/rocky"},
             {"addkcmdline", "quiet R::nomodeset"}});
      w.put(store::object_type::site, "clustersite",
            {{"domain", "cluster.test"}, {"master", "10.0.0.1"}});
    });
  }

  void nodeset(const std::string& node, const std::string& word) {
    std::string error;
    auto a = api::parse_nodeset_action(word, error);
    ASSERT_TRUE(a) << error;
    db->write([&](store::write_txn& w) { api::set_boot_state(w, {node}, *a); });
  }

  std::string attr(const std::string& node, const std::string& a) {
    auto txn = db->read();
    store::cluster_view view{txn};
    return view.attribute(node, a);
  }

  std::string token(const std::string& node) {
    return key.token(db->read(), node);
  }

  api::install_update_result apply(api::install_update u, std::time_t now = 1000000) {
    std::vector<api::install_update_result> r;
    db->write([&](store::write_txn& w) { r = api::apply_install_updates(w, {u}, key, now); });
    return r.at(0);
  }

  api::install_update_result callback(const std::string& node, install_callback cb,
                                      const std::string& tok) {
    api::install_update u;
    u.node = node;
    u.callback = cb;
    u.token = tok;
    return apply(u);
  }

  api::install_update_result fetched(const std::string& node, boot_fetch f, std::time_t now) {
    api::install_update u;
    u.node = node;
    u.fetched = f;
    return apply(u, now);
  }

  test::temp_dir dir;
  std::unique_ptr<store::database> db;
  api::install_token_key key{std::string(32, 'k')};
};

TEST_F(boot_chain_test, each_state_has_its_script) {
  const std::string base = "http://10.0.0.1:8080";
  EXPECT_EQ(api::generic_boot_script(base),
            "#!ipxe\nchain http://10.0.0.1:8080/boot/mac/${netX/mac:hexhyp}\n");
  auto r = api::boot_script(db->read(), "cn01", base, key);
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.body, "cn01: offline: no boot script (nodeset it first)\n");
  nodeset("cn01", "osimage=deb");
  r = api::boot_script(db->read(), "cn01", base, key);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto t = token("cn01");
  EXPECT_EQ(r.body, "#!ipxe\n#install debian12-x86_64-compute\n"
                    "kernel http://10.0.0.1:8080/boot/node/cn01/kernel initrd=initrd auto=true "
                    "priority=critical url=http://10.0.0.1:8080/boot/node/cn01/preseed?token="
                      + t
                      + " interface=auto netcfg/choose_interface=auto hostname=cn01 "
                        "domain=cluster.test lowmem=+0 console=ttyS0,115200n8\n"
                        "initrd http://10.0.0.1:8080/boot/node/cn01/initrd\nboot\n");
  nodeset("cn02", "osimage=rocky");
  r = api::boot_script(db->read(), "cn02", base, key);
  EXPECT_EQ(r.body, "#!ipxe\n#install rhels9-x86_64-compute\n"
                    "kernel http://10.0.0.1:8080/boot/node/cn02/kernel initrd=initrd "
                    "inst.ks=http://10.0.0.1:8080/boot/node/cn02/kickstart?token="
                      + token("cn02")
                      + " inst.repo=http://10.0.0.1/srv/rocky BOOTIF=01-${netX/mac:hexhyp} "
                        "console=ttyS0,115200n8 quiet\n"
                        "initrd http://10.0.0.1:8080/boot/node/cn02/initrd\nboot\n");
  nodeset("cn01", "boot");
  EXPECT_EQ(api::boot_script(db->read(), "cn01", base, key).body, "#!ipxe\n#boot\nexit\n");
  nodeset("cn01", "shell");
  EXPECT_NE(api::boot_script(db->read(), "cn01", base, key)
              .body.find("does not ship the service "
                         "shell"),
            std::string::npos);
  nodeset("cn01", "offline");
  EXPECT_EQ(api::boot_script(db->read(), "cn01", base, key).status, 404u);
  EXPECT_EQ(api::boot_script(db->read(), "nosuch", base, key).status, 404u);
}

TEST_F(boot_chain_test, a_mac_finds_its_node_in_any_spelling) {
  api::mac_index macs;
  auto txn = db->read();
  EXPECT_EQ(macs.node_of(txn, "52:54:00:aa:00:01"), "cn01");
  EXPECT_EQ(macs.node_of(txn, "52-54-00-AA-00-01"), "cn01");
  EXPECT_EQ(macs.node_of(txn, "52:54:00:aa:01:01"), "cn01"); // the `!name` alias's MAC
  EXPECT_EQ(macs.node_of(txn, "525400aa0002"), "cn02");
  EXPECT_EQ(macs.node_of(txn, "52:54:00:aa:00:09"), "");
  EXPECT_EQ(macs.node_of(txn, "not-a-mac"), "");
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn03", {{"groups", "all"}, {"mac", "52:54:00:aa:00:03"}});
  });
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:03"), "cn03"); // rebuilt after a change
}

TEST_F(boot_chain_test, status_writes_do_not_rebuild_the_mac_index_and_moved_macs_are_seen) {
  api::mac_index macs;
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:01"), "cn01");
  EXPECT_EQ(macs.rebuilds(), 1u);
  // a rack booting: status writes move the generation, the index still answers
  for (int i = 0; i < 3; ++i) {
    auto before = db->read().generation();
    nodeset("cn01", "osimage=deb");
    fetched("cn01", boot_fetch::script, 1000 + i);
    ASSERT_NE(db->read().generation(), before);
    EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:01"), "cn01");
    EXPECT_EQ(macs.node_of(db->read(), "525400aa0002"), "cn02");
  }
  EXPECT_EQ(macs.rebuilds(), 1u);
  // a MAC moved to another node, a MAC removed, a MAC made *NOIP*: each seen at once
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn01", {{"groups", "all"}, {"mac", "52:54:00:aa:01:01"}});
    w.put(store::object_type::node, "cn03", {{"groups", "all"}, {"mac", "52:54:00:AA:00:01"}});
  });
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:01"), "cn03");
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:01:01"), "cn01");
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn03", {{"groups", "all"}});
    w.put(store::object_type::node, "cn02", {{"groups", "all"}, {"mac", "525400aa0002!*NOIP*"}});
  });
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:01"), "");
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:00:02"), "");
  EXPECT_EQ(macs.node_of(db->read(), "52:54:00:aa:01:01"), "cn01");
}

TEST_F(boot_chain_test, files_come_from_the_installer_tree) {
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::kernel).status, 404u);
  nodeset("cn01", "osimage=deb");
  nodeset("cn02", "osimage=rocky");
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::kernel).file,
            "/srv/deb/debian-installer/amd64/linux");
  EXPECT_EQ(api::boot_file(db->read(), "cn01", boot_fetch::initrd).file,
            "/srv/deb/debian-installer/amd64/initrd.gz");
  EXPECT_EQ(api::boot_file(db->read(), "cn02", boot_fetch::kernel).file,
            "/srv/rocky/images/pxeboot/vmlinuz");
  EXPECT_EQ(api::boot_file(db->read(), "cn02", boot_fetch::initrd).file,
            "/srv/rocky/images/pxeboot/initrd.img");
}

TEST_F(boot_chain_test, a_template_needs_the_nodes_own_token) {
  nodeset("cn01", "osimage=deb");
  nodeset("cn02", "osimage=deb");
  api::boot_chain_config cfg;
  cfg.template_dir = std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "share" / "install";
  store::apply(*db, [](store::write_txn& t) {
    return store::set_rows(t, *store::find_table("passwd"), {{"key", "system"}},
                           {{"username", "root"}, {"password", "secret"}});
  });
  const std::string base = "http://10.0.0.1:8080";
  for (const auto& bad : {std::string{}, std::string{"x"}, token("cn02")}) {
    auto r = api::boot_template(db->read(), "cn01", bad, base, key, cfg);
    EXPECT_EQ(r.status, 403u);
    EXPECT_EQ(r.body, "cn01: install token refused\n");
    EXPECT_FALSE(r.infer);
  }
  auto r = api::boot_template(db->read(), "cn01", token("cn01"), base, key, cfg);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find("wget -q -O /dev/null \"http://10.0.0.1:8080/boot/node/cn01/status?state="
                        "installing&token="
                        + token("cn01") + "\""),
            std::string::npos)
    << r.body;
  EXPECT_EQ(r.body.find("secret"), std::string::npos);
  EXPECT_EQ(r.infer, boot_fetch::install_template);
}

TEST_F(boot_chain_test, a_cached_template_renders_as_the_uncached_one_and_sees_an_edit) {
  nodeset("cn01", "osimage=deb");
  store::apply(*db, [](store::write_txn& t) {
    return store::set_rows(t, *store::find_table("passwd"), {{"key", "system"}},
                           {{"username", "root"}, {"password", store::hash_password_sha512("pw")}});
  });
  api::boot_chain_config plain;
  plain.template_dir = std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "share" / "install";
  auto cached = plain;
  api::template_cache_limits limits;
  limits.racy_window = std::chrono::seconds(0); // (the files below are seconds old at most)
  cached.templates = std::make_shared<api::template_cache>(limits);
  const std::string base = "http://10.0.0.1:8080";
  auto tok = token("cn01");
  auto want = api::boot_template(db->read(), "cn01", tok, base, key, plain);
  ASSERT_EQ(want.status, 200u) << want.body;
  for (int i = 0; i < 2; ++i) {
    auto got = api::boot_template(db->read(), "cn01", tok, base, key, cached);
    EXPECT_EQ(got.status, 200u);
    EXPECT_EQ(got.body, want.body);
    EXPECT_EQ(got.infer, boot_fetch::install_template);
  }
  EXPECT_EQ(cached.templates->stats().parses, 1u);
  EXPECT_EQ(cached.templates->stats().hits, 1u);
  // an osimage's own template, edited between two fetches
  auto file = dir.path / "mine.tmpl";
  std::ofstream{file} << "first #HOSTNAME#\n";
  db->write([&](store::write_txn& w) {
    w.put(store::object_type::osimage, "deb",
          {{"provmethod", "install"},
           {"osvers", "debian12"},
           {"osarch", "x86_64"},
           {"profile", "compute"},
           {"pkgdir", "/srv/deb"},
           {"template", file.string()}});
  });
  EXPECT_EQ(api::boot_template(db->read(), "cn01", tok, base, key, cached).body, "first cn01\n");
  std::ofstream{file} << "second edit #HOSTNAME#\n";
  EXPECT_EQ(api::boot_template(db->read(), "cn01", tok, base, key, cached).body,
            "second edit cn01\n");
}

TEST_F(boot_chain_test, fetches_move_the_status_and_refetches_write_nothing) {
  nodeset("cn01", "osimage=deb");
  EXPECT_TRUE(api::install_fetch_changes(db->read(), "cn01", boot_fetch::script));
  EXPECT_TRUE(fetched("cn01", boot_fetch::script, 1000).changed);
  EXPECT_EQ(attr("cn01", "status"), "netbooting");
  EXPECT_EQ(attr("cn01", "appstatus"), "install=script");
  EXPECT_FALSE(api::install_fetch_changes(db->read(), "cn01", boot_fetch::script));
  EXPECT_FALSE(fetched("cn01", boot_fetch::script, 1001).changed);
  fetched("cn01", boot_fetch::kernel, 1002);
  EXPECT_EQ(attr("cn01", "appstatus"), "install=kernel");
  fetched("cn01", boot_fetch::install_template, 1003);
  EXPECT_EQ(attr("cn01", "status"), "installing");
  EXPECT_EQ(attr("cn01", "statustime"), api::xcat_status_time(1003));
  nodeset("cn02", "boot");
  fetched("cn02", boot_fetch::script, 1004);
  EXPECT_EQ(attr("cn02", "status"), "booting");
}

TEST_F(boot_chain_test, next_then_installed_ends_the_token_after_both) {
  nodeset("cn01", "osimage=deb");
  auto t = token("cn01");
  EXPECT_EQ(callback("cn01", install_callback::installing, t).status, "installing");
  auto r = callback("cn01", install_callback::next, t);
  EXPECT_FALSE(r.refused);
  EXPECT_EQ(attr("cn01", "currstate"), "boot");
  EXPECT_EQ(token("cn01"), t); // carried over the step: installed still to come
  r = callback("cn01", install_callback::installed, t);
  EXPECT_FALSE(r.refused);
  EXPECT_EQ(attr("cn01", "status"), "installed");
  EXPECT_EQ(token("cn01"), ""); // ended
  EXPECT_TRUE(callback("cn01", install_callback::booted, t).refused);
}

TEST_F(boot_chain_test, installed_then_next_ends_the_token_after_both) {
  nodeset("cn01", "osimage=deb");
  auto t = token("cn01");
  EXPECT_FALSE(callback("cn01", install_callback::installed, t).refused);
  EXPECT_EQ(token("cn01"), t); // next still to come
  EXPECT_FALSE(callback("cn01", install_callback::next, t).refused);
  EXPECT_EQ(attr("cn01", "currstate"), "boot");
  EXPECT_EQ(token("cn01"), "");
}

TEST_F(boot_chain_test, a_callback_with_a_wrong_token_changes_nothing) {
  nodeset("cn01", "osimage=deb");
  nodeset("cn02", "osimage=deb");
  for (const auto& bad : {std::string{}, std::string{"x"}, token("cn02")}) {
    EXPECT_TRUE(callback("cn01", install_callback::next, bad).refused);
  }
  EXPECT_EQ(attr("cn01", "currstate"), "install debian12-x86_64-compute");
  EXPECT_EQ(attr("cn01", "status"), "");
}

TEST_F(boot_chain_test, bad_tokens_mark_the_node_and_fetches_do_not_clear_it) {
  nodeset("cn01", "osimage=deb");
  api::install_update u;
  u.node = "cn01";
  u.bad_tokens = true;
  EXPECT_TRUE(apply(u).changed);
  EXPECT_EQ(attr("cn01", "status"), "failed");
  EXPECT_EQ(attr("cn01", "appstatus"), "install=bad install token");
  EXPECT_FALSE(api::install_fetch_changes(db->read(), "cn01", boot_fetch::script));
  EXPECT_FALSE(fetched("cn01", boot_fetch::script, 2000).changed);
  EXPECT_EQ(callback("cn01", install_callback::installing, token("cn01")).status, "installing");
}

TEST_F(boot_chain_test, a_stage_past_its_deadline_is_failed_with_the_reason) {
  nodeset("cn01", "osimage=deb");
  const std::time_t t0 = 1700000000;
  fetched("cn01", boot_fetch::script, t0);
  api::install_deadlines d;
  d.kernel = 300;
  EXPECT_TRUE(api::overdue_installs(db->read(), t0 + 299, d).empty());
  auto late = api::overdue_installs(db->read(), t0 + 300, d);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].node, "cn01");
  EXPECT_EQ(late[0].message, "no kernel within 300 s");
  // a kernel fetched meanwhile: the mark found on the older stage does nothing
  fetched("cn01", boot_fetch::kernel, t0 + 300);
  EXPECT_FALSE(apply(late[0], t0 + 301).changed);
  EXPECT_EQ(attr("cn01", "status"), "netbooting");
  late = api::overdue_installs(db->read(), t0 + 300 + 900, d);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].message, "no installing within 900 s");
  EXPECT_TRUE(apply(late[0], t0 + 1200).changed);
  EXPECT_EQ(attr("cn01", "status"), "failed");
  EXPECT_EQ(attr("cn01", "appstatus"), "install=no installing within 900 s");
  EXPECT_TRUE(api::overdue_installs(db->read(), t0 + 99999, d).empty()); // failed: done
  d.installing = 0;                                                      // 0: no deadline
  nodeset("cn02", "osimage=deb");
  fetched("cn02", boot_fetch::initrd, t0);
  EXPECT_TRUE(api::overdue_installs(db->read(), t0 + 99999, d).empty());
}

TEST_F(boot_chain_test, xcats_status_lines_and_node_addresses) {
  EXPECT_EQ(api::parse_xcat_status_line("installstatus installing\n"),
            install_callback::installing);
  EXPECT_EQ(api::parse_xcat_status_line("next\r\n"), install_callback::next);
  EXPECT_FALSE(api::parse_xcat_status_line("installstatus next"));
  EXPECT_FALSE(api::parse_xcat_status_line("getpostscript"));
  db->write([](store::write_txn& w) {
    w.put(store::object_type::node, "cn01", {{"groups", "all"}, {"ip", "10.0.0.1"}});
    w.put(store::object_type::node, "cn02", {{"groups", "all"}, {"ip", "10.0.0.2"}});
    w.put(store::object_type::node, "cn03", {{"groups", "all"}, {"ip", "10.0.0.2"}});
  });
  EXPECT_EQ(api::node_of_address(db->read(), "10.0.0.1"), "cn01");
  EXPECT_EQ(api::node_of_address(db->read(), "10.0.0.2"), ""); // shared: names neither
  EXPECT_EQ(api::node_of_address(db->read(), "10.0.0.9"), "");
  // a callback by address needs no token
  nodeset("cn01", "osimage=deb");
  api::install_update u;
  u.node = "cn01";
  u.callback = install_callback::installing;
  u.by_address = true;
  EXPECT_EQ(apply(u).status, "installing");
}

TEST_F(boot_chain_test, status_times_are_xcats) {
  auto text = api::xcat_status_time(1700000000);
  EXPECT_EQ(text.size(), 19u);
  EXPECT_EQ(text[2], '-');
  EXPECT_EQ(api::parse_status_time(text), std::time_t{1700000000});
  EXPECT_FALSE(api::parse_status_time("yesterday"));
  EXPECT_EQ(api::install_stage_of("sshd=up,install=kernel"), "kernel");
  EXPECT_EQ(api::parse_install_callback("next"), install_callback::next);
  EXPECT_FALSE(api::parse_install_callback("bogus"));
}

} // namespace

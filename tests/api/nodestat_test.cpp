// nodestat's pure parts: reading a node's probe as xCAT's nodestat does, the appstatus merge
// of -u, and the nodestat_ports setting.

#include <gtest/gtest.h>

#include <stdexcept>

#include "api/nodestat.hpp"

namespace {

using cws::api::interpret;
using cws::probe::outcome;
using cws::probe::port_state;

const std::vector<std::string> apps{"sshd", "https", "pbs"};

outcome probed(std::vector<port_state> ports, std::string answer = {}) {
  outcome o;
  o.ports = std::move(ports);
  o.answer = std::move(answer);
  return o;
}

TEST(nodestat, open_applications_are_shown_sorted_and_the_status_is_ping) {
  auto s
    = interpret(probed({port_state::open, port_state::open, port_state::closed}), apps, "", false);
  EXPECT_EQ(s.shown, "https,sshd");
  EXPECT_EQ(s.status, "ping");
  EXPECT_EQ(s.appstatus, "sshd=up,https=up,pbs=down");
  s = interpret(probed({port_state::open, port_state::silent, port_state::closed}), apps, "boot",
                false);
  EXPECT_EQ(s.shown, "sshd");
}

TEST(nodestat, a_node_that_answers_nowhere_is_noping) {
  auto s = interpret(probed({port_state::silent, port_state::unreachable, port_state::silent}),
                     apps, "boot", false);
  EXPECT_EQ(s.shown, "noping");
  EXPECT_EQ(s.status, "noping");
  EXPECT_EQ(s.appstatus, "sshd=down,https=down,pbs=down");
}

TEST(nodestat, an_up_node_without_applications_shows_its_installer_or_boot_state) {
  auto closed = std::vector<port_state>{port_state::closed, port_state::silent, port_state::closed};
  EXPECT_EQ(interpret(probed(closed), apps, "", false).shown, "ping");
  EXPECT_EQ(interpret(probed(closed), apps, "netboot rhels9-x86_64-compute", false).shown,
            "netboot rhels9-x86_64-compute");
  // the installer port answered: its first line
  auto with_installer = closed;
  with_installer.push_back(port_state::open);
  auto s = interpret(probed(with_installer, "installing prep\r\nnext\n"), apps,
                     "install rhels9-x86_64-compute", true);
  EXPECT_EQ(s.shown, "installing prep");
  EXPECT_EQ(s.status, "installing prep");
  // it said nothing: the boot state
  EXPECT_EQ(interpret(probed(with_installer), apps, "install rhels9", true).shown,
            "install rhels9");
}

TEST(nodestat, names_that_do_not_resolve_are_nosuchhost_and_errors_show_nothing) {
  outcome o;
  o.error = "resolve";
  EXPECT_EQ(interpret(o, apps, "", false).shown, "nosuchhost");
  o.error = "cancelled";
  auto s = interpret(o, apps, "", false);
  EXPECT_EQ(s.shown, "");
  EXPECT_EQ(s.status, "");
}

TEST(nodestat, appstatus_merges_as_xcat_does) {
  using cws::api::merge_appstatus;
  EXPECT_EQ(merge_appstatus("", "sshd=up,https=down"), "sshd=up,https=down");
  EXPECT_EQ(merge_appstatus("gpfs=ok,sshd=down", "sshd=up,https=down"),
            "gpfs=ok,sshd=up,https=down");
}

TEST(nodestat, the_ports_setting_is_name_colon_port) {
  using cws::api::parse_app_ports;
  auto a = parse_app_ports("https:443, pbs:15002");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].name, "pbs");
  EXPECT_EQ(a[1].port, 15002);
  EXPECT_TRUE(parse_app_ports("").empty());
  EXPECT_THROW(parse_app_ports("https"), std::invalid_argument);
  EXPECT_THROW(parse_app_ports("https:0"), std::invalid_argument);
  EXPECT_THROW(parse_app_ports("https:70000"), std::invalid_argument);
  EXPECT_THROW(parse_app_ports("a b:22"), std::invalid_argument);
  EXPECT_THROW(parse_app_ports(":22"), std::invalid_argument);
}

} // namespace

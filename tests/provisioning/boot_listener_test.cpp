// The node-facing boot listener of a real clusterwsd (boot_listen on 127.0.0.1), read with
// curl as a node's iPXE and d-i would: scripts by MAC and by name, the Debian netboot tree's
// kernel and initrd byte for byte, the preseed only with the node's own token, every status
// callback, `next`, the token's end, bad-token marks, a stage deadline, and the event a status
// change makes.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using namespace std::chrono_literals;
using cws::test::run_tool;

const std::string netboot = "/usr/lib/debian-installer/images/12/amd64/text";

/// A TCP port free on 127.0.0.1 now.
unsigned short free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct fetched {
  unsigned status = 0;
  std::string body;
};

class boot_listener_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    port_ = free_port();
    xport_ = free_port();
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "boot_listen = 127.0.0.1:" << port_ << "\ninstall_template_dir = " CLUSTERWS_SOURCE_DIR
      << "/share/install\nevents_poll_ms = 100\ninstall_deadline_check_s = 1\n"
         "install_bad_token_limit = 5\ninstall_deadline_kernel = 2\n"
      << "xcat_status_listen = 127.0.0.1:" << xport_ << "\n"
      << "tftp_root = " << (dir_->path / "tftp").string() << "\n";
    auto home = d_->home();
    auto ok = [&](const std::string& cmd) {
      auto r = run_tool(home, cmd);
      ASSERT_EQ(r.rc, 0) << cmd << ": " << r.out;
    };
    ok("chdef -t site domain=cluster.test master=127.0.0.1");
    ok("chtab key=system passwd.username=root passwd.password=cluster");
    ok("mkdef -t osimage -o debian12-x86_64-install-compute imagetype=linux provmethod=install "
       "osname=Linux osvers=debian12 osarch=x86_64 profile=compute pkgdir="
       + netboot);
    for (int i = 1; i <= 9; ++i) {
      char mac[32];
      std::snprintf(mac, sizeof mac, "52:54:00:37:00:%02d", i);
      ok("mkdef cn0" + std::to_string(i) + " groups=compute,all mac='" + mac + "'");
    }
    ok("mkdef cn10 groups=compute,all ip=127.0.0.1");
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    delete d_;
    delete dir_;
  }

  static std::string base() {
    return "http://127.0.0.1:" + std::to_string(port_);
  }

  /// `curl` on the listener: status and body (`extra`: more curl options).
  static fetched get(const std::string& path, const std::string& extra = {}) {
    auto r
      = run_tool(d_->home(), "curl -s " + extra + " -w '\\n%{http_code}' '" + base() + path + "'");
    fetched f;
    auto nl = r.out.rfind('\n');
    f.body = r.out.substr(0, nl == std::string::npos ? 0 : nl);
    f.status
      = static_cast<unsigned>(std::atoi(r.out.c_str() + (nl == std::string::npos ? 0 : nl + 1)));
    return f;
  }

  static std::string tool(const std::string& cmd) {
    return run_tool(d_->home(), cmd).out;
  }

  /// The token in a node's script.
  static std::string token_of(const std::string& node) {
    auto s = get("/boot/node/" + node).body;
    std::smatch m;
    if (!std::regex_search(s, m, std::regex{"token=([0-9a-f]+)"})) {
      return {};
    }
    return m[1];
  }

  /// Waits until `lsdef node -i attr -c` shows `value` (status writes come in batches).
  static std::string wait_attr(const std::string& node, const std::string& attr,
                               const std::string& value, std::chrono::milliseconds limit = 5s) {
    auto want = node + ": " + attr + "=" + value + "\n";
    auto end = std::chrono::steady_clock::now() + limit;
    auto got = tool("lsdef " + node + " -i " + attr + " -c");
    while (got != want && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(50ms);
      got = tool("lsdef " + node + " -i " + attr + " -c");
    }
    return got;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  static unsigned short port_;
  static unsigned short xport_;
};

cws::test::temp_dir* boot_listener_test::dir_ = nullptr;
cws::test::daemon* boot_listener_test::d_ = nullptr;
unsigned short boot_listener_test::port_ = 0;
unsigned short boot_listener_test::xport_ = 0;

TEST_F(boot_listener_test, the_generic_script_chains_by_mac) {
  auto r = get("/boot/ipxe");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "#!ipxe\nchain " + base() + "/boot/mac/${netX/mac:hexhyp}\n");
  EXPECT_EQ(get("/boot/nosuch").status, 404u);
  EXPECT_EQ(get("/boot/ipxe", "-X DELETE").status, 405u);
  EXPECT_EQ(get("/boot/node/cn01", "--data x").status, 405u); // POST: status callbacks only
  // boot_max_header_bytes (8192): a larger request is answered 431
  EXPECT_EQ(get("/boot/ipxe", "-H \"X-Big: $(head -c 9000 /dev/zero | tr '\\0' a)\"").status, 431u);
  EXPECT_EQ(get("/boot/node/cn%2F01").status, 404u); // a name with '/' is no route
}

TEST_F(boot_listener_test, scripts_by_mac_and_by_name_follow_the_boot_state) {
  EXPECT_EQ(get("/boot/node/cn01").status, 404u); // offline: no script
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn01 osimage=debian12-x86_64-install-compute").rc, 0);
  auto by_name = get("/boot/node/cn01");
  ASSERT_EQ(by_name.status, 200u) << by_name.body;
  auto t = token_of("cn01");
  ASSERT_EQ(t.size(), 64u);
  EXPECT_EQ(by_name.body,
            "#!ipxe\n#install debian12-x86_64-compute\nkernel " + base()
              + "/boot/node/cn01/kernel initrd=initrd auto=true priority=critical url=" + base()
              + "/boot/node/cn01/preseed?token=" + t
              + " interface=auto netcfg/choose_interface=auto hostname=cn01 domain=cluster.test "
                "lowmem=+0 console=ttyS0,115200n8\ninitrd "
              + base() + "/boot/node/cn01/initrd\nboot\n");
  for (auto mac : {"52-54-00-37-00-01", "52:54:00:37:00:01", "52%3A54%3A00%3A37%3A00%3A01"}) {
    EXPECT_EQ(get(std::string{"/boot/mac/"} + mac).body, by_name.body);
  }
  EXPECT_EQ(get("/boot/mac/525400370001").body, by_name.body); // bare digits too
  EXPECT_EQ(get("/boot/mac/52-54-00-37-0A-01").status, 404u);
  EXPECT_EQ(get("/boot/mac/52-54-00-99-99-99").body, "unknown MAC 52-54-00-99-99-99\n");
  EXPECT_EQ(wait_attr("cn01", "status", "netbooting"), "cn01: status=netbooting\n");
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn01 boot").rc, 0);
  EXPECT_EQ(get("/boot/mac/52:54:00:37:00:01").body, "#!ipxe\n#boot\nexit\n");
  EXPECT_EQ(wait_attr("cn01", "status", "booting"), "cn01: status=booting\n");
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn01 offline").rc, 0);
  EXPECT_EQ(get("/boot/node/cn01").status, 404u);
}

TEST_F(boot_listener_test, kernel_and_initrd_are_the_netboot_trees_bytes) {
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn02 osimage=debian12-x86_64-install-compute").rc, 0);
  auto out = dir_->path / "got";
  for (auto [what, file] : {std::pair{"kernel", "linux"}, std::pair{"initrd", "initrd.gz"}}) {
    auto r = get(std::string{"/boot/node/cn02/"} + what, "-o " + out.string());
    EXPECT_EQ(r.status, 200u);
    auto same = run_tool(d_->home(),
                         "cmp " + out.string() + " " + netboot + "/debian-installer/amd64/" + file);
    EXPECT_EQ(same.rc, 0) << same.out;
  }
  EXPECT_EQ(wait_attr("cn02", "appstatus", "install=initrd"), "cn02: appstatus=install=initrd\n");
  EXPECT_EQ(get("/boot/node/cn03/kernel").status, 404u); // offline
}

TEST_F(boot_listener_test, the_preseed_needs_the_nodes_own_token) {
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn04,cn05 osimage=debian12-x86_64-install-compute").rc,
            0);
  auto mine = token_of("cn04");
  auto other = token_of("cn05");
  auto before = tool("lsdef cn04 -i status,appstatus,currstate -c");
  for (const auto& q : std::vector<std::string>{"", "?token=", "?token=0123", "?token=" + other}) {
    auto r = get("/boot/node/cn04/preseed" + q);
    EXPECT_EQ(r.status, 403u) << q;
    EXPECT_EQ(r.body.find("d-i"), std::string::npos);
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(tool("lsdef cn04 -i status,appstatus,currstate -c"), before);
  auto r = get("/boot/node/cn04/preseed?token=" + mine);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find("d-i preseed/early_command string wget -q -O /dev/null \"" + base()
                        + "/boot/node/cn04/status?state=installing&token=" + mine + "\""),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("d-i passwd/root-password-crypted password $6$"), std::string::npos);
  EXPECT_EQ(r.body.find("cluster\n"), std::string::npos);
  EXPECT_EQ(wait_attr("cn04", "status", "installing"), "cn04: status=installing\n");
  // the log names the node and the peer, never a token
  auto log = cws::test::slurp(d_->log());
  EXPECT_NE(log.find("cn04: install token refused for its install template from 127.0.0.1"),
            std::string::npos);
  EXPECT_EQ(log.find(other), std::string::npos);
}

TEST_F(boot_listener_test, callbacks_move_the_status_and_next_and_installed_end_the_install) {
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn06 osimage=debian12-x86_64-install-compute").rc, 0);
  auto t = token_of("cn06");
  auto status = [&](const std::string& state) {
    return get("/boot/node/cn06/status?state=" + state + "&token=" + t);
  };
  auto r = status("installing");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "cn06: installing\n");
  EXPECT_EQ(tool("lsdef cn06 -i status -c"), "cn06: status=installing\n");
  EXPECT_NE(tool("lsdef cn06 -i statustime -c").find("cn06: statustime="), std::string::npos);
  EXPECT_EQ(status("bogus").status, 400u);
  // POST with a form body, as a kickstart's curl sends it
  auto p = get("/boot/node/cn06/status", "--data 'state=postbooting&token=" + t + "'");
  EXPECT_EQ(p.status, 200u) << p.body;
  EXPECT_EQ(tool("lsdef cn06 -i status -c"), "cn06: status=postbooting\n");
  EXPECT_EQ(status("failed").body, "cn06: failed\n");
  EXPECT_EQ(status("booted").body, "cn06: booted\n");
  EXPECT_EQ(status("next").status, 200u);
  EXPECT_EQ(tool("nodeset cn06 stat"), "cn06: boot\n");
  EXPECT_EQ(get("/boot/node/cn06").body, "#!ipxe\n#boot\nexit\n");
  EXPECT_EQ(status("installed").body, "cn06: installed\n");
  // the install is over: the token is gone
  EXPECT_EQ(status("booted").status, 403u);
  EXPECT_EQ(tool("lsdef cn06 -i status -c"), "cn06: status=installed\n");
}

TEST_F(boot_listener_test, forged_callbacks_change_nothing_and_repeated_ones_mark_the_node) {
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn07,cn08 osimage=debian12-x86_64-install-compute").rc,
            0);
  auto other = token_of("cn08");
  auto before = tool("lsdef cn07 -i status,currstate -c");
  EXPECT_EQ(get("/boot/node/cn07/status?state=next").status, 403u);
  EXPECT_EQ(get("/boot/node/cn07/status?state=next&token=abc").status, 403u);
  EXPECT_EQ(tool("lsdef cn07 -i status,currstate -c"), before);
  EXPECT_EQ(get("/boot/node/cn07/preseed?token=" + other).status, 403u);
  EXPECT_EQ(get("/boot/node/cn07/kickstart").status, 403u);
  EXPECT_EQ(tool("lsdef cn07 -i status,currstate -c"), before);
  EXPECT_EQ(get("/boot/node/cn07/status?state=next&token=" + other).status, 403u); // the 5th
  EXPECT_EQ(wait_attr("cn07", "status", "failed"), "cn07: status=failed\n");
  EXPECT_EQ(tool("lsdef cn07 -i appstatus -c"), "cn07: appstatus=install=bad install token\n");
  EXPECT_EQ(tool("nodeset cn07 stat"), "cn07: install debian12-x86_64-compute\n");
  EXPECT_EQ(get("/boot/node/nosuch/status?state=next&token=x").status, 404u);
}

TEST_F(boot_listener_test, a_boottarget_is_served_from_the_tftp_root_with_its_kcmdline) {
  auto tree = dir_->path / "tftp" / "xcat" / "rescue";
  std::filesystem::create_directories(tree);
  std::ofstream{tree / "vmlinuz"} << "rescue kernel bytes";
  std::ofstream{tree / "initrd.img"} << "rescue initrd bytes";
  auto ok = [&](const std::string& cmd) {
    auto r = run_tool(d_->home(), cmd);
    ASSERT_EQ(r.rc, 0) << cmd << ": " << r.out;
  };
  ok("chtab bprofile=rescue boottarget.kernel=xcat/rescue/vmlinuz "
     "boottarget.initrd=xcat/rescue/initrd.img 'boottarget.kcmdline=root=live:http://!myipfn!/r'");
  ok("mkdef -t osimage -o rescue-image imagetype=linux provmethod=install osname=Linux "
     "osvers=debian12 osarch=x86_64 profile=compute boottarget=rescue");
  ok("mkdef cn11 groups=all mac=52:54:00:37:00:11");
  ok("nodeset cn11 osimage=rescue-image");
  auto script = get("/boot/mac/52:54:00:37:00:11");
  EXPECT_EQ(script.status, 200u);
  EXPECT_EQ(script.body, "#!ipxe\n#install debian12-x86_64-compute\nkernel " + base()
                           + "/boot/node/cn11/kernel initrd=initrd root=live:http://127.0.0.1/r "
                             "BOOTIF=01-${netX/mac:hexhyp}\ninitrd "
                           + base() + "/boot/node/cn11/initrd\nboot\n");
  EXPECT_EQ(get("/boot/node/cn11/kernel").body, "rescue kernel bytes");
  EXPECT_EQ(get("/boot/node/cn11/initrd").body, "rescue initrd bytes");
  EXPECT_EQ(wait_attr("cn11", "appstatus", "install=initrd"), "cn11: appstatus=install=initrd\n");
  // a row out of the root is not served
  ok("chtab bprofile=rescue boottarget.kernel=../../../etc/passwd");
  EXPECT_EQ(get("/boot/node/cn11/kernel").status, 404u);
}

TEST(boot_listener_restart, refused_tokens_counted_before_a_restart_still_count_after_it) {
  cws::test::temp_dir dir;
  auto port = free_port();
  auto home = dir.path / "home";
  auto get = [&](const std::string& path) {
    return run_tool(home, "curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:"
                            + std::to_string(port) + path + "'")
      .out;
  };
  {
    cws::test::daemon d{home, "rootpw"};
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "boot_listen = 127.0.0.1:" << port << "\ninstall_template_dir = " CLUSTERWS_SOURCE_DIR
      << "/share/install\ninstall_bad_token_limit = 3\nboot_status_batch_ms = 0\n";
    ASSERT_EQ(run_tool(home, "mkdef -t osimage -o img imagetype=linux provmethod=install "
                             "osname=Linux osvers=debian12 osarch=x86_64 profile=compute pkgdir="
                               + netboot)
                .rc,
              0);
    ASSERT_EQ(run_tool(home, "mkdef cn01 groups=all mac=52:54:00:38:00:01").rc, 0);
    ASSERT_EQ(run_tool(home, "nodeset cn01 osimage=img").rc, 0);
    d.start();
    EXPECT_EQ(get("/boot/node/cn01/status?state=installing&token=bad"), "403");
    EXPECT_EQ(get("/boot/node/cn01/preseed?token=bad"), "403");
    d.stop();
  }
  EXPECT_EQ(run_tool(home, "lsdef cn01 -i status -c").out, "cn01: status=\n");
  cws::test::daemon d{home, "rootpw"};
  d.start();
  // the third refusal of this install, counted across the restart: the node is marked
  EXPECT_EQ(get("/boot/node/cn01/status?state=installing&token=bad"), "403");
  std::string got;
  for (int i = 0; i < 100; ++i) {
    got = run_tool(home, "lsdef cn01 -i appstatus -c").out;
    if (got == "cn01: appstatus=install=bad install token\n") {
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(got, "cn01: appstatus=install=bad install token\n") << cws::test::slurp(d.log());
  EXPECT_EQ(run_tool(home, "lsdef cn01 -i status -c").out, "cn01: status=failed\n");
  d.stop();
}

TEST_F(boot_listener_test, a_node_stuck_after_its_script_fails_at_the_deadline) {
  // install_deadline_kernel = 2, checked every second
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn09 osimage=debian12-x86_64-install-compute").rc, 0);
  ASSERT_EQ(get("/boot/mac/52-54-00-37-00-09").status, 200u);
  EXPECT_EQ(wait_attr("cn09", "appstatus", "install=script"), "cn09: appstatus=install=script\n");
  EXPECT_EQ(wait_attr("cn09", "status", "failed", 10s), "cn09: status=failed\n");
  EXPECT_EQ(tool("lsdef cn09 -i appstatus -c"), "cn09: appstatus=install=no kernel within 2 s\n");
}

TEST_F(boot_listener_test, xcats_port_3002_protocol_is_taken_from_the_nodes_own_address) {
  // xCAT's updateflag.awk in python: from `source`, read `ready`, send a line, print the answer
  auto script = dir_->path / "updateflag.py";
  std::ofstream{script} << "import socket, sys\n"
                           "s = socket.socket(); s.settimeout(3)\n"
                           "s.bind((sys.argv[1], 0)); s.connect(('127.0.0.1', int(sys.argv[2])))\n"
                           "f = s.makefile('rw')\n"
                           "print(f.readline().strip())\n"
                           "f.write(sys.argv[3] + '\\n'); f.flush()\n"
                           "try:\n"
                           "    print(f.readline().strip() or 'closed')\n"
                           "except Exception:\n"
                           "    print('no answer')\n";
  auto send = [&](const std::string& source, const std::string& line) {
    return tool("python3 " + script.string() + " " + source + " " + std::to_string(xport_) + " '"
                + line + "'");
  };
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn10 osimage=debian12-x86_64-install-compute").rc, 0);
  EXPECT_EQ(send("127.0.0.1", "installstatus installing"), "ready\ndone\n");
  EXPECT_EQ(tool("lsdef cn10 -i status -c"), "cn10: status=installing\n");
  // another address names no node: nothing changes, no `done`
  EXPECT_EQ(send("127.0.0.2", "next"), "ready\nclosed\n");
  EXPECT_EQ(tool("nodeset cn10 stat"), "cn10: install debian12-x86_64-compute\n");
  EXPECT_EQ(send("127.0.0.1", "bogus"), "ready\nclosed\n");
  EXPECT_EQ(send("127.0.0.1", "next"), "ready\ndone\n");
  EXPECT_EQ(tool("nodeset cn10 stat"), "cn10: boot\n");
  EXPECT_EQ(send("127.0.0.1", "installstatus installed"), "ready\ndone\n");
  EXPECT_EQ(tool("lsdef cn10 -i status -c"), "cn10: status=installed\n");
}

TEST_F(boot_listener_test, a_status_change_reaches_the_event_stream) {
  ASSERT_EQ(run_tool(d_->home(), "nodeset cn03 osimage=debian12-x86_64-install-compute").rc, 0);
  auto t = token_of("cn03");
  auto out = dir_->path / "events";
  auto url = "https://127.0.0.1:" + std::to_string(d_->port())
             + "/clusterws/events?userName=root&userPW=rootpw&noderange=cn03";
  // curl reads the stream in the background for a few seconds
  std::thread tail{[&] {
    run_tool(d_->home(), "curl -sN --max-time 4 --cacert " + d_->ca().string() + " -o "
                           + out.string() + " '" + url + "'");
  }};
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(get("/boot/node/cn03/status?state=installing&token=" + t).status, 200u);
  tail.join();
  auto got = cws::test::slurp(out);
  EXPECT_NE(got.find("\"name\":\"cn03\",\"change\":\"changed\",\"attributes\":[\"appstatus\","
                     "\"appstatustime\",\"status\",\"statustime\"]"),
            std::string::npos)
    << got;
}

} // namespace

// makedns against a real bind9: the test starts its own named (foreground, its own
// named.conf including the fragments makedns writes, zones in a temporary directory,
// listening on 127.0.0.1 at a high port), runs the built makedns and asks named with dig.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "api/dns_message.hpp"

namespace {

namespace fs = std::filesystem;

using result = cws::test::tool_output;
using cws::test::slurp;

/// A named of our own: started by fork/exec, stopped by its pid.
class named_process {
 public:
  named_process(const fs::path& conf, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execlp("named", "named", "-g", "-c", conf.c_str(), "-u", "root", nullptr);
      ::_exit(127);
    }
    // ready when its own log says so
    for (int i = 0; i < 100; ++i) {
      if (slurp(log).find("running") != std::string::npos) {
        running_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~named_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  bool running() const {
    return running_;
  }
  pid_t pid() const {
    return pid_;
  }

 private:
  pid_t pid_ = -1;
  bool running_ = false;
};

class makedns_test : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = 20000 + static_cast<int>(::getpid() % 20000);
    fs::create_directories(dir_.path / "conf");
    fs::create_directories(dir_.path / "zones");
    home_ = dir_.path / "home";
    ASSERT_EQ(run("clusterctl init --admin-password x").rc, 0);
    // empty fragments: named starts before the first makedns
    std::ofstream{conf_dir() / "clusterws.conf"} << "";
    std::ofstream{conf_dir() / "clusterws-options.conf"} << "";
    std::ofstream{dir_.path / "named.conf"}
      << "options {\n  directory \"" << (dir_.path / "zones").string() << "\";\n  pid-file \""
      << (dir_.path / "named.pid").string() << "\";\n  listen-on port " << port_
      << " { 127.0.0.1; };\n  listen-on-v6 { none; };\n  recursion no;\n  include \""
      << (conf_dir() / "clusterws-options.conf").string() << "\";\n};\ncontrols { };\ninclude \""
      << (conf_dir() / "clusterws.conf").string() << "\";\n";
    named_ = std::make_unique<named_process>(dir_.path / "named.conf", dir_.path / "named.log");
    ASSERT_TRUE(named_->running()) << slurp(dir_.path / "named.log");
    std::ofstream{home_ / "clusterws.conf", std::ios::app}
      << "dns_conf_dir = " << conf_dir().string()
      << "\ndns_zone_dir = " << (dir_.path / "zones").string()
      << "\ndns_server = 127.0.0.1:" << port_ << "\ndns_key_file = " << key_file().string()
      << "\ndns_reload_command = touch " << (dir_.path / "reloaded").string() << "; kill -HUP "
      << named_->pid() << "\n";
    ASSERT_EQ(run("chdef -t site clustersite domain=cluster.test master=10.77.0.1 "
                  "forwarders=10.1.1.1,10.1.1.2")
                .rc,
              0);
    ASSERT_EQ(run("mkdef -t network -o net77 net=10.77.0.0 mask=255.255.255.0").rc, 0);
    ASSERT_EQ(run("mkdef -t network -o net78 net=10.78.0.0 mask=255.255.0.0 domain=b.test").rc, 0);
  }

  void TearDown() override {
    named_.reset();
  }

  fs::path conf_dir() const {
    return dir_.path / "conf";
  }
  fs::path key_file() const {
    return dir_.path / "conf" / "clusterws.key";
  }

  result run(const std::string& cmd) const {
    return cws::test::run_tool_streams(home_, cmd);
  }

  /// dig's short answer for `args` (`name A`, `-x ip`).
  std::string dig(const std::string& args) const {
    return run("dig @127.0.0.1 -p " + std::to_string(port_) + " +short +time=2 +tries=1 " + args)
      .out;
  }

  void add_nodes(int count) const {
    std::string names;
    for (int i = 1; i <= count; ++i) {
      auto n = "n" + std::to_string(i);
      ASSERT_EQ(
        run("mkdef -t node -o " + n + " groups=compute ip=10.77.0." + std::to_string(10 + i)).rc,
        0);
    }
  }

  cws::test::temp_dir dir_;
  fs::path home_;
  int port_ = 0;
  std::unique_ptr<named_process> named_;
};

TEST_F(makedns_test, makedns_n_writes_checked_files_and_named_answers_a_and_ptr_for_every_node) {
  add_nodes(12);
  ASSERT_EQ(run("chdef n1 hostnames=alias1,n1-bmc").rc, 0);
  ASSERT_EQ(run("mkdef -t node -o far1 groups=compute ip=10.78.3.4").rc, 0);
  auto r = run("makedns -n");
  ASSERT_EQ(r.rc, 0) << r.err << r.out << slurp(dir_.path / "named.log");
  EXPECT_NE(r.out.find("DNS setup is completed"), std::string::npos) << r.out;
  // the key: made once, root only, in tsig-keygen's form
  struct stat st {};
  ASSERT_EQ(::stat(key_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  cws::api::dns::tsig_key key;
  EXPECT_EQ(cws::api::dns::parse_key_file(slurp(key_file()), key), "");
  EXPECT_EQ(key.name, "xcat_key");
  EXPECT_EQ(key.secret.size(), 32u);
  // bind's own checkers accept every file
  auto checkconf = run("named-checkconf " + (dir_.path / "named.conf").string());
  EXPECT_EQ(checkconf.rc, 0) << checkconf.out << checkconf.err;
  for (auto [zone, file] :
       std::vector<std::pair<std::string, std::string>>{{"cluster.test", "db.cluster.test"},
                                                        {"b.test", "db.b.test"},
                                                        {"0.77.10.in-addr.arpa", "db.10.77.0"},
                                                        {"78.10.in-addr.arpa", "db.10.78"}}) {
    auto c = run("named-checkzone " + zone + " " + (dir_.path / "zones" / file).string());
    EXPECT_EQ(c.rc, 0) << zone << ": " << c.out << c.err;
  }
  auto conf = slurp(conf_dir() / "clusterws.conf");
  EXPECT_NE(conf.find("include \"" + key_file().string() + "\";"), std::string::npos) << conf;
  EXPECT_NE(conf.find("zone \"0.77.10.in-addr.arpa\" in {\n\ttype master;\n\tallow-update {\n"
                      "\t\tkey xcat_key;\n\t};"),
            std::string::npos)
    << conf;
  EXPECT_EQ(slurp(conf_dir() / "clusterws-options.conf"),
            "// generated by clusterws: makedns -n (do not edit); include it in named's options "
            "{ } block\nforwarders {\n\t10.1.1.1;\n\t10.1.1.2;\n};\n");
  for (int i = 1; i <= 12; ++i) {
    auto n = "n" + std::to_string(i);
    auto ip = "10.77.0." + std::to_string(10 + i);
    EXPECT_EQ(dig(n + ".cluster.test A"), ip + "\n") << n;
    EXPECT_EQ(dig("-x " + ip), n + ".cluster.test.\n") << n;
  }
  EXPECT_EQ(dig("alias1.cluster.test CNAME"), "n1.cluster.test.\n");
  EXPECT_EQ(dig("n1-bmc.cluster.test CNAME"), "n1.cluster.test.\n");
  // a network's own domain and a /16 reverse zone
  EXPECT_EQ(dig("far1.b.test A"), "10.78.3.4\n");
  EXPECT_EQ(dig("-x 10.78.3.4"), "far1.b.test.\n");
}

TEST_F(makedns_test, a_node_added_later_resolves_after_makedns_node_through_a_signed_update) {
  add_nodes(2);
  ASSERT_EQ(run("makedns -n").rc, 0);
  fs::remove(dir_.path / "reloaded");
  ASSERT_EQ(run("mkdef -t node -o late1 groups=compute ip=10.77.0.99").rc, 0);
  EXPECT_EQ(dig("late1.cluster.test A"), "");
  auto r = run("makedns late1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(dig("late1.cluster.test A"), "10.77.0.99\n");
  EXPECT_EQ(dig("-x 10.77.0.99"), "late1.cluster.test.\n");
  // no file changed, so named was not reloaded: the update alone did it
  EXPECT_FALSE(fs::exists(dir_.path / "reloaded"));
  EXPECT_NE(slurp(dir_.path / "named.log").find("updating zone 'cluster.test/IN': adding an RR"),
            std::string::npos);
  // a changed address replaces the records
  ASSERT_EQ(run("chdef late1 ip=10.77.0.98").rc, 0);
  ASSERT_EQ(run("makedns late1").rc, 0);
  EXPECT_EQ(dig("late1.cluster.test A"), "10.77.0.98\n");
  EXPECT_EQ(dig("-x 10.77.0.99"), "");
  EXPECT_EQ(dig("-x 10.77.0.98"), "late1.cluster.test.\n");
}

TEST_F(makedns_test, makedns_d_removes_the_nodes_records) {
  add_nodes(3);
  ASSERT_EQ(run("chdef n2 hostnames=web").rc, 0);
  ASSERT_EQ(run("makedns -n").rc, 0);
  ASSERT_EQ(dig("n2.cluster.test A"), "10.77.0.12\n");
  auto r = run("makedns -d n2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(dig("n2.cluster.test A"), "");
  EXPECT_EQ(dig("web.cluster.test CNAME"), "");
  EXPECT_EQ(dig("-x 10.77.0.12"), "");
  EXPECT_EQ(dig("n1.cluster.test A"), "10.77.0.11\n");
  EXPECT_EQ(dig("n3.cluster.test A"), "10.77.0.13\n");
  // xCAT's refusal: -d needs a noderange
  r = run("makedns -d");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("makedns -d without noderange or -a is not supported"), std::string::npos);
  // a node that is no longer defined loses its records at the next full run
  ASSERT_EQ(run("rmdef n3").rc, 0);
  ASSERT_EQ(run("makedns").rc, 0);
  EXPECT_EQ(dig("n3.cluster.test A"), "");
  EXPECT_EQ(dig("-x 10.77.0.13"), "");
}

TEST_F(makedns_test, an_update_signed_with_a_wrong_key_is_refused_and_reported) {
  add_nodes(1);
  ASSERT_EQ(run("makedns -n").rc, 0);
  // same key name, another secret: named answers NOTAUTH, TSIG BADSIG
  auto good = slurp(key_file());
  std::ofstream{key_file()} << cws::api::dns::new_key_file("xcat_key");
  ASSERT_EQ(run("mkdef -t node -o bad1 groups=compute ip=10.77.0.77").rc, 0);
  auto r = run("makedns bad1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: Failure encountered updating"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error was NOTAUTH (TSIG BADSIG)"), std::string::npos) << r.err;
  EXPECT_EQ(dig("bad1.cluster.test A"), "");
  // what was not taken is not remembered as sent: with the right key it goes through
  std::ofstream{key_file()} << good;
  r = run("makedns bad1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(dig("bad1.cluster.test A"), "10.77.0.77\n");
}

TEST_F(makedns_test, a_rerun_with_no_change_writes_no_file_and_sends_no_update) {
  add_nodes(5);
  ASSERT_EQ(run("chdef n1 hostnames=alias1").rc, 0);
  ASSERT_EQ(run("makedns -n").rc, 0);
  auto stamp = [&](const fs::path& p) {
    return fs::last_write_time(p);
  };
  auto conf_t = stamp(conf_dir() / "clusterws.conf");
  auto zone_t = stamp(dir_.path / "zones" / "db.cluster.test");
  auto state_t = stamp(home_ / "dns-records");
  auto log_size = slurp(dir_.path / "named.log").size();
  fs::remove(dir_.path / "reloaded");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const char* again : {"makedns -n", "makedns", "makedns compute"}) {
    auto r = run(again);
    ASSERT_EQ(r.rc, 0) << again << ": " << r.err;
    EXPECT_EQ(r.out, "DNS setup is completed\n") << again;
  }
  EXPECT_EQ(stamp(conf_dir() / "clusterws.conf"), conf_t);
  EXPECT_EQ(stamp(dir_.path / "zones" / "db.cluster.test"), zone_t);
  EXPECT_EQ(stamp(home_ / "dns-records"), state_t);
  EXPECT_FALSE(fs::exists(dir_.path / "reloaded"));
  // named saw no update (it logs each one)
  EXPECT_EQ(slurp(dir_.path / "named.log").substr(log_size).find("update"), std::string::npos);
  auto dry = run("makedns -n --dry-run");
  EXPECT_EQ(dry.out, "No file changes.\nNo DNS updates.\n");
}

TEST_F(makedns_test, dry_run_prints_the_diffs_and_the_updates_and_changes_nothing) {
  add_nodes(1);
  auto r = run("makedns -n --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto conf = (conf_dir() / "clusterws.conf").string();
  EXPECT_NE(r.out.find("--- " + conf + "\n+++ " + conf + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+zone \"cluster.test\" in {\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("would create the TSIG key " + key_file().string()), std::string::npos);
  EXPECT_NE(r.out.find("update cluster.test: add n1.cluster.test. 86400 IN A 10.77.0.11\n"),
            std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("update 0.77.10.in-addr.arpa: add 11.0.77.10.in-addr.arpa. 86400 IN PTR "
                       "n1.cluster.test.\n"),
            std::string::npos)
    << r.out;
  EXPECT_EQ(slurp(conf_dir() / "clusterws.conf"), "");
  EXPECT_FALSE(fs::exists(key_file()));
  EXPECT_FALSE(fs::exists(dir_.path / "zones" / "db.cluster.test"));
  EXPECT_FALSE(fs::exists(home_ / "dns-records"));
  EXPECT_FALSE(fs::exists(dir_.path / "reloaded"));
}

TEST_F(makedns_test, refusals_are_xcats_and_change_nothing) {
  add_nodes(1);
  ASSERT_EQ(run("mkdef -t node -o outside groups=compute ip=192.168.5.5").rc, 0);
  auto r = run("makedns outside,n1");
  EXPECT_EQ(r.rc, 0) << r.err << slurp(dir_.path / "named.log");
  EXPECT_NE(r.out.find(":Ignoring host outside, it does not belong to any nets defined in "
                       "networks table or the net it belongs to is configured to use an external "
                       "nameserver."),
            std::string::npos)
    << r.out;
  ASSERT_EQ(run("mkdef -t node -o noip groups=compute").rc, 0);
  r = run("makedns noip");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Unable to find an IP for noip in hosts table or via system lookup"),
            std::string::npos)
    << r.err;
  r = run("makedns nosuchnode");
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(run("chdef -t site clustersite domain=").rc, 0);
  auto before = slurp(conf_dir() / "clusterws.conf");
  r = run("makedns -n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: domain not defined in site table"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(conf_dir() / "clusterws.conf"), before);
}

TEST_F(makedns_test, makedns_e_sends_updates_only_and_writes_no_named_file) {
  add_nodes(2);
  ASSERT_EQ(run("makedns -n").rc, 0); // the zones exist on "the external server"
  auto conf_t = fs::last_write_time(conf_dir() / "clusterws.conf");
  ASSERT_EQ(run("mkdef -t node -o ext1 groups=compute ip=10.77.0.50").rc, 0);
  ASSERT_EQ(run("chdef -t network -o net77 mask=255.255.255.0 domain=").rc, 0);
  fs::remove(dir_.path / "reloaded");
  auto r = run("makedns -e ext1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(dig("ext1.cluster.test A"), "10.77.0.50\n");
  EXPECT_EQ(fs::last_write_time(conf_dir() / "clusterws.conf"), conf_t);
  EXPECT_FALSE(fs::exists(dir_.path / "reloaded"));
}

} // namespace

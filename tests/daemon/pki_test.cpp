// The server certificate end to end: init --listen/--san, clusterctl pki add-name, renew and
// install, and the daemon loading the new certificate on SIGHUP; verified by curl with the CA
// and the name a client uses.

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"

namespace {

using cws::test::run_tool;

class pki_test : public ::testing::Test {
 protected:
  /// curl's exit status for GET /clusterws at https://NAME:PORT, NAME resolved to 127.0.0.2,
  /// verified with `ca` (0: verified; 60: the certificate does not match or verify).
  int curl_as(const std::string& name, const std::filesystem::path& ca) {
    auto cmd = "curl -s -o /dev/null --max-time 10 --cacert '" + ca.string() + "' --resolve " + name
               + ":" + std::to_string(d->port()) + ":127.0.0.2 https://" + name + ":"
               + std::to_string(d->port()) + "/clusterws";
    return run_tool(home, cmd).rc;
  }

  /// SIGHUP, then waits (bounded) for the daemon to say it loaded the certificate `n` times.
  void reload(size_t n) {
    ::kill(d->pid(), SIGHUP);
    for (int i = 0; i < 200; ++i) {
      auto log = cws::test::slurp(d->log());
      size_t count = 0;
      for (auto pos = log.find("loaded"); pos != std::string::npos;
           pos = log.find("loaded", pos + 1)) {
        ++count;
      }
      if (count >= n) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    FAIL() << "no reload in the log: " << cws::test::slurp(d->log());
  }

  cws::test::temp_dir dir;
  std::filesystem::path home = dir.path / "home";
  std::unique_ptr<cws::test::daemon> d;
};

TEST_F(pki_test, init_names_pki_changes_and_reload_reach_the_clients) {
  auto r = run_tool(home, "clusterctl init --admin-password pw --listen 127.0.0.2:18443 "
                          "--san head.example,10.9.8.7");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto conf = cws::test::slurp(home / "clusterws.conf");
  EXPECT_NE(conf.find("\nlisten = 127.0.0.2:18443\n"), std::string::npos) << conf;
  auto show = run_tool(home, "clusterctl pki show").out;
  EXPECT_NE(show.find("Names: "), std::string::npos) << show;
  EXPECT_NE(show.find(", head.example, 10.9.8.7, 127.0.0.2\n"), std::string::npos) << show;
  EXPECT_NE(show.find("(the CA in ca-cert.pem)"), std::string::npos) << show;
  EXPECT_NE(show.find("(in 825 days)"), std::string::npos) << show;

  d = std::make_unique<cws::test::daemon>(home, "pw",
                                          std::vector<std::string>{"--listen", "127.0.0.2:0"});
  d->start();
  auto ca = home / "pki" / "ca-cert.pem";
  EXPECT_EQ(curl_as("head.example", ca), 0);
  EXPECT_EQ(curl_as("other.example", ca), 60); // a name the certificate lacks

  // a name added: clients using it verify once the daemon has reloaded
  r = run_tool(home, "clusterctl pki add-name other.example");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(curl_as("other.example", ca), 60);
  reload(1);
  EXPECT_EQ(curl_as("other.example", ca), 0);
  EXPECT_EQ(curl_as("head.example", ca), 0);

  // renew: a shorter life on request; refused values change nothing
  EXPECT_NE(run_tool(home, "clusterctl pki renew --days 0").rc, 0);
  r = run_tool(home, "clusterctl pki renew --days 20");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("(in 20 days)"), std::string::npos) << r.out;
  reload(2);
  EXPECT_NE(cws::test::slurp(d->log()).find("expires in 20 days; renew it"), std::string::npos);

  // a site's own CA and certificate (made with openssl), checked before they are installed
  auto site = dir.path / "site";
  std::filesystem::create_directories(site);
  auto s = site.string();
  ASSERT_EQ(
    run_tool(home, "cd '" + s
                     + "' && openssl req -x509 -newkey ec -pkeyopt "
                       "ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 30 "
                       "-subj /CN=site-ca >/dev/null 2>&1 && openssl req -newkey ec "
                       "-pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr "
                       "-subj /CN=head.site >/dev/null 2>&1 && printf "
                       "'subjectAltName=DNS:head.site\\nextendedKeyUsage=serverAuth\\n' > "
                       "ext && openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key "
                       "-CAcreateserial -out srv.pem -days 30 -extfile ext >/dev/null 2>&1")
      .rc,
    0);
  r = run_tool(home, "clusterctl pki install --cert " + s + "/srv.pem --key " + s + "/ca.key --ca "
                       + s + "/ca.pem");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("does not belong to the certificate"), std::string::npos) << r.out;
  r = run_tool(home, "clusterctl pki install --cert " + s + "/srv.pem --key " + s + "/srv.key");
  EXPECT_NE(r.rc, 0); // not signed by the cluster CA, and no --ca given
  EXPECT_NE(r.out.find("does not verify against the CA"), std::string::npos) << r.out;
  EXPECT_EQ(curl_as("head.example", ca), 0); // nothing changed
  r = run_tool(home, "clusterctl pki install --cert " + s + "/srv.pem --key " + s + "/srv.key --ca "
                       + s + "/ca.pem");
  ASSERT_EQ(r.rc, 0) << r.out;
  reload(3);
  EXPECT_EQ(curl_as("head.site", site / "ca.pem"), 0);
  EXPECT_EQ(cws::test::slurp(ca), cws::test::slurp(site / "ca.pem")); // what clients now trust
  // renewing with the cluster CA would give a certificate clients cannot verify: refused
  r = run_tool(home, "clusterctl pki renew");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("a site CA was installed"), std::string::npos) << r.out;
  // a broken certificate file on reload: the daemon keeps serving the one it has
  { std::ofstream{home / "pki" / "server-cert.pem"} << "garbage"; }
  ::kill(d->pid(), SIGHUP);
  for (int i = 0;
       i < 200
       && cws::test::slurp(d->log()).find("kept the certificate in use") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_NE(cws::test::slurp(d->log()).find("kept the certificate in use"), std::string::npos);
  EXPECT_EQ(curl_as("head.site", site / "ca.pem"), 0);
  EXPECT_EQ(d->stop(), 0);
}

} // namespace

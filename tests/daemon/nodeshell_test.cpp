// nodeshell and xdsh against a real sshd on 127.0.0.1 with a real non-root user: identity,
// policy, dead nodes, timeouts that end the remote command, output cap, pooled connections,
// recovery after an sshd restart, 120 node names on one sshd, streaming, deletes.

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <initializer_list>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/metrics_sample.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::run_tool;

constexpr const char* test_user = "cwstest";

class nodeshell_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    {
      std::ofstream conf{home / "clusterws.conf", std::ios::app};
      // 5 s: room for 32 logins at once to one sshd on a busy 2-core machine
      conf << "ssh_connect_timeout = 5\nssh_output_max = 4096\n";
    }
    farm_->authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
    user_ok_ = cws::test::ensure_user(test_user);
    if (user_ok_) {
      cws::test::make_key(home / "ssh" / test_user / "id_ed25519");
      farm_->authorize(test_user, home / "ssh" / test_user / "id_ed25519.pub");
      run_tool(home,
               std::string{"echo userpw | clusterctl passwd "} + test_user + " --password-stdin");
    }
    run_tool(home, "echo nokeypw | clusterctl passwd nokey --password-stdin");
    run_tool(home, "mkdef -t policy -o 7 name=nokey rule=allow");
    auto port = std::to_string(farm_->port());
    run_tool(home, "mkdef -t group farm sshport=" + port);
    auto r = run_tool(home, "mkdef 'node[001-120]' groups=farm,all ip=127.0.0.1");
    ASSERT_EQ(r.rc, 0) << r.out;
    // a port nobody listens on, and one that accepts but never speaks
    silent_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(silent_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(silent_, 16);
    socklen_t len = sizeof a;
    getsockname(silent_, reinterpret_cast<sockaddr*>(&a), &len);
    run_tool(home, "mkdef deadrefused groups=dead ip=127.0.0.1 sshport="
                     + std::to_string(cws::test::free_port()));
    run_tool(home, "mkdef deadsilent groups=dead ip=127.0.0.1 sshport="
                     + std::to_string(ntohs(a.sin_port)));
    farm_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    farm_->stop();
    ::close(silent_);
    delete d_;
    delete farm_;
    delete dir_;
  }

  cws::test::reply shell(const std::string& nr, const std::string& command,
                         const std::string& extra = {}, const std::string& who = {}) {
    std::string url = who.empty() ? d_->url("/nodes/" + nr + "/nodeshell", extra)
                                  : "/clusterws/nodes/" + nr + "/nodeshell?" + who + extra;
    return client.request("POST", url, "{\"command\":\"" + command + "\"}");
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static bool user_ok_;
  static int silent_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* nodeshell_test::dir_ = nullptr;
cws::test::sshd* nodeshell_test::farm_ = nullptr;
cws::test::daemon* nodeshell_test::d_ = nullptr;
bool nodeshell_test::user_ok_ = false;
int nodeshell_test::silent_ = -1;

TEST_F(nodeshell_test, root_runs_as_root) {
  auto r = shell("node001,node002", "id -un");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.body, "{\"node001\":[\" root\"],\"node002\":[\" root\"]}\n");
}

TEST_F(nodeshell_test, non_root_runs_as_itself_only_with_a_policy_row) {
  if (!user_ok_) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  std::string who = std::string{"userName="} + test_user + "&userPW=userpw";
  auto r = shell("node001", "id -un", {}, who);
  EXPECT_EQ(r.status, 401u); // no policy row: refused, nothing runs
  run_tool(d_->home(),
           std::string{"mkdef -t policy -o 6 name="} + test_user + " rule=allow commands=xdsh");
  r = shell("node001", "id -un", {}, who);
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.body, std::string{"{\"node001\":[\" "} + test_user + "\"]}\n");
  // the body cannot change who runs it
  r = client.request("POST", "/clusterws/nodes/node001/nodeshell?" + who,
                     R"({"command":"id -un","ENV":{"DSH_TO_USERID":"root"}})");
  EXPECT_EQ(r.status, 400u);
  run_tool(d_->home(), "rmdef -t policy -o 6");
}

TEST_F(nodeshell_test, user_without_a_key_gets_an_error_and_nothing_runs) {
  auto r = shell("node001", "id -un", {}, "userName=nokey&userPW=nokeypw");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("No SSH key is configured for user 'nokey'"), std::string::npos);
}

TEST_F(nodeshell_test, dead_nodes_fail_alone) {
  auto r = shell("node003,deadrefused,deadsilent", "echo hi", "&format=detail");
  EXPECT_EQ(r.status, 201u);
  EXPECT_NE(r.body.find("\"deadrefused\":{\"rc\":-1,\"stdout\":[],\"stderr\":[],\"error\":"
                        "\"refused\""),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("\"deadsilent\":{\"rc\":-1,\"stdout\":[],\"stderr\":[],\"error\":"
                        "\"connect-timeout\""),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("\"node003\":{\"rc\":0,\"stdout\":[\"hi\"],\"stderr\":[]}"),
            std::string::npos)
    << r.body;
  // one summary line in the error log: how many, why, the first; never the command
  auto log = cws::test::slurp(d_->log());
  EXPECT_NE(log.find("warning: nodeshell by root: 2 of 3 nodes failed (1 connect-timeout, 1 "
                     "refused); first: dead"),
            std::string::npos)
    << log;
  EXPECT_EQ(log.find("echo hi"), std::string::npos);
  // xCAT's shape: one failure makes it a 403 with the error lines
  r = shell("node003,deadrefused", "echo hi");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("deadrefused: ssh: connect to host deadrefused port"), std::string::npos);
  EXPECT_NE(r.body.find("\"errorcode\":\"1\""), std::string::npos);
}

TEST_F(nodeshell_test, the_ssh_engine_counts_its_runs_and_nodes_by_result) {
  auto before = client.get(d_->url("/metrics")).body;
  auto r = shell("node005,node006,deadrefused", "exit 3", "&format=detail");
  EXPECT_EQ(r.status, 201u) << r.body;
  auto after = client.get(d_->url("/metrics")).body;
  using cws::test::metric_growth;
  EXPECT_EQ(metric_growth(before, after, "clusterws_ssh_runs_total"), 1) << after;
  EXPECT_EQ(metric_growth(before, after, "clusterws_ssh_nodes_total{result=\"nonzero\"}"), 2)
    << after;
  EXPECT_EQ(metric_growth(before, after, "clusterws_ssh_nodes_total{result=\"refused\"}"), 1)
    << after;
  EXPECT_EQ(cws::test::metric_sample(after, "clusterws_ssh_nodes_in_flight"), 0) << after;
}

TEST_F(nodeshell_test, command_timeout_ends_the_remote_command) {
  auto r = shell("node004", "sleep 37.25; echo late", "&timeout=1&format=detail");
  EXPECT_EQ(r.status, 201u);
  EXPECT_NE(r.body.find("\"error\":\"timeout\""), std::string::npos) << r.body;
  // the pty hang-up ends it on the node (here: this machine)
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    // [.] keeps pgrep from matching the shell that runs it
    gone = run_tool(d_->home(), "pgrep -f 'sleep 37[.]25'").rc != 0;
    if (!gone) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_TRUE(gone) << "the remote sleep is still running";
}

TEST_F(nodeshell_test, output_over_the_cap_is_truncated_and_marked) {
  auto r = shell("node005", "printf %0100000d 0", "&format=detail");
  EXPECT_EQ(r.status, 201u);
  EXPECT_NE(r.body.find("\"truncated\":\"true\""), std::string::npos);
  EXPECT_LT(r.body.size(), 6000u);
}

TEST_F(nodeshell_test, pooled_connections_are_reused_and_recover_after_an_sshd_restart) {
  auto first = shell("node[010-019]", "echo one");
  ASSERT_EQ(first.status, 201u) << first.body;
  int logins = farm_->logins();
  auto second = shell("node[010-019]", "echo two");
  ASSERT_EQ(second.status, 201u);
  EXPECT_EQ(farm_->logins(), logins); // no new connection
  farm_->stop();
  farm_->start(); // every pooled connection is now broken
  auto third = shell("node[010-019]", "echo three");
  EXPECT_EQ(third.status, 201u) << third.body;
  EXPECT_NE(third.body.find("\"node019\":[\" three\"]"), std::string::npos);
  EXPECT_EQ(farm_->logins(), logins + 10);
}

TEST_F(nodeshell_test, many_node_names_on_one_sshd) {
  auto r = shell("farm", "echo ok", "&xcoll=1&fanout=32");
  EXPECT_EQ(r.status, 201u);
  EXPECT_EQ(r.body.substr(0, 30), "{\"node001,node002,node003,node");
  EXPECT_NE(r.body.find("node120\":[\" ok\"]}"), std::string::npos) << r.body.substr(0, 200);
  r = shell("farm", "echo ok", "&format=detail");
  size_t count = 0;
  for (size_t pos = 0; (pos = r.body.find("\"rc\":0", pos)) != std::string::npos; ++pos) {
    ++count;
  }
  EXPECT_EQ(count, 120u);
}

TEST_F(nodeshell_test, stream_sends_one_line_per_node_then_a_summary) {
  auto r = shell("node[021-023],deadrefused", "echo s", "&stream=1");
  EXPECT_EQ(r.status, 201u);
  EXPECT_EQ(r.headers["Content-Type"], "application/x-ndjson");
  EXPECT_EQ(std::count(r.body.begin(), r.body.end(), '\n'), 5);
  EXPECT_NE(r.body.find("{\"node\":\"node022\",\"rc\":0,\"stdout\":[\"s\"],\"stderr\":[]}\n"),
            std::string::npos);
  EXPECT_NE(r.body.find("{\"done\":\"true\",\"nodes\":4,\"failed\":1}\n"), std::string::npos)
    << r.body;
  // audited like the plain answer: with the status that answer has (a node failed: 403)
  std::ifstream in{d_->home() / "audit.log"};
  std::string line, entry;
  while (std::getline(in, line)) {
    if (line.find("\"command\":\"echo s\"") != std::string::npos) {
      entry = line;
    }
  }
  EXPECT_NE(entry.find("\"noderange\":\"node[021-023],deadrefused\""), std::string::npos) << entry;
  EXPECT_NE(entry.find("\"status\":403"), std::string::npos) << entry;
  // the connection stays usable
  EXPECT_EQ(shell("node021", "echo again").status, 201u);
}

TEST_F(nodeshell_test, bad_noderange_and_bad_parameters) {
  auto r = shell("node001,ghost", "true");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Invalid nodes and/or groups in noderange: ghost"), std::string::npos);
  EXPECT_EQ(shell("node001", "true", "&fanout=abc").status, 400u);
}

TEST_F(nodeshell_test, delete_goes_through_the_executor) {
  run_tool(d_->home(), "mkdef 'gone[1-5]' groups=all");
  auto r = client.request("DELETE", d_->url("/nodes/gone[1-6]"));
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Could not find an object named 'gone6' of type 'node'."),
            std::string::npos);
  EXPECT_EQ(run_tool(d_->home(), "nodels 'gone[1-5]'").rc, 0); // nothing removed
  r = client.request("DELETE", d_->url("/nodes/gone[1-6]", "&format=detail"));
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("\"gone1\":{\"result\":\"removed\"}"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"gone6\":{\"result\":\"not found\"}"), std::string::npos);
  EXPECT_EQ(run_tool(d_->home(), "nodels 'gone1'").rc, 1);
}

TEST_F(nodeshell_test, a_changed_host_key_is_refused) {
  cws::test::sshd other{dir_->path / "other"};
  other.authorize("root", d_->home() / "ssh" / "root" / "id_ed25519.pub");
  other.start();
  run_tool(d_->home(), "mkdef hk1 groups=hk ip=127.0.0.1 sshport=" + std::to_string(other.port()));
  auto r = shell("hk1", "true", "&format=detail");
  EXPECT_NE(r.body.find("\"hk1\":{\"rc\":0"), std::string::npos) << r.body; // learned (accept-new)
  other.stop();
  other.new_host_key();
  other.start();
  r = shell("hk1", "true", "&format=detail");
  EXPECT_NE(r.body.find("\"error\":\"host-key\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("REMOTE HOST IDENTIFICATION HAS CHANGED"), std::string::npos);
  run_tool(d_->home(), "rmdef hk1");
}

TEST_F(nodeshell_test, a_node_refusing_the_key_is_an_auth_failure) {
  // an API user with a key and a policy row, but no account on the node
  cws::test::make_key(d_->home() / "ssh" / "ghost" / "id_ed25519");
  run_tool(d_->home(), "echo ghostpw | clusterctl passwd ghost --password-stdin");
  run_tool(d_->home(), "mkdef -t policy -o 8 name=ghost rule=allow");
  auto r = shell("node040", "true", "&format=detail", "userName=ghost&userPW=ghostpw");
  EXPECT_NE(r.body.find("\"error\":\"auth\""), std::string::npos) << r.body;
  r = shell("node040", "true", {}, "userName=ghost&userPW=ghostpw");
  EXPECT_EQ(r.status, 401u); // xCAT's rule: "Permission denied" from a node is a 401
  run_tool(d_->home(), "rmdef -t policy -o 8");
}

TEST_F(nodeshell_test, xdsh_prints_node_lines) {
  auto r = run_tool(d_->home(), "xdsh 'node[030-031]' -t 5 id -un");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("node030: root\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node031: root\n"), std::string::npos);
  r = run_tool(d_->home(), "xdsh node030,deadrefused true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("deadrefused: ssh: connect to host deadrefused"), std::string::npos);
  // -t: the nodes still running when it passes, in xCAT's words, the command ended
  r = run_tool(d_->home(), "xdsh 'node[032-033]',node034 -t 1 sleep 30");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("Error:  Timed out waiting for response from child processes for the "
                       "following nodes.\nError:  node032 node033 node034\n"),
            std::string::npos)
    << r.out;
}

TEST_F(nodeshell_test, xdsh_t_expiry_prints_xcats_message_and_exit_status) {
  // xCAT-test xdsh_t: rc != 0, "Error: Caught SIGINT - terminating the child processes.",
  // ended well before the command would have
  auto start = std::chrono::steady_clock::now();
  auto r = run_tool(d_->home(), "xdsh node035 -t 1 'sleep 10'");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(7));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Error: Caught SIGINT - terminating the child processes.\n"),
            std::string::npos)
    << r.out;
  // the exit status ORs the failed nodes' count with the message's 1, as xCAT's client does
  r = run_tool(d_->home(), "xdsh node035,node036 -t 1 'sleep 10'");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_EQ(r.out.find("Caught SIGINT"), r.out.rfind("Caught SIGINT")) << r.out; // once
}

// -- xdsh's flags (xdsh.1) against the real sshd ----------------------------------------

TEST_F(nodeshell_test, xdsh_z_prints_each_exit_status_and_Q_prints_no_output) {
  auto r = run_tool(d_->home(), "xdsh node050,node051 -z 'echo out; exit 3'");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("node050: out\nnode050: Remote_command_rc = 3\n"), std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("node051: Remote_command_rc = 3\n"), std::string::npos) << r.out;
  r = run_tool(d_->home(), "xdsh node050,deadrefused -Q 'echo out; echo err >&2'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, ""); // nothing, not even the dead node's ssh error
}

TEST_F(nodeshell_test, xdsh_s_streams_whole_lines_and_the_unterminated_rest) {
  auto r = run_tool(d_->home(), "xdsh node052 -s 'echo a; echo b >&2; printf c'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("node052: a\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node052: b\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node052: c\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cws-pid"), std::string::npos) << r.out; // the engine's marker is hidden
}

TEST_F(nodeshell_test, xdsh_environment_file_path_and_locale_reach_the_node) {
  auto env = dir_->path / "xdsh.env";
  std::ofstream{env} << "export GREETING=\"hello there\"\nexport SECOND=2\n";
  auto r = run_tool(d_->home(), "xdsh node053 -E " + env.string() + " 'echo $GREETING $SECOND'");
  EXPECT_EQ(r.out, "node053: hello there 2\n");
  r = run_tool(d_->home(), "DSH_ENVIRONMENT=" + env.string() + " xdsh node053 'echo $SECOND'");
  EXPECT_EQ(r.out, "node053: 2\n");
  r = run_tool(d_->home(), "DSH_PATH=/opt/a:/usr/bin:/bin xdsh node053 'echo $PATH'");
  EXPECT_EQ(r.out, "node053: /opt/a:/usr/bin:/bin\n");
  r = run_tool(d_->home(), "LC_MESSAGES=C.UTF-8 xdsh node053 'echo \"[$LC_MESSAGES]\"'");
  EXPECT_EQ(r.out, "node053: [C.UTF-8]\n");
  r = run_tool(d_->home(), "LC_MESSAGES=C.UTF-8 xdsh node053 -L 'echo \"[$LC_MESSAGES]\"'");
  EXPECT_EQ(r.out, "node053: []\n");
  // -X: only the DSH_* variables it names are read
  r = run_tool(d_->home(), "DSH_PATH=/opt/b xdsh -X DSH_FANOUT node053 'echo $PATH'");
  EXPECT_EQ(r.out.find("/opt/b"), std::string::npos) << r.out;
  r = run_tool(d_->home(), "xdsh node053 -E /nonexistent/env true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Cannot read the environment file /nonexistent/env."), std::string::npos);
}

TEST_F(nodeshell_test, xdsh_e_runs_the_script_after_the_exports_with_its_arguments) {
  auto script = dir_->path / "show.sh";
  std::ofstream{script} << "#!/bin/sh\necho \"$PATH [$1] [$2]\"\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto r = run_tool(d_->home(),
                    "DSH_PATH=/opt/e:/usr/bin:/bin xdsh node060 -e " + script.string()
                      + " '\"one two\"' three"); // the remote shell splits the words, as xCAT's

  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "node060: /opt/e:/usr/bin:/bin [one two] [three]\n");
  r = run_tool(d_->home(), "xdsh node060 'ls /tmp | grep -c show.sh.cws- || true'");
  EXPECT_EQ(r.out, "node060: 0\n"); // removed after it ran
}

TEST_F(nodeshell_test, xdsh_timeout_and_fanout_come_from_the_environment_too) {
  auto r = run_tool(d_->home(), "DSH_TIMEOUT=1 xdsh node054 sleep 30");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Timed out waiting for response from child processes"), std::string::npos);
  r = run_tool(d_->home(), "DSH_FANOUT=x xdsh node054 true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("DSH_FANOUT takes a whole number, not 'x'."), std::string::npos) << r.out;
  r = run_tool(d_->home(), "DSH_TIMEOUT=1 xdsh -X '' node054 'sleep 2; echo done'");
  EXPECT_EQ(r.out, "node054: done\n"); // -X '': DSH_TIMEOUT ignored
}

TEST_F(nodeshell_test, xdsh_o_takes_what_the_engine_honours_and_refuses_identity_changes) {
  // node055 has no sshport of its own: -p reaches the farm
  run_tool(d_->home(), "mkdef node055x groups=all ip=127.0.0.1");
  auto port = std::to_string(farm_->port());
  auto r = run_tool(d_->home(), "xdsh node055x -o '-x -p " + port + " -o BatchMode=yes' echo hi");
  EXPECT_EQ(r.out, "node055x: hi\n");
  r = run_tool(d_->home(), "xdsh node055x -o\"-o Port=" + port + "\" echo hi");
  EXPECT_EQ(r.out, "node055x: hi\n");
  for (const char* bad : {"-i /root/.ssh/id_rsa", "-l root", "-o User=root", "-o ProxyCommand=nc",
                          "-o StrictHostKeyChecking=no", "-A"}) {
    r = run_tool(d_->home(), std::string{"xdsh node050 -o '"} + bad + "' true");
    EXPECT_EQ(r.rc, 1) << bad;
    EXPECT_NE(r.out.find("ssh option"), std::string::npos) << bad << ": " << r.out;
  }
  r = run_tool(d_->home(), "xdsh node050 -o '-o User=root' true");
  EXPECT_NE(r.out.find("is refused: xdsh logs in as you"), std::string::npos) << r.out;
  // ConnectTimeout bounds a node that never answers
  r = run_tool(d_->home(), "xdsh deadsilent -o '-o ConnectTimeout=1' true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Connection timed out"), std::string::npos) << r.out;
  run_tool(d_->home(), "rmdef node055x");
}

TEST_F(nodeshell_test, xdsh_v_m_and_T_report_in_xcats_words) {
  auto r = run_tool(d_->home(), "xdsh node056,deadrefused -v true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("deadrefused is not responding, make sure it is a node object and is "
                       "defined in xCATdb. No command will be issued to this host.\n"),
            std::string::npos)
    << r.out;
  r = run_tool(d_->home(), "xdsh node056,deadrefused -m true");
  for (const char* line :
       {"dsh>  Dsh_initialization_completed\n", "dsh>  Dsh_remote_execution_started\n",
        "dsh>  Remote_command_started node056\n", "dsh>  Remote_command_successful node056\n",
        "dsh>  Remote_command_failed deadrefused\n",
        "dsh>  Remote_command_execution_completed\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
  }
  r = run_tool(d_->home(), "xdsh node056 -T 'echo t'");
  EXPECT_NE(r.out.find("TRACE: user=root fanout=64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Command name: root@node056 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node056: t\n"), std::string::npos) << r.out;
  r = run_tool(d_->home(), "DSH_FANOUT=7 xdsh -q");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("clusterws:DSH_FANOUT=7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clusterws:ssh_connect_timeout=5\n"), std::string::npos) << r.out;
}

TEST_F(nodeshell_test, xdsh_q_and_T_print_xcats_dsh_lines) {
  // xCAT-test xdsh_q: DSH:DSH_FANOUT=; the DSH context's variables sorted as show_dsh_config
  auto r = run_tool(d_->home(), "DSH_FANOUT=7 DSH_REMOTE_OPTS='-p 22' xdsh node056 -q");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(
    r.out.substr(0, r.out.find("clusterws:")),
    "DSH:DCP_DEVICE_OPTS=\nDSH:DCP_DEVICE_RCP=\nDSH:DCP_NODE_OPTS=\nDSH:DCP_NODE_RCP=\n"
    "DSH:DSH_CONTEXT=\nDSH:DSH_DEVICE_LIST=\nDSH:DSH_DEVICE_OPTS=\nDSH:DSH_DEVICE_RCP=\n"
    "DSH:DSH_DEVICE_RSH=\nDSH:DSH_ENVIRONMENT=\nDSH:DSH_FANOUT=7\nDSH:DSH_LOG=\n"
    "DSH:DSH_NODEGROUP_PATH=\nDSH:DSH_NODE_LIST=\nDSH:DSH_NODE_OPTS=-p 22\n"
    "DSH:DSH_NODE_RCP=\nDSH:DSH_NODE_RSH=\nDSH:DSH_OUTPUT=\nDSH:DSH_PATH=\n"
    "DSH:DSH_REPORT=\nDSH:DSH_SYNTAX=\nDSH:DSH_TIMEOUT=\nDSH:DSH_VERIFY=\nDSH:RSYNC_RSH=\n"
    "XCAT:RemoteCopyCmd=(clusterws SFTP engine)\nXCAT:RemoteShell=(clusterws SSH engine)\n");
  // xCAT-test xdsh_T: the trace (execute_dsh's lines) before the output
  r = run_tool(d_->home(), "xdsh node056 -T -t 9 -v hostname");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto trace = r.out.find("TRACE:Default context is XCAT\nTRACE:Node RSH is \n"
                          "TRACE: Fanout value is 64.\nTRACE: Timeout value is 9 \n"
                          "TRACE: Verify value is 1 \n");
  EXPECT_NE(trace, std::string::npos) << r.out;
  auto command = r.out.find("Command name: root@node056 ");
  auto output = r.out.find("node056: ");
  EXPECT_LT(trace, command) << r.out;
  EXPECT_LT(command, output) << r.out;
}

TEST_F(nodeshell_test, xdsh_o_v_prints_the_connection_trace_and_t_asks_a_pty) {
  // xCAT-test xdsh_o: "node: OpenSSH" and "node: debug" lines, the command's output too
  auto r = run_tool(d_->home(), "xdsh node058 -o '-v' date");
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const char* line :
       {"node058: OpenSSH_", "node058: debug1: Connecting to node058 [127.0.0.1] port ",
        "node058: debug1: Remote protocol version 2.0, remote software version OpenSSH_",
        "node058: debug1: kex: algorithm: curve25519-sha256",
        "node058: debug1: Server host key: ED25519 SHA256:",
        "node058: debug1: Authentication succeeded (publickey).\n",
        "node058: debug1: Sending command: ", "node058: debug1: Exit status 0\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("cws-pid"), std::string::npos) << r.out; // the engine's marker stays hidden
  // without -v: none of it
  r = run_tool(d_->home(), "xdsh node058 true");
  EXPECT_EQ(r.out, "");
  // -t: a pty (the command sees a terminal), as ssh -t
  r = run_tool(d_->home(), "xdsh node058 -o '-t' 'test -t 0 && echo tty || echo none'");
  EXPECT_EQ(r.out, "node058: tty\n");
  r = run_tool(d_->home(), "xdsh node058 'test -t 0 && echo tty || echo none'");
  EXPECT_EQ(r.out, "node058: none\n");
  // the one it cannot honour is named
  r = run_tool(d_->home(), "xdsh node058 -o '-v -o ServerAliveInterval=30' true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("ssh option ServerAliveInterval=30 is not supported by clusterws's SSH "
                       "engine."),
            std::string::npos)
    << r.out;
}

TEST_F(nodeshell_test, xdsh_c_removes_the_sync_backup_directory_on_the_nodes) {
  auto dir = dir_->path / "syncfiles";
  std::filesystem::create_directories(dir / "etc");
  std::ofstream{dir / "etc" / "hosts"} << "backup";
  run_tool(d_->home(), "chdef -t site nodesyncfiledir=" + dir.string());
  auto r = run_tool(d_->home(), "xdsh node057 -c");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir));
  r = run_tool(d_->home(), "xdsh node057 -c ls");
  EXPECT_NE(r.out.find("xdsh -c takes no command."), std::string::npos) << r.out;
  run_tool(d_->home(), "chdef -t site nodesyncfiledir=");
}

TEST_F(nodeshell_test, xdsh_refuses_what_has_no_safe_meaning_here_with_the_reason) {
  struct refusal {
    const char* args;
    const char* says;
  };
  for (auto [args, says] : std::initializer_list<refusal>{
         {"node050 -K", "xdsh -K is not supported"},
         {"node050 -r /usr/bin/rsh true", "the remote shell cannot be changed"},
         {"-i /install/rootimg true", "install image is not supported"},
         {"node050 --devicetype IBSwitch::Qlogic true", "--devicetype is not supported"},
         {"node050 -l nobody true", "-l cannot change the identity"},
         {"node050 -S bash true", "-S takes ksh or csh"},
         {"node050 -f 0 true", "-f takes a fanout of at least 1."},
         {"node050 -Y true", "Unknown option -Y."}}) {
    auto r = run_tool(d_->home(), std::string{"xdsh "} + args);
    EXPECT_EQ(r.rc, 1) << args;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": " << r.out;
  }
  auto r = run_tool(d_->home(), "DSH_TO_USERID=nobody xdsh node050 true");
  EXPECT_NE(r.out.find("DSH_TO_USERID cannot change the identity"), std::string::npos) << r.out;
  r = run_tool(d_->home(), "xdsh node050 -l root -sz true"); // -l naming yourself is fine
  EXPECT_EQ(r.out, "node050: Remote_command_rc = 0\n");
}

TEST_F(nodeshell_test, xdsh_ctrl_c_ends_every_remote_command_and_names_the_nodes) {
  auto pids = dir_->path / "ctrlc.pids";
  auto out = dir_->path / "ctrlc.out";
  // xdsh in the background; once both remote commands have started, SIGINT as Ctrl-C sends it
  auto script = "xdsh 'node[058-059]' 'sleep 300 & echo $! >> " + pids.string() + "; wait' > "
                + out.string() + " 2>&1 & p=$!; i=0; " + "while [ \"$(cat " + pids.string()
                + " 2>/dev/null | wc -l)\" -lt 2 ] "
                + "&& [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
                + "kill -INT $p; wait $p; echo rc=$?";
  auto r = run_tool(d_->home(), script);
  EXPECT_EQ(r.out, "rc=2\n");
  auto text = cws::test::slurp(out);
  EXPECT_NE(text.find("Caught SIGINT - terminating the child processes.\n"
                      "Error:  The command was ended on the following nodes.\n"
                      "Error:  node058 node059\n"),
            std::string::npos)
    << text;
  std::ifstream in{pids};
  int count = 0;
  for (long pid; in >> pid; ++count) { // gone on the node, not left running
    bool gone = false;
    for (int i = 0; i < 500 && !gone; ++i) {
      gone = ::kill(static_cast<pid_t>(pid), 0) != 0;
      if (!gone) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    EXPECT_TRUE(gone) << "sleep " << pid << " still runs";
  }
  EXPECT_EQ(count, 2);
}

} // namespace

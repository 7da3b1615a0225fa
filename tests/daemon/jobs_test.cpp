// Jobs against the real daemon and a real sshd on 127.0.0.1: async=1 and polling, a job's
// stream, cancel of a long command, another user's job, the output limit, eviction, a
// restart that interrupts a running job.

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using cws::test::run_tool;

constexpr const char* test_user = "cwsjobs";

/// The value of `"key":"...` (a string) in `body`, after `from`; "" when absent.
std::string field(const std::string& body, const std::string& key, size_t from = 0) {
  auto at = body.find("\"" + key + "\":\"", from);
  if (at == std::string::npos) {
    return {};
  }
  at += key.size() + 4;
  return body.substr(at, body.find('"', at) - at);
}

/// `curl -N` of an event stream into a file, ended by its pid.
class event_tail {
 public:
  event_tail(const std::filesystem::path& ca, const std::filesystem::path& out,
             const std::string& url)
      : out_(out) {
    std::vector<std::string> args{"curl", "-sN", "--cacert", ca.string(), "-o", out.string(), url};
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, "curl", nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
  }

  ~event_tail() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  /// Waits (at most `limit`) until the stream holds `text`; the stream so far.
  std::string wait_for(const std::string& text,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto end = clock_type::now() + limit;
    auto got = cws::test::slurp(out_);
    while (got.find(text) == std::string::npos && clock_type::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      got = cws::test::slurp(out_);
    }
    return got;
  }

 private:
  std::filesystem::path out_;
  pid_t pid_ = -1;
};

class jobs_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "ssh_connect_timeout = 5\njob_output_max_bytes = 64\njobs_keep_max = 4\n";
    farm_->authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
    user_ok_ = cws::test::ensure_user(test_user);
    if (user_ok_) {
      cws::test::make_key(home / "ssh" / test_user / "id_ed25519");
      farm_->authorize(test_user, home / "ssh" / test_user / "id_ed25519.pub");
      run_tool(home,
               std::string{"echo userpw | clusterctl passwd "} + test_user + " --password-stdin");
      run_tool(home,
               std::string{"mkdef -t policy -o 6 name="} + test_user + " rule=allow commands=xdsh");
    }
    auto r = run_tool(home, "mkdef 'jb[01-06]' groups=farm,all ip=127.0.0.1 sshport="
                              + std::to_string(farm_->port()));
    ASSERT_EQ(r.rc, 0) << r.out;
    farm_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    farm_->stop();
    delete d_;
    delete farm_;
    delete dir_;
  }

  /// POST nodeshell with async=1; the job's id (checks the 202 and its Location).
  std::string start(const std::string& nr, const std::string& command) {
    auto r = client.request("POST", d_->url("/nodes/" + nr + "/nodeshell", "&async=1"),
                            "{\"command\":\"" + command + "\"}");
    EXPECT_EQ(r.status, 202u) << r.body;
    auto id = field(r.body, "job");
    EXPECT_EQ(id.size(), 16u) << r.body;
    EXPECT_EQ(r.headers["Location"], "/clusterws/jobs/" + id);
    return id;
  }

  cws::test::reply job(const std::string& id, const std::string& extra = {}) {
    return client.get(d_->url("/jobs/" + id, extra));
  }

  /// Polls the job until it ended (up to `limit`); its last body.
  std::string until_ended(const std::string& id,
                          std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto end = clock_type::now() + limit;
    std::string body;
    while (clock_type::now() < end) {
      body = job(id).body;
      auto state = field(body, "state");
      if (state != "running" && state != "queued") {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return body;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static bool user_ok_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* jobs_test::dir_ = nullptr;
cws::test::sshd* jobs_test::farm_ = nullptr;
cws::test::daemon* jobs_test::d_ = nullptr;
bool jobs_test::user_ok_ = false;

TEST_F(jobs_test, an_async_nodeshell_is_accepted_then_polled_to_its_per_node_results) {
  auto id = start("jb01,jb02", "echo hi-$((6*7)); exit 2");
  auto body = until_ended(id);
  EXPECT_EQ(field(body, "state"), "done") << body;
  EXPECT_EQ(field(body, "operation"), "nodeshell");
  EXPECT_EQ(field(body, "user"), "root");
  EXPECT_NE(body.find("\"targets\":2,\"finished\":2,\"failed\":2"), std::string::npos) << body;
  EXPECT_NE(body.find("{\"node\":\"jb01\",\"rc\":2,\"stdout\":[\"hi-42\"],\"stderr\":[]}"),
            std::string::npos)
    << body;
  EXPECT_NE(body.find("{\"node\":\"jb02\",\"rc\":2,\"stdout\":[\"hi-42\"],\"stderr\":[]}"),
            std::string::npos);
  auto list = client.get(d_->url("/jobs"));
  EXPECT_EQ(list.status, 200u);
  EXPECT_NE(list.body.find("\"id\":\"" + id + "\""), std::string::npos) << list.body;
}

TEST_F(jobs_test, a_jobs_stream_sends_each_node_then_the_summary) {
  auto id = start("jb03,jb04", "sleep 0.5; echo s");
  auto r = job(id, "&stream=1");
  EXPECT_EQ(r.headers["Content-Type"], "application/x-ndjson");
  EXPECT_EQ(std::count(r.body.begin(), r.body.end(), '\n'), 3) << r.body;
  EXPECT_NE(r.body.find("{\"node\":\"jb04\",\"rc\":0,\"stdout\":[\"s\"],\"stderr\":[]}\n"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("{\"done\":\"true\",\"nodes\":2,\"failed\":0}\n"), std::string::npos)
    << r.body;
  // a stream of a job that ended: what it has, then the summary
  r = job(id, "&stream=1");
  EXPECT_EQ(std::count(r.body.begin(), r.body.end(), '\n'), 3) << r.body;
}

TEST_F(jobs_test, a_cancel_ends_a_long_command_promptly_with_cancelled_results) {
  auto id = start("jb05,jb06", "sleep 30.25");
  auto running = [&] {
    return run_tool(d_->home(), "pgrep -x -f 'sleep 30[.]25'").rc == 0;
  };
  for (int i = 0; i < 1000 && !running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(running());
  auto began = clock_type::now();
  auto r = client.request("DELETE", d_->url("/jobs/" + id));
  EXPECT_EQ(r.status, 200u) << r.body;
  auto body = until_ended(id, std::chrono::seconds(10));
  std::chrono::duration<double> took = clock_type::now() - began;
  EXPECT_LT(took.count(), 5.0);
  EXPECT_EQ(field(body, "state"), "cancelled") << body;
  EXPECT_NE(body.find("\"error\":\"cancelled\",\"message\":\"Cancelled by root"), std::string::npos)
    << body;
  for (int i = 0; i < 300 && running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(running()) << "the remote commands outlived the cancel";
}

TEST_F(jobs_test, another_users_job_is_not_found_and_cannot_be_cancelled) {
  if (!user_ok_) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  std::string who = std::string{"userName="} + test_user + "&userPW=userpw";
  auto id = start("jb01", "true");
  auto r = client.get("/clusterws/jobs/" + id + "?" + who);
  EXPECT_EQ(r.status, 404u) << r.body;
  EXPECT_EQ(client.request("DELETE", "/clusterws/jobs/" + id + "?" + who).status, 404u);
  r = client.get("/clusterws/jobs?" + who);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body.find(id), std::string::npos) << r.body;
  // the user's own job it reads
  r = client.request("POST", "/clusterws/nodes/jb02/nodeshell?async=1&" + who,
                     "{\"command\":\"id -un\"}");
  ASSERT_EQ(r.status, 202u) << r.body;
  auto mine = field(r.body, "job");
  auto body = until_ended(mine);
  r = client.get("/clusterws/jobs/" + mine + "?" + who);
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find(std::string{"\"stdout\":[\""} + test_user + "\"]"), std::string::npos)
    << r.body;
}

TEST_F(jobs_test, bad_job_requests_are_refused_and_change_nothing) {
  EXPECT_EQ(job("0000000000000000").status, 404u);
  auto r = client.request("POST", d_->url("/nodes/jb01/nodeshell", "&async=1&stream=1"),
                          "{\"command\":\"true\"}");
  EXPECT_EQ(r.status, 400u) << r.body;
  r = client.get(d_->url("/nodes/jb01", "&async=1"));
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_EQ(client.request("PUT", d_->url("/jobs")).status, 405u);
}

TEST_F(jobs_test, a_jobs_output_stays_within_job_output_max_bytes_and_the_cut_is_marked) {
  // 64 bytes kept: the first node's 50, then 14 of the second, the third none
  auto id = start("jb01,jb02,jb03", "sleep 0.$((RANDOM % 3)); head -c 50 /dev/zero | tr '\\\\0' x");
  auto body = until_ended(id);
  EXPECT_EQ(field(body, "state"), "done") << body;
  EXPECT_NE(body.find("\"truncated\":2"), std::string::npos) << body;
  EXPECT_EQ(std::count(body.begin(), body.end(), 'x'), 64) << body;
}

TEST_F(jobs_test, finished_jobs_past_jobs_keep_max_are_forgotten_oldest_first) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(start("jb01", "true"));
    until_ended(ids.back());
  }
  EXPECT_EQ(job(ids[0]).status, 404u);
  EXPECT_EQ(job(ids[4]).status, 200u);
  auto list = client.get(d_->url("/jobs")).body;
  EXPECT_LE(std::count(list.begin(), list.end(), '{') - 1, 4) << list;
}

TEST_F(jobs_test, job_events_reach_the_jobs_user_and_root_on_the_event_stream) {
  auto url = [&](const std::string& who) {
    return "https://127.0.0.1:" + std::to_string(d_->port()) + "/clusterws/events?" + who
           + "&types=job";
  };
  event_tail root{d_->ca(), dir_->path / "root.ev", url("userName=root&userPW=rootpw")};
  ASSERT_NE(root.wait_for(": keep-alive").find(": keep-alive"), std::string::npos);
  std::unique_ptr<event_tail> user;
  if (user_ok_) {
    // a user allowed lsdef on everything, so its stream is allowed: job events of its own only
    run_tool(d_->home(),
             std::string{"mkdef -t policy -o 7 name="} + test_user + " rule=allow commands=lsdef");
    user
      = std::make_unique<event_tail>(d_->ca(), dir_->path / "user.ev",
                                     url(std::string{"userName="} + test_user + "&userPW=userpw"));
    ASSERT_NE(user->wait_for(": keep-alive").find(": keep-alive"), std::string::npos);
  }
  auto id = start("jb02", "true");
  auto got = root.wait_for("\"job\":\"" + id + "\",\"event\":\"ended\"");
  EXPECT_NE(got.find("event: job\ndata: {\"job\":\"" + id + "\",\"event\":\"created\""),
            std::string::npos)
    << got;
  EXPECT_NE(got.find("\"job\":\"" + id
                     + "\",\"event\":\"ended\",\"user\":\"root\","
                       "\"operation\":\"nodeshell\",\"state\":\"done\",\"targets\":1,"
                       "\"finished\":1,\"failed\":0}"),
            std::string::npos)
    << got;
  EXPECT_EQ(got.find("\"type\":\"node\""), std::string::npos) << "types=job: jobs only";
  if (user) {
    auto r = client.request("POST",
                            "/clusterws/nodes/jb03/nodeshell?async=1&userName="
                              + std::string{test_user} + "&userPW=userpw",
                            "{\"command\":\"true\"}");
    auto mine = field(r.body, "job");
    auto seen = user->wait_for("\"job\":\"" + mine + "\",\"event\":\"ended\"");
    EXPECT_NE(seen.find(mine), std::string::npos) << seen;
    EXPECT_EQ(seen.find(id), std::string::npos) << "root's job is not the user's to see";
    run_tool(d_->home(), "rmdef -t policy -o 7");
  }
}

TEST_F(jobs_test, clusterctl_events_types_job_shows_a_jobs_life) {
  auto out = dir_->path / "tail.out";
  std::string cmd
    = "exec env PATH=" CLUSTERWS_BIN_DIR ":$PATH CLUSTERWS_HOME=" + d_->home().string()
      + " clusterctl events --types job > " + out.string() + " 2>&1";
  std::string sh = "sh", c = "-c";
  char* argv[] = {sh.data(), c.data(), cmd.data(), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawnp(&pid, "sh", nullptr, nullptr, argv, environ), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500)); // subscribed
  auto id = start("jb01,jb02", "true");
  auto want = "job " + id + " ended done nodeshell 2/2 0 root\n";
  auto got = cws::test::slurp(out);
  for (int i = 0; i < 200 && got.find(want) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    got = cws::test::slurp(out);
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  EXPECT_NE(got.find("job " + id + " created running nodeshell 0/0 0 root\n"), std::string::npos)
    << got;
  EXPECT_NE(got.find(want), std::string::npos) << got;
}

TEST_F(jobs_test, a_restart_leaves_a_running_job_interrupted) {
  auto id = start("jb04", "sleep 30.5");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // still running when the daemon stops (else the node failed at once: its record says why)
  ASSERT_EQ(field(job(id).body, "state"), "running") << job(id).body;
  EXPECT_EQ(d_->stop(), 0);
  d_->start();
  cws::test::https_client again{d_->ca(), d_->port()};
  auto r = again.get(d_->url("/jobs/" + id));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(field(r.body, "state"), "interrupted") << r.body;
  EXPECT_EQ(field(r.body, "operation"), "nodeshell");
}

} // namespace

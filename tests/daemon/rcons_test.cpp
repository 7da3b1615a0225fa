// rcons against a real clusterwsd and real ipmi_sim BMCs with Serial-over-LAN (the console
// tests' fixture), driven through a pty as a person would: the serial side's text appears,
// keystrokes reach the serial side, ^Ec. leaves with the terminal restored, -s cannot type,
// -f and ^Ecf take over (the writer is told), ^Ecl0 sends a break, policy `rcons` for users
// other than root, a node without cons, no daemon; and makeconservercf -d kept across a
// restart (nodehm.consoleenabled). Over HTTPS to a conserver-host too: the password asked
// without echo, a wrong password and a wrong CA refused with the terminal untouched.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/sol_console_fixture.hpp"
#include "../support/sshd.hpp"

namespace {

using namespace cws::test;
using namespace std::chrono_literals;

constexpr const char* rcons_user = "cwsrcons";

/// rcons (or any tool) on a pty of its own: what it prints, what is typed, its exit.
class pty_tool {
 public:
  /// Runs `args` (the tool first) with the built tools and `home`; as Unix user `user` when
  /// given (setpriv, as tests/support/daemon.hpp's as_user).
  pty_tool(const std::filesystem::path& home, std::vector<std::string> args,
           const std::string& user = {}) {
    if (!user.empty()) {
      args.insert(args.begin(), {"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups"});
    }
    pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::string path = std::string{CLUSTERWS_BIN_DIR} + ":" + ::getenv("PATH");
      ::setenv("PATH", path.c_str(), 1);
      ::setenv("CLUSTERWS_HOME", home.c_str(), 1);
      std::vector<char*> argv;
      for (auto& a : args) {
        argv.push_back(a.data());
      }
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    // the terminal's own side, to see its modes (raw while attached, restored after)
    slave_ = ::open(::ptsname(fd_), O_RDWR | O_NOCTTY | O_CLOEXEC);
  }

  ~pty_tool() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(fd_);
    if (slave_ >= 0) {
      ::close(slave_);
    }
  }

  /// Reads until what it printed (from `from` on) holds `text`, for at most `limit`.
  bool wait_for(const std::string& text, std::chrono::milliseconds limit = 10s) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (seen_.find(text) == std::string::npos && std::chrono::steady_clock::now() < until) {
      pump(100);
    }
    return seen_.find(text) != std::string::npos;
  }

  void type(const std::string& keys) {
    ASSERT_EQ(::write(fd_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }

  /// Its exit status (waiting at most `limit`; -1: still running; 1000 + N: killed by signal
  /// N, not handled).
  int wait_exit(std::chrono::milliseconds limit = 10s) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        pump(50);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
      }
      pump(50);
    }
    return -1;
  }

  /// The terminal is in canonical mode with echo (as a shell leaves it).
  bool cooked() const {
    termios t{};
    return ::tcgetattr(slave_, &t) == 0 && (t.c_lflag & ICANON) != 0 && (t.c_lflag & ECHO) != 0;
  }

  const std::string& seen() const {
    return seen_;
  }

  pid_t pid() const {
    return pid_;
  }

 private:
  void pump(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) == 1) {
      char buf[4096];
      auto n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        seen_.append(buf, static_cast<size_t>(n));
      }
    }
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  int slave_ = -1;
  bool exited_ = false;
  std::string seen_;
};

class rcons_test : public sol_console_fixture {
 protected:
  void up() {
    start(1, "");
    define("cn1", 0);
    d_->start();
    ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); })) << slurp(d_->log());
  }

  std::unique_ptr<pty_tool> rcons(std::vector<std::string> args, const std::string& user = {}) {
    args.insert(args.begin(), "rcons");
    return std::make_unique<pty_tool>(d_->home(), std::move(args), user);
  }

  /// Waits `limit` and says whether the serial side got `text`.
  bool serial_gets(const std::string& text, std::chrono::milliseconds limit = 10s) {
    return serial_until(0, text, limit).find(text) != std::string::npos;
  }
};

TEST_F(rcons_test, the_console_shows_and_takes_keystrokes_and_ctrl_e_c_dot_leaves_cooked) {
  up();
  type(0, "before rcons\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "before rcons"); }));
  auto r = rcons({"cn1"});
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  EXPECT_TRUE(r->wait_for("before rcons")) << r->seen();     // the replay
  EXPECT_TRUE(eventually([&] { return !r->cooked(); }, 5s)); // raw while attached
  type(0, "login: ");
  EXPECT_TRUE(r->wait_for("login: ")) << r->seen();
  r->type("root\r");
  EXPECT_TRUE(serial_gets("root\r"));
  r->type("\x05"
          "c.");
  EXPECT_EQ(r->wait_exit(), 0) << r->seen();
  EXPECT_NE(r->seen().find("[disconnect]"), std::string::npos) << r->seen();
  EXPECT_TRUE(r->cooked());
}

TEST_F(rcons_test, a_spy_sees_the_console_and_cannot_type) {
  up();
  auto r = rcons({"cn1", "-s", "--replay", "0"});
  ASSERT_TRUE(r->wait_for("[spying]")) << r->seen();
  type(0, "spied text\r\n");
  EXPECT_TRUE(r->wait_for("spied text")) << r->seen();
  r->type("nope\r");
  EXPECT_TRUE(r->wait_for("[read-only -- use ^E c ? for help]")) << r->seen();
  r->type("\x05"
          "cl0");
  EXPECT_TRUE(r->wait_for("[attach to send break]")) << r->seen();
  EXPECT_FALSE(serial_gets("nope", 1500ms));
  r->type("\x05"
          "c.");
  EXPECT_EQ(r->wait_exit(), 0);
  EXPECT_TRUE(r->cooked());
}

TEST_F(rcons_test, force_takes_the_console_over_and_the_writer_is_told_and_reads_on) {
  up();
  auto a = rcons({"cn1", "--replay", "0"});
  ASSERT_TRUE(a->wait_for("[Enter `^Ec?' for help]")) << a->seen();
  // wait until a holds it: its keystrokes arrive
  a->type("from-a1\r");
  ASSERT_TRUE(serial_gets("from-a1\r"));
  auto b = rcons({"cn1", "--replay", "0"});
  EXPECT_TRUE(b->wait_for("[no, root is attached]")) << b->seen();
  b->type("\x05"
          "cf");
  EXPECT_TRUE(b->wait_for("[bumped root]")) << b->seen();
  EXPECT_TRUE(a->wait_for("[forced to `spy' mode by root]")) << a->seen();
  b->type("from-b\r");
  EXPECT_TRUE(serial_gets("from-b\r"));
  a->type("from-a2\r");
  EXPECT_TRUE(a->wait_for("[read-only -- use ^E c ? for help]")) << a->seen();
  // both see the console
  type(0, "for both\r\n");
  EXPECT_TRUE(a->wait_for("for both"));
  EXPECT_TRUE(b->wait_for("for both"));
  // -f on the command line: c takes it from b
  auto c = rcons({"cn1", "-f", "--replay", "0"});
  EXPECT_TRUE(c->wait_for("[bumped root]")) << c->seen();
  EXPECT_TRUE(b->wait_for("[forced to `spy' mode by root]")) << b->seen();
  EXPECT_FALSE(serial_gets("from-a2", 1000ms));
  // ^Ecs gives the writer up, ^Eca takes it when nobody writes
  c->type("\x05"
          "cs");
  EXPECT_TRUE(c->wait_for("[spying]")) << c->seen();
  a->type("\x05"
          "ca");
  EXPECT_TRUE(a->wait_for("[attached]")) << a->seen();
  a->type("from-a3\r");
  EXPECT_TRUE(serial_gets("from-a3\r"));
  for (auto* t : {a.get(), b.get(), c.get()}) {
    t->type("\x05"
            "c.");
    EXPECT_EQ(t->wait_exit(), 0) << t->seen();
  }
}

TEST_F(rcons_test, ctrl_e_c_l0_sends_a_break_which_the_console_log_notes) {
  up();
  auto r = rcons({"cn1", "--replay", "0"});
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  r->type("x");
  ASSERT_TRUE(serial_gets("x"));
  r->type("\x05"
          "cl0");
  EXPECT_TRUE(r->wait_for("[halt sent]")) << r->seen();
  // ipmi_sim's "tcp:" serial side has no line to break: the console server's note says the
  // SOL packet went (ipmi/sol's tests check its break bit)
  EXPECT_TRUE(eventually([&] { return log_has("cn1", "break sent by root"); }, 5s))
    << slurp(log_of("cn1"));
  EXPECT_TRUE(r->wait_for("break sent by root")) << r->seen();
  r->type("\x05"
          "c?");
  EXPECT_TRUE(r->wait_for("[help]")) << r->seen();
  r->type("\x05"
          "cz");
  EXPECT_TRUE(r->wait_for("[not in rcons -- use `?']")) << r->seen();
  r->type("\x05"
          "c.");
  EXPECT_EQ(r->wait_exit(), 0);
}

// A terminal is read on the WebSocket's event loop (no thread of its own: one wake-up per
// key). Boost.Asio makes the descriptor O_NONBLOCK while it waits on it (the open file
// description, shared with stdout and with the shell): rcons's own writes wait out EAGAIN
// and the flags are as before once it leaves. A shell on the pty shows its stdin's flags
// before and after.
TEST_F(rcons_test, a_terminal_is_read_on_the_event_loop_and_its_flags_are_restored_at_the_exit) {
  up();
  auto r = std::make_unique<pty_tool>(
    d_->home(), std::vector<std::string>{"sh", "-c",
                                         "grep flags /proc/$$/fdinfo/0; rcons cn1 --replay 0; "
                                         "echo after; grep flags /proc/$$/fdinfo/0"});
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  r->type("k");
  ASSERT_TRUE(serial_gets("k"));
  auto sh = "/proc/" + std::to_string(r->pid());
  std::ifstream children{sh + "/task/" + std::to_string(r->pid()) + "/children"};
  long rcons_pid = 0;
  ASSERT_TRUE(children >> rcons_pid);
  size_t threads = 0;
  for ([[maybe_unused]] const auto& t :
       std::filesystem::directory_iterator("/proc/" + std::to_string(rcons_pid) + "/task")) {
    ++threads;
  }
  EXPECT_EQ(threads, 1u);
  r->type("\x05"
          "c.");
  EXPECT_EQ(r->wait_exit(), 0) << r->seen();
  auto out = r->seen();
  auto first = out.find("flags:");
  auto after = out.find("after");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(after, std::string::npos) << out;
  auto second = out.find("flags:", after);
  ASSERT_NE(second, std::string::npos) << out;
  auto value = [&](size_t at) {
    return std::stol(out.substr(at + 6), nullptr, 8);
  };
  EXPECT_EQ(value(first) & O_NONBLOCK, 0) << out;
  EXPECT_EQ(value(second), value(first)) << out;
}

TEST_F(rcons_test, a_pipe_for_input_is_typed_and_its_end_leaves) {
  up();
  auto out = run_tool_streams(d_->home(), "sh -c \"printf 'piped\\r' | rcons cn1 --replay 0\"");
  EXPECT_EQ(out.rc, 0) << out.out << out.err;
  EXPECT_TRUE(serial_gets("piped\r"));
}

TEST_F(rcons_test, a_signal_ends_rcons_with_the_terminal_restored) {
  up();
  auto r = rcons({"cn1", "--replay", "0"});
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  ASSERT_TRUE(eventually([&] { return !r->cooked(); }, 5s));
  ::kill(r->pid(), SIGTERM);
  EXPECT_EQ(r->wait_exit(), 128 + SIGTERM); // handled: an exit, not a death
  EXPECT_TRUE(r->cooked());
  auto h = rcons({"cn1", "--replay", "0"});
  ASSERT_TRUE(h->wait_for("[Enter `^Ec?' for help]")) << h->seen();
  ::kill(h->pid(), SIGHUP);
  EXPECT_EQ(h->wait_exit(), 128 + SIGHUP);
  EXPECT_TRUE(h->cooked());
}

TEST_F(rcons_test, the_daemon_stopping_ends_rcons_with_conservers_line) {
  up();
  auto r = rcons({"cn1", "--replay", "0"});
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  ASSERT_TRUE(eventually([&] { return !r->cooked(); }, 5s));
  d_->stop();
  EXPECT_EQ(r->wait_exit(), 1) << r->seen();
  EXPECT_NE(r->seen().find("[-- Console server shutting down --]"), std::string::npos) << r->seen();
  EXPECT_TRUE(r->cooked());
}

TEST_F(rcons_test, a_user_without_an_rcons_policy_row_is_refused_and_one_with_it_attaches) {
  if (!ensure_user(rcons_user)) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  up();
  auto no = rcons({"cn1"}, rcons_user);
  EXPECT_EQ(no->wait_exit(), 1) << no->seen();
  EXPECT_NE(no->seen().find("Error: Authentication failure"), std::string::npos)
    << no->seen(); // the API's words (the refusal's body, kept by the handshake)
  EXPECT_EQ(no->seen().find("[Enter"), std::string::npos) << no->seen();
  EXPECT_TRUE(no->cooked());
  run_tool(d_->home(),
           std::string{"mkdef -t policy -o 7 name="} + rcons_user + " rule=allow commands=rcons");
  auto yes = rcons({"cn1", "--replay", "0"}, rcons_user);
  ASSERT_TRUE(yes->wait_for("[Enter `^Ec?' for help]")) << yes->seen();
  yes->type("user-keys\r");
  EXPECT_TRUE(serial_gets("user-keys\r")) << yes->seen();
  yes->type("\x05"
            "c.");
  EXPECT_EQ(yes->wait_exit(), 0) << yes->seen();
}

TEST_F(rcons_test, a_node_without_cons_and_a_daemon_not_running_are_clear_errors) {
  start(0, "");
  ASSERT_EQ(run_tool(d_->home(), "mkdef cn9 groups=all mgt=ipmi").rc, 0);
  auto down = run_tool_streams(d_->home(), "rcons cn9");
  EXPECT_EQ(down.rc, 1);
  EXPECT_NE(down.err.find("clusterwsd is not running"), std::string::npos) << down.err;
  d_->start();
  auto r = run_tool_streams(d_->home(), "rcons cn9");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cn9: no console (its cons attribute is not set)"), std::string::npos)
    << r.out << r.err;
  auto bad = run_tool_streams(d_->home(), "rcons cn9 -f -s");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("The -f flag can not be used with the -s flag."), std::string::npos)
    << bad.err;
}

TEST_F(rcons_test, over_https_the_password_is_asked_without_echo_and_the_console_types) {
  up();
  type(0, "before https\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "before https"); }));
  auto r = rcons({"cn1", "127.0.0.1:" + std::to_string(d_->port()), "--user", "root", "--cacert",
                  d_->ca().string()});
  ASSERT_TRUE(r->wait_for("root's password: ")) << r->seen();
  r->type("rootpw\r");
  ASSERT_TRUE(r->wait_for("[Enter `^Ec?' for help]")) << r->seen();
  EXPECT_EQ(r->seen().find("rootpw"), std::string::npos) << r->seen(); // not echoed
  EXPECT_TRUE(r->wait_for("before https")) << r->seen();               // the replay
  EXPECT_TRUE(eventually([&] { return !r->cooked(); }, 5s));
  type(0, "login: ");
  EXPECT_TRUE(r->wait_for("login: ")) << r->seen();
  r->type("over-tls\r");
  EXPECT_TRUE(serial_gets("over-tls\r"));
  r->type("\x05"
          "c.");
  EXPECT_EQ(r->wait_exit(), 0) << r->seen();
  EXPECT_NE(r->seen().find("[disconnect]"), std::string::npos) << r->seen();
  EXPECT_TRUE(r->cooked());
  // a script: the password from CLUSTERWS_PASSWORD, the cluster CA of the home by default
  auto piped
    = run_tool_streams(d_->home(), "sh -c \"printf 'scripted\\r' | "
                                   "CLUSTERWS_PASSWORD=rootpw rcons cn1 127.0.0.1:"
                                     + std::to_string(d_->port()) + " --user root --replay 0\"");
  EXPECT_EQ(piped.rc, 0) << piped.out << piped.err;
  EXPECT_TRUE(serial_gets("scripted\r"));
}

TEST_F(rcons_test, over_https_a_wrong_password_is_refused_with_the_apis_words_and_exit_1) {
  up();
  auto r = rcons({"cn1", "127.0.0.1:" + std::to_string(d_->port()), "--user", "root", "--cacert",
                  d_->ca().string()});
  ASSERT_TRUE(r->wait_for("root's password: ")) << r->seen();
  r->type("wrong\r");
  EXPECT_EQ(r->wait_exit(), 1) << r->seen();
  EXPECT_NE(r->seen().find("Error: Authentication failure"), std::string::npos) << r->seen();
  EXPECT_EQ(r->seen().find("[Enter"), std::string::npos) << r->seen();
  EXPECT_TRUE(r->cooked());
}

TEST_F(rcons_test, over_https_a_certificate_not_signed_by_the_given_ca_is_refused_clearly) {
  up();
  auto other = dir_.path / "other-ca.pem";
  ASSERT_EQ(std::system(("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                         "-subj /CN=other -days 1 -keyout '"
                         + (dir_.path / "other-key.pem").string() + "' -out '" + other.string()
                         + "' 2>/dev/null")
                          .c_str()),
            0);
  auto port = std::to_string(d_->port());
  auto r = run_tool_streams(d_->home(), "env CLUSTERWS_PASSWORD=rootpw rcons cn1 127.0.0.1:" + port
                                          + " --user root --cacert '" + other.string() + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: TLS with 127.0.0.1:" + port + " failed"), std::string::npos)
    << r.err;
  EXPECT_NE(r.err.find("certificate verify failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(other.string()), std::string::npos) << r.err;
  auto missing = run_tool_streams(d_->home(), "env CLUSTERWS_PASSWORD=rootpw rcons cn1 127.0.0.1:"
                                                + port + " --cacert /nonexistent/ca.pem");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("cannot read the CA certificate /nonexistent/ca.pem"),
            std::string::npos)
    << missing.err;
  auto bad = run_tool_streams(d_->home(), "rcons cn1 127.0.0.1:99999");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("a port from 1 to 65535"), std::string::npos) << bad.err;
}

TEST_F(rcons_test, over_https_an_api_user_needs_an_rcons_policy_row) {
  up();
  ASSERT_EQ(run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
  auto cmd = "sh -c \"printf 'alice-keys\\r' | CLUSTERWS_PASSWORD=alicepw rcons cn1 127.0.0.1:"
             + std::to_string(d_->port()) + " --user alice --replay 0\"";
  auto no = run_tool_streams(d_->home(), cmd);
  EXPECT_EQ(no.rc, 1);
  EXPECT_NE(no.err.find("Error: Authentication failure"), std::string::npos) << no.err;
  EXPECT_EQ(no.out.find("[Enter"), std::string::npos) << no.out;
  ASSERT_EQ(run_tool(d_->home(), "mkdef -t policy -o 7 name=alice rule=allow commands=rcons").rc,
            0);
  auto yes = run_tool_streams(d_->home(), cmd);
  EXPECT_EQ(yes.rc, 0) << yes.out << yes.err;
  EXPECT_TRUE(serial_gets("alice-keys\r"));
}

TEST_F(rcons_test, makeconservercf_d_is_kept_in_the_definitions_across_a_restart) {
  up();
  auto r = run_tool(d_->home(), "makeconservercf -d cn1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(run_tool(d_->home(), "lsdef cn1 -i consoleenabled").out.find("consoleenabled=0"),
            std::string::npos);
  // (makeconservercf -V would hold it again, as xCAT's: an attach says the state)
  auto refused = run_tool_streams(d_->home(), "rcons cn1");
  EXPECT_EQ(refused.rc, 1);
  EXPECT_NE(refused.err.find("not held (makeconservercf -d)"), std::string::npos) << refused.err;
  d_->stop();
  d_->start();
  refused = run_tool_streams(d_->home(), "rcons cn1");
  EXPECT_EQ(refused.rc, 1);
  EXPECT_NE(refused.err.find("not held (makeconservercf -d)"), std::string::npos) << refused.err;
  // holding it again is kept too
  r = run_tool(d_->home(), "makeconservercf cn1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(run_tool(d_->home(), "lsdef cn1 -i consoleenabled").out.find("consoleenabled=1"),
            std::string::npos);
  d_->stop();
  // ipmi_sim keeps the old session's payload until its timeout: the daemon takes it over
  d_->start();
  EXPECT_TRUE(eventually([&] {
    return run_tool(d_->home(), "makeconservercf -V cn1").out.find("cn1: up") != std::string::npos;
  }));
}

} // namespace

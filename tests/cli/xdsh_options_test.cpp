// xdsh's command line without a node: flags, bundling, attached values, the DSH_*
// environment and -X, the ssh options -o may pass, and the remote command string.

#include <gtest/gtest.h>

#include <map>

#include "base/args.hpp"
#include "cli/xdsh_options.hpp"

namespace {

using cws::base::usage_error;
using cws::cli::parse_node_options;
using cws::cli::parse_xdsh;
using cws::cli::remote_command;
using cws::cli::shell_quote;
using cws::ssh::host_key_policy;

std::map<std::string, std::string> env_vars;

const char* fake_env(const char* name) {
  auto it = env_vars.find(name);
  return it == env_vars.end() ? nullptr : it->second.c_str();
}

cws::cli::xdsh_options parse(std::vector<std::string> argv) {
  return parse_xdsh(argv, "alice", fake_env);
}

std::string refusal(std::vector<std::string> argv) {
  try {
    parse(std::move(argv));
  } catch (const usage_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(xdsh_options_test, options_before_and_after_the_noderange_and_the_command_after) {
  env_vars.clear();
  auto o = parse({"-s", "n[1-3]", "-zf64", "-t5", "ls", "-l", "-f", "2"});
  EXPECT_EQ(o.noderange, "n[1-3]");
  EXPECT_TRUE(o.stream);
  EXPECT_TRUE(o.exit_status);
  EXPECT_EQ(o.fanout, 64);
  EXPECT_EQ(o.timeout, 5);
  EXPECT_EQ(o.words, (std::vector<std::string>{"ls", "-l", "-f", "2"})); // the command's own
  o = parse({"n1", "--fanout=3", "--timeout", "9", "--exit-status", "--sudo", "true"});
  EXPECT_EQ(o.fanout, 3);
  EXPECT_EQ(o.timeout, 9);
  EXPECT_TRUE(o.sudo);
  o = parse({"n1", "-o-p 2222", "true"});
  EXPECT_EQ(o.node_options, "-p 2222");
}

TEST(xdsh_options_test, the_environment_fills_what_flags_leave_and_x_keeps_only_named) {
  env_vars
    = {{"DSH_FANOUT", "8"}, {"DSH_TIMEOUT", "4"}, {"DSH_PATH", "/opt/bin"}, {"DSH_SYNTAX", "csh"}};
  auto o = parse({"n1", "true"});
  EXPECT_EQ(o.fanout, 8);
  EXPECT_EQ(o.timeout, 4);
  EXPECT_EQ(o.path, "/opt/bin");
  EXPECT_EQ(o.syntax, "csh");
  o = parse({"n1", "-f", "2", "true"});
  EXPECT_EQ(o.fanout, 2); // the flag wins
  o = parse({"n1", "-X", "DSH_PATH", "true"});
  EXPECT_EQ(o.fanout, 0);
  EXPECT_EQ(o.timeout, -1);
  EXPECT_EQ(o.path, "/opt/bin");
  env_vars = {{"DSH_NODE_RSH", "/usr/bin/rsh"}};
  EXPECT_NE(refusal({"n1", "true"}).find("remote shell cannot be changed"), std::string::npos);
  env_vars.clear();
}

TEST(xdsh_options_test, bad_values_and_missing_parts_are_refused_with_the_reason) {
  env_vars.clear();
  EXPECT_EQ(refusal({"n1", "-f", "1e6", "true"}), "-f takes a whole number, not '1e6'.");
  EXPECT_EQ(refusal({"n1", "-t", "-1", "true"}), "-t takes a whole number, not '-1'.");
  EXPECT_EQ(refusal({"n1"}), "A noderange and a command are needed.");
  EXPECT_EQ(refusal({"n1", "-f"}), "Option -f requires a value.");
  EXPECT_EQ(refusal({"n1", "--nosuch", "true"}), "Unknown option --nosuch.");
  EXPECT_EQ(refusal({"n1", "-l", "bob", "true"}),
            "xdsh runs commands as the user who runs it (alice); -l cannot change the identity.");
  EXPECT_EQ(refusal({"n1", "-l", "alice", "true"}), "accepted");
  EXPECT_EQ(refusal({"-q"}), "accepted"); // -q, -h, -V need no noderange
}

TEST(xdsh_options_test, node_options_change_only_what_the_engine_honours) {
  auto r = parse_node_options("-x -q -p 2200 -o ConnectTimeout=3 -oBatchMode=yes",
                              host_key_policy::accept_new);
  EXPECT_EQ(r.port, 2200);
  EXPECT_EQ(r.connect_timeout->count(), 3000);
  EXPECT_FALSE(r.host_keys.has_value());
  r = parse_node_options("-o StrictHostKeyChecking=yes", host_key_policy::accept_new);
  EXPECT_EQ(r.host_keys, host_key_policy::strict);
  EXPECT_THROW(parse_node_options("-o StrictHostKeyChecking=accept-new", host_key_policy::strict),
               usage_error); // never weaker than the administrator's setting
  for (const char* bad :
       {"-i key", "-l root", "-o IdentityFile=k", "-o user=root", "-p 70000", "-o Port=1e3",
        "-F cfg", "-o Compression=yes", "-p", "-o LogLevel=LOUD"}) {
    EXPECT_THROW(parse_node_options(bad, host_key_policy::accept_new), usage_error) << bad;
  }
}

TEST(xdsh_options_test, ssh_options_xcat_users_pass_trace_pty_or_name_the_one_refused) {
  // xdsh.1's example: -o "-v -t"
  auto r = parse_node_options("-v -t", host_key_policy::accept_new);
  EXPECT_TRUE(r.trace);
  EXPECT_TRUE(r.pty);
  r = parse_node_options("-vvv -o LogLevel=ERROR -o PasswordAuthentication=no "
                         "-o PubkeyAuthentication=yes -o RequestTTY=no",
                         host_key_policy::accept_new);
  EXPECT_TRUE(r.trace);
  EXPECT_FALSE(r.pty);
  r = parse_node_options("-o LogLevel=DEBUG3 -o RequestTTY=force", host_key_policy::accept_new);
  EXPECT_TRUE(r.trace);
  EXPECT_TRUE(r.pty);
  r = parse_node_options("-o LogLevel=QUIET", host_key_policy::accept_new);
  EXPECT_FALSE(r.trace);
  // the option the engine cannot honour is named, with its value
  try {
    parse_node_options("-v -o ServerAliveInterval=30", host_key_policy::accept_new);
    ADD_FAILURE() << "accepted";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(),
                 "ssh option ServerAliveInterval=30 is not supported by clusterws's SSH engine.");
  }
}

TEST(xdsh_options_test, the_remote_command_in_sh_and_csh_syntax_with_sudo) {
  env_vars.clear();
  auto o = parse({"n1", "true"});
  o.path = "/opt/x";
  EXPECT_EQ(remote_command(o, "id -un; echo 'q'", {{"LANG", "C.UTF-8"}}, "export A=1\n"),
            "export PATH='/opt/x'; export LANG='C.UTF-8'; export A=1\nid -un; echo 'q'");
  o.syntax = "csh";
  o.no_locale = true;
  o.sudo = true;
  EXPECT_EQ(remote_command(o, "echo 'q'", {{"LANG", "C"}}, ""),
            "setenv PATH '/opt/x'; sudo -n sh -c 'echo '\\''q'\\'''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

} // namespace

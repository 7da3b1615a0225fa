// The definition tools end to end: the built binaries against a temporary home, output
// compared as text.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "api/settings.hpp"
#include "store/credentials.hpp"
#include "store/database.hpp"
#include "store/home.hpp"

namespace {

struct result {
  int rc;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class cli_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    home_ = new cws::test::temp_dir;
    // the suite's listings of networks start empty whatever this host's interfaces are
    auto r = run_in(home_->path, "clusterctl init --no-networks --admin-password adminpw");
    ASSERT_EQ(r.rc, 0) << r.err;
  }

  static void TearDownTestSuite() {
    delete home_;
  }

  void SetUp() override {
    // each test starts from an empty node table
    run("rmdef all");
    run("rmdef -t group rack1");
  }

  /// Runs a shell command line with the tools first in PATH and CLUSTERWS_HOME = `home`.
  static result run_in(const std::filesystem::path& home, const std::string& cmd,
                       const std::string& input = "") {
    cws::test::temp_dir io;
    auto out = io.path / "out";
    auto err = io.path / "err";
    auto in = io.path / "in";
    std::ofstream{in} << input;
    std::string line = "PATH=" CLUSTERWS_BIN_DIR ":$PATH CLUSTERWS_HOME='" + home.string() + "' "
                       + cmd + " <'" + in.string() + "' >'" + out.string() + "' 2>'" + err.string()
                       + "'";
    int status = std::system(line.c_str());
    return {WEXITSTATUS(status), slurp(out), slurp(err)};
  }

  static result run(const std::string& cmd, const std::string& input = "") {
    return run_in(home_->path, cmd, input);
  }

  /// Runs `cmd` and expects it refused: exit status 1 and `error` in its message.
  static void expect_refused(const std::string& cmd, const std::string& error) {
    auto r = run(cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_NE(r.err.find(error), std::string::npos) << cmd << ": " << r.err;
  }

  static cws::test::temp_dir* home_;
};

cws::test::temp_dir* cli_test::home_ = nullptr;

TEST_F(cli_test, init_creates_pki_config_defaults_and_refuses_twice) {
  auto pki = home_->path / "pki";
  for (auto f : {"ca-cert.pem", "ca-key.pem", "server-cert.pem", "server-key.pem"}) {
    EXPECT_TRUE(std::filesystem::exists(pki / f)) << f;
  }
  EXPECT_EQ(std::filesystem::status(pki / "server-key.pem").permissions()
              & std::filesystem::perms::group_read,
            std::filesystem::perms::none);
  auto verify = run("openssl verify -CAfile '" + (pki / "ca-cert.pem").string() + "' '"
                    + (pki / "server-cert.pem").string() + "'");
  EXPECT_EQ(verify.rc, 0) << verify.out << verify.err;
  auto san = run("openssl x509 -noout -ext subjectAltName -in '"
                 + (pki / "server-cert.pem").string() + "'");
  EXPECT_NE(san.out.find("IP Address:127.0.0.1"), std::string::npos) << san.out;
  EXPECT_NE(san.out.find("DNS:localhost"), std::string::npos);
  auto again = run("clusterctl init");
  EXPECT_EQ(again.rc, 1);
  EXPECT_NE(again.err.find("is already initialized"), std::string::npos);

  cws::test::temp_dir fresh;
  auto gen = run_in(fresh.path / "h", "clusterctl init");
  ASSERT_EQ(gen.rc, 0) << gen.err;
  auto pos = gen.out.find("Password for root (shown once): ");
  ASSERT_NE(pos, std::string::npos);
  auto pw = gen.out.substr(pos + 32, 24);
  cws::store::database db{fresh.path / "h" / "db"};
  auto txn = db.read();
  auto rec = txn.get(cws::store::object_type::passwd, "root");
  ASSERT_TRUE(rec.has_value());
  EXPECT_TRUE(cws::store::verify_password(pw, rec->find("password").value_or("")));
}

TEST_F(cli_test, config_file_docs_and_schema_agree) {
  // init writes every setting of the schema, commented out at its default: the same text
  // as config/clusterws.conf in the tree (`make config` writes it again)
  auto written = cws::test::slurp(home_->path / "clusterws.conf");
  EXPECT_EQ(written, cws::test::slurp(std::filesystem::path{CLUSTERWS_SOURCE_DIR}
                                      / "config/clusterws.conf"));
  auto docs
    = cws::test::slurp(std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "docs/configuration.md");
  size_t rows = 0;
  for (const auto& spec : cws::api::settings_schema()) {
    ++rows;
    if (spec.kind == cws::base::setting_kind::retired) {
      auto row = "| `" + std::string{spec.key} + "` | retired |";
      EXPECT_NE(docs.find(row), std::string::npos) << "docs/configuration.md lacks: " << row;
      EXPECT_EQ(written.find(std::string{spec.key}), std::string::npos) << spec.key;
      continue;
    }
    auto row = "| `" + std::string{spec.key} + "` | `" + std::string{spec.fallback} + "` |";
    EXPECT_NE(docs.find(row), std::string::npos) << "docs/configuration.md lacks: " << row;
    EXPECT_NE(
      written.find("\n#" + std::string{spec.key} + " = " + std::string{spec.fallback} + "\n"),
      std::string::npos)
      << spec.key;
  }
  size_t doc_rows = 0;
  for (size_t pos = 0; (pos = docs.find("\n| `", pos)) != std::string::npos; ++pos) {
    ++doc_rows;
  }
  EXPECT_EQ(doc_rows, rows) << "docs/configuration.md documents a key the schema lacks";
}

TEST_F(cli_test, a_bad_config_stops_the_daemon_and_the_tools_naming_the_line) {
  cws::test::temp_dir fresh;
  ASSERT_EQ(run_in(fresh.path / "h", "clusterctl init --admin-password x").rc, 0);
  std::ofstream{fresh.path / "h" / "clusterws.conf", std::ios::app} << "ssh_port = 70000\n";
  auto conf = (fresh.path / "h" / "clusterws.conf").string();
  for (const char* cmd : {"clusterwsd --listen 127.0.0.1:0", "lsdef"}) {
    auto r = run_in(fresh.path / "h", cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_NE(r.err.find(conf + ":"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("'ssh_port' must be between 1 and 65535, not 70000"), std::string::npos)
      << cmd << ": " << r.err;
  }
}

TEST_F(cli_test, site_and_policy_defaults) {
  auto r = run("lsdef -t site");
  EXPECT_EQ(r.out, "clustersite  (site)\n");
  r = run("lsdef -t site -i tftpdir,xcatdport -c");
  EXPECT_EQ(r.out, "clustersite: tftpdir=/tftpboot\nclustersite: xcatdport=3001\n");
  r = run("lsdef -t policy -o 1");
  EXPECT_EQ(r.out, "Object name: 1\n    name=root\n    rule=allow\n");
  r = run("lsdef -t policy");
  EXPECT_EQ(r.out.substr(0, 28), "1  (policy)\n1.2  (policy)\n2 ");
}

TEST_F(cli_test, mkdef_lsdef_long_short_and_stanza) {
  auto r = run("mkdef -t node -o node1 groups=all mgt=kvm os=rhels9 arch=x86_64");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "1 object definitions have been created or modified.\n");
  r = run("lsdef node1");
  EXPECT_EQ(r.out, "Object name: node1\n"
                   "    arch=x86_64\n"
                   "    groups=all\n"
                   "    mgt=kvm\n"
                   "    os=rhels9\n"
                   "    postbootscripts=otherpkgs\n"
                   "    postscripts=syslog,remoteshell,syncfiles\n");
  run("mkdef node[2-3] groups=all,compute");
  r = run("lsdef");
  EXPECT_EQ(r.out, "node1  (node)\nnode2  (node)\nnode3  (node)\n");
  r = run("lsdef -t node -o node1,node2 -i mgt,bmc -c");
  EXPECT_EQ(r.out, "node1: bmc=\nnode1: mgt=kvm\nnode2: bmc=\nnode2: mgt=\n");
  r = run("lsdef node1 -z -i mgt");
  EXPECT_EQ(r.out, "# <xCAT data object stanza file>\n\nnode1:\n    objtype=node\n    mgt=kvm\n");
  r = run("lsdef -t node,group -o node1 -i mgt");
  EXPECT_EQ(r.out.substr(0, 29), "Object name: node1  (node)\n  ");
  r = run("lsdef -w mgt==kvm");
  EXPECT_EQ(r.out, "node1  (node)\n");
  r = run("lsdef -t group");
  EXPECT_EQ(r.out, "all  (group)\ncompute  (group)\n");
  r = run("lsdef -t group -o compute");
  EXPECT_EQ(r.out, "Object name: compute\n    members=node2,node3\n");
}

TEST_F(cli_test, lsdef_z_alone_is_the_full_stanza_listing_and_with_s_the_names) {
  // DBobjectdefs.pm defls: -z asks for the long form as -l does; -s keeps only `name:`
  run("mkdef node[1-2] groups=all mgt=kvm");
  auto full = run("lsdef -z");
  EXPECT_EQ(full.out, "# <xCAT data object stanza file>\n\nnode1:\n    objtype=node\n"
                      "    groups=all\n    mgt=kvm\n\nnode2:\n    objtype=node\n"
                      "    groups=all\n    mgt=kvm\n");
  EXPECT_EQ(run("lsdef -l -z").out, full.out);
  EXPECT_EQ(run("lsdef -s -z").out, "# <xCAT data object stanza file>\n\nnode1:\n\nnode2:\n");
  EXPECT_EQ(run("lsdef node1 -z -i mgt -c").out,
            "# <xCAT data object stanza file>\n\nnode1:\n    objtype=node\nnode1: mgt=kvm\n");
}

TEST_F(cli_test, regex_group_rows_give_each_node_its_own_value_wherever_it_is_read) {
  auto r = run(R"(mkdef -t group rack1 mgt=ipmi 'ip=|node(\d+)|10.0.0.($1+0)|' 'bmc=/\z/-bmc/' )"
               R"('vmmemory=|\D+(\d+)|(sprintf("%04d",$1*2))|')");
  ASSERT_EQ(r.rc, 0) << r.err;
  run("mkdef 'node[08-10]' groups=rack1,all");
  run("mkdef node11 groups=rack1,all ip=192.168.0.11"); // the node's own value wins
  r = run("lsdef node08,node11 -i ip,bmc,vmmemory -c");
  EXPECT_EQ(r.out, "node08: bmc=node08-bmc\nnode08: ip=10.0.0.8\nnode08: vmmemory=0016\n"
                   "node11: bmc=node11-bmc\nnode11: ip=192.168.0.11\nnode11: vmmemory=0022\n");
  r = run("nodels 'node[08-10]' hosts.ip");
  EXPECT_EQ(r.out, "node08: 10.0.0.8\nnode09: 10.0.0.9\nnode10: 10.0.0.10\n");
  r = run("nodels rack1 ip==10.0.0.9"); // selection reads the evaluated value
  EXPECT_EQ(r.out, "node09\n");
  r = run("lsdef -w bmc==node10-bmc");
  EXPECT_EQ(r.out, "node10  (node)\n");
  // the group itself shows the expression, as xCAT's lsdef -t group does
  r = run("lsdef -t group -o rack1 -i ip");
  EXPECT_EQ(r.out, "Object name: rack1\n    ip=|node(\\d+)|10.0.0.($1+0)|\n");

  // a bad expression is refused when written, naming the attribute, and changes nothing
  r = run(R"(chdef -t group rack1 'ip=|node(\d+)|10.0.0.($1 + 1)|' 'bmc=x')");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: The value of 'ip' is not a valid xCAT expression: '($1 + 1)' may "
                       "hold only integer arithmetic"),
            std::string::npos)
    << r.err;
  r = run(R"(mkdef node12 groups=all 'bmc=/node(\d+/x/')");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("invalid regular expression 'node(\\d+': missing )"), std::string::npos)
    << r.err;
  EXPECT_EQ(run("lsdef node09 -i bmc,ip -c").out, "node09: bmc=node09-bmc\nnode09: ip=10.0.0.9\n");
  EXPECT_EQ(run("lsdef node12").rc, 1);
}

TEST_F(cli_test, dynamic_groups_select_their_members_at_read_time) {
  run("mkdef 'node[1-4]' groups=all mgt=kvm os=sles15");
  run("chdef node3,node4 mgt=ipmi");
  auto r = run("mkdef -t group -o rack1 -d -w mgt==kvm -w 'os=~^sles[0-9]+$'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("lsdef -t group -o rack1").out,
            "Object name: rack1\n    grouptype=dynamic\n    members=node1,node2\n"
            "    wherevals=mgt==kvm::os=~^sles[0-9]+$\n");
  EXPECT_EQ(run("nodels rack1,node3").out, "node1\nnode2\nnode3\n"); // in any noderange
  run("chdef node2 mgt=ipmi"); // membership follows the attributes, nothing to update
  EXPECT_EQ(run("nodels rack1").out, "node1\n");
  r = run("chdef -t group -o rack1 -d -w mgt==ipmi");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("nodels rack1").out, "node2\nnode3\nnode4\n");

  // refused, and nothing changes
  expect_refused("mkdef -t group -o g2 -d", "The '-d' option must be used with the '-w' option.");
  expect_refused("mkdef -t group -o g2 -w mgt==kvm",
                 "The '-w' option can only be used with '-d' to define a dynamic group.");
  expect_refused("mkdef -t group -o g2 -d -w mgt==kvm members=node1",
                 "comes from its '-w' selections");
  expect_refused("mkdef -t group -o g2 -d -w mgt", "'mgt' is not attr==val");
  expect_refused("mkdef -t group -o g2 -d -w 'os=~('", "Invalid regular expression '('");
  expect_refused("mkdef -o node9 -d -w mgt==kvm groups=all", "only be used with '-t group'");
  expect_refused("chdef -t group rack1 members=node1", "'rack1' is a dynamic group");
  EXPECT_EQ(run("lsdef -t group -o g2").rc, 1);
  EXPECT_EQ(run("nodels rack1").out, "node2\nnode3\nnode4\n");
  run("rmdef -t group rack1");
}

TEST_F(cli_test, lsdef_template_shows_xcats_shipped_node_templates) {
  auto r = run("lsdef --template");
  EXPECT_EQ(r.out, "cec-template  (node)\ncumulusswitch  (node)\nhmc-template  (node)\n"
                   "onieswitch  (node)\nppc64le-openbmc-template  (node)\n"
                   "ppc64le-template  (node)\nppc64lekvmguest-template  (node)\n"
                   "switch-template  (node)\nx86_64-template  (node)\n"
                   "x86_64kvmguest-template  (node)\n");
  r = run("lsdef -t node --template hmc-template");
  EXPECT_EQ(r.out, "Object name: hmc-template\n"
                   "    groups=hmc\n"
                   "    hwtype=hmc\n"
                   "    ip=MANDATORY:the ip address of the hmc\n"
                   "    mgt=hmc\n"
                   "    nodetype=hmc\n"
                   "    password=MANDATORY:the password of the hmc\n"
                   "    postbootscripts=otherpkgs\n"
                   "    postscripts=syslog,remoteshell,syncfiles\n"
                   "    usercomment=the template for hmc definition\n"
                   "    username=MANDATORY:the username on the hmc\n");
  r = run("lsdef --template cec-template -z");
  EXPECT_EQ(r.out, "# <xCAT data object stanza file>\n\ncec-template:\n    objtype=node\n"
                   "    groups=cec,all\n"
                   "    hcp=MANDATORY:The hardware control point(HMC) for the node\n"
                   "    hwtype=cec\n    mgt=hmc\n"
                   "    mtm=MANDATORY:The machine type and model number of the node\n"
                   "    nodetype=ppc\n    serial=MANDATORY:The serial number of the node\n"
                   "    usercomment=the cec definition template\n");
  EXPECT_EQ(run("lsdef --template x86_64-template -i bmc,hcp -c").out,
            "x86_64-template: bmc=MANDATORY:The hostname or ip address of the BMC adapater\n"
            "x86_64-template: hcp=\n");
  EXPECT_EQ(run("lsdef --template -w mgt==kvm").out,
            "ppc64lekvmguest-template  (node)\nx86_64kvmguest-template  (node)\n");
  EXPECT_EQ(run("lsdef --template -a").out.substr(0, 20), "cec-template (node)\n");
  r = run("lsdef --template x86_64-template,nosuch");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Error: Could not find nosuch in xCAT templates.\n");
  expect_refused("lsdef -t group --template",
                 "Could not find any object definition templates of type 'group'.");
  expect_refused("lsdef --template x86_64-template node1", "Cannot combine '--template'");
}

TEST_F(cli_test, mkdef_template_makes_nodes_from_a_shipped_template_or_an_existing_node) {
  auto r = run("mkdef --template x86_64-template cn1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: The attribute \"bmc\" must be specified!\n"
                   "Error: The attribute \"ip\" must be specified!\n");
  EXPECT_EQ(run("lsdef cn1").rc, 1);
  r = run("mkdef --template x86_64-template 'cn[1-2]' ip=10.0.0.1 bmc=cn-bmc mac= "
          "groups=compute,all");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "2 object definitions have been created or modified.\n");
  EXPECT_EQ(run("lsdef cn2").out, "Object name: cn2\n"
                                  "    arch=x86_64\n"
                                  "    bmc=cn-bmc\n"
                                  "    cons=ipmi\n"
                                  "    getmac=ipmi\n"
                                  "    groups=compute,all\n"
                                  "    ip=10.0.0.1\n"
                                  "    mgt=ipmi\n"
                                  "    netboot=xnba\n"
                                  "    postbootscripts=otherpkgs\n"
                                  "    postscripts=syslog,remoteshell,syncfiles\n"
                                  "    serialport=0\n"
                                  "    serialspeed=115200\n"
                                  "    usercomment=the system X node definition\n");

  // a user template: an existing node, with what it inherits from its groups
  run("mkdef -t group rack1 vmmemory=2048");
  run("chdef cn1 groups=rack1,all");
  r = run("mkdef -t node --template cn1 cn3 ip=10.0.0.3");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("lsdef cn3 -i ip,bmc,groups,vmmemory -c").out,
            "cn3: bmc=cn-bmc\ncn3: groups=rack1,all\ncn3: ip=10.0.0.3\ncn3: vmmemory=2048\n");

  expect_refused("mkdef --template cn1 cn1", "The template node cannot be the same as the node "
                                             "to create.");
  expect_refused("mkdef --template nosuch cn4 groups=all",
                 "Could not find the template object named 'nosuch' of type 'node'.");
  expect_refused("mkdef --template cn1,cn2 cn4",
                 "Only 1 template object definition should be specified for mkdef!");
  expect_refused("mkdef --template", "no object definition template specified for mkdef "
                                     "--template!");
  expect_refused("mkdef -z --template x86_64-template",
                 "The file input can not be used with --template option!");
  expect_refused("chdef --template cn1 cn2 mgt=kvm",
                 "The option '--template' can not be used with 'chdef'.");
  expect_refused("rmdef --template cn1", "The option '--template' can not be used with 'rmdef'.");
  EXPECT_EQ(run("lsdef cn4").rc, 1);
}

TEST_F(cli_test, chdef_d_p_and_m_add_and_remove_a_dynamic_groups_selections) {
  run("mkdef 'node[1-3]' groups=all mgt=kvm os=sles15");
  run("chdef node3 os=rhels9");
  ASSERT_EQ(run("mkdef -t group -o rack1 -d -w mgt==kvm").rc, 0);
  EXPECT_EQ(run("nodels rack1").out, "node1\nnode2\nnode3\n");
  // -p adds selections (once each), joined with '::' as xCAT's setobjdefs does for wherevals
  auto r = run("chdef -t group -o rack1 -d -p -w 'os=~^sles,x|^sles' -w mgt==kvm");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("lsdef -t group -o rack1 -i grouptype,wherevals -c").out,
            "rack1: grouptype=dynamic\nrack1: wherevals=mgt==kvm::os=~^sles,x|^sles\n");
  EXPECT_EQ(run("nodels rack1").out, "node1\nnode2\n");
  // -m removes them; one that is not there is a warning
  r = run("chdef -t group -o rack1 -d -m -w mgt==kvm -w arch==x86_64");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "Warning: arch==x86_64 is not in the attribute of 'wherevals' for the 'rack1' "
                   "definition.\n");
  EXPECT_EQ(run("lsdef -t group -o rack1 -i grouptype,wherevals -c").out,
            "rack1: grouptype=dynamic\nrack1: wherevals=os=~^sles,x|^sles\n");
  // refused, changing nothing: the last selection, a static group, a bad selection
  expect_refused("chdef -t group -o rack1 -d -m -w 'os=~^sles,x|^sles'",
                 "The 'where' attributes and values were not provided for dynamic group 'rack1'.");
  run("mkdef -t group -o static1 mgt=ipmi");
  expect_refused("chdef -t group -o static1 -d -p -w mgt==kvm", "'static1' is not a dynamic group");
  expect_refused("chdef -t group -o rack1 -d -p -w 'os=~('", "Invalid regular expression '('");
  EXPECT_EQ(run("lsdef -t group -o rack1 -i wherevals -c").out,
            "rack1: wherevals=os=~^sles,x|^sles\n");
  EXPECT_EQ(run("lsdef -t group -o static1 -i grouptype,wherevals -c").out,
            "static1: grouptype=\nstatic1: wherevals=\n");
  run("rmdef -t group static1");
}

TEST_F(cli_test, xcat_command_line_habits_help_version_and_long_options) {
  for (const char* tool : {"lsdef", "nodels", "mkdef", "chdef", "rmdef"}) {
    auto r = run(std::string{tool} + " -v");
    EXPECT_EQ(r.rc, 0) << tool;
    EXPECT_EQ(r.out.rfind(std::string{tool} + " - clusterws Version ", 0), 0u) << r.out;
    EXPECT_EQ(run(std::string{tool} + " --version").out, r.out);
    for (const char* help : {" -h", " -?", " --help"}) {
      r = run(std::string{tool} + help);
      EXPECT_EQ(r.rc, 0) << tool << help;
      EXPECT_EQ(r.out.rfind("Usage: " + std::string{tool}, 0), 0u) << tool << help << r.out;
    }
  }
  for (const char* tool : {"tabdump", "gettab", "chtab", "tabch", "nodech", "nodeadd", "noderm",
                           "tabrestore", "tabprune", "makenetworks", "makedns", "clusterctl"}) {
    EXPECT_EQ(run(std::string{tool} + " -v").out,
              std::string{tool} + " - clusterws Version " + CLUSTERWS_VERSION + "\n");
    EXPECT_EQ(run(std::string{tool} + " --version").out, run(std::string{tool} + " -v").out);
  }
  // xdsh: -V (its -v is xCAT's --verify), and never in the command it runs
  EXPECT_EQ(run("xdsh -V").out, "xdsh - clusterws Version " CLUSTERWS_VERSION "\n");
  EXPECT_EQ(run("xdsh --version").out, run("xdsh -V").out);
  EXPECT_EQ(run("xdsh -v").out, "");
  EXPECT_EQ(run("xdsh nonode ls --version").out.find("Version"), std::string::npos);
  EXPECT_EQ(run("clusterctl frobnicate --version").rc, 1);
  auto r = run("mkdef --force -t node -o node1 groups=all mgt=kvm");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("lsdef --long node1 -i mgt").out, "Object name: node1\n    mgt=kvm\n");
  EXPECT_EQ(run("lsdef --stanza node1 -i mgt").out, run("lsdef -z node1 -i mgt").out);
  EXPECT_EQ(run("chdef --plus node1 groups=rack1").rc, 0);
  EXPECT_EQ(run("lsdef node1 -i groups -c").out, "node1: groups=all,rack1\n");
  EXPECT_EQ(run("chdef --minus node1 groups=rack1").rc, 0);
  EXPECT_EQ(run("rmdef --verbose node1").rc, 0);
  r = run("lsdef --stanzas");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Invalid option '--stanzas'"), std::string::npos) << r.err;
  r = run("rmdef --force node1"); // a long name for a flag the tool does not take
  EXPECT_EQ(r.rc, 1);
}

TEST_F(cli_test, chdef_n_renames_one_object_with_its_attributes_and_groups) {
  run("mkdef -t group rack1 mgt=kvm");
  run("mkdef node1 groups=rack1,all os=rhels9");
  auto before = run("lsdef node1 -l").out;
  auto r = run("chdef -t node -o node1 -n node7");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Changed the object name from node1 to node7.\n");
  auto after = run("lsdef node7 -l").out;
  EXPECT_EQ(after, "Object name: node7" + before.substr(before.find('\n')));
  EXPECT_EQ(run("nodels rack1").out, "node7\n"); // group memberships follow
  EXPECT_EQ(run("lsdef node1").rc, 1);
  run("mkdef -t network -o net1 net=10.0.0.0 mask=255.0.0.0");
  EXPECT_EQ(run("chdef -t network -o net1 -n net2").rc, 0);
  EXPECT_EQ(run("lsdef -t network -o net2 -i net -c").out, "net2: net=10.0.0.0\n");
  run("rmdef -t network net2");

  // refused, nothing changes
  run("mkdef node8 groups=all");
  expect_refused("chdef -o node7 -n node8", "A definition for 'node8' already exists.");
  expect_refused("chdef -o nosuch -n node9",
                 "Could not find an object named 'nosuch' of type 'node'.");
  expect_refused("chdef -t group -o rack1 -n rack2", "Objects of type 'group' cannot be renamed");
  expect_refused("chdef -o node7,node8 -n node9", "The -n option renames one object");
  expect_refused("chdef -o node7 -n node9 os=sles", "The -n option renames one object");
  expect_refused("chdef -o node7 -n 'a,b'", "is not valid");
  EXPECT_EQ(run("nodels all").out, "node7\nnode8\n");
}

TEST_F(cli_test, a_network_needs_its_net_and_mask) {
  // xCAT's words (DBobjectdefs.pm defmk, defch; mkdef/cases0, chdef_network_not_exist)
  expect_refused("mkdef -t network -o net1 net=10.0.0.0",
                 "Error: Net or mask value should not be empty for xCAT network object 'net1'.");
  expect_refused("mkdef -t network -o net1,net2 net=10.0.0.0 mask=255.0.0.0 gateway=10.0.0.1 "
                 "mtu=9000 net=",
                 "Net or mask value should not be empty for xCAT network object 'net1'.");
  expect_refused("chdef -t network aaaaa_not_exist mtu=1500 mask=255.255.255.0",
                 "Net or mask value should not be empty for xCAT network object "
                 "'aaaaa_not_exist'.");
  auto r = run("chdef -t network aaaaa_not_exist");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "No object definitions have been created or modified.\n");
  EXPECT_EQ(run("lsdef -t network").rc, 1); // nothing was written
  ASSERT_EQ(run("mkdef -t network -o net1 net=10.0.0.0 mask=255.0.0.0").rc, 0);
  expect_refused("chdef -t network -o net1 mask=", "Net or mask value should not be empty");
  EXPECT_EQ(run("lsdef -t network -o net1 -i mask -c").out, "net1: mask=255.0.0.0\n");
  run("rmdef -t network net1");
}

TEST_F(cli_test, lsdef_errors) {
  auto r = run("lsdef nosuch");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Could not find an object named 'nosuch' of type 'node'.\n");
  r = run("lsdef -t network");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Could not get objects of type 'network'.\n");
  r = run("lsdef -t bogus");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: Type 'bogus' is not a valid xCAT object type."), std::string::npos);
  r = run("lsdef -l -s");
  EXPECT_EQ(r.rc, 1);
  r = run("lsdef -Q");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: Invalid option '-Q'."), std::string::npos);
}

TEST_F(cli_test, chdef_set_clear_append_remove) {
  run("mkdef node1 groups=all id=7");
  auto r = run("chdef node1 vmmemory=4096 id=");
  EXPECT_EQ(r.out, "1 object definitions have been created or modified.\n");
  r = run("lsdef node1 -i id,vmmemory -c");
  EXPECT_EQ(r.out, "node1: id=\nnode1: vmmemory=4096\n");
  run("chdef -p node1 groups=compute");
  r = run("nodels compute");
  EXPECT_EQ(r.out, "node1\n");
  run("chdef -m node1 groups=compute");
  r = run("nodels compute");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Invalid nodes and/or groups in noderange: compute\n");
  r = run("chdef node9 groups=all");
  EXPECT_EQ(r.out, "1 object definitions have been created or modified.\n"
                   "New object definitions 'node9' have been created.\n");
  r = run("chdef -f node1 id=1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("The '-f' option is not valid for the chdef command."), std::string::npos);
}

TEST_F(cli_test, mkdef_errors_write_nothing) {
  auto r = run("mkdef node1 groups=all bogus=1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: 'bogus' is not a valid attribute name for an object type of 'node'.\n");
  EXPECT_EQ(run("lsdef node1").rc, 1);
  r = run("mkdef node1 mgt=kvm");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Attribute 'groups' is not specified for node 'node1'"), std::string::npos);
  run("mkdef node1 groups=all");
  r = run("mkdef node1 groups=all");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Warning: A definition for 'node1' already exists. No changes will be made.  "
                   "Run again with '-f' option to force replace.\n"
                   "Error: 0 object definitions have been created or modified.\n");
}

TEST_F(cli_test, nodels_formats_and_selectors) {
  run("mkdef node[1-3] groups=all mgt=kvm");
  run("chdef node2 mgt=ipmi");
  auto r = run("nodels");
  EXPECT_EQ(r.out, "node1\nnode2\nnode3\n");
  r = run("nodels node[1-2] nodehm.mgt");
  EXPECT_EQ(r.out, "node1: kvm\nnode2: ipmi\n");
  r = run("nodels node1 nodehm.mgt groups");
  EXPECT_EQ(r.out, "node1: nodehm.mgt: kvm\nnode1: groups: all\n");
  r = run("nodels all nodehm.mgt==kvm");
  EXPECT_EQ(r.out, "node1\nnode3\n");
  r = run("nodels node1 vm.memory");
  EXPECT_EQ(r.out, "node1: \n");
  r = run("nodels node1,nosuch,other");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Invalid nodes and/or groups in noderange: nosuch,other\n");
  r = run("nodels node1 bogus.col");
  EXPECT_EQ(r.err, "Error: bogus.col not a valid table.column description\n");
  r = run("nodels 'node[1-99999999]'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("more than 1000000"), std::string::npos);
}

TEST_F(cli_test, nodels_blame_names_the_group_a_value_comes_from) {
  run("mkdef -t group rack1 mgt=ipmi 'bmc=/\\z/-bmc/'");
  run("mkdef node[1-2] groups=rack1,all");
  run("chdef node2 mgt=kvm");
  EXPECT_EQ(run("nodels node[1-2] nodehm.mgt -b").out,
            "node1: ipmi (inherited from group rack1)\nnode2: kvm\n");
  EXPECT_EQ(run("nodels node1 mgt bmc vm.memory groups --blame").out,
            "node1: mgt: ipmi (inherited from group rack1)\n"
            "node1: bmc: node1-bmc (inherited from group rack1)\n"
            "node1: vm.memory: \n"
            "node1: groups: rack1,all\n");
  EXPECT_EQ(run("nodels node[1-2] mgt").out, "node1: ipmi\nnode2: kvm\n"); // only with -b
}

TEST_F(cli_test, bare_digits_take_xcat_node_prefix_and_suffix_from_the_environment) {
  run("mkdef cn1-ib,cn2-ib,node3 groups=all");
  EXPECT_EQ(run("XCAT_NODE_PREFIX=cn XCAT_NODE_SUFFIX=-ib nodels 1-2").out, "cn1-ib\ncn2-ib\n");
  EXPECT_EQ(run("XCAT_NODE_PREFIX=cn XCAT_NODE_SUFFIX=-ib lsdef 1+1").out,
            "Object name: cn1-ib\n    groups=all\n    postbootscripts=otherpkgs\n"
            "    postscripts=syslog,remoteshell,syncfiles\nObject name: cn2-ib\n    groups=all\n"
            "    postbootscripts=otherpkgs\n    postscripts=syslog,remoteshell,syncfiles\n");
  EXPECT_EQ(run("nodels 3").out, "node3\n"); // without them: node
  EXPECT_EQ(run("XCAT_NODE_PREFIX=cn XCAT_NODE_SUFFIX=-ib clusterctl noderange 7-8").out,
            "cn7-ib cn8-ib\n");
  auto r = run("XCAT_NODE_PREFIX=cn nodels 1");
  EXPECT_EQ(r.err, "Error: Invalid nodes and/or groups in noderange: cn1\n");
}

TEST_F(cli_test, rmdef_reports_and_is_all_or_nothing) {
  run("mkdef node[1-2] groups=all");
  auto r = run("rmdef node1,nosuch");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Could not find an object named 'nosuch' of type 'node'.\n"
                   "Error: No objects have been removed from the xCAT database.\n");
  EXPECT_EQ(run("nodels").out, "node1\nnode2\n");
  r = run("rmdef node1");
  EXPECT_EQ(r.out, "1 object definitions have been removed.\n");
  EXPECT_EQ(run("nodels").out, "node2\n");
}

TEST_F(cli_test, passwd_stores_a_slow_hash_or_an_imported_one) {
  auto r = run("clusterctl passwd alice --password-stdin", "alicepw\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string shadow = "$6$abcdefgh$ltjgWl6579NluT/"
                       "Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/cZ/1GM/O6IND4WQhG.";
  r = run("clusterctl passwd bob --hash '" + shadow + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("clusterctl passwd carol --hash plaintext").rc, 1);
  EXPECT_EQ(run("clusterctl passwd 'Bad User' --password-stdin", "x\n").rc, 1);
  cws::store::database db{home_->path / "db"};
  auto txn = db.read();
  auto alice
    = std::string{txn.get(cws::store::object_type::passwd, "alice")->find("password").value_or("")};
  EXPECT_EQ(alice.substr(0, 3), "$y$");
  EXPECT_TRUE(cws::store::verify_password("alicepw", alice));
  auto bob = txn.get(cws::store::object_type::passwd, "bob")->find("password").value_or("");
  EXPECT_TRUE(cws::store::verify_password("secret", bob));
  EXPECT_FALSE(txn.exists(cws::store::object_type::passwd, "carol"));
}

// issue #32: empty and wrong invocations answer as xCAT's (DBobjectdefs.pm processArgs,
// defmk, defch; mkdef_null, chdef_null, rmdef_null, mkdef/cases1).
TEST_F(cli_test, empty_invocations_print_the_usage_and_an_empty_group_is_a_group) {
  for (const char* tool : {"mkdef", "chdef", "rmdef"}) {
    auto r = run(tool);
    EXPECT_EQ(r.rc, 0) << tool << ": " << r.err;
    EXPECT_EQ(r.out.rfind(std::string{"Usage: "} + tool, 0), 0u) << tool << ": " << r.out;
    EXPECT_EQ(r.err, "") << tool;
  }
  auto r = run("mkdef -t group -o xcattest_tmp_group");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "1 object definitions have been created or modified.\n");
  EXPECT_EQ(run("lsdef -t group -s xcattest_tmp_group").out, "xcattest_tmp_group  (group)\n");
  ASSERT_EQ(run("rmdef -t group -o xcattest_tmp_group").rc, 0);
  // a node without attributes still needs its groups; an unknown template is named
  expect_refused("mkdef -t node -o testnode_noattr", "The 'groups' attribute is required");
  ASSERT_EQ(run("mkdef n1 groups=all").rc, 0);
  r = run("mkdef --template nosuch n9");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Could not find the template object named 'nosuch' of type 'node'.\n");
  r = run("chdef n1");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "No object definitions have been created or modified.\n");
}

// issue #32: lsdef --nics, -h -i, -s of a dynamic group nothing matches, and chdef's warning
// for the scripts the xcatdefaults row runs already (lsdef/cases0 lsdef_nics, lsdef -t node
// -h -i status, mkdef/cases0 dyngrp3, chdef/cases0 chdef_t_node).
TEST_F(cli_test, lsdef_nics_attribute_help_empty_dynamic_groups_and_xcatdefaults_warnings) {
  ASSERT_EQ(run("mkdef -t node -o testnode1 groups=all mgt=ipmi nicips.eth0=1.1.1.1 "
                "nichostnamesuffixes.eth0=-eth0 nictypes.ib0=Infiniband")
              .rc,
            0);
  auto r = run("lsdef testnode1 --nics");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Object name: testnode1\n    nichostnamesuffixes.eth0=-eth0\n"
                   "    nicips.eth0=1.1.1.1\n    nictypes.ib0=Infiniband\n");
  expect_refused("lsdef testnode1 --nics -i groups",
                 "The flags '-i' and '--nics' cannot be used together.");

  r = run("lsdef -t node -h -i bmc,nicips.eth0");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Attribute          Description\n\nbmc:\t\tThe hostname of the BMC "
                        "adapter.\n\nnicips:\t\tComma-separated list of IP addresses per NIC.\n",
                        0),
            0u)
    << r.out;
  std::string tail = "one hostname suffix for each ip address.\n";
  ASSERT_GT(r.out.size(), tail.size());
  EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail);
  r = run("lsdef -t node -h -i status");
  EXPECT_EQ(r.out.rfind("Attribute          Description\n\nstatus:\t\tThe current status of "
                        "this node.",
                        0),
            0u)
    << r.out;
  r = run("lsdef -t group -h");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("The valid attribute names for object type 'group' are:\n", 0), 0u);
  EXPECT_NE(r.out.find("\n\nwherevals:\t"), std::string::npos);

  ASSERT_EQ(run("mkdef -t group -o dyngrp3 -d -w mgt==hmc -w cons==ipmi").rc, 0);
  r = run("lsdef -s dyngrp3");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Error: No node in 'dyngrp3', check the noderange syntax.\n");
  ASSERT_EQ(run("rmdef -t group -o dyngrp3").rc, 0);

  r = run("chdef -t node -o testnode1 postscripts=\"syslog,remoteshell,mine\"");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "Warning: testnode1: postscripts 'syslog' is already included in the "
                   "'xcatdefaults'.\nWarning: testnode1: postscripts 'remoteshell' is already "
                   "included in the 'xcatdefaults'.\n");
  r = run("chdef -t node -o testnode1 -p postbootscripts=otherpkgs");
  EXPECT_EQ(r.err, "Warning: testnode1: postbootscripts 'otherpkgs' is already included in the "
                   "'xcatdefaults'.\n");
  EXPECT_EQ(run("lsdef testnode1 -i postscripts,postbootscripts -c").out,
            "testnode1: postbootscripts=otherpkgs\n"
            "testnode1: postscripts=syslog,remoteshell,syncfiles,mine\n");
}

TEST_F(cli_test, help_multicall_and_uninitialized_home) {
  for (auto tool :
       {"lsdef", "nodels", "mkdef", "chdef", "rmdef", "clusterctl init", "clusterctl passwd"}) {
    auto r = run(std::string{tool} + " --help");
    EXPECT_EQ(r.rc, 0) << tool;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << tool;
  }
  run("mkdef node1 groups=all");
  EXPECT_EQ(run("clusterctl lsdef node1").out, run("lsdef node1").out);
  cws::test::temp_dir empty;
  auto r = run_in(empty.path, "lsdef");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("is not initialized"), std::string::npos);
  EXPECT_EQ(run("clusterctl frobnicate").rc, 1);
}

// -- mkdef -z / chdef -z ------------------------------------------------------------

class stanza_cli_test : public cli_test {
 protected:
  using home_ptr = std::unique_ptr<cws::test::temp_dir>;

  static constexpr const char* everything
    = "lsdef -t node,group,network,osimage,policy,site -l -z -S";

  /// A freshly initialized home of its own (site defaults, default policy rows, xcatdefaults).
  static home_ptr fresh_home() {
    auto h = std::make_unique<cws::test::temp_dir>();
    auto r = run_in(h->path, "clusterctl init --no-networks --admin-password pw");
    EXPECT_EQ(r.rc, 0) << r.err;
    return h;
  }

  static result on(const home_ptr& h, const std::string& cmd, const std::string& input = "") {
    return run_in(h->path, cmd, input);
  }

  /// Checks that `cmd` fails with exactly `err` on stderr.
  static void refused(const home_ptr& h, const std::string& cmd, const std::string& input,
                      const std::string& err) {
    auto r = on(h, cmd, input);
    EXPECT_EQ(r.rc, 1) << cmd << "\n" << input;
    EXPECT_EQ(r.err, err) << cmd << "\n" << input;
  }
};

TEST_F(stanza_cli_test, full_listing_restores_byte_for_byte) {
  auto a = fresh_home();
  for (const char* cmd : {
         "mkdef -t group compute mgt=ipmi bmcusername=admin 'usercomment=rack 1: left'",
         "mkdef -t group gpu vmmemory=4096",
         "mkdef 'cn[1-3]' groups=all,compute arch=x86_64 postscripts=mine",
         "chdef cn2 mgt=kvm groups=all,gpu,compute",
         "mkdef cn4 groups=compute hidden=1",
         "mkdef -t group dyn grouptype=dynamic wherevals=mgt==kvm",
         "mkdef -t network net1 net=10.0.0.0 mask=255.0.0.0 gateway='<xcatmaster>'",
         "mkdef -t osimage img1 imagetype=linux osvers=rhels8 'usercomment=see:'",
         "mkdef -t policy 6 name=alice rule=allow",
         "chdef -t site domain=example.com",
       }) {
    ASSERT_EQ(on(a, cmd).rc, 0) << cmd << on(a, cmd).err;
  }
  auto dump = on(a, everything);
  ASSERT_EQ(dump.rc, 0) << dump.err;
  // lsdef -z shows inherited values but not the xcatdefaults postscripts (defls)
  EXPECT_NE(dump.out.find("cn1:\n    objtype=node\n    arch=x86_64\n    bmcusername=admin\n"
                          "    groups=all,compute\n    mgt=ipmi\n    postscripts=mine\n"),
            std::string::npos)
    << dump.out;
  EXPECT_EQ(dump.out.find("syslog,remoteshell"), std::string::npos);

  auto b = fresh_home(); // init wrote site and policy rows: -f replaces them
  auto restored = on(b, "mkdef -z -f", dump.out);
  ASSERT_EQ(restored.rc, 0) << restored.err;
  EXPECT_EQ(restored.out, "25 object definitions have been created or modified.\n");
  EXPECT_EQ(on(b, everything).out, dump.out);
  // the other listings agree too, xcatdefaults postscripts included
  for (const char* cmd : {"lsdef -l all", "lsdef -t group -l", "lsdef -l -z all", "nodels"}) {
    EXPECT_EQ(on(b, cmd).out, on(a, cmd).out) << cmd;
  }
  EXPECT_NE(on(b, "lsdef cn1").out.find("postscripts=syslog,remoteshell,syncfiles,mine\n"),
            std::string::npos);

  // chdef -z of the same dump over the restored store changes nothing visible
  auto again = on(b, "chdef -z", dump.out);
  EXPECT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.out, "25 object definitions have been created or modified.\n");
  EXPECT_EQ(on(b, everything).out, dump.out);
}

TEST_F(stanza_cli_test, nodes_only_listing_restores_on_an_empty_store) {
  auto a = fresh_home();
  ASSERT_EQ(on(a, "mkdef -t group compute mgt=ipmi").rc, 0);
  ASSERT_EQ(on(a, "mkdef 'n[1-2]' groups=all,compute postbootscripts=late").rc, 0);
  auto dump = on(a, "lsdef -l -z all");
  auto b = fresh_home();
  auto r = on(b, "sh -c 'cat | mkdef -z'", dump.out);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "2 object definitions have been created or modified.\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(on(b, "lsdef -l -z all").out, dump.out);
  EXPECT_EQ(on(b, "lsdef -l all").out, on(a, "lsdef -l all").out);
}

TEST_F(stanza_cli_test, a_bad_stanza_changes_nothing) {
  auto h = fresh_home();
  const std::string good = "n1:\n  objtype=node\n  groups=all\n"
                           "net1:\n  objtype=network\n  net=10.0.0.0\n  mask=255.0.0.0\n";
  struct bad_case {
    const char* tool;
    std::string stanza;
    std::string err;
  };
  const bad_case cases[] = {
    {"mkdef -z", "n2:\n  objtype=node\n  groups=all\n  colour=red\n",
     "Error: 'colour' is not a valid attribute name for an object type of 'node'.\n"},
    {"mkdef -z", "r1:\n  objtype=route\n",
     "Error: Type 'route' is not a valid xCAT object type.\n"},
    {"chdef -z", "n2:\n  groups=all\n",
     "Error: No objtype value was specified for 'n2'. Cannot create object definition.\n"},
    {"mkdef -z", "n2\n",
     "Error: Line 8 of the stanza input is neither a 'name:' header nor an 'attr=value' line: "
     "'n2'.\n"},
    {"mkdef -z", "n2:\n  objtype=node\n",
     "Error: Attribute 'groups' is not specified for node 'n2', skipping to the next node.\n"
     "Error: One or more errors occured when attempting to create or modify xCAT object "
     "definitions.\n"},
    {"mkdef -z", "g:\n  objtype=group\n  members=n1,ghost\n",
     "Error: Could not find an object named 'ghost' of type 'node'.\n"},
  };
  for (const auto& c : cases) {
    refused(h, c.tool, good + c.stanza, c.err);
  }
  for (const char* type : {"node", "network", "group"}) {
    EXPECT_EQ(on(h, std::string{"lsdef -t "} + type).err,
              std::string{"Error: Could not get objects of type '"} + type + "'.\n");
  }
  EXPECT_EQ(on(h, "mkdef -z", good).rc, 0); // the same input without the bad stanza is fine
}

TEST_F(stanza_cli_test, options_and_empty_input) {
  auto h = fresh_home();
  refused(h, "mkdef -z -t node", "",
          "Error: Cannot combine '-t' and '-a', '-z', or '-x' options.\nTry 'mkdef --help'.\n");
  refused(h, "chdef -z n1", "",
          "Error: Cannot use '-z' with '-o' or a noderange.\nExample of -z usage:\n\t'cat "
          "stanzafile | chdef -z'\nTry 'chdef --help'.\n");
  EXPECT_EQ(on(h, "mkdef -z -o n1").rc, 1);
  auto with_attr = on(h, "mkdef -z groups=all");
  EXPECT_EQ(with_attr.rc, 1);
  EXPECT_NE(with_attr.err.find("Cannot combine 'attr=val' pairs with '-z'"), std::string::npos);
  EXPECT_EQ(on(h, "chdef -z -f").err, "Error: The '-f' option is not valid for the chdef "
                                      "command.\nTry 'chdef --help'.\n");
  refused(h, "mkdef -z", "# <xCAT data object stanza file>\n\n",
          "Error: No object names were provided.\n");
}

TEST_F(stanza_cli_test, chdef_z_defaults_plus_and_new_objects) {
  auto h = fresh_home();
  ASSERT_EQ(on(h, "mkdef n1 groups=all postscripts=a").rc, 0);
  auto r = on(h, "chdef -z",
              "default-node:\n  groups=all,compute\n  mgt=ipmi\n\n"
              "n1:\n  objtype=node\n  postscripts=b\n"
              "n2:\n  objtype=node\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "2 object definitions have been created or modified.\n"
                   "New object definitions 'n2' have been created.\n");
  EXPECT_EQ(on(h, "lsdef -z n1,n2").out, "# <xCAT data object stanza file>\n\n"
                                         "n1:\n    objtype=node\n    groups=all,compute\n"
                                         "    mgt=ipmi\n    postscripts=b\n\n"
                                         "n2:\n    objtype=node\n    groups=all,compute\n"
                                         "    mgt=ipmi\n");
  auto plus = on(h, "chdef -z -p", "n1:\n  objtype=node\n  postscripts=c\n");
  ASSERT_EQ(plus.rc, 0) << plus.err;
  EXPECT_NE(on(h, "lsdef -z n1").out.find("    postscripts=b,c\n"), std::string::npos);
}

TEST_F(stanza_cli_test, input_over_the_size_limit_is_refused) {
  auto h = fresh_home();
  refused(h, "sh -c 'head -c 268435457 /dev/zero | mkdef -z'", "",
          "Error: The stanza input is larger than 268435456 bytes (256 MiB); split it into "
          "several files.\n");
  EXPECT_EQ(on(h, "lsdef").err, "Error: Could not get objects of type 'node'.\n");
}

} // namespace

namespace {

// -- the table tools ----------------------------------------------------------------------

TEST_F(cli_test, tabdump_lists_tables_and_dumps_rows_as_xcat_csv) {
  ASSERT_EQ(run("mkdef 'tn[1-2]' groups=compute,all mgt=ipmi").rc, 0);
  auto list = run("tabdump");
  EXPECT_EQ(list.rc, 0);
  EXPECT_NE(list.out.find("\nnodelist\n"), std::string::npos) << list.out;
  auto r = run("tabdump nodehm");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "#node,power,mgt,cons,termserver,termport,conserver,serialport,serialspeed,"
                   "serialflow,getmac,cmdmapping,consoleondemand,consoleenabled,comments,disable\n"
                   "\"tn1\",,\"ipmi\",,,,,,,,,,,,,\n"
                   "\"tn2\",,\"ipmi\",,,,,,,,,,,,,\n");
  r = run("tabdump -w node==tn2 -w groups=~^comp nodelist");
  EXPECT_EQ(r.out, "#node,groups,status,statustime,appstatus,appstatustime,primarysn,hidden,"
                   "updatestatus,updatestatustime,zonename,comments,disable\n"
                   "\"tn2\",\"compute,all\",,,,,,,,,,,\n");
  r = run("tabdump -d ipmi");
  EXPECT_NE(r.out.find("username:\tThe node attribute bmcusername.\n"), std::string::npos) << r.out;
  expect_refused("tabdump nosuch", "No such table: nosuch");
}

TEST_F(cli_test, chtab_nodech_gettab_change_what_lsdef_shows) {
  ASSERT_EQ(run("nodeadd 'tn[1-3]' groups=compute,all hosts.ip=10.9.0.1").rc, 0);
  EXPECT_EQ(run("lsdef tn2 -i ip,groups -c").out, "tn2: groups=compute,all\ntn2: ip=10.9.0.1\n");
  ASSERT_EQ(run("chtab node=tn1 nodehm.mgt=kvm nodetype.os=rhels9").rc, 0);
  EXPECT_EQ(run("lsdef tn1 -i mgt,os -c").out, "tn1: mgt=kvm\ntn1: os=rhels9\n");
  EXPECT_EQ(run("gettab node=tn1 nodehm.mgt").out, "kvm\n");
  EXPECT_EQ(run("gettab -H node=tn1 nodehm.mgt nodetype.os").out,
            "nodehm.mgt: kvm\nnodetype.os: rhels9\n");
  // nodech: ,= adds, ^= removes, table.column==value selects the nodes changed
  ASSERT_EQ(run("nodech 'tn[1-3]' groups,=rack1").rc, 0);
  EXPECT_EQ(run("nodels rack1").out, "tn1\ntn2\ntn3\n");
  ASSERT_EQ(run("nodech 'tn[1-3]' nodehm.mgt==kvm groups^=rack1").rc, 0);
  EXPECT_EQ(run("nodels rack1").out, "tn2\ntn3\n");
  // lsdef's change is the table's
  ASSERT_EQ(run("chdef tn3 power=ipmi").rc, 0);
  EXPECT_EQ(run("gettab node=tn3 nodehm.power").out, "ipmi\n");
  // delete a node table row, then the node (its nodelist row)
  ASSERT_EQ(run("nodech -d tn3 nodehm").rc, 0);
  EXPECT_EQ(run("lsdef tn3 -i power -c").out, "tn3: power=\n");
  ASSERT_EQ(run("chtab -d node=tn3 nodelist").rc, 0);
  EXPECT_EQ(run("nodels").out, "tn1\ntn2\n");
  ASSERT_EQ(run("noderm tn2").rc, 0);
  EXPECT_EQ(run("nodels").out, "tn1\n");
}

// issue #32: rows keyed by a group name, the way sites give thousands of nodes their IPs and
// BMC names: written before any node is in the group, read by its members (expressions
// evaluated) in lsdef and nodels, shown by tabdump keyed by the group, removed by chtab -d.
TEST_F(cli_test, chtab_rows_keyed_by_a_group_name_are_what_its_members_inherit) {
  for (const char* cmd : {R"(chtab node=rackg 'hosts.ip=|gn(\d+)|10.0.0.($1+0)|')",
                          R"(chtab node=rackg 'ipmi.bmc=/\z/-bmc/')",
                          "chtab node=kvms vm.host=hv1 vm.storage=dir:///var/lib/vms",
                          "chtab node=somegroup nodehm.mgt=openbmc"}) {
    auto r = run(cmd);
    ASSERT_EQ(r.rc, 0) << cmd << ": " << r.err;
  }
  EXPECT_EQ(run("nodels").out, ""); // rows, not nodes
  ASSERT_EQ(run("mkdef 'gn[7-8]' groups=rackg,kvms,somegroup,all").rc, 0);
  EXPECT_EQ(run("lsdef gn7 -i ip,bmc,vmhost,vmstorage,mgt -c").out,
            "gn7: bmc=gn7-bmc\ngn7: ip=10.0.0.7\ngn7: mgt=openbmc\ngn7: vmhost=hv1\n"
            "gn7: vmstorage=dir:///var/lib/vms\n");
  EXPECT_EQ(run("nodels gn8 hosts.ip vm.host").out, "gn8: hosts.ip: 10.0.0.8\ngn8: vm.host: hv1\n");
  auto dump = run("tabdump hosts").out;
  EXPECT_NE(dump.find("\n\"rackg\",\"|gn(\\d+)|10.0.0.($1+0)|\",,,,\n"), std::string::npos) << dump;
  EXPECT_NE(run("tabdump nodehm").out.find("\n\"somegroup\",,\"openbmc\","), std::string::npos);
  ASSERT_EQ(run("chtab -d node=rackg hosts").rc, 0);
  EXPECT_EQ(run("tabdump hosts").out.find("rackg"), std::string::npos);
  EXPECT_EQ(run("lsdef gn7 -i ip,bmc -c").out, "gn7: bmc=gn7-bmc\ngn7: ip=\n");
  run("rmdef -t group kvms,somegroup,rackg");
}

// issue #32: xCAT's only_if on the command line (mkdef/cases1's only_if cases): refused with
// xCAT's message and exit status, nothing written; met by the node's mgt or its group's.
TEST_F(cli_test, a_bmc_attribute_needs_a_mgt_that_selects_its_table) {
  auto r = run("mkdef -t node -o testnode_partial groups=test,all bmc=10.0.0.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "Error: Cannot set the attr='bmc' attribute unless mgt value is ipmi or openbmc.\n"
            "Error: One or more errors occured when attempting to create or modify xCAT object "
            "definitions.\n");
  EXPECT_EQ(run("lsdef testnode_partial").rc, 1);
  ASSERT_EQ(run("mkdef -t node -o keepme groups=oldgroup,all mgt=openbmc bmc=1.2.3.4").rc, 0);
  EXPECT_EQ(run("mkdef -f -t node -o keepme groups=newgroup bmc=5.6.7.8").rc, 1);
  EXPECT_EQ(run("lsdef keepme -i groups,mgt,bmc -c").out,
            "keepme: bmc=1.2.3.4\nkeepme: groups=oldgroup,all\nkeepme: mgt=openbmc\n");
  ASSERT_EQ(run("chtab node=openbmcgrp nodehm.mgt=openbmc").rc, 0);
  r = run("mkdef -t node -o inherit groups=openbmcgrp,all bmc=10.0.0.1");
  EXPECT_EQ(r.rc, 0) << r.err;
  expect_refused("chdef -t group -o nomgtgrp bmcusername=admin",
                 "Cannot set the attr='bmcusername' attribute unless mgt value is ipmi or "
                 "openbmc.");
  // one bad object among good ones: nothing is written (xCAT writes the good ones)
  r = run("mkdef -z", "good:\n objtype=node\n groups=all\n mgt=openbmc\n bmc=10.0.0.1\n"
                      "bad:\n objtype=node\n groups=all\n bmc=10.0.0.2\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Cannot set the attr='bmc'"), std::string::npos) << r.err;
  // lsdef shows a conditional attribute only where its condition holds, as xCAT's getobjdefs
  ASSERT_EQ(run("chdef keepme mgt=kvm").rc, 0);
  EXPECT_EQ(run("lsdef keepme -i bmc,mgt -c").out, "keepme: bmc=\nkeepme: mgt=kvm\n");
  EXPECT_EQ(run("nodels").out, "inherit\nkeepme\n");
  run("rmdef -t group openbmcgrp");
}

TEST_F(cli_test, table_tool_refusals_change_nothing) {
  ASSERT_EQ(run("mkdef tn1 groups=all mgt=ipmi").rc, 0);
  expect_refused("nodech tn1 nodehm.bogus=1", "nodehm.bogus not a valid table.column description");
  expect_refused("nodech tn1 noderes.discoverynics=eth0",
                 "clusterws does not keep noderes.discoverynics");
  expect_refused("nodech tn1 nodehm.mgt=kvm 'nodetype.os=a\nb'",
                 "The value of 'os' cannot contain a line break.");
  expect_refused("nodech nosuch nodehm.mgt=kvm", "nosuch");
  expect_refused("chtab -d node=tn1 nodehm.mgt", ". and = not valid in delete mode.");
  expect_refused("nodeadd tn5 hosts.ip=1.2.3.4", "groups=<groupnames>");
  expect_refused("chtab key=vmware,username=root passwd.password=x",
                 "clusterws keeps only the key=xcat rows of passwd");
  expect_refused("tabprune nodelist -a", "Table nodelist not supported");
  expect_refused("tabprune auditlog -a -i 3", "Only one option -p or -i or -n or -a maybe used");
  EXPECT_EQ(run("lsdef tn1 -i mgt,os -c").out, "tn1: mgt=ipmi\ntn1: os=\n");
  EXPECT_EQ(run("nodels").out, "tn1\n");
}

TEST_F(cli_test, tabrestore_replaces_a_table_from_tabdump_output) {
  ASSERT_EQ(run("mkdef 'tn[1-3]' groups=all mgt=ipmi").rc, 0);
  cws::test::temp_dir dir;
  auto file = (dir.path / "nodehm.csv").string();
  ASSERT_EQ(run("tabdump -f '" + file + "' nodehm").rc, 0);
  auto saved = cws::test::slurp(file);
  ASSERT_EQ(run("chtab node=tn1 nodehm.mgt=kvm nodehm.power=x").rc, 0);
  ASSERT_EQ(run("chdef tn2 mgt=").rc, 0);
  auto r = run("tabrestore '" + file + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(run("tabdump nodehm").out, saved);
  // a bad line: nothing of the file is written
  std::ofstream{file} << "#node,mgt\n\"tn1\",\"kvm\"\n\"tn2\",\"ipmi\",extra\n";
  expect_refused("tabrestore '" + file + "'", "Too many fields on line 3");
  EXPECT_EQ(run("tabdump nodehm").out, saved);
  // a file past the limit is refused before it is parsed
  std::filesystem::remove(file);
  std::filesystem::create_symlink("/dev/zero", file);
  expect_refused("tabrestore '" + file + "'",
                 "The tabrestore file is larger than 268435456 bytes (256 MiB)");
  std::filesystem::remove(file);
  EXPECT_EQ(run("tabdump nodehm").out, saved);
  // -a adds rows and keeps the others
  std::ofstream{file} << "#node,power\n\"tn3\",\"ipmi\"\n";
  ASSERT_EQ(run("tabrestore -a '" + file + "'").rc, 0);
  EXPECT_EQ(run("lsdef tn3 -i mgt,power -c").out, "tn3: mgt=ipmi\ntn3: power=ipmi\n");
  EXPECT_EQ(run("gettab node=tn1 nodehm.mgt").out, "ipmi\n");
}

} // namespace

namespace {

/// A network namespace of the test's own with two veth interfaces, removed at the end.
struct test_netns {
  std::string name = "cws-mknet-" + std::to_string(::getpid());
  bool ok = false;

  test_netns() {
    std::string ns = " -n " + name + " ";
    std::string cmd
      = "ip netns add " + name + " && ip" + ns + "link add v0 type veth peer name v1 && ip" + ns
        + "addr add 10.99.0.1/24 dev v0 && ip" + ns + "addr add 172.30.4.9/16 dev v1 && ip" + ns
        + "addr add 169.254.7.7/16 dev v1 && ip" + ns + "link set v0 up && ip" + ns
        + "link set v1 up && ip" + ns + "link set v0 mtu 9000 && ip" + ns
        + "route add default via 10.99.0.254";
    ok = std::system(cmd.c_str()) == 0;
  }

  ~test_netns() {
    std::system(("ip netns del " + name + " 2>/dev/null").c_str());
  }
};

TEST_F(cli_test, makenetworks_defines_the_hosts_networks_as_xcat_names_them) {
  test_netns ns;
  ASSERT_TRUE(ns.ok) << "cannot create a network namespace (root and iproute2 needed)";
  auto r = run("ip netns exec " + ns.name + " makenetworks -d");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "# <xCAT data object stanza file>\n"
                   "\n10_99_0_0-255_255_255_0:\n    objtype=network\n    gateway=10.99.0.254\n"
                   "    mask=255.255.255.0\n    mgtifname=v0\n    mtu=9000\n    net=10.99.0.0\n"
                   "\n172_30_0_0-255_255_0_0:\n    objtype=network\n    mask=255.255.0.0\n"
                   "    mgtifname=v1\n    mtu=1500\n    net=172.30.0.0\n");
  // written: the same definitions; a second run finds them and creates nothing
  ASSERT_EQ(run("ip netns exec " + ns.name + " makenetworks").rc, 0);
  EXPECT_EQ(run("lsdef -t network -i gateway,mgtifname -c").out,
            "10_99_0_0-255_255_255_0: gateway=10.99.0.254\n"
            "10_99_0_0-255_255_255_0: mgtifname=v0\n"
            "172_30_0_0-255_255_0_0: gateway=\n"
            "172_30_0_0-255_255_0_0: mgtifname=v1\n");
  ASSERT_EQ(run("chdef -t network -o 172_30_0_0-255_255_0_0 -n site-b").rc, 0);
  r = run("ip netns exec " + ns.name + " makenetworks");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.err.find("Warning: A network definition called 'site-b' already exists that "
                       "contains the same net and mask values. Cannot create a definition for "
                       "'172_30_0_0-255_255_0_0'."),
            std::string::npos)
    << r.err;
  EXPECT_EQ(run("lsdef -t network").out, "10_99_0_0-255_255_255_0  (network)\nsite-b  (network)\n");
  run("rmdef -t network -o 10_99_0_0-255_255_255_0,site-b");
}

TEST_F(cli_test, clusterctl_init_defines_the_networks_of_the_hosts_interfaces) {
  // as xCAT's install runs makenetworks: a fresh home answers lsdef -t network; loopback and
  // link-local (169.254/16) are skipped
  test_netns ns;
  ASSERT_TRUE(ns.ok) << "cannot create a network namespace (root and iproute2 needed)";
  cws::test::temp_dir fresh;
  auto home = fresh.path / "h";
  auto r = run_in(home, "ip netns exec " + ns.name + " clusterctl init --admin-password pw");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Networks of this host's interfaces (lsdef -t network): "
                       "10_99_0_0-255_255_255_0,172_30_0_0-255_255_0_0\n"),
            std::string::npos)
    << r.out;
  EXPECT_EQ(run_in(home, "lsdef -t network").out,
            "10_99_0_0-255_255_255_0  (network)\n172_30_0_0-255_255_0_0  (network)\n");
  EXPECT_EQ(run_in(home, "lsdef -t network -o 10_99_0_0-255_255_255_0 -i net,mask,gateway -c").out,
            "10_99_0_0-255_255_255_0: gateway=10.99.0.254\n"
            "10_99_0_0-255_255_255_0: mask=255.255.255.0\n"
            "10_99_0_0-255_255_255_0: net=10.99.0.0\n");
  // --no-networks: none
  auto bare = fresh.path / "bare";
  r = run_in(bare,
             "ip netns exec " + ns.name + " clusterctl init --no-networks --admin-password pw");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("Networks of"), std::string::npos);
  EXPECT_EQ(run_in(bare, "lsdef -t network").rc, 1);
}

} // namespace

namespace {

TEST_F(cli_test, chdef_w_changes_only_the_objects_that_match) {
  ASSERT_EQ(run("mkdef 'wn[1-4]' groups=all mgt=ipmi").rc, 0);
  ASSERT_EQ(run("chdef wn3,wn4 mgt=kvm").rc, 0);
  ASSERT_EQ(run("chdef -w mgt==kvm power=x").rc, 0); // no names: every node
  EXPECT_EQ(run("lsdef -i power -c").out, "wn1: power=\nwn2: power=\nwn3: power=x\nwn4: power=x\n");
  ASSERT_EQ(run("chdef 'wn[1-3]' -w mgt==ipmi -w mgt!=kvm power=y").rc, 0);
  EXPECT_EQ(run("lsdef -i power -c").out,
            "wn1: power=y\nwn2: power=y\nwn3: power=x\nwn4: power=x\n");
  auto r = run("chdef -w mgt==none power=z");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "Warning: No objects match the '-w' selections; nothing was changed.\n");
  expect_refused("chdef -w bad power=z", "Incorrect selection string specified with -w flag.");
  expect_refused("mkdef wn9 groups=all -w mgt==kvm",
                 "The '-w' option can only be used with '-d' to define a dynamic group.");
}

TEST_F(cli_test, nodels_with_a_table_name_lists_its_columns_labelled) {
  ASSERT_EQ(run("mkdef wn1 groups=all os=rhels9 arch=x86_64").rc, 0);
  EXPECT_EQ(run("nodels wn1 nodetype").out,
            "wn1: nodetype.os: rhels9\nwn1: nodetype.arch: x86_64\nwn1: nodetype.profile: \n"
            "wn1: nodetype.provmethod: \nwn1: nodetype.supportedarchs: \n"
            "wn1: nodetype.nodetype: \n");
}

} // namespace

namespace {

TEST_F(cli_test, backup_while_writes_go_on_restores_a_consistent_100000_node_store) {
  cws::test::temp_dir dir;
  auto home = dir.path / "home";
  ASSERT_EQ(run_in(home, "clusterctl init --admin-password pw").rc, 0);
  ASSERT_EQ(run_in(home, "mkdef 'bn[1-100000]' groups=all mgt=ipmi >/dev/null").rc, 0);
  // a writer changes bn1 and bn2 together, in one transaction each time, during the backup
  auto copy = (dir.path / "copy").string();
  auto r = run_in(home, "sh -c \"(for i in \\$(seq 1 200); do chdef bn1,bn2 usercomment=\\$i "
                        ">/dev/null; done) & sleep 0.2; clusterctl backup '"
                          + copy + "'; rc=\\$?; wait; exit \\$rc\"");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Backed up " + home.string() + " (100000 nodes) to " + copy + "\n");
  EXPECT_EQ(std::filesystem::status(dir.path / "copy" / "pki" / "server-key.pem").permissions()
              & std::filesystem::perms::group_read,
            std::filesystem::perms::none);
  auto restored = dir.path / "restored";
  r = run_in(restored, "clusterctl restore '" + copy + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Restored 100000 nodes from " + copy + " into " + restored.string() + "\n");
  auto listed = run_in(restored, "nodels").out;
  EXPECT_EQ(std::count(listed.begin(), listed.end(), '\n'), 100000);
  auto both = run_in(restored, "lsdef bn1,bn2 -i usercomment -c").out;
  auto first = both.substr(both.find('=') + 1, both.find('\n') - both.find('=') - 1);
  EXPECT_EQ(both, "bn1: usercomment=" + first + "\nbn2: usercomment=" + first + "\n");
  // the copy is a working home: the same CA, the same credentials
  EXPECT_EQ(cws::test::slurp(restored / "pki" / "ca-cert.pem"),
            cws::test::slurp(home / "pki" / "ca-cert.pem"));
  // refusals: an existing target, an initialized home, something that is not a backup
  EXPECT_EQ(run_in(home, "clusterctl backup '" + copy + "'").rc, 1);
  r = run_in(restored, "clusterctl restore '" + copy + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("is already initialized"), std::string::npos) << r.err;
  r = run_in(dir.path / "other", "clusterctl restore '" + dir.path.string() + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("is not a clusterws backup"), std::string::npos) << r.err;
}

} // namespace

namespace {

// xdsh output as it arrives: nodes finish in any order, lines of nodes may interleave
constexpr const char* xdsh_output = "n2: b\nn1: a\nn10: a\nn2: c\nn3: a\nn1: z\n";

TEST_F(cli_test, xdshbak_gathers_by_node_and_collapses_identical_output) {
  EXPECT_EQ(run("xdshbak", xdsh_output).out,
            "HOST: n1\n--------\na\nz\n\nHOST: n10\n---------\na\n\nHOST: n2\n--------\nb\nc\n\n"
            "HOST: n3\n--------\na\n");
  std::string dashes73(73, '-');
  std::string dashes79(79, '-');
  EXPECT_EQ(run("xdshbak -c", "n2: b\nn1: a\nn10: a\nn2: c\nn3: a\n").out,
            "HOSTS " + dashes73 + "\nn2\n" + dashes79 + "\nb\nc\n\nHOSTS " + dashes73
              + "\nn1, n10, n3\n" + dashes79 + "\na\n");
  EXPECT_EQ(run("xdshbak -x", xdsh_output).out, "n1: a\nn1: z\nn10: a\nn2: b\nn2: c\nn3: a\n");
  EXPECT_EQ(run("xdshbak -x -b", xdsh_output).out, "a\nz\na\nb\nc\na\n");
  expect_refused("xdshbak -c -x", "The -c and -x flags cannot be used together.");
}

TEST_F(cli_test, xcoll_folds_the_nodes_of_each_distinct_output) {
  auto in = "n2: b\nn1: a\nn10: a\nn3: a\n";
  std::string rule(36, '=');
  EXPECT_EQ(run("xcoll", in).out,
            rule + "\nn2\n" + rule + "\nb\n\n" + rule + "\nn[1,3,10]\n" + rule + "\na\n\n");
  EXPECT_EQ(run("xcoll -n -c", in).out, rule + "\nn1,n10,n3\n" + rule + "\nNode count = 3 \n" + rule
                                          + "\na\n\n" + rule + "\nn2\n" + rule
                                          + "\nNode count = 1 \n" + rule + "\nb\n\n");
  EXPECT_EQ(run("xcoll -i", "n2: b\nn1: a\n").out,
            rule + "\nn1\n" + rule + "\na\n\n" + rule + "\nn2\n" + rule + "\nb\n\n");
}

} // namespace

// The daemon's components in-process: the list's start order, its stop in reverse (also after
// a failed start), a SIGHUP's settings routed to the components that reload them, and the
// metrics each real component writes (the engines', the database's, the audit log's reload).

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <sstream>

#include "../store/temp_home.hpp"
#include "api/settings.hpp"
#include "base/log.hpp"
#include "daemon/component.hpp"
#include "daemon/components.hpp"
#include "daemon/transports.hpp"

namespace {

using namespace cws;

/// A component that writes what happens to it into `log`.
class probe_part : public daemon::component {
 public:
  probe_part(std::string name, std::vector<std::string>& log,
             std::vector<std::string_view> keys = {})
      : name_(std::move(name)), log_(log), keys_(std::move(keys)) {
    // nop
  }
  std::string_view name() const override {
    return name_;
  }
  void start() override {
    if (fail_start) {
      throw std::runtime_error(name_ + " cannot start");
    }
    log_.push_back("start " + name_);
  }
  void stop() override {
    log_.push_back("stop " + name_);
  }
  std::vector<std::string_view> reloadable() const override {
    return keys_;
  }
  void reload(const base::settings& next) override {
    if (fail_reload) {
      throw std::runtime_error("no");
    }
    log_.push_back("reload " + name_ + " a=" + next.text("a"));
  }
  void metrics(base::metric_writer& out) const override {
    out.gauge("clusterws_" + name_, "a part", 1);
  }

  bool fail_start = false;
  bool fail_reload = false;

 private:
  std::string name_;
  std::vector<std::string>& log_;
  std::vector<std::string_view> keys_;
};

const base::settings_schema& schema() {
  static const base::settings_schema s{
    {"a", base::setting_kind::number, "1", 0, 100, "reloaded by one"},
    {"b", base::setting_kind::number, "1", 0, 100, "reloaded by the other"},
    {"c", base::setting_kind::number, "1", 0, 100, "never reloaded"},
  };
  return s;
}

base::settings with(const std::string& text) {
  std::istringstream in{text};
  return base::settings::parse(in, "test.conf", schema());
}

TEST(component_list, starts_in_order_and_stops_in_reverse_once) {
  std::vector<std::string> log;
  {
    daemon::component_list parts;
    parts.add<probe_part>("one", log);
    parts.add<probe_part>("two", log);
    parts.add<probe_part>("three", log);
    parts.start();
    parts.stop();
    parts.stop(); // (a second stop does nothing)
  }
  EXPECT_EQ(log, (std::vector<std::string>{"start one", "start two", "start three", "stop three",
                                           "stop two", "stop one"}));
}

TEST(component_list, a_failed_start_stops_the_started_ones_in_reverse_and_says_why) {
  std::vector<std::string> log;
  daemon::component_list parts;
  parts.add<probe_part>("one", log);
  parts.add<probe_part>("two", log);
  parts.add<probe_part>("three", log).fail_start = true;
  parts.add<probe_part>("four", log);
  try {
    parts.start();
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "three cannot start");
  }
  EXPECT_EQ(log, (std::vector<std::string>{"start one", "start two", "stop two", "stop one"}));
}

TEST(component_list, the_list_going_away_stops_what_runs) {
  std::vector<std::string> log;
  {
    daemon::component_list parts;
    parts.add<probe_part>("one", log);
    parts.add<probe_part>("two", log);
    parts.start();
  }
  EXPECT_EQ(log, (std::vector<std::string>{"start one", "start two", "stop two", "stop one"}));
}

TEST(component_list, a_reload_reaches_the_components_whose_settings_changed) {
  std::vector<std::string> log;
  daemon::component_list parts;
  parts.add<probe_part>("one", log, std::vector<std::string_view>{"a"});
  auto& two = parts.add<probe_part>("two", log, std::vector<std::string_view>{"b"});
  parts.start();
  log.clear();
  auto running = with("a = 1\nb = 1\nc = 1\n");
  // a and c changed: one reloads a; nobody reloads c (the next restart); two is not asked
  auto done = parts.reload(running, with("a = 5\nb = 1\nc = 7\n"));
  EXPECT_EQ(log, (std::vector<std::string>{"reload one a=5"}));
  EXPECT_EQ(done.applied, (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(done.later, (std::vector<std::string_view>{"c"}));
  EXPECT_TRUE(done.refused.empty());
  EXPECT_EQ(running.number("a"), 5u); // what runs now
  EXPECT_EQ(running.number("c"), 1u); // (still the old value until a restart)
  // a component that refuses keeps its values, and the others still get theirs
  two.fail_reload = true;
  log.clear();
  done = parts.reload(running, with("a = 6\nb = 9\nc = 7\n"));
  EXPECT_EQ(log, (std::vector<std::string>{"reload one a=6"}));
  EXPECT_EQ(done.applied, (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(done.refused, (std::vector<std::string_view>{"b"}));
  EXPECT_EQ(done.later, (std::vector<std::string_view>{"c"}));
  EXPECT_EQ(running.number("b"), 1u);
  // nothing changed: nobody is asked
  log.clear();
  done = parts.reload(running, with("a = 6\nb = 1\nc = 1\n"));
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(done.applied.empty() && done.later.empty() && done.refused.empty());
}

TEST(component_list, registers_each_components_metrics_in_list_order) {
  std::vector<std::string> log;
  daemon::component_list parts;
  parts.add<probe_part>("one", log);
  parts.add<probe_part>("two", log);
  base::metric_registry r;
  parts.register_metrics(r);
  EXPECT_EQ(r.owners(), (std::vector<std::string>{"one", "two"}));
  base::metric_writer out;
  r.write(out);
  ASSERT_EQ(out.families().size(), 2u);
  EXPECT_EQ(out.families()[1].name, "clusterws_two");
}

std::string test_slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  return {std::istreambuf_iterator<char>(in), {}};
}

/// The daemon's own settings with `extra` lines.
base::settings daemon_settings(const std::filesystem::path& dir, const std::string& extra) {
  auto conf = dir / "clusterws.conf";
  std::ofstream{conf} << extra;
  return api::load_settings(conf);
}

std::vector<std::string> names(const base::metric_writer& out) {
  std::vector<std::string> n;
  for (const auto& f : out.families()) {
    n.push_back(f.name);
  }
  return n;
}

TEST(components, the_engines_are_measured_once_started) {
  test::temp_dir dir;
  auto s = daemon_settings(dir.path, "");
  daemon::component_list parts;
  auto& ssh = parts.add<daemon::ssh_component>(s, dir.path);
  auto& ipmi = parts.add<daemon::ipmi_component>(s);
  auto& virt = parts.add<daemon::libvirt_component>(s);
  auto& probe = parts.add<daemon::probe_component>(s);
  base::metric_registry r;
  parts.register_metrics(r);
  base::metric_writer before;
  r.write(before);
  EXPECT_TRUE(before.families().empty()); // nothing before start
  parts.start();
  auto drivers = daemon::transports{ssh, ipmi, virt, probe}.drivers();
  ASSERT_TRUE(drivers->ssh && drivers->ipmi && drivers->virt && drivers->probe);
  EXPECT_EQ(drivers->nodestat.fanout, 1024u); // and their settings
  // one probe run of one node that cannot be resolved: counted by its error code
  std::promise<void> ended;
  probe::target unknown;
  unknown.node = "no-such-node.invalid";
  unknown.ports = {22};
  drivers->probe->run(
    {unknown}, 1, std::chrono::milliseconds(2000), [](size_t, probe::outcome) {},
    [&ended] { ended.set_value(); });
  ended.get_future().wait();
  base::metric_writer out;
  r.write(out);
  auto n = names(out);
  for (const char* family :
       {"clusterws_ssh_pool_connections", "clusterws_ssh_pool_hits_total",
        "clusterws_ssh_connects_total", "clusterws_ssh_runs_total", "clusterws_ssh_runs_in_flight",
        "clusterws_ssh_nodes_in_flight", "clusterws_ssh_nodes_total",
        "clusterws_ipmi_pool_sessions", "clusterws_ipmi_pool_hits_total",
        "clusterws_ipmi_sessions_total", "clusterws_ipmi_runs_total", "clusterws_ipmi_nodes_total",
        "clusterws_libvirt_connections", "clusterws_libvirt_runs_total",
        "clusterws_libvirt_nodes_total", "clusterws_probe_runs_total",
        "clusterws_probe_runs_in_flight", "clusterws_probe_nodes_in_flight",
        "clusterws_probe_nodes_total"}) {
    EXPECT_NE(std::find(n.begin(), n.end(), family), n.end()) << family;
  }
  for (const auto& f : out.families()) {
    if (f.name == "clusterws_probe_runs_total") {
      EXPECT_EQ(f.samples.at(0).value, 1);
    }
    if (f.name == "clusterws_probe_nodes_total") {
      ASSERT_EQ(f.samples.size(), 1u);
      EXPECT_EQ(f.samples[0].labels, (std::vector<base::metric_label>{{"result", "resolve"}}));
      EXPECT_EQ(f.samples[0].value, 1);
    }
  }
  drivers.reset();
  parts.stop();
  base::metric_writer after;
  r.write(after);
  EXPECT_TRUE(after.families().empty()); // nothing after stop
}

TEST(components, the_database_is_measured_from_its_stats) {
  test::temp_dir dir;
  auto home = store::home::under(dir.path);
  std::filesystem::create_directories(home.db());
  auto s = daemon_settings(dir.path, "change_log_keep = 77\n");
  daemon::component_list parts;
  auto& db = parts.add<daemon::database_component>(s, home);
  base::metric_registry r;
  parts.register_metrics(r);
  parts.start();
  EXPECT_EQ(db.get()->read().meta(store::write_txn::changes_kept_key), "77");
  auto snapshot = db.get()->read();
  base::metric_writer out;
  r.write(out);
  EXPECT_EQ(names(out), (std::vector<std::string>{
                          "clusterws_lmdb_map_size_bytes", "clusterws_lmdb_map_used_bytes",
                          "clusterws_lmdb_readers_active", "clusterws_lmdb_reader_slots_used"}));
  EXPECT_EQ(out.families()[2].samples.at(0).value, 1); // the snapshot above
}

TEST(components, the_audit_log_takes_its_settings_again_and_refuses_required_without_a_log) {
  test::temp_dir dir;
  auto home = store::home::under(dir.path);
  auto log = dir.path / "audit.log";
  auto s = daemon_settings(dir.path, "audit_log = " + log.string() + "\naudit_field_max = 64\n");
  daemon::audit_component audit{s, home};
  audit.start();
  http::audit_entry e;
  e.user = "root";
  e.method = "PUT";
  e.path = "/nodes/" + std::string(100, 'n');
  audit.get()->write(e);
  EXPECT_NE(test_slurp(log).find("bytes]"), std::string::npos); // cut at 64
  audit.reload(daemon_settings(dir.path, "audit_log = " + log.string()
                                           + "\naudit_field_max = 512\naudit_required = true\n"));
  std::filesystem::remove(log);
  audit.get()->reopen();
  audit.get()->write(e);
  EXPECT_EQ(test_slurp(log).find("bytes]"), std::string::npos); // whole now
  audit.stop();
  // required without a log: refused at the start, and at a reload of a daemon without one
  auto off = daemon_settings(dir.path, "audit_log = off\naudit_required = true\n");
  EXPECT_THROW(daemon::audit_component(off, home), std::runtime_error);
  daemon::audit_component none{daemon_settings(dir.path, "audit_log = off\n"), home};
  none.start();
  EXPECT_THROW(none.reload(off), std::runtime_error);
  none.reload(daemon_settings(dir.path, "audit_log = off\naudit_field_max = 100\n"));
  none.stop();
}

} // namespace

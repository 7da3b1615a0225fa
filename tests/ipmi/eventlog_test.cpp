// reventlog and rbeacon: the SEL record decoding and the word parsers alone, then the
// conversations against ipmi_sim BMCs on 127.0.0.1 (entries added through the BMC's console,
// identify seen by its chassis-control script), a dead BMC, a wrong password, a BMC killed in
// the middle of a SEL walk, and a BMC without Get Channel Cipher Suites (ipmi_sim behind a
// relay that drops messages outside a session).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "../support/bmc_farm.hpp"
#include "../support/ipmi_jobs.hpp"
#include "ipmi/beacon.hpp"
#include "ipmi/chassis.hpp"
#include "ipmi/engine.hpp"
#include "ipmi/sel.hpp"
#include "ipmi/sel_record.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::node_result;
using namespace cws::ipmi;

/// A system event record: id 1, timestamp `ts`, generator 20h, then the event.
std::vector<uint8_t> event(uint32_t ts, uint8_t sensor_type, uint8_t sensor, uint8_t dir_type,
                           uint8_t d1, uint8_t d2 = 0xff, uint8_t d3 = 0xff) {
  return {1,
          0,
          2,
          static_cast<uint8_t>(ts),
          static_cast<uint8_t>(ts >> 8),
          static_cast<uint8_t>(ts >> 16),
          static_cast<uint8_t>(ts >> 24),
          0x20,
          0,
          4,
          sensor_type,
          sensor,
          dir_type,
          d1,
          d2,
          d3};
}

std::string text(const std::vector<uint8_t>& r, int64_t offset = 0) {
  auto t = sel_record_text(r.data(), r.size(), offset);
  return t ? *t : "(none)";
}

class sel_record : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz ? tz : "";
    had_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_) {
      setenv("TZ", saved_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(sel_record, threshold_event_in_xcats_words) {
  // 1600000000 is 09/13/2020 12:26:40 UTC; threshold event (type 01h), offset 9
  auto r = event(1600000000, 0x01, 0x30, 0x01, 0x59, 0x50, 0x60);
  EXPECT_EQ(text(r), "09/13/2020 12:26:40 Temperature, Upper Critical - going high (Sensor 0x30)");
  r[12] = 0x81; // deassertion
  EXPECT_EQ(text(r), "09/13/2020 12:26:40 Temperature, Upper Critical - going high (Sensor 0x30)"
                     " - Recovered");
}

TEST_F(sel_record, the_bmc_clock_offset_is_taken_off) {
  auto offset = sel_clock_offset(1600000100, 1600000000);
  EXPECT_EQ(offset, 100);
  EXPECT_EQ(text(event(1600000100, 0x01, 0x30, 0x01, 0x59), offset).substr(0, 19),
            "09/13/2020 12:26:40");
  // a BMC whose clock was never set: no correction
  EXPECT_EQ(sel_clock_offset(5000, 1600000000), 0);
}

TEST_F(sel_record, pre_init_timestamps_are_bmc_uptime) {
  EXPECT_EQ(sel_time_text(33807, 0), "BMC Uptime  33807 s");
  EXPECT_EQ(sel_time_text(0x1fffffff, 12345), "BMC Uptime 536870911 s");
}

TEST_F(sel_record, sensor_specific_events_and_their_extra_data) {
  EXPECT_EQ(text(event(33807, 0x0c, 0x05, 0x6f, 0x00, 0xff, 0x02)),
            "BMC Uptime  33807 s Memory, Correctable ECC Memory module 2 (Sensor 0x05)");
  EXPECT_EQ(text(event(33807, 0x10, 0x07, 0x6f, 0x02)),
            "BMC Uptime  33807 s Event Logging Disabled, Log Area Reset/Cleared (Sensor 0x07)");
  EXPECT_EQ(text(event(33807, 0x12, 0x01, 0x6f, 0x04, 0x06)),
            "BMC Uptime  33807 s System Event, PEF Action reset, power off (Sensor 0x01)");
  EXPECT_EQ(text(event(33807, 0x2a, 0x02, 0x6f, 0x01, 0x03, 0x01)),
            "BMC Uptime  33807 s Session Audit, Session Deactivated Channel 1, User 3 at user "
            "request (Sensor 0x02)");
  // a type whose table entry is its own name (xCAT drops the event, spacing as it prints)
  EXPECT_EQ(text(event(33807, 0x01, 0x01, 0x6f, 0x00)),
            "BMC Uptime  33807 s Temperature,  (Sensor 0x01)");
  // "-" rows: xCAT's OEM words
  EXPECT_EQ(text(event(33807, 0x0a, 0x01, 0x6f, 0x03)),
            "BMC Uptime  33807 s Cooling Device, OEM Sensor Event 3 (Sensor 0x01)");
}

TEST_F(sel_record, unknown_codes_say_no_mappings) {
  EXPECT_EQ(text(event(33807, 0xc0, 0x09, 0x6f, 0x03)),
            "BMC Uptime  33807 s No Mappings found (C0h), No Mappings found (03h) (Sensor 0x09)");
  EXPECT_EQ(text(event(33807, 0x02, 0x09, 0x02, 0x07)),
            "BMC Uptime  33807 s Voltage, No Mappings found (07h) (Sensor 0x09)");
  EXPECT_EQ(sensor_type_name(0x08), "Power Supply");
  EXPECT_EQ(sensor_event_text(0x08, 1), "Power Supply Failure Detected");
  EXPECT_EQ(generic_event_text(0x07, 2), "transition to Critical from Less Severe");
}

TEST_F(sel_record, oem_records) {
  std::vector<uint8_t> r{2, 0, 0xc1, 0x00, 0xe1, 0xf5, 0x5e, 'A', 'B', 0, 1, 2, 3, 4, 5, '_'};
  EXPECT_EQ(text(r), "06/26/2020 11:50:24 Unknown OEM SEL Type c1: 41 42 00 01 02 03 04 05 5f "
                     "(AB      _)");
  r[2] = 0xe0;
  EXPECT_EQ(text(r), "SEL Type e0: 00 e1 f5 5e 41 42 00 01 02 03 04 05 5f (    AB      _)");
}

TEST_F(sel_record, short_records_are_nothing) {
  std::vector<uint8_t> r(15, 2);
  EXPECT_FALSE(sel_record_text(r.data(), r.size(), 0));
  EXPECT_FALSE(sel_record_text(nullptr, 16, 0));
}

TEST(sel_words, reventlog_arguments) {
  auto all = parse_eventlog("all");
  ASSERT_TRUE(all);
  EXPECT_FALSE(all->clear);
  EXPECT_EQ(all->count, 0u);
  EXPECT_FALSE(all->newest_first);
  auto five = parse_eventlog("5 -s");
  ASSERT_TRUE(five);
  EXPECT_EQ(five->count, 5u);
  EXPECT_TRUE(five->newest_first);
  ASSERT_TRUE(parse_eventlog("-s all"));
  EXPECT_TRUE(parse_eventlog("-s all")->newest_first);
  ASSERT_TRUE(parse_eventlog("clear"));
  EXPECT_TRUE(parse_eventlog("clear")->clear);
  ASSERT_TRUE(parse_eventlog("")); // xCAT's default: all
  for (const char* bad :
       {"0", "clear -s", "all 5", "5 5", "-s -s", "five", "-1", "1234567890", "all clear"}) {
    EXPECT_FALSE(parse_eventlog(bad)) << bad;
  }
}

TEST(beacon_words, rbeacon_arguments_and_the_identify_state) {
  EXPECT_EQ(parse_beacon("on"), beacon_op::on);
  EXPECT_EQ(parse_beacon("off"), beacon_op::off);
  EXPECT_EQ(parse_beacon("blink"), beacon_op::blink);
  EXPECT_EQ(parse_beacon("stat"), beacon_op::stat);
  EXPECT_FALSE(parse_beacon("flash"));
  EXPECT_FALSE(identify_state({0x00, 0x00, 0x00, 0x00})); // not reported (ipmi_sim)
  EXPECT_FALSE(identify_state({0x00, 0x00, 0x00}));
  EXPECT_EQ(identify_state({0, 0, 0, 0x40}), "off");
  EXPECT_EQ(identify_state({0, 0, 0, 0x50}), "blink");
  EXPECT_EQ(identify_state({0, 0, 0, 0x60}), "on");
  EXPECT_FALSE(identify_state({0, 0, 0, 0x70}));
}

/// Passes everything to `inner`, and kills BMC `bmc` of `farm` when the `at`-th SEL entry
/// arrives: the BMC dies between two steps of a walk.
class kill_during_walk : public action {
 public:
  kill_during_walk(std::shared_ptr<action> inner, cws::test::bmc_farm* farm, size_t bmc, int at)
      : inner_(std::move(inner)), farm_(farm), bmc_(bmc), at_(at) {
  }
  request first() override {
    return inner_->first();
  }
  step next(const response& r) override {
    if (r.cmd == 0x43 && ++seen_ == at_) {
      farm_->stop(bmc_, SIGKILL);
    }
    return inner_->next(r);
  }
  int seen() const {
    return seen_;
  }

 private:
  std::shared_ptr<action> inner_;
  cws::test::bmc_farm* farm_;
  size_t bmc_;
  int at_;
  int seen_ = 0;
};

/// Get Channel Cipher Suites (App 54h) for channel 0Eh (this one), list by cipher suite.
class cipher_suites : public action {
 public:
  request first() override {
    return {0x06, 0x54, {0x0e, 0x00, 0x80}};
  }
  step next(const response& r) override {
    step s;
    s.out = std::to_string(r.code);
    for (auto b : r.data) {
      s.out += " " + std::to_string(b);
    }
    return s;
  }
};

/// A UDP relay on 127.0.0.1 in front of a BMC that drops every IPMI message sent outside a
/// session (IPMI 1.5 format, or an RMCP+ IPMI payload with session id 0): what a BMC without
/// Get Channel Cipher Suites looks like to a client asking for it. Counts what it forwards.
class udp_relay {
 public:
  explicit udp_relay(unsigned short bmc_port) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    bmc_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    a.sin_port = htons(bmc_port);
    ::connect(bmc_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    thread_ = std::thread([this] { loop(); });
  }
  ~udp_relay() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
    ::close(bmc_);
  }
  unsigned short port() const {
    return port_;
  }
  size_t forwarded() const {
    return forwarded_;
  }
  size_t dropped() const {
    return dropped_;
  }

 private:
  void loop() {
    sockaddr_in client{};
    socklen_t client_len = 0;
    uint8_t buf[2048];
    while (!stop_) { // bounded by the destructor; each wait is 50 ms
      pollfd p[2] = {{fd_, POLLIN, 0}, {bmc_, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0) {
        continue;
      }
      if ((p[0].revents & POLLIN) != 0) {
        client_len = sizeof client;
        auto n
          = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&client), &client_len);
        if (n >= 10 && outside_session(buf)) {
          ++dropped_;
        } else if (n > 0) {
          ++forwarded_;
          ::send(bmc_, buf, static_cast<size_t>(n), 0);
        }
      }
      if ((p[1].revents & POLLIN) != 0) {
        auto n = ::recv(bmc_, buf, sizeof buf, 0);
        if (n > 0 && client_len > 0) {
          ::sendto(fd_, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&client),
                   client_len);
        }
      }
    }
  }
  /// RMCP (4 bytes), then the auth type: 0 is IPMI 1.5 without a session; 6 is RMCP+, whose
  /// payload type 0 (IPMI) with session id 0 is a message outside a session.
  static bool outside_session(const uint8_t* b) {
    if (b[4] != 6) {
      return true;
    }
    uint32_t sid = b[6] | (b[7] << 8) | (b[8] << 16) | (uint32_t{b[9]} << 24);
    return (b[5] & 0x3f) == 0 && sid == 0;
  }

  int fd_ = -1;
  int bmc_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> forwarded_{0};
  std::atomic<size_t> dropped_{0};
  std::thread thread_;
};

class ipmi_sel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cws::test::have_ipmi_sim()) {
      GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
    }
    dir_ = std::filesystem::temp_directory_path()
           / ("cws-sel-" + std::to_string(getpid()) + "-"
              + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    farm_ = std::make_unique<cws::test::bmc_farm>(dir_, 2);
  }
  void TearDown() override {
    farm_.reset();
    if (HasFailure()) {
      std::ifstream in{dir_ / "bmc0" / "sim.log"};
      std::cerr << "bmc0's sim.log:\n" << in.rdbuf() << '\n';
    }
    std::filesystem::remove_all(dir_);
  }

  /// Adds a temperature threshold event of sensor `sensor` to BMC `i`'s SEL.
  void add_event(size_t i, int sensor) {
    auto out = farm_->emu(i, "sel_add 0x20 2 0 0 0 0 0x20 0 4 0x01 " + std::to_string(sensor)
                               + " 0x01 0x09 0x50 0x60");
    ASSERT_NE(out.find("Added record"), std::string::npos) << out;
  }

  job make(size_t i, std::shared_ptr<action> a, std::string password = "secret") {
    return cws::test::farm_job(*farm_, i, std::move(a), std::move(password));
  }

  node_result run_one(engine& e, job j) {
    std::vector<job> jobs;
    jobs.push_back(std::move(j));
    return cws::test::run_jobs(e, std::move(jobs), 8).front();
  }

  node_result eventlog(engine& e, size_t i, const std::string& words, sel_limits limits = {}) {
    auto what = parse_eventlog(words);
    EXPECT_TRUE(what) << words;
    return run_one(e, make(i, eventlog_action(*what, limits)));
  }

  /// The sensor numbers of an answer's lines, in order ("Sensor 0x31" -> 49).
  static std::vector<int> sensors(const std::string& out) {
    std::vector<int> s;
    for (size_t at = out.find("(Sensor 0x"); at != std::string::npos;
         at = out.find("(Sensor 0x", at + 1)) {
      s.push_back(std::stoi(out.substr(at + 10, 2), nullptr, 16));
    }
    return s;
  }

  std::filesystem::path dir_;
  std::unique_ptr<cws::test::bmc_farm> farm_;
};

TEST_F(ipmi_sel, lists_the_entries_in_order_a_count_limits_them_and_clear_empties_the_log) {
  engine e{{}};
  auto empty = eventlog(e, 0, "all");
  EXPECT_EQ(empty.error, "") << empty.message;
  EXPECT_EQ(empty.out, "no SEL entries");
  for (int s : {0x30, 0x31, 0x32}) {
    add_event(0, s);
  }
  auto all = eventlog(e, 0, "all");
  ASSERT_EQ(all.error, "") << all.message;
  EXPECT_EQ(sensors(all.out), (std::vector<int>{0x30, 0x31, 0x32})) << all.out;
  EXPECT_NE(all.out.find("Temperature, Upper Critical - going high (Sensor 0x30)"),
            std::string::npos)
    << all.out;
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 2);
  auto two = eventlog(e, 0, "2");
  EXPECT_EQ(sensors(two.out), (std::vector<int>{0x31, 0x32})) << two.out;
  auto sorted = eventlog(e, 0, "2 -s");
  EXPECT_EQ(sensors(sorted.out), (std::vector<int>{0x32, 0x31})) << sorted.out;
  auto newest_first = eventlog(e, 0, "all -s");
  EXPECT_EQ(sensors(newest_first.out), (std::vector<int>{0x32, 0x31, 0x30}));
  // the other BMC's log is its own
  EXPECT_EQ(eventlog(e, 1, "all").out, "no SEL entries");

  auto cleared = eventlog(e, 0, "clear");
  ASSERT_EQ(cleared.error, "") << cleared.message;
  EXPECT_EQ(cleared.out, "SEL cleared");
  auto after = eventlog(e, 0, "all");
  EXPECT_EQ(after.error, "");
  EXPECT_EQ(after.out, "no SEL entries");
}

TEST_F(ipmi_sel, the_walk_is_bounded_by_max_entries) {
  engine e{{}};
  for (int s = 0x40; s < 0x45; ++s) {
    add_event(0, s);
  }
  sel_limits limits;
  limits.max_entries = 3;
  auto r = eventlog(e, 0, "all", limits);
  ASSERT_EQ(r.error, "") << r.message;
  EXPECT_EQ(sensors(r.out), (std::vector<int>{0x40, 0x41, 0x42}));
  EXPECT_NE(r.out.find("More entries on the BMC: read the first 3 (ipmi_sel_max_entries)"),
            std::string::npos)
    << r.out;
}

TEST_F(ipmi_sel, a_dead_bmc_and_a_wrong_password_fail_alone) {
  engine e{{}};
  add_event(1, 0x30);
  farm_->stop(0);
  auto t0 = std::chrono::steady_clock::now();
  auto dead = run_one(e, make(0, eventlog_action(*parse_eventlog("all"), {})));
  EXPECT_EQ(dead.error, "timeout") << dead.message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  auto wrong = run_one(e, make(1, eventlog_action(*parse_eventlog("clear"), {}), "wrong"));
  EXPECT_EQ(wrong.error, "auth") << wrong.message;
  // nothing was cleared
  EXPECT_EQ(sensors(eventlog(e, 1, "all").out), (std::vector<int>{0x30}));
}

TEST_F(ipmi_sel, a_bmc_killed_in_the_middle_of_a_walk_costs_only_its_deadline) {
  engine e{{}};
  for (int s = 0x50; s < 0x5c; ++s) {
    add_event(0, s);
  }
  auto walk = std::make_shared<kill_during_walk>(eventlog_action(*parse_eventlog("all"), {}),
                                                 farm_.get(), 0, 5);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_one(e, make(0, walk));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(walk->seen(), 5); // it died after five of twelve entries
  EXPECT_EQ(r.error, "timeout") << r.message;
  EXPECT_LT(took, 3s); // 500 ms x 2 tries, not more
  // the engine goes on: the other BMC answers
  EXPECT_EQ(run_one(e, make(1, eventlog_action(*parse_eventlog("all"), {}))).out, "no SEL entries");
}

TEST_F(ipmi_sel, beacon_on_blink_off_reach_the_bmc) {
  engine e{{}};
  auto on = run_one(e, make(0, beacon_action(beacon_op::on)));
  ASSERT_EQ(on.error, "") << on.message;
  EXPECT_EQ(on.out, "on");
  auto blink = run_one(e, make(0, beacon_action(beacon_op::blink)));
  EXPECT_EQ(blink.out, "blink");
  auto off = run_one(e, make(0, beacon_action(beacon_op::off)));
  EXPECT_EQ(off.out, "off");
  // ipmi_sim hands Chassis Identify to the chassis-control script: interval, then force
  auto log = farm_->log(0);
  auto at_on = log.find("set identify 0 1\n");
  auto at_blink = log.find("set identify 255 0\n");
  auto at_off = log.find("set identify 0 0\n");
  ASSERT_NE(at_on, std::string::npos) << log;
  ASSERT_NE(at_blink, std::string::npos) << log;
  ASSERT_NE(at_off, std::string::npos) << log;
  EXPECT_LT(at_on, at_blink);
  EXPECT_LT(at_blink, at_off);
  EXPECT_EQ(farm_->log(1).find("identify"), std::string::npos);
  // ipmi_sim does not report the identify state in Get Chassis Status: xCAT's answer
  auto stat = run_one(e, make(0, beacon_action(beacon_op::stat)));
  EXPECT_EQ(stat.error, "unsupported");
  EXPECT_EQ(stat.message, "please specify on or off for ipmi nodes (stat impossible)");
}

TEST_F(ipmi_sel, a_bmc_without_the_cipher_suite_query_serves_every_conversation) {
  engine e{{}};
  // ipmi_sim answers Get Channel Cipher Suites (channel 1, then suite records) ...
  auto q = run_one(e, make(0, std::make_shared<cipher_suites>()));
  ASSERT_EQ(q.error, "") << q.message;
  EXPECT_EQ(q.out.substr(0, 4), "0 1 ") << q.out;
  // ... so a BMC without it is ipmi_sim behind a relay that drops every message sent outside
  // a session (where Get Channel Cipher Suites and Authentication Capabilities go)
  udp_relay relay{farm_->port(1)};
  auto through = [&](std::shared_ptr<action> a) {
    auto j = make(1, std::move(a));
    j.port = relay.port();
    return run_one(e, std::move(j));
  };
  auto t0 = std::chrono::steady_clock::now();
  auto power = through(power_action(power_op::stat));
  EXPECT_EQ(power.out, "off") << power.message;
  auto log = through(eventlog_action(*parse_eventlog("all"), {}));
  EXPECT_EQ(log.out, "no SEL entries") << log.message;
  auto beacon = through(beacon_action(beacon_op::off));
  EXPECT_EQ(beacon.out, "off") << beacon.message;
  // at once (ipmitool without -C waits 10 s for the query's answer), and nothing was dropped
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_GE(relay.forwarded(), 5u);
  EXPECT_EQ(relay.dropped(), 0u);
}

} // namespace

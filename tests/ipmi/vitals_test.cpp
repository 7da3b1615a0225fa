// rvitals and rinv conversations against ipmi_sim BMCs on 127.0.0.1 holding SDRs compiled by
// sdrcomp, sensor readings and FRU data: the printed readings are the raw values converted,
// the FRU fields are the ones put in, the SDR cache spares the second call its SDR reads, and
// a BMC without SDRs or FRU, a dead one and a too large repository answer as documented.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <unistd.h>

#include "../support/bmc_content.hpp"
#include "../support/bmc_farm.hpp"
#include "../support/ipmi_jobs.hpp"
#include "ipmi/engine.hpp"
#include "ipmi/fru.hpp"
#include "ipmi/sensors.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::node_result;
using namespace cws::ipmi;

class ipmi_vitals : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cws::test::have_ipmi_sim() || ::access("/usr/bin/sdrcomp", X_OK) != 0) {
      GTEST_SKIP() << "ipmi_sim and sdrcomp (package openipmi) are not installed";
    }
    dir_ = std::filesystem::temp_directory_path()
           / ("cws-vitals-" + std::to_string(getpid()) + "-"
              + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    farm_ = std::make_unique<cws::test::bmc_farm>(dir_, 3);
    farm_->set_hardware(0, cws::test::sample_hardware());
  }
  void TearDown() override {
    farm_.reset();
    std::filesystem::remove_all(dir_);
  }

  job make(size_t i, std::shared_ptr<action> a) {
    return cws::test::farm_job(*farm_, i, std::move(a));
  }

  std::shared_ptr<action> vitals(const char* words, size_t i = 0, size_t max_records = 1024) {
    return vitals_action(*parse_vitals(words), cache_,
                         "127.0.0.1:" + std::to_string(farm_->port(i)), {max_records});
  }

  std::vector<node_result> run(std::vector<job> jobs) {
    return cws::test::run_jobs(engine_, std::move(jobs));
  }

  std::filesystem::path dir_;
  std::unique_ptr<cws::test::bmc_farm> farm_;
  std::shared_ptr<sdr_cache> cache_ = std::make_shared<sdr_cache>(16);
  engine engine_{{}};
};

TEST_F(ipmi_vitals, readings_are_the_values_set_converted_in_xcats_order) {
  auto r = run({make(0, vitals("all"))});
  ASSERT_FALSE(r[0].failed()) << r[0].message;
  const auto& out = r[0].out;
  // chassis status first, the sensors by name, then the LED answer
  EXPECT_EQ(out.rfind("Power Status: off\nPower Overload: false\n", 0), 0u) << out;
  auto sensors = out.find(cws::test::sample_sensor_lines);
  ASSERT_NE(sensors, std::string::npos) << out;
  EXPECT_GT(sensors, out.find("Cooling Fault: false"));
  EXPECT_EQ(out.substr(sensors + std::string{cws::test::sample_sensor_lines}.size()),
            "\nLED status not supported on this system");

  r = run({make(0, vitals("temp")), make(0, vitals("voltage fanspeed")), make(0, vitals("power"))});
  EXPECT_EQ(r[0].out, "CPU Temp: 45 C (113 F)") << r[0].message;
  EXPECT_EQ(r[1].out, "12V: 12.06 Volts\nFan 1: 3000 RPM") << r[1].message;
  EXPECT_EQ(r[2].out, "PSU Power: 200 Watts (683 BTUs/hr)\nPower Status: off") << r[2].message;

  farm_->set_power(0, true);
  r = run({make(0, vitals("chassis"))});
  EXPECT_EQ(r[0].out.rfind("Power Status: on\n", 0), 0u) << r[0].out;
  EXPECT_EQ(r[0].out.find("CPU Temp"), std::string::npos);
}

TEST_F(ipmi_vitals, second_call_reads_only_the_sensors) {
  auto r = run({make(0, vitals("temp"))});
  ASSERT_EQ(r[0].out, "CPU Temp: 45 C (113 F)") << r[0].message;
  auto first = cache_->stats();
  EXPECT_EQ(first.misses, 1u);
  EXPECT_EQ(first.hits, 0u);
  EXPECT_EQ(first.records, 4u); // every SDR record, once

  r = run({make(0, vitals("all"))});
  ASSERT_FALSE(r[0].failed()) << r[0].message;
  auto second = cache_->stats();
  EXPECT_EQ(second.hits, 1u);
  EXPECT_EQ(second.records, 4u);         // no SDR read again
  EXPECT_EQ(engine_.stats().reuses, 1u); // and the session was the pooled one

  // the BMC's repository changes (a sensor less): read again, and the fan is gone
  farm_->set_hardware(0, cws::test::sample_hardware(false));
  r = run({make(0, vitals("fanspeed temp"))});
  EXPECT_EQ(r[0].out, "CPU Temp: 45 C (113 F)") << r[0].message;
  EXPECT_EQ(cache_->stats().misses, 2u);
  EXPECT_EQ(cache_->stats().records, 7u);
}

TEST_F(ipmi_vitals, inventory_has_the_fru_fields_put_in) {
  auto r = run({make(0, inventory_action(*parse_inventory("all"), 4096))});
  ASSERT_FALSE(r[0].failed()) << r[0].message;
  EXPECT_EQ(r[0].out, "System Manufacturer: Prod Maker\n"
                      "System Description: Prod Name\n"
                      // xCAT sorts its FRU entries' indexes as text: 10, 11, 12 before 2
                      "Board Description: Board Name\n"
                      "Board Serial Number: BRD-SER\n"
                      "Board Model Number: BRD-PART\n"
                      "System Model/MTM: MODEL-1\n"
                      "System Revision: v2\n"
                      "System Serial Number: SYS-SER\n"
                      "System Asset Number: ASSET-9\n"
                      "Chassis Serial Number: CHSER42\n"
                      "Chassis Part Number: CH-PART\n"
                      "Board manufacture date: Tue Jan  9 13:45:00 1996\n"
                      "Board manufacturer: Board Maker\n"
                      "Device ID: 0\n"
                      "UUID/GUID: A1234567-89AB-CDEF-A123-456789ABCDEF\n"
                      "Manufacturer ID: 4753\n"
                      "BMC Firmware: 9.08\n"
                      "Product ID: 3842");
  r = run({make(0, inventory_action(*parse_inventory("serial"), 4096)),
           make(0, inventory_action(*parse_inventory("guid mprom"), 4096)),
           make(0, inventory_action(*parse_inventory("model"), 32))});
  EXPECT_EQ(r[0].out, "System Serial Number: SYS-SER\nChassis Serial Number: CHSER42");
  EXPECT_EQ(r[1].out, "UUID/GUID: A1234567-89AB-CDEF-A123-456789ABCDEF\nBMC Firmware: 9.08");
  // only 32 bytes read: the header and the chassis area, no board or product
  EXPECT_EQ(r[2].out, "Chassis Part Number: CH-PART") << r[2].message;
}

TEST_F(ipmi_vitals, bmc_without_sdrs_or_fru) {
  auto r = run({make(1, vitals("temp", 1)), make(1, vitals("all", 1)),
                make(1, inventory_action(*parse_inventory("model"), 4096))});
  EXPECT_EQ(r[0].out, "SDR repository is empty") << r[0].message;
  EXPECT_FALSE(r[1].failed());
  EXPECT_NE(r[1].out.find("Power Status: off"), std::string::npos);
  // ipmi_sim refuses Get FRU Inventory Area Info for a missing device (xCAT's wording)
  EXPECT_EQ(r[2].out, "Unable to read (Invalid data field in request)") << r[2].message;
}

TEST_F(ipmi_vitals, dead_bmc_costs_its_deadline_and_too_many_records_fail) {
  farm_->stop(2);
  auto start = std::chrono::steady_clock::now();
  // the last one without the cache: the second may have filled it already
  auto small = vitals_action(*parse_vitals("all"), nullptr, "n0", {3});
  auto r = run({make(2, vitals("all", 2)), make(0, vitals("temp")), make(0, small)});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r[0].error, "timeout") << r[0].message;
  EXPECT_LT(took, 3s); // 500 ms x 2 tries, whatever the others do
  EXPECT_EQ(r[1].out, "CPU Temp: 45 C (113 F)");
  EXPECT_TRUE(r[2].failed());
  EXPECT_NE(r[2].message.find("more than 3 records (ipmi_sdr_max_records)"), std::string::npos)
    << r[2].message;
}

} // namespace

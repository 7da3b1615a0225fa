#pragma once

// The service tests of hardware control (rpower, rsetboot, reventlog, rbeacon, rvitals, rinv):
// each suite runs one daemon beside one farm of ipmi_sim BMCs, shared by its tests and made in
// its own SetUpTestSuite.

#include <gtest/gtest.h>

#include <string>

#include "../store/temp_home.hpp"
#include "bmc_farm.hpp"
#include "daemon.hpp"
#include "https_client.hpp"

namespace cws::test {

/// The base of suite `Suite` (each suite has its own daemon and farm). Its SetUpTestSuite
/// leaves `d_` null when the BMC simulator is missing: every test is then skipped.
template<class Suite>
class farm_suite : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    if (d_ != nullptr) {
      d_->stop();
    }
    delete d_;
    delete farm_;
    delete dir_;
    d_ = nullptr;
    farm_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (d_ == nullptr) {
      GTEST_SKIP() << "ipmi_sim or sdrcomp (package openipmi) is not installed";
    }
  }

  /// One HTTPS request to the daemon (`extra`: more query parameters).
  static reply call(const std::string& method, const std::string& path,
                    const std::string& body = {}, const std::string& extra = {}) {
    https_client client{d_->ca(), d_->port()};
    return client.request(method, d_->url(path, extra), body);
  }

  static inline temp_dir* dir_ = nullptr;
  static inline bmc_farm* farm_ = nullptr;
  static inline daemon* d_ = nullptr;
};

} // namespace cws::test

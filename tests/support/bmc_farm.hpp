#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cws::test {

/// True if ipmi_sim (Debian package openipmi) is installed.
bool have_ipmi_sim();

/// What a simulated BMC holds besides its chassis: SDRs, sensor readings and FRU data.
struct bmc_hardware {
  /// SDR source text as OpenIPMI's `sdrcomp` compiles it (`sdr type 1 ... endsdr` blocks).
  std::string sdrs;
  /// A sensor: its number, type, event/reading type code and raw reading.
  struct sensor {
    int number;
    int type;
    int event_type;
    int raw;
  };
  std::vector<sensor> sensors;
  /// FRU device 0's bytes (none: the BMC has no FRU).
  std::vector<uint8_t> fru;
};

/// A farm of simulated BMCs: one `ipmi_sim` per BMC on 127.0.0.1, each on its own UDP port,
/// with user `admin` and the given password at admin privilege, and an enabled System Event
/// Log (1000 entries; `emu` adds to it). A chassis-control script
/// keeps each BMC's power (`0`/`1`) and boot device (`none`, `pxe`, `default`, `cdrom`) in
/// files and logs every call, so a test sees exactly what the BMC was told. Every process is
/// stopped by its pid.
class bmc_farm {
 public:
  /// With `sol_ports` (one per BMC), BMC i has Serial-over-LAN whose serial side is the TCP
  /// listener on 127.0.0.1:sol_ports[i] (ipmi_sim connects out to it; listen first).
  bmc_farm(std::filesystem::path dir, size_t count, std::string password = "secret",
           std::vector<unsigned short> sol_ports = {});
  ~bmc_farm();

  bmc_farm(const bmc_farm&) = delete;
  bmc_farm& operator=(const bmc_farm&) = delete;

  size_t size() const noexcept {
    return ports_.size();
  }
  unsigned short port(size_t i) const {
    return ports_.at(i);
  }

  /// Starts BMC `i` (again) and waits until its UDP port is bound.
  void start(size_t i);
  /// Stops BMC `i` with `sig` and waits for it.
  void stop(size_t i, int sig = 15);

  /// The power state the chassis holds ("0"/"1"); setting it is the node turning itself on.
  std::string power(size_t i) const;
  void set_power(size_t i, bool on);
  /// The boot device the chassis holds.
  std::string boot(size_t i) const;
  /// When BMC `i` was told to power on (`set power 1`), each time so far (Unix time,
  /// seconds: the wall clock every process on the machine shares).
  std::vector<double> power_on_times(size_t i) const;
  /// Every chassis call so far, one per line (`get power`, `set power 1`, ...).
  std::string log(size_t i) const;
  /// Makes BMC `i`'s chassis script take `seconds` before it answers (0: at once).
  void set_delay(size_t i, double seconds);
  /// Runs one emulator command (ipmi_sim_cmd(5): `sel_add 0x20 2 ...`) on BMC `i` through its
  /// console port and returns what it printed (`Added record 1`). Bounded: 5 s.
  std::string emu(size_t i, const std::string& command) const;
  /// Gives BMC `i` these SDRs (compiled by sdrcomp), sensor readings and FRU data, and
  /// restarts it with them (its SDR repository then has new timestamps).
  void set_hardware(size_t i, const bmc_hardware& hw);

 private:
  std::filesystem::path dir_;
  std::string password_;
  std::vector<unsigned short> ports_;
  std::vector<unsigned short> consoles_;
  std::vector<pid_t> pids_;
};

} // namespace cws::test

#pragma once

// The daemon's metrics as families that each component writes (Envoy's per-component stats):
// a component adds one function to the registry, and a scrape (http/metrics_page) calls them
// all and formats what they wrote. The page knows no component; a component knows no page.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metric.hpp"

namespace cws::base {

/// What a family's samples are (Prometheus' types).
enum class metric_type : uint8_t { counter, gauge, histogram };

/// One label of a sample: its name and value (`{"result", "ok"}`).
using metric_label = std::pair<std::string, std::string>;

/// One sample of a family: its labels, and its value (counter, gauge) or buckets (histogram).
struct metric_sample {
  std::vector<metric_label> labels;
  double value = 0;
  histogram::snapshot buckets;
};

/// One family: a name in the Prometheus style (`clusterws_<subsystem>_<what>[_total]`), one
/// line of help, its samples. docs/observability.md lists every family.
struct metric_family {
  std::string name;
  std::string help;
  metric_type type = metric_type::gauge;
  std::vector<metric_sample> samples;
};

/// Where components write their families at a scrape, in order.
class metric_writer {
 public:
  /// A family of one counter without labels.
  void counter(std::string_view name, std::string_view help, double value);

  /// A family of one gauge without labels.
  void gauge(std::string_view name, std::string_view help, double value);

  /// A family of one histogram without labels.
  void histogram(std::string_view name, std::string_view help, const base::histogram& h);

  /// A new family, for labelled samples (`add`). The reference stays valid while this writer
  /// lives.
  metric_family& family(std::string_view name, std::string_view help, metric_type type);

  /// Adds a counter or gauge sample to `f`.
  static void add(metric_family& f, double value, std::vector<metric_label> labels = {});

  /// Adds a histogram sample to `f`.
  static void add(metric_family& f, const base::histogram& h,
                  std::vector<metric_label> labels = {});

  /// The families written so far, in order.
  const std::deque<metric_family>& families() const noexcept {
    return families_;
  }

 private:
  std::deque<metric_family> families_;
};

/// The metrics of every component. Each adds a function that writes its families (reading its
/// counters: relaxed atomic loads, never a lock held long, never I/O); a scrape calls them
/// all, in the order they were added. Safe from any thread.
class metric_registry {
 public:
  using write_fn = std::function<void(metric_writer&)>;

  /// Adds `fn`, the metrics of component `owner` (a name for tests and errors).
  void add(std::string owner, write_fn fn);

  /// Calls every function, in the order added, into `out`.
  void write(metric_writer& out) const;

  /// The owners, in the order added.
  std::vector<std::string> owners() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, write_fn>> writers_;
};

} // namespace cws::base

#pragma once

// One subsystem of clusterwsd as daemon/main.cpp lists them (docs/architecture.md, "Daemon
// components and metrics"): built from the settings, started in the list's order, stopped in
// the reverse order, told of a SIGHUP's settings, and asked for its metrics at each scrape.

#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/metric_registry.hpp"
#include "base/settings.hpp"

namespace cws::daemon {

/// A subsystem of the daemon. Its constructor reads the settings it needs (a bad one refuses
/// the start before anything runs); `start` brings it up (threads, actors, sockets); `stop`
/// takes it down and lets go of what it holds.
class component {
 public:
  virtual ~component() = default;

  /// A short name: logs, the metric registry's owner.
  virtual std::string_view name() const = 0;

  /// Starts it; the components before it in the list are running.
  /// @throws std::exception refusing the start (the ones started are stopped again).
  virtual void start() = 0;

  /// Stops it; the components after it in the list are stopped already. Called once, and
  /// only after `start` returned.
  virtual void stop() = 0;

  /// The settings it applies again on SIGHUP (docs/configuration.md, "Reloading"); every
  /// other change waits for the next restart.
  virtual std::vector<std::string_view> reloadable() const {
    return {};
  }

  /// A SIGHUP changed some of its `reloadable` settings: applies them from `next`. Runs on
  /// the first io thread.
  /// @throws std::exception refusing them (the values in use stay; the log says why).
  virtual void reload(const base::settings& next) {
    (void)next;
  }

  /// Writes its metric families (at each scrape, on an io thread: read counters, never
  /// block). Nothing before `start` or after `stop`.
  virtual void metrics(base::metric_writer& out) const {
    (void)out;
  }
};

/// The daemon's components in start order; stopped in the reverse order (also when one fails
/// to start, or when the list is destroyed first).
class component_list {
 public:
  component_list() = default;
  component_list(const component_list&) = delete;
  component_list& operator=(const component_list&) = delete;

  /// Stops what still runs.
  ~component_list();

  /// Builds a `T` from `args` (the settings, the components it uses) and appends it.
  template<class T, class... Args>
  T& add(Args&&... args) {
    static_assert(std::is_base_of_v<component, T>);
    auto c = std::make_unique<T>(std::forward<Args>(args)...);
    auto& ref = *c;
    parts_.push_back(std::move(c));
    return ref;
  }

  /// Adds each component's metrics to `r`, in the list's order.
  void register_metrics(base::metric_registry& r) const;

  /// Starts every component in order. If one throws, stops the started ones in reverse
  /// order and throws that again.
  void start();

  /// Stops the started components in reverse order. A second call does nothing.
  void stop();

  /// What a reload did with the changed settings.
  struct reload_report {
    /// Applied now (the components took them).
    std::vector<std::string_view> applied;
    /// Refused by the component that reloads them (logged): the values in use stay.
    std::vector<std::string_view> refused;
    /// Applied at the next restart: no component reloads them.
    std::vector<std::string_view> later;
  };

  /// A SIGHUP: gives every component whose `reloadable` settings differ between `running`
  /// and `next` the new settings, and sets the ones applied in `running`. A component that
  /// refuses is logged (error) and keeps its values.
  reload_report reload(base::settings& running, const base::settings& next);

 private:
  std::vector<std::unique_ptr<component>> parts_;
  /// How many of `parts_` (from the front) run.
  size_t started_ = 0;
};

} // namespace cws::daemon

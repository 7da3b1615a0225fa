#include "daemon/component.hpp"

#include <algorithm>
#include <string>

#include "base/log.hpp"

namespace cws::daemon {

component_list::~component_list() {
  stop();
  // destroyed in the reverse order too: a component may hold what an earlier one made
  while (!parts_.empty()) {
    parts_.pop_back();
  }
}

void component_list::register_metrics(base::metric_registry& r) const {
  for (const auto& c : parts_) {
    const component* p = c.get();
    r.add(std::string{p->name()}, [p](base::metric_writer& out) { p->metrics(out); });
  }
}

void component_list::start() {
  try {
    for (; started_ < parts_.size(); ++started_) {
      parts_[started_]->start();
    }
  } catch (...) {
    stop();
    throw;
  }
}

void component_list::stop() {
  while (started_ > 0) {
    auto& c = *parts_[--started_];
    try {
      c.stop();
    } catch (const std::exception& e) {
      // the others still stop (their threads and actors must end before the process does)
      base::log(base::log_level::error, "stopping " + std::string{c.name()} + ": " + e.what());
    }
  }
}

component_list::reload_report component_list::reload(base::settings& running,
                                                     const base::settings& next) {
  reload_report out;
  auto changed = running.changed(next);
  for (const auto& c : parts_) {
    std::vector<std::string_view> mine;
    for (auto key : c->reloadable()) {
      if (std::find(changed.begin(), changed.end(), key) != changed.end()) {
        mine.push_back(key);
      }
    }
    if (mine.empty()) {
      continue;
    }
    try {
      c->reload(next);
    } catch (const std::exception& e) {
      base::log(base::log_level::error,
                std::string{c->name()}
                  + ": settings not reloaded (the ones in use stay): " + e.what());
      out.refused.insert(out.refused.end(), mine.begin(), mine.end());
      continue;
    }
    for (auto key : mine) {
      running.set(key, next.text(key), "reload");
      out.applied.push_back(key);
    }
  }
  for (auto key : changed) {
    auto in = [key](const std::vector<std::string_view>& keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    if (!in(out.applied) && !in(out.refused)) {
      out.later.push_back(key);
    }
  }
  return out;
}

} // namespace cws::daemon

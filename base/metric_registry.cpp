#include "base/metric_registry.hpp"

namespace cws::base {

void metric_writer::counter(std::string_view name, std::string_view help, double value) {
  add(family(name, help, metric_type::counter), value);
}

void metric_writer::gauge(std::string_view name, std::string_view help, double value) {
  add(family(name, help, metric_type::gauge), value);
}

void metric_writer::histogram(std::string_view name, std::string_view help,
                              const base::histogram& h) {
  add(family(name, help, metric_type::histogram), h);
}

metric_family& metric_writer::family(std::string_view name, std::string_view help,
                                     metric_type type) {
  families_.push_back({std::string{name}, std::string{help}, type, {}});
  return families_.back();
}

void metric_writer::add(metric_family& f, double value, std::vector<metric_label> labels) {
  metric_sample s;
  s.labels = std::move(labels);
  s.value = value;
  f.samples.push_back(std::move(s));
}

void metric_writer::add(metric_family& f, const base::histogram& h,
                        std::vector<metric_label> labels) {
  metric_sample s;
  s.labels = std::move(labels);
  s.buckets = h.read();
  f.samples.push_back(std::move(s));
}

void metric_registry::add(std::string owner, write_fn fn) {
  std::lock_guard<std::mutex> guard{mu_};
  writers_.emplace_back(std::move(owner), std::move(fn));
}

void metric_registry::write(metric_writer& out) const {
  // called without the lock: a writer may take its own locks, or scrape in parallel
  std::vector<std::pair<std::string, write_fn>> writers;
  {
    std::lock_guard<std::mutex> guard{mu_};
    writers = writers_;
  }
  for (const auto& [owner, fn] : writers) {
    fn(out);
  }
}

std::vector<std::string> metric_registry::owners() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<std::string> out;
  for (const auto& w : writers_) {
    out.push_back(w.first);
  }
  return out;
}

} // namespace cws::base

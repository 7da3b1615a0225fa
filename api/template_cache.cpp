#include "api/template_cache.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace cws::api {

namespace {

int64_t ns_of(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// `path` as stat(2) identifies it; false when it cannot be stat'ed.
bool identify(const std::string& path, template_cache::file_id& id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return false;
  }
  id.path = path;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<int64_t>(st.st_size);
  id.mtime_ns = ns_of(st.st_mtim);
  id.ctime_ns = ns_of(st.st_ctim);
  return true;
}

int64_t now_ns() {
  struct timespec t {};
  clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

} // namespace

template_cache::template_cache(template_cache_limits limits) : limits_(limits) {
  // nop
}

std::shared_ptr<const compiled_template> template_cache::get(const std::filesystem::path& file,
                                                             const template_limits& limits) {
  // the limits are part of the key: a template refused under one bound may pass another
  auto key = file.string() + '\0' + std::to_string(limits.max_bytes) + '\0'
             + std::to_string(limits.max_depth);
  std::shared_ptr<entry> found;
  if (limits_.max_entries > 0) {
    std::shared_lock<std::shared_mutex> lock{mu_};
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      found = it->second;
    }
  }
  if (found) {
    bool same = true;
    file_id now;
    for (const auto& f : found->files) {
      if (!identify(f.path, now) || !(now == f)) {
        same = false;
        break;
      }
    }
    if (same) {
      found->used.store(++tick_, std::memory_order_relaxed);
      ++hits_;
      return found->compiled;
    }
  }

  // parse, recording each file as it was just before it was read: a change after that
  // moves its times (or its inode) and is seen by the next lookup
  auto e = std::make_shared<entry>();
  auto read_file = file_reader(limits.max_bytes);
  include_reader reader = [&](const std::filesystem::path& path) {
    file_id id;
    if (!identify(path.string(), id)) {
      int err = errno;
      throw template_error{"cannot read " + path.string() + ": " + std::strerror(err)};
    }
    e->files.push_back(std::move(id));
    return read_file(path);
  };
  auto text = reader(file);
  auto compiled = std::make_shared<const compiled_template>(
    compiled_template::parse(text, file, limits, reader));
  ++parses_;
  e->compiled = compiled;
  e->bytes = compiled->bytes() + key.size();
  for (const auto& f : e->files) {
    e->bytes += f.path.size() + sizeof(file_id);
  }
  auto recent = now_ns() - limits_.racy_window.count();
  for (const auto& f : e->files) {
    if (f.mtime_ns > recent || f.ctime_ns > recent) {
      return compiled; // (racy: not kept, the next fetch parses again)
    }
  }
  if (limits_.max_entries > 0 && e->bytes <= limits_.max_bytes) {
    keep(key, std::move(e));
  }
  return compiled;
}

void template_cache::keep(const std::string& key, std::shared_ptr<entry> e) {
  e->used.store(++tick_, std::memory_order_relaxed);
  std::unique_lock<std::shared_mutex> lock{mu_};
  auto [it, inserted] = entries_.try_emplace(key, e);
  if (!inserted) {
    bytes_ -= it->second->bytes;
    it->second = e;
  }
  bytes_ += e->bytes;
  // the least recently used go first (a scan: the bound on entries keeps it short, and it
  // runs only when a template was parsed)
  while (entries_.size() > limits_.max_entries || bytes_ > limits_.max_bytes) {
    auto victim = entries_.end();
    for (auto i = entries_.begin(); i != entries_.end(); ++i) {
      if (i->second != e
          && (victim == entries_.end()
              || i->second->used.load(std::memory_order_relaxed)
                   < victim->second->used.load(std::memory_order_relaxed))) {
        victim = i;
      }
    }
    if (victim == entries_.end()) {
      break;
    }
    bytes_ -= victim->second->bytes;
    entries_.erase(victim);
    ++evictions_;
  }
}

template_cache::counters template_cache::stats() const {
  counters c;
  c.hits = hits_.load();
  c.parses = parses_.load();
  c.evictions = evictions_.load();
  std::shared_lock<std::shared_mutex> lock{mu_};
  c.entries = entries_.size();
  c.bytes = bytes_;
  return c;
}

} // namespace cws::api

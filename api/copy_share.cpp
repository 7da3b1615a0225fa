#include "api/copy_share.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace cws::api {

namespace {

std::string mib(uint64_t bytes) {
  auto text = std::to_string(bytes) + " bytes";
  if (bytes >= (1u << 20)) {
    text += " (" + std::to_string(bytes >> 20) + " MiB)";
  }
  return text;
}

/// Reads all of `fd` (`size` bytes) into `out`. @returns "" or why not.
std::string read_whole(int fd, uint64_t size, std::string& out) {
  out.resize(size);
  uint64_t got = 0;
  while (got < size) {
    auto n = ::pread(fd, &out[got], size - got, static_cast<off_t>(got));
    if (n < 0) {
      return "cannot read it";
    }
    if (n == 0) {
      return "it shrank while it was read";
    }
    got += static_cast<uint64_t>(n);
  }
  return {};
}

} // namespace

std::string carry_copy(const ssh::copy_spec& spec, uint64_t max_bytes,
                       std::vector<wire::copy_group>& out) {
  out.clear();
  if (!spec.pull.empty()) {
    return "pulling files from nodes (xdcp -P) does not go through a service node";
  }
  // the sizes first: a copy past the bound is refused before a byte is read
  uint64_t total = 0;
  for (const auto& g : spec.push) {
    for (const auto& f : g.files) {
      if (f.data) {
        total += f.data->size();
      } else if (f.source) {
        struct stat st {};
        if (::fstat(f.source->fd(), &st) != 0) {
          return "cannot read " + f.local.string();
        }
        total += static_cast<uint64_t>(st.st_size);
      }
    }
  }
  if (total > max_bytes) {
    return "the files to copy are " + mib(total) + ", more than sn_copy_max (" + mib(max_bytes)
           + ") a service node is sent";
  }
  out.reserve(spec.push.size());
  for (const auto& g : spec.push) {
    wire::copy_group w;
    w.target = g.target;
    w.into = g.into;
    w.files.reserve(g.files.size());
    for (const auto& f : g.files) {
      wire::copy_file c;
      c.name = f.name;
      c.directory = f.directory;
      c.mode = f.mode;
      c.atime = f.atime;
      c.mtime = f.mtime;
      if (f.data) {
        c.data = *f.data;
      } else if (f.source) {
        struct stat st {};
        if (::fstat(f.source->fd(), &st) != 0) {
          return "cannot read " + f.local.string();
        }
        if (auto why = read_whole(f.source->fd(), static_cast<uint64_t>(st.st_size), c.data);
            !why.empty()) {
          return f.local.string() + ": " + why;
        }
      }
      w.files.push_back(std::move(c));
    }
    out.push_back(std::move(w));
  }
  // (a file that grew between the two looks is still bounded)
  uint64_t carried = 0;
  for (const auto& g : out) {
    for (const auto& f : g.files) {
      carried += f.data.size();
    }
  }
  if (carried > max_bytes) {
    out.clear();
    return "the files to copy are " + mib(carried) + ", more than sn_copy_max (" + mib(max_bytes)
           + ") a service node is sent";
  }
  return {};
}

api_result bind_copy(const wire::job_request& job, size_t chunk,
                     std::shared_ptr<const ssh::copy_spec>& out) {
  out.reset();
  if (job.pull) {
    return api_result::failure(
      {"pulling files from nodes (xdcp -P) does not go through a service node"});
  }
  if (job.files.empty()) {
    if (!job.copy.empty()) {
      return api_result::failure({"the request names files to copy and carries none"});
    }
    return {};
  }
  auto spec = std::make_shared<ssh::copy_spec>();
  spec->execute = job.execute;
  spec->chunk = std::max<size_t>(chunk, 1);
  for (const auto& g : job.files) {
    ssh::copy_group c;
    c.target = g.target;
    c.into = g.into;
    for (const auto& f : g.files) {
      ssh::copy_file file;
      file.name = f.name;
      file.directory = f.directory;
      file.mode = f.mode;
      file.atime = f.atime;
      file.mtime = f.mtime;
      if (!f.directory) {
        file.data = std::make_shared<const std::string>(f.data);
      }
      file.local = "(from the head) " + f.name;
      c.files.push_back(std::move(file));
    }
    spec->push.push_back(std::move(c));
  }
  out = std::move(spec);
  return {};
}

void refuse_shares(delegation_plan& plan, const std::string& why) {
  for (const auto& s : plan.shares) {
    for (auto i : s.indexes) {
      plan.refused.push_back({i, "service node " + s.service_node
                                   + " was not sent the request: " + why + "; nothing was run"});
    }
  }
  plan.shares.clear();
  std::sort(plan.refused.begin(), plan.refused.end(),
            [](const sn_refusal& a, const sn_refusal& b) { return a.index < b.index; });
}

} // namespace cws::api

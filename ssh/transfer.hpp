#pragma once

#include <libssh2.h>
#include <libssh2_sftp.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/node_errc.hpp"

namespace cws::ssh {

/// A source file opened once on the head node: every node reads its copy from this
/// descriptor (pread), never by its path again, so a name swapped for a link after the check
/// changes nothing (docs/security.md, N2).
class source_file {
 public:
  /// Takes `fd`, an open regular file.
  explicit source_file(int fd) noexcept : fd_(fd) {
  }
  ~source_file();
  source_file(const source_file&) = delete;
  source_file& operator=(const source_file&) = delete;

  int fd() const noexcept {
    return fd_;
  }

 private:
  int fd_;
};

/// One file or directory pushed to a node.
struct copy_file {
  /// Its path below the destination, '/'-separated; the first part is the source's own name
  /// (`hosts`, `dir/sub/file`).
  std::string name;
  bool directory = false;
  /// The content when it is held in memory (once, shared by every node); null: streamed
  /// from `source` by each node.
  std::shared_ptr<const std::string> data;
  std::shared_ptr<const source_file> source;
  /// The source's path, for messages only.
  std::filesystem::path local;
  /// Permission bits of the new file or directory.
  unsigned mode = 0644;
  /// Access and modification times (seconds) to set, when >= 0 (xdcp -p).
  long long atime = -1;
  long long mtime = -1;
};

/// Sources copied to one target path, as scp does: into the target if it is a directory on
/// the node (or `into`), else as the target itself (one source only).
struct copy_group {
  std::string target;
  /// The target is a directory (several sources, or a target ending in '/'): made (one
  /// level) when missing.
  bool into = false;
  /// Parents before their children.
  std::vector<copy_file> files;
};

/// Where the script's path goes in an xdsh -e job's command (`export A=1; %CWS_SCRIPT% args`).
constexpr const char* script_token = "%CWS_SCRIPT%";

/// What a job copies over SFTP before its command runs (xdcp, nodecopy, xdsh -e). Shared,
/// read-only, by every node of a run.
struct copy_spec {
  /// Push: every file is written under a temporary name in its final directory, then all
  /// are renamed (`mv -f -T`, atomic) by one command on the same connection, so a node never
  /// sees half a file; on failure the temporaries are removed.
  std::vector<copy_group> push;
  /// xdsh -e: the one pushed file (a script) is written under a temporary name, run with the
  /// job's command as its arguments, and removed.
  bool execute = false;
  /// Pull (xdcp -P): this remote file of each node goes to `<pull_dir>/<name>._<node>`
  /// (written under a temporary name, then renamed).
  std::string pull;
  std::filesystem::path pull_dir;
  /// Pull (xdcp -R -P): a remote directory comes whole, as `<pull_dir>/<name>._<node>/`
  /// (built under a temporary name, then swapped in); a remote file as without it.
  bool pull_tree = false;
  /// Pull with `pull_tree`: most files, directories and links one node's tree may hold.
  size_t pull_entries_max = 10000;
  /// Pull: most bytes one node may write (copy_pull_node_max), all nodes of the run together
  /// (copy_pull_run_max), and the bytes left free on pull_dir's file system
  /// (copy_pull_free_min). A node past one fails; its partial file or tree is removed.
  uint64_t pull_node_max = 4ULL << 30;
  uint64_t pull_run_max = 64ULL << 30;
  uint64_t pull_free_min = 1ULL << 30;
  /// Pull: bytes written so far by every node of the run (engine thread).
  std::shared_ptr<std::atomic<uint64_t>> pulled = std::make_shared<std::atomic<uint64_t>>(0);
  /// Pull: keep the remote file's mode and times, masked as OpenSSH's sftp does (no setuid,
  /// setgid or sticky bit; directories never writable by others).
  bool preserve = false;
  /// Bytes handed to one SFTP write or read (the data in flight per node).
  size_t chunk = 256 * 1024;
};

/// The SFTP part of one node's job: a state machine that never blocks, driven by its session
/// on the engine thread until `done` or `failed`. Engine thread only.
///
/// A node whose sshd has no SFTP subsystem (the subsystem request is refused) gets the same
/// copy over exec channels instead, one per step (`test -d`, `mkdir`, `cat > temporary` fed
/// the content as stdin, `cat` of a pulled file, `rm` of the temporaries on failure): the same
/// temporaries, renames, modes and messages, at the cost of a channel and a shell per file on
/// the node. A pulled tree (xdcp -R -P) still needs SFTP's listing.
class transfer {
 public:
  enum class status { again, done, failed };

  /// Copies `spec` (which must outlive it) for `node` on `s`, an authenticated session.
  transfer(const copy_spec& spec, std::string node, LIBSSH2_SESSION* s);
  ~transfer();

  transfer(const transfer&) = delete;
  transfer& operator=(const transfer&) = delete;

  /// Goes as far as it can; `again`: libssh2 waits for the socket.
  status step();

  /// Once `failed`: a short code (`copy`, `channel`, `disconnected`) and the words.
  base::node_errc error() const noexcept {
    return error_;
  }
  const std::string& message() const noexcept {
    return message_;
  }

  /// True if nothing was done on the node yet (a pooled connection may be replaced).
  bool untouched() const noexcept {
    return !started_;
  }

  /// Once `done`: the command the job runs next on the node (renames, the script); empty when
  /// there is nothing to run. For a script, `command` (the job's) holds `script_token` where
  /// the script's path goes (outside quotes), else it is the script's arguments.
  std::string command(const std::string& command) const;

 private:
  enum class phase {
    init,
    stat_target,
    make_target,
    next_file,
    mkdir,
    open,
    write,
    setstat,
    close,
    pull_root,
    tree_opendir,
    tree_readdir,
    tree_closedir,
    tree_next,
    tree_readlink,
    pull_open,
    pull_stat,
    pull_read,
    pull_close,
    cleanup_close,
    cleanup_unlink,
    shutdown,
    // no SFTP subsystem: the same steps over exec channels
    x_stat,
    x_make,
    x_next_file,
    x_mkdir,
    x_write,
    x_pull_stat,
    x_pull,
    x_cleanup,
    finished,
  };

  /// One exec channel's life: open, exec, stdin, EOF, output, close, exit status.
  enum class xstage { open, exec, input, eof, read, close, wait };

  status fail(const std::string& what, int rc);
  status sftp_fail(const std::string& what);
  bool refill(int fd);
  status pull_write(ssize_t n);
  std::string final_path(const copy_file& f) const;
  status push_step();
  status pull_step();
  status tree_step();
  status tree_finish();
  status exec_step();
  status exec_run();
  void exec_start(std::string command, const copy_file* input = nullptr, bool pull = false);
  std::string exec_why() const;
  status pull_done();

  const copy_spec& spec_;
  std::string node_;
  LIBSSH2_SESSION* s_;
  LIBSSH2_SFTP* sftp_ = nullptr;
  LIBSSH2_SFTP_HANDLE* handle_ = nullptr;
  phase ph_ = phase::init;
  bool failed_ = false;
  /// A step function reached a phase another one handles: its caller goes on with it (a loop,
  /// not a recursion: a tree of 10,000 files goes back and forth 10,000 times).
  bool handoff_ = false;
  /// The SFTP subsystem started: the node may have been changed.
  bool started_ = false;
  base::node_errc error_ = base::node_errc::none;
  std::string message_;

  // push
  size_t group_ = 0;
  size_t file_ = 0;
  /// The target is a directory: files go into it.
  bool target_dir_ = false;
  std::string tmp_;
  /// Temporaries written, and their final names.
  std::vector<std::pair<std::string, std::string>> renames_;
  /// Bytes of the current file acknowledged so far.
  uint64_t sent_ = 0;
  /// Pulling: the local file written. Streaming from disk: the bytes read from the source
  /// (at `read_`) but not yet acknowledged.
  int fd_ = -1;
  uint64_t read_ = 0;
  std::string buf_;
  bool eof_ = false;
  size_t unlink_ = 0;

  // pull
  /// One entry of a pulled tree: its path below the tree ('/'-separated) and attributes.
  struct tree_entry {
    std::string rel;
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
  };
  /// The tree being pulled: where it is built locally (removed on failure), entries still to
  /// list or fetch, and the directories made (their modes and times are set last).
  std::filesystem::path tree_tmp_;
  std::vector<tree_entry> tree_todo_;
  std::vector<tree_entry> tree_dirs_;
  std::string tree_dir_;
  size_t tree_count_ = 0;
  /// The listing being read gave its `.` / `..` already: a second one counts as an entry.
  bool dot_seen_ = false;
  bool dotdot_seen_ = false;
  /// Bytes this node pulled (a file, or every file of its tree).
  uint64_t pulled_ = 0;
  /// The remote path being read (the pulled file, or a file of the tree).
  std::string remote_;
  std::filesystem::path local_tmp_;
  std::filesystem::path local_final_;
  LIBSSH2_SFTP_ATTRIBUTES attrs_{};

  // exec channels (no SFTP subsystem on the node)
  bool exec_ = false;
  LIBSSH2_CHANNEL* ch_ = nullptr;
  xstage xs_ = xstage::open;
  bool xrunning_ = false;
  /// Failed with a push's channel open: it is ended (EOF, exit) before the cleanup.
  bool xdrain_ = false;
  std::string xcmd_;
  /// The file fed as the command's stdin; null: none.
  const copy_file* xinput_ = nullptr;
  /// The command's stdout is the pulled file (pull_write), not kept.
  bool xpull_ = false;
  std::string xout_;
  std::string xerr_;
  int xrc_ = 0;
  /// The channel's send window when its command started (for the pacing of its input).
  unsigned long xwindow0_ = 0;
  /// Most bytes of input unacknowledged; 0: as many as the window takes.
  size_t xpace_ = 0;
};

/// The mode a pulled file or directory gets with -p: OpenSSH's sftp keeps only the
/// permission bits (no setuid, setgid, sticky); a directory is never writable by others.
unsigned pulled_mode(unsigned long remote, bool directory);

/// `text` quoted for a POSIX shell ('...').
std::string shell_quote(const std::string& text);

} // namespace cws::ssh

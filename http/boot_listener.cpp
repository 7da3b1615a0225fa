#include "http/boot_listener.hpp"

#include <caf/send.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>

#include "base/log.hpp"
#include "http/boot_route.hpp"
#include "http/session.hpp"
#include "http/stop_list.hpp"

namespace cws::http {

namespace {

using actors::run_atom;
using clock = std::chrono::steady_clock;

/// Unknown MACs remembered for their once-a-minute log line (beyond: not logged).
constexpr size_t unknown_macs_max = 4096;

/// Accepts kept pending on the acceptor: when a rack's connections arrive at once, one
/// readiness of the listening socket accepts up to this many (Asio runs every queued accept
/// until one would block) instead of one per turn of the first io thread.
constexpr size_t accepts_pending = 16;

class boot_session;

} // namespace

struct boot_listener::state : std::enable_shared_from_this<boot_listener::state> {
  using done_fn = std::function<void(api::install_update_result)>;
  struct pending {
    api::install_update update;
    done_fn done;
  };

  state(std::vector<net::io_context*> contexts, boot_listener_config c, actors::store_actor s,
        api::install_token_key k, std::shared_ptr<const store::database> d)
      : iocs(std::move(contexts)), cfg(std::move(c)), store(std::move(s)), key(std::move(k)),
        db(std::move(d)), acceptor(iocs.front()->get_executor()),
        batch_timer(iocs.front()->get_executor()), deadline_timer(iocs.front()->get_executor()) {
    acceptor.open(cfg.endpoint.protocol());
    acceptor.set_option(net::socket_base::reuse_address(true));
    acceptor.bind(cfg.endpoint);
    acceptor.listen(net::socket_base::max_listen_connections);
    if (cfg.xcat_status) {
      xacceptor.emplace(iocs.front()->get_executor());
      xacceptor->open(cfg.xcat_status->protocol());
      xacceptor->set_option(net::socket_base::reuse_address(true));
      xacceptor->bind(*cfg.xcat_status);
      xacceptor->listen(net::socket_base::max_listen_connections);
    }
  }

  std::vector<net::io_context*> iocs;
  size_t next = 0;
  boot_listener_config cfg;
  actors::store_actor store;
  api::install_token_key key;
  std::shared_ptr<const store::database> db; // (null: every read through the store's readers)
  api::mac_index macs;
  net::basic_socket_acceptor<tcp, io_executor> acceptor;
  std::optional<net::basic_socket_acceptor<tcp, io_executor>> xacceptor;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> streams{0};
  std::atomic<bool> stopped{false};
  stop_list sessions;

  std::mutex mu; // the status batch (the timer itself only on the first io thread)
  std::vector<pending> queue;
  bool batch_scheduled = false;
  steady_timer batch_timer;
  steady_timer deadline_timer;

  std::mutex mac_mu;
  std::map<std::string, clock::time_point> unknown_macs;

  void do_accept();
  void on_accept(beast::error_code ec, tcp_socket socket);
  void do_accept_xcat();

  /// Queues a status change for the next batch write; `done` (may be empty) gets its result
  /// on a store thread.
  void enqueue(api::install_update u, done_fn done) {
    bool schedule = false;
    {
      std::lock_guard<std::mutex> lock{mu};
      queue.push_back({std::move(u), std::move(done)});
      if (!batch_scheduled) {
        batch_scheduled = true;
        schedule = true;
      }
    }
    if (schedule) {
      net::post(acceptor.get_executor(), [self = shared_from_this()] {
        self->batch_timer.expires_after(self->cfg.batch);
        self->batch_timer.async_wait([self](beast::error_code) { self->flush(); });
      });
    }
  }

  /// Hands what is queued to the store as one write.
  void flush() {
    std::vector<pending> batch;
    {
      std::lock_guard<std::mutex> lock{mu};
      batch.swap(queue);
      batch_scheduled = false;
    }
    if (batch.empty()) {
      return;
    }
    auto items = std::make_shared<std::vector<pending>>(std::move(batch));
    auto results = std::make_shared<std::vector<api::install_update_result>>();
    auto fn = std::make_shared<actors::write_fn>([items, results, k = key](store::write_txn& t) {
      std::vector<api::install_update> updates;
      updates.reserve(items->size());
      for (const auto& p : *items) {
        updates.push_back(p.update);
      }
      *results = api::apply_install_updates(t, updates, k, std::time(nullptr));
      return api::api_result{};
    });
    auto done = std::make_shared<actors::done_fn>([items, results](api::api_result r) {
      for (size_t i = 0; i < items->size(); ++i) {
        api::install_update_result res;
        if (r.ok() && i < results->size()) {
          res = (*results)[i];
        } else {
          res.refused = true; // (the commit failed: nothing of it was written)
        }
        if ((*items)[i].done) {
          (*items)[i].done(res);
        }
      }
    });
    caf::anon_send(store, run_atom::value, actors::write_fn_ptr{fn}, actors::done_ptr{done});
  }

  void schedule_deadlines() {
    if (stopped) {
      return;
    }
    deadline_timer.expires_after(cfg.deadline_check);
    deadline_timer.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->stopped) {
        return;
      }
      self->check_deadlines();
      self->schedule_deadlines();
    });
  }

  /// One read finds the nodes past their stage's deadline; they are marked in one write.
  void check_deadlines() {
    auto fn
      = std::make_shared<actors::read_fn>([self = shared_from_this()](const store::database& db) {
          std::vector<api::install_update> late;
          try {
            late = api::overdue_installs(db.read(), std::time(nullptr), self->cfg.deadlines);
          } catch (const std::exception& e) {
            base::log(base::log_level::error, std::string{"boot: deadline check: "} + e.what());
            return;
          }
          for (auto& u : late) {
            base::log(base::log_level::warning, "boot: " + u.node + ": " + u.message);
            self->enqueue(std::move(u), {});
          }
        });
    caf::anon_send(store, run_atom::value, actors::read_fn_ptr{fn});
  }

  /// A refused token: logged (never the token), counted per node within the armed token.
  void refused(const std::string& node, const std::string& nonce, const std::string& peer,
               const char* what) {
    base::log(base::log_level::warning,
              "boot: " + node + ": install token refused for " + what + " from " + peer);
    if (nonce.empty() || cfg.bad_token_limit == 0) {
      return; // no install under way: nothing to mark
    }
    // counted in the store (per node, within the armed install): survives a restart
    api::install_update u;
    u.node = node;
    u.refused_nonce = nonce;
    u.bad_token_limit = cfg.bad_token_limit;
    enqueue(std::move(u), [node, limit = cfg.bad_token_limit](api::install_update_result r) {
      if (r.marked) {
        base::log(base::log_level::warning, "boot: " + node + ": " + std::to_string(limit)
                                              + " refused install tokens: marked failed (bad "
                                                "install token)");
      }
    });
  }

  void unknown_mac(const std::string& mac, const std::string& peer) {
    auto now = clock::now();
    {
      std::lock_guard<std::mutex> lock{mac_mu};
      auto it = unknown_macs.find(mac);
      if (it != unknown_macs.end()) {
        if (now - it->second < std::chrono::minutes(1)) {
          return;
        }
        it->second = now;
      } else {
        if (unknown_macs.size() >= unknown_macs_max) {
          for (auto i = unknown_macs.begin(); i != unknown_macs.end();) {
            i = now - i->second >= std::chrono::minutes(1) ? unknown_macs.erase(i) : std::next(i);
          }
          if (unknown_macs.size() >= unknown_macs_max) {
            return; // (a flood of MACs: not logged, answered 404 all the same)
          }
        }
        unknown_macs.emplace(mac, now);
      }
    }
    base::log(base::log_level::info, "boot: unknown MAC " + mac + " from " + peer);
  }
};

namespace {

/// What a store read answers a request with.
struct read_answer {
  api::boot_reply reply;
  /// The node's armed nonce (to count a refused token within its install).
  std::string nonce;
  bool exists = false;
  bool token_ok = false;
};

/// One connection: requests read, answered from the store, written back; keep-alive.
class boot_session : public std::enable_shared_from_this<boot_session> {
 public:
  boot_session(tcp_socket socket, std::shared_ptr<boot_listener::state> st)
      : stream_(std::move(socket)), st_(std::move(st)) {
    peer_ = peer_address(stream_.socket());
    beast::error_code ec;
    auto local = stream_.socket().local_endpoint(ec);
    auto addr = local.address();
    if (addr.is_v6() && addr.to_v6().is_v4_mapped()) {
      addr = addr.to_v6().to_v4();
    }
    // the address the node reached us at: right whatever boot_listen binds (0.0.0.0 too)
    base_ = "http://" + (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":"
            + std::to_string(local.port());
  }

  ~boot_session() {
    st_->sessions.remove(stop_id_);
    if (streaming_) {
      --st_->streams;
    }
    --st_->connections;
  }

  void run() {
    std::weak_ptr<boot_session> weak = shared_from_this();
    stop_id_ = st_->sessions.add([weak] {
      if (auto s = weak.lock()) {
        net::post(s->stream_.get_executor(), [s] { s->close(); });
      }
    });
    read();
  }

 private:
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  void read() {
    if (st_->stopped) {
      return close();
    }
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(st_->cfg.max_header_bytes));
    parser_->body_limit(st_->cfg.max_body_bytes);
    stream_.expires_after(st_->cfg.idle_timeout);
    bhttp::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == bhttp::error::header_limit) {
      return reply(431, "request header too large\n", false);
    }
    if (ec == bhttp::error::body_limit) {
      return reply(413, "request body too large\n", false);
    }
    if (ec) {
      return close(); // (the node went, timed out, or sent no HTTP)
    }
    req_ = parser_->release();
    keep_ = req_.keep_alive();
    handle();
  }

  void handle() {
    auto route = parse_boot_target(std::string_view{req_.target().data(), req_.target().size()});
    auto method = req_.method();
    bool post_ok = route.what == boot_route::kind::status;
    if (route.what == boot_route::kind::none) {
      return reply(404, "no such boot resource\n");
    }
    if (method != bhttp::verb::get && !(post_ok && method == bhttp::verb::post)) {
      return reply(405, "method not allowed\n");
    }
    using kind = boot_route::kind;
    switch (route.what) {
      case kind::generic: return reply(200, api::generic_boot_script(base_));
      case kind::by_mac:
      case kind::by_node: return script(route);
      case kind::kernel:
      case kind::initrd: return file(route);
      case kind::install_template: return install_template(route);
      case kind::status: return status(route);
      case kind::none: break;
    }
    reply(404, "no such boot resource\n");
  }

  /// Runs `f(txn)` on a store reader and `then(answer)` back on this connection's thread.
  template<class F, class Then>
  void read_store(F f, Then then) {
    auto self = shared_from_this();
    auto fn = std::make_shared<actors::read_fn>([self, f, then](const store::database& db) {
      read_answer a;
      try {
        auto txn = db.read();
        a = f(txn);
      } catch (const std::exception& e) {
        a.reply.status = 503;
        a.reply.body = "the store could not be read\n";
        base::log(base::log_level::error, std::string{"boot: a read failed: "} + e.what());
      }
      net::post(self->stream_.get_executor(),
                [self, then, a = std::move(a)]() mutable { then(std::move(a)); });
    });
    caf::anon_send(st_->store, run_atom::value, actors::read_fn_ptr{fn});
  }

  /// Runs `f(txn)` and `then(answer)` here, on this connection's io thread: for the boot
  /// script, a bounded read (the MAC index, the node's and its osimage's records, the token),
  /// which a rack asks for a thousand times at once. The store actor's hops (its front and a
  /// reader, both on the io threads too) cost more than the read and queue each answer
  /// behind the others'. Through the readers when the listener has no database.
  template<class F, class Then>
  void read_here(F f, Then then) {
    if (!st_->db) {
      return read_store(std::move(f), std::move(then));
    }
    read_answer a;
    try {
      auto txn = st_->db->read();
      a = f(txn);
    } catch (const std::exception& e) {
      a.reply.status = 503;
      a.reply.body = "the store could not be read\n";
      base::log(base::log_level::error, std::string{"boot: a read failed: "} + e.what());
    }
    then(std::move(a));
  }

  /// Queues the status move a fetch makes (nothing when it changes nothing).
  void infer(const api::boot_reply& r) {
    if (r.infer && !r.node.empty()) {
      api::install_update u;
      u.node = r.node;
      u.fetched = r.infer;
      st_->enqueue(std::move(u), {});
    }
  }

  void script(const boot_route& route) {
    bool by_mac = route.what == boot_route::kind::by_mac;
    auto key = route.key;
    auto base = base_;
    auto* st = st_.get();
    read_here(
      [by_mac, key, base, st](const store::read_txn& txn) {
        read_answer a;
        auto node = by_mac ? st->macs.node_of(txn, key) : key;
        if (node.empty()) {
          a.reply.status = 404;
          a.reply.body = "unknown MAC " + key + "\n";
          return a;
        }
        a.reply = api::boot_script(txn, node, base, st->key);
        if (a.reply.infer && !api::install_fetch_changes(txn, node, *a.reply.infer)) {
          a.reply.infer.reset();
        }
        return a;
      },
      [self = shared_from_this(), by_mac, key](read_answer a) {
        if (by_mac && a.reply.node.empty() && a.reply.status == 404) {
          self->st_->unknown_mac(key, self->peer_);
        }
        self->infer(a.reply);
        self->reply(a.reply.status, std::move(a.reply.body));
      });
  }

  void file(const boot_route& route) {
    auto which
      = route.what == boot_route::kind::kernel ? api::boot_fetch::kernel : api::boot_fetch::initrd;
    auto node = route.key;
    auto tftp = st_->cfg.chain.tftp_root;
    read_store(
      [which, node, tftp](const store::read_txn& txn) {
        read_answer a;
        a.reply = api::boot_file(txn, node, which, tftp);
        if (a.reply.infer && !api::install_fetch_changes(txn, node, *a.reply.infer)) {
          a.reply.infer.reset();
        }
        return a;
      },
      [self = shared_from_this()](read_answer a) {
        if (a.reply.status != 200) {
          return self->reply(a.reply.status, std::move(a.reply.body));
        }
        self->send_file(a.reply);
      });
  }

  void install_template(const boot_route& route) {
    const auto* t = route.query.find("token");
    auto token = t ? *t : std::string{};
    auto node = route.key;
    auto base = base_;
    auto* st = st_.get();
    read_store(
      [token, node, base, st](const store::read_txn& txn) {
        read_answer a;
        a.reply = api::boot_template(txn, node, token, base, st->key, st->cfg.chain);
        if (a.reply.status == 403) {
          a.nonce = api::install_token_nonce(txn, node);
        }
        if (a.reply.infer && !api::install_fetch_changes(txn, node, *a.reply.infer)) {
          a.reply.infer.reset();
        }
        return a;
      },
      [self = shared_from_this()](read_answer a) {
        if (a.reply.status == 403) {
          self->st_->refused(a.reply.node, a.nonce, self->peer_, "its install template");
        }
        self->infer(a.reply);
        self->reply(a.reply.status, std::move(a.reply.body));
      });
  }

  void status(const boot_route& route) {
    auto q = route.query;
    // a POSTed form (application/x-www-form-urlencoded): its fields win over the query's
    if (req_.method() == bhttp::verb::post && !q.parse(req_.body())) {
      return reply(400, "malformed form body\n");
    }
    const auto* s = q.find("state");
    auto cb = s ? api::parse_install_callback(*s) : std::nullopt;
    if (!cb) {
      return reply(400, "state must be one of installing, installed, postbooting, booted, "
                        "failed, next\n");
    }
    const auto* t = q.find("token");
    auto token = t ? *t : std::string{};
    auto node = route.key;
    auto* st = st_.get();
    read_store(
      [token, node, st](const store::read_txn& txn) {
        read_answer a;
        a.exists = txn.exists(store::object_type::node, node);
        if (a.exists) {
          a.token_ok = st->key.check(txn, node, token);
          if (!a.token_ok) {
            a.nonce = api::install_token_nonce(txn, node);
          }
        }
        return a;
      },
      [self = shared_from_this(), node, token, cb](read_answer a) {
        if (a.reply.status == 503) {
          return self->reply(503, std::move(a.reply.body));
        }
        if (!a.exists) {
          return self->reply(404, node + ": no such node\n");
        }
        if (!a.token_ok) {
          self->st_->refused(node, a.nonce, self->peer_, "a status callback");
          return self->reply(403, node + ": install token refused\n");
        }
        api::install_update u;
        u.node = node;
        u.callback = cb;
        u.token = token;
        self->st_->enqueue(std::move(u), [self, node](api::install_update_result r) {
          net::post(self->stream_.get_executor(), [self, node, r] {
            if (r.refused) {
              return self->reply(403, node + ": install token refused\n");
            }
            self->reply(200, node + ": " + r.status + "\n");
          });
        });
      });
  }

  void reply(unsigned status, std::string body, bool keep = true) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(status), 11);
    res->set(bhttp::field::content_type, "text/plain; charset=utf-8");
    if (status == 405) {
      res->set(bhttp::field::allow, "GET, POST");
    }
    if (status == 503) {
      res->set(bhttp::field::retry_after, "5");
    }
    res->body() = std::move(body);
    keep = keep && keep_ && !st_->stopped;
    res->keep_alive(keep);
    res->prepare_payload();
    stream_.expires_after(st_->cfg.idle_timeout);
    bhttp::async_write(stream_, *res,
                       [self = shared_from_this(), res, keep](beast::error_code ec, size_t) {
                         self->written(ec, keep);
                       });
  }

  void written(beast::error_code ec, bool keep) {
    if (ec || !keep) {
      return close();
    }
    read();
  }

  void send_file(const api::boot_reply& r) {
    if (st_->streams.fetch_add(1) >= st_->cfg.max_streams) {
      --st_->streams;
      return reply(503, "too many files in flight, try again\n");
    }
    streaming_ = true;
    bhttp::file_body::value_type body;
    beast::error_code ec;
    body.open(r.file.c_str(), beast::file_mode::scan, ec);
    if (ec) {
      end_stream();
      return reply(404, r.node + ": " + r.file.string() + ": " + ec.message() + "\n");
    }
    infer(r);
    file_res_ = std::make_unique<bhttp::response<bhttp::file_body>>(
      std::piecewise_construct, std::make_tuple(std::move(body)),
      std::make_tuple(bhttp::status::ok, 11));
    file_res_->set(bhttp::field::content_type, "application/octet-stream");
    file_res_->keep_alive(keep_ && !st_->stopped);
    file_res_->prepare_payload(); // Content-Length: the file's size
    file_sr_ = std::make_unique<bhttp::response_serializer<bhttp::file_body>>(*file_res_);
    write_file();
  }

  /// One piece at a time, each with the idle timeout: a slow node is not cut off mid-file,
  /// a dead one is; memory stays one buffer per stream.
  void write_file() {
    stream_.expires_after(st_->cfg.idle_timeout);
    bhttp::async_write_some(stream_, *file_sr_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) {
                                self->end_stream();
                                return self->close();
                              }
                              if (!self->file_sr_->is_done()) {
                                return self->write_file();
                              }
                              bool keep = self->file_res_->keep_alive();
                              self->end_stream();
                              self->written({}, keep);
                            });
  }

  void end_stream() {
    file_sr_.reset();
    file_res_.reset();
    if (streaming_) {
      streaming_ = false;
      --st_->streams;
    }
  }

  tcp_stream stream_;
  std::shared_ptr<boot_listener::state> st_;
  std::string peer_;
  std::string base_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::request<bhttp::string_body> req_;
  bool keep_ = true;
  bool streaming_ = false;
  uint64_t stop_id_ = 0;
  std::unique_ptr<bhttp::response<bhttp::file_body>> file_res_;
  std::unique_ptr<bhttp::response_serializer<bhttp::file_body>> file_sr_;
};

/// One connection of xCAT's port-3002 protocol (xcatd; updateflag.awk is its client): the
/// server says `ready`, the node sends one line, the server says `done` once it is written.
/// The node is the one whose `ip` is the peer's address; no token (unmodified xCAT templates
/// have none).
class xcat_status_session : public std::enable_shared_from_this<xcat_status_session> {
 public:
  xcat_status_session(tcp_socket socket, std::shared_ptr<boot_listener::state> st)
      : stream_(std::move(socket)), st_(std::move(st)), buffer_(256) {
    peer_ = peer_address(stream_.socket());
  }

  ~xcat_status_session() {
    st_->sessions.remove(stop_id_);
    --st_->connections;
  }

  void run() {
    std::weak_ptr<xcat_status_session> weak = shared_from_this();
    stop_id_ = st_->sessions.add([weak] {
      if (auto s = weak.lock()) {
        net::post(s->stream_.get_executor(), [s] { s->stream_.close(); });
      }
    });
    stream_.expires_after(st_->cfg.idle_timeout);
    net::async_write(
      stream_, net::buffer(ready_), [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) {
          return;
        }
        self->stream_.expires_after(self->st_->cfg.idle_timeout);
        net::async_read_until(self->stream_, self->buffer_, '\n',
                              [self](beast::error_code ec2, size_t n) { self->on_line(ec2, n); });
      });
  }

 private:
  void on_line(beast::error_code ec, size_t n) {
    if (ec) {
      return; // (gone, timed out, or a line past 256 bytes)
    }
    auto data = buffer_.data();
    std::string line{static_cast<const char*>(data.data()), n};
    auto cb = api::parse_xcat_status_line(line);
    if (!cb) {
      base::log(base::log_level::info, "boot: port 3002: unsupported request from " + peer_);
      return;
    }
    auto self = shared_from_this();
    auto fn = std::make_shared<actors::read_fn>([self, cb](const store::database& db) {
      std::string node;
      try {
        node = api::node_of_address(db.read(), self->peer_);
      } catch (const std::exception&) {
        node.clear();
      }
      if (node.empty()) {
        base::log(base::log_level::warning,
                  "boot: port 3002: no node has the address " + self->peer_ + ": refused");
        return;
      }
      api::install_update u;
      u.node = node;
      u.callback = cb;
      u.by_address = true;
      self->st_->enqueue(std::move(u), [self](api::install_update_result) {
        net::post(self->stream_.get_executor(), [self] {
          self->stream_.expires_after(self->st_->cfg.idle_timeout);
          net::async_write(self->stream_, net::buffer(self->done_),
                           [self](beast::error_code, size_t) {});
        });
      });
    });
    caf::anon_send(st_->store, run_atom::value, actors::read_fn_ptr{fn});
  }

  tcp_stream stream_;
  std::shared_ptr<boot_listener::state> st_;
  std::string peer_;
  net::streambuf buffer_;
  uint64_t stop_id_ = 0;
  const std::string ready_ = "ready\n";
  const std::string done_ = "done\n";
};

} // namespace

void boot_listener::state::do_accept_xcat() {
  auto& ioc = *iocs[next++ % iocs.size()];
  xacceptor->async_accept(
    ioc.get_executor(), [self = shared_from_this()](beast::error_code ec, tcp_socket socket) {
      if (ec == net::error::operation_aborted || !self->xacceptor->is_open() || self->stopped) {
        return;
      }
      if (!ec) {
        if (self->connections.load() >= self->cfg.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);
        } else {
          ++self->connections;
          std::make_shared<xcat_status_session>(std::move(socket), self)->run();
        }
      }
      self->do_accept_xcat();
    });
}

void boot_listener::state::do_accept() {
  auto& ioc = *iocs[next++ % iocs.size()];
  acceptor.async_accept(ioc.get_executor(),
                        [self = shared_from_this()](beast::error_code ec, tcp_socket socket) {
                          self->on_accept(ec, std::move(socket));
                        });
}

void boot_listener::state::on_accept(beast::error_code ec, tcp_socket socket) {
  if (ec == net::error::operation_aborted || !acceptor.is_open() || stopped) {
    return;
  }
  if (!ec) {
    if (connections.load() >= cfg.max_connections) {
      beast::error_code ignored;
      socket.close(ignored); // over the limit: refuse rather than degrade everyone
    } else {
      ++connections;
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<boot_session>(std::move(socket), shared_from_this())->run();
    }
  }
  do_accept();
}

boot_listener::boot_listener(std::vector<net::io_context*> iocs, boot_listener_config cfg,
                             actors::store_actor store, api::install_token_key key,
                             std::shared_ptr<const store::database> db)
    : st_(std::make_shared<state>(std::move(iocs), std::move(cfg), std::move(store), std::move(key),
                                  std::move(db))) {
  // nop
}

boot_listener::~boot_listener() {
  stop();
}

tcp::endpoint boot_listener::start() {
  net::post(st_->acceptor.get_executor(), [st = st_] {
    for (size_t i = 0; i < accepts_pending; ++i) {
      st->do_accept(); // (each completion queues the next)
    }
    if (st->xacceptor) {
      st->do_accept_xcat();
    }
    if (st->cfg.deadline_check.count() > 0) {
      st->schedule_deadlines();
    }
  });
  return st_->acceptor.local_endpoint();
}

std::optional<tcp::endpoint> boot_listener::xcat_status_endpoint() const {
  if (!st_->xacceptor) {
    return std::nullopt;
  }
  return st_->xacceptor->local_endpoint();
}

void boot_listener::stop() {
  if (!st_ || st_->stopped.exchange(true)) {
    return;
  }
  net::post(st_->acceptor.get_executor(), [st = st_] {
    beast::error_code ignored;
    st->acceptor.close(ignored);
    if (st->xacceptor) {
      st->xacceptor->close(ignored);
    }
    st->batch_timer.cancel();
    st->deadline_timer.cancel();
  });
  st_->sessions.stop_all();
  st_->flush(); // (the status writes waiting go to the store, which stops after this)
}

} // namespace cws::http

#include "api/settings.hpp"

namespace cws::api {

namespace {

using base::setting_kind;

constexpr auto num = setting_kind::number;
constexpr auto text = setting_kind::text;
constexpr auto retired = setting_kind::retired;
constexpr unsigned long long day = 86400;

/// A path setting, or its computed default when it is not set.
std::filesystem::path path_or(const std::string& value, std::filesystem::path fallback) {
  return value.empty() ? fallback : std::filesystem::path{value};
}

} // namespace

const base::settings_schema& settings_schema() {
  static const base::settings_schema schema{
    // -- HTTPS service
    {"listen", text, "127.0.0.1:8443", 0, 0,
     "ADDR:PORT the daemon listens on ([::1]:PORT for IPv6; port 0 picks one)"},
    {"io_threads", num, "2", 1, 256, "threads running TLS, HTTP and the actors"},
    {"max_connections", num, "10000", 1, 1000000,
     "HTTPS connections beyond this are closed at once"},
    {"max_connections_per_client", num, "1000", 1, 1000000,
     "HTTPS connections of one client address beyond this are closed at once"},
    {"local_max_connections", num, "1000", 1, 1000000,
     "local socket connections beyond this are closed at once (not counted in max_connections)"},
    {"local_max_connections_per_user", num, "128", 1, 1000000,
     "local socket connections of one uid beyond this are closed at once"},
    {"max_header_bytes", num, "16384", 1024, 1048576, "largest request line and headers (431)"},
    {"max_body_bytes", num, "1048576", 1024, 1073741824, "largest request body (413)"},
    {"max_json_depth", num, "32", 1, 1024, "deepest JSON nesting in a body (400)"},
    {"handshake_timeout", num, "10", 1, 3600, "seconds to finish the TLS handshake"},
    {"request_timeout", num, "30", 1, day,
     "seconds to receive a whole request, idle keep-alive time included"},
    {"call_timeout", num, "120", 1, day,
     "seconds a request may take inside the service (503; a fan-out call's unfinished nodes "
     "end then, each with its result)"},
    {"max_nodes_in_flight", num, "200000", 1, 100000000,
     "unfinished nodes of running fan-out calls; a call that would pass it is refused (503)"},
    {"max_nodes_in_flight_per_user", num, "50000", 1, 100000000,
     "unfinished nodes of one user's running fan-out calls; a call that would pass it is refused "
     "(503)"},
    {"job_output_max_bytes", num, "16777216", 0, 4294967296,
     "output of one job's nodes kept in memory for GET /jobs/{id}; past it a node's output is "
     "cut and marked truncated"},
    {"jobs_keep_s", num, "3600", 0, 31536000,
     "a finished job is forgotten this long after it ended"},
    {"jobs_keep_max", num, "1000", 1, 1000000,
     "finished jobs kept at most; the oldest is forgotten first"},
    {"page_objects", num, "5000", 0, 1000000,
     "a listing of more objects is sent in pages of this many, never held whole (0: never)"},
    {"nodetable_max_rows", num, "1000", 1, 100000,
     "most rows one GET /clusterws/nodetable page may ask for (its limit)"},
    {"local_socket", text, "", 0, 0,
     "Unix socket where non-root tools reach the daemon, the caller named by the kernel "
     "(default /run/clusterws/clusterws.sock, /run/clusterws/home-<hash>.sock with --home; "
     "off disables)"},
    // -- store
    {"noderange_max", num, "1000000", 1, 100000000, "names one noderange may expand to"},
    {"noderange_regex_max", num, "1024", 1, 65536,
     "longest regular expression in a noderange or selector"},
    {"commit_wait_us", num, "1000", 0, 1000000,
     "microseconds a group commit may wait for the writers the last commit answered (0: at once)"},
    {"change_log_keep", num, "10000", 1, 100000000,
     "commits whose change sets the change log keeps (every writer, the tools too, drops older "
     "ones)"},
    {"events_poll_ms", num, "500", 10, 60000,
     "milliseconds between looks at the change log for commits of the tools"},
    {"events_heartbeat_s", num, "15", 1, 3600,
     "seconds between an event stream's heartbeats when nothing else is sent"},
    {"events_buffer_bytes", num, "1048576", 4096, 1073741824,
     "an event stream's bytes its client has not taken; past this it is cut off"},
    {"events_flush_ms", num, "10", 0, 1000,
     "milliseconds an event may wait for the ones that follow, so that a burst goes to a client "
     "in one write (0: no wait)"},
    {"ws_max_message_bytes", num, "1024", 125, 1048576,
     "longest message a client may send on an events WebSocket (it sends none): past it, close "
     "1009"},
    {"ws_handshake_timeout_s", num, "10", 1, 3600,
     "seconds for a WebSocket's 101 answer and for its closing handshake"},
    {"ws_idle_timeout_s", num, "60", 2, 86400,
     "seconds a WebSocket client may send nothing, not even the pong of a heartbeat ping"},
    // -- authentication
    {"auth_cache_seconds", num, "60", 0, day, "seconds a verified password is remembered"},
    {"ui_session_seconds", num, "28800", 2, 31536000,
     "seconds a web console login lasts (its session cookie's Max-Age; 28800: 8 hours)"},
    {"login_backoff_after", num, "3", 0, 1000000,
     "failed passwords of one client for one user answered at once; later ones are delayed"},
    {"login_backoff_max_ms", num, "8000", 0, 3600000,
     "longest delay of a failed password (milliseconds)"},
    {"login_backoff_user_after", num, "10", 0, 1000000,
     "failures for one user (all clients) before guesses are throttled"},
    {"login_backoff_client_after", num, "10", 0, 1000000,
     "failures of one client (all users) before guesses are throttled"},
    // -- audit log
    {"audit_log", text, "", 0, 0,
     "JSON lines of every change and nodeshell (default /var/log/clusterws/audit.log, "
     "<home>/audit.log with --home; off disables)"},
    {"audit_field_max", num, "512", 64, 1048576,
     "longer paths, noderanges and commands are cut and end with their SHA-256"},
    {"audit_summary_seconds", num, "60", 1, day,
     "refused requests are written as one summary line per period at most"},
    {"audit_log_max_bytes", num, "1073741824", 4096, 1ULL << 50,
     "the audit log is moved to audit.log.1 when it would grow past this"},
    {"audit_required", text, "false", 0, 0,
     "true: changes are refused (503) while the audit log cannot be written (a full disk)",
     "false|true"},
    // -- nodeshell and xdsh
    {"ssh_fanout", num, "64", 1, 65536, "nodes worked on at once when the request does not say"},
    {"ssh_fanout_max", num, "1024", 1, 65536, "the most a request may ask for"},
    {"ssh_port", num, "22", 1, 65535, "SSH port of nodes without sshport"},
    {"ssh_connect_timeout", num, "10", 1, 3600,
     "seconds for TCP connect, key exchange and authentication"},
    {"ssh_command_timeout", num, "0", 0, 7 * day,
     "seconds a command may run when the request does not say (0: no limit)"},
    {"ssh_pool_idle", num, "60", 0, day,
     "seconds an authenticated connection stays pooled without use"},
    {"ssh_max_pooled", num, "4096", 0, 1000000,
     "most pooled connections; the oldest are closed beyond it"},
    {"ssh_output_max", num, "1048576", 1024, 1ULL << 30,
     "bytes of stdout plus stderr kept per node"},
    {"ssh_key_dir", text, "", 0, 0, "user keys are <dir>/<user>/id_ed25519 (default <home>/ssh)"},
    {"ssh_known_hosts", text, "", 0, 0, "host keys of the nodes (default <home>/ssh/known_hosts)"},
    {"ssh_host_key_policy", text, "accept-new", 0, 0,
     "unknown host keys: accept-new adds them, strict refuses them, off skips checks",
     "strict|accept-new|off"},
    // -- provisioning: makehosts
    {"hosts_file", text, "/etc/hosts", 0, 0,
     "the hosts file makehosts (and POST /nodes/{nr}/host, /services/host) writes"},
    {"hosts_file_max_bytes", num, "268435456", 1024, 1ULL << 36,
     "largest hosts file makehosts reads (a larger one is refused, nothing written)"},
    // -- xdcp, nodecopy and xdsh -e
    {"copy_root", text, "", 0, 0,
     "nodecopy (REST) copies only files under this directory (default <home>/copy)"},
    {"copy_memory_max", num, "67108864", 0, 1ULL << 40,
     "bytes of one copy's files read once into memory for every node; the rest are streamed"},
    {"copy_chunk_bytes", num, "262144", 4096, 1ULL << 30,
     "bytes in flight per node while copying (one SFTP write or read)"},
    {"copy_files_max", num, "10000", 1, 100000000,
     "files and directories one copy may hold (also: entries of one node's tree, xdcp -R -P)"},
    {"copy_pull_node_max", num, "4294967296", 1, 1ULL << 50,
     "bytes xdcp -P writes from one node (a file or a tree); past it the node fails"},
    {"copy_pull_run_max", num, "68719476736", 1, 1ULL << 50,
     "bytes xdcp -P writes from all nodes of one run together"},
    {"copy_pull_free_min", num, "1073741824", 0, 1ULL << 50,
     "bytes xdcp -P leaves free on the local file system; a node that would go below fails"},
    // -- hardware control (rpower, rsetboot); per-node timeout and retries are xCAT's
    // site.ipmitimeout and site.ipmiretries
    {"ipmi_fanout", num, "1024", 1, 65536, "BMCs worked on at once by one request"},
    {"ipmi_port", num, "623", 1, 65535, "RMCP+ UDP port of BMCs without bmcport"},
    {"ipmi_pool_idle", num, "20", 0, 3600,
     "seconds an established BMC session stays pooled without use (BMCs end them at ~60)"},
    {"ipmi_max_pooled", num, "4096", 0, 1000000,
     "most pooled BMC sessions; the oldest are closed beyond it"},
    {"ipmi_sel_max_entries", num, "2048", 1, 65535,
     "most event log entries reventlog reads from one BMC"},
    {"ipmi_sel_clear_polls", num, "20", 0, 1000,
     "times reventlog clear asks whether the BMC's erase is done before the node fails"},
    {"ipmi_node_timeout", num, "300", 1, day,
     "seconds one BMC's whole conversation may take (a reventlog of many entries included); "
     "the node fails with timeout then"},
    {"ipmi_sdr_max_records", num, "1024", 1, 65535,
     "rvitals: SDR records read from one BMC at most (a larger repository fails the node)"},
    {"ipmi_sdr_cache", num, "16384", 0, 1000000,
     "rvitals: BMCs whose SDR repository is kept (least recently used dropped first; 0: none)"},
    {"ipmi_fru_max_bytes", num, "4096", 64, 65536,
     "rinv: FRU bytes read from one BMC at most (the rest is not read)"},
    // -- power control of virtual machines (mgt=kvm, libvirt on the node's vmhost)
    {"kvm_threads", num, "8", 1, 1024,
     "libvirt calls made at once (its calls block: one worker thread each)"},
    {"kvm_timeout", num, "30", 1, 3600,
     "seconds a virtual machine's request may take, connecting to its hypervisor included"},
    {"kvm_idle", num, "300", 0, 86400,
     "seconds an unused hypervisor connection stays open (the test driver's state lives in it)"},
    {"kvm_stop_wait", num, "2", 0, 3600,
     "seconds a stop waits for libvirt calls in flight (one still blocked is left behind)"},
    // -- makedns: named's files and dynamic updates (docs/provisioning.md, DNS)
    {"dns_conf_dir", text, "/etc/bind", 0, 0,
     "where makedns writes clusterws.conf (key and zones) and clusterws-options.conf "
     "(forwarders), which named.conf includes"},
    {"dns_zone_dir", text, "/var/lib/bind", 0, 0,
     "where makedns creates the zone files (db.<zone>); named must be able to write there"},
    {"dns_server", text, "127.0.0.1:53", 0, 0,
     "ADDR:PORT of the name server that takes makedns' signed updates"},
    {"dns_key_file", text, "/etc/bind/clusterws.key", 0, 0,
     "the TSIG key (hmac-sha256) of the updates, made once by makedns when missing (0600)"},
    {"dns_update_batch", num, "300", 1, 2000, "records in one DNS UPDATE message (xCAT's 300)"},
    {"dns_reload_command", text, "rndc reconfig", 0, 0,
     "run by makedns after it changed a named file (new zones); empty: none"},
    {"dns_timeout", num, "10", 1, 600,
     "seconds makedns waits for the name server's answer (and for it to load new zones)"},
    // -- nodestat
    {"nodestat_timeout_ms", num, "4000", 100, 600000,
     "milliseconds a node has to answer on any probed port before it is noping"},
    {"nodestat_fanout", num, "1024", 1, 65536,
     "nodes probed at once (each holds one socket per probed port)"},
    {"nodestat_ports", text, "https:443,pbs:15002,xend:8002,rdp:3389,msrpc:135", 0, 0,
     "name:port of the applications probed besides sshd (xCAT's list)"},
    // -- makedhcp (api/dhcp.hpp); site.dhcpbackend and site.tftpdir win when set
    {"dhcp_backend", text, "dnsmasq", 0, 0,
     "DHCP server makedhcp configures when site.dhcpbackend is unset", "dnsmasq|kea"},
    {"dnsmasq_conf_dir", text, "/etc/dnsmasq.d", 0, 0,
     "makedhcp writes clusterws-dhcp.conf and the reservations clusterws-dhcp/hosts here"},
    {"dhcp_reload_command", text, "", 0, 0,
     "run after makedhcp changed dnsmasq's reservations, which it reads at SIGHUP (default "
     "systemctl reload-or-restart dnsmasq)"},
    {"dhcp_restart_command", text, "", 0, 0,
     "run after makedhcp -n changed dnsmasq's configuration (default systemctl restart dnsmasq)"},
    {"kea_control_socket", text, "/run/kea/kea4-ctrl-socket", 0, 0,
     "Kea's unix control socket: config-test and config-set go there"},
    {"kea_conf_file", text, "/etc/kea/kea-dhcp4.conf", 0, 0,
     "the kea-dhcp4 configuration makedhcp writes"},
    {"kea_lease_file", text, "/var/lib/kea/kea-leases4.csv", 0, 0,
     "Kea's lease file, as the written configuration names it"},
    {"tftp_root", text, "", 0, 0,
     "directory dnsmasq serves over TFTP (default site.tftpdir, else /srv/tftp)"},
    // -- provisioning: install templates (api/template.hpp)
    {"template_max_bytes", num, "1048576", 1024, 67108864,
     "bytes of an install template and every file it includes, together"},
    {"template_include_depth", num, "8", 0, 64, "nested #INCLUDE# levels of an install template"},
    {"template_cache_entries", num, "64", 0, 100000,
     "compiled install templates kept between fetches (0: each fetch parses its template)"},
    {"template_cache_bytes", num, "16777216", 0, 1073741824,
     "bytes of the compiled install templates kept, together"},
    // -- service nodes: delegation (docs/service-nodes.md)
    {"sn_fallback", text, "fail", 0, 0,
     "a node whose every service node is down: fail (a per-node servicenode error) or direct "
     "(it runs from the head)",
     "fail|direct"},
    {"sn_cli_fallback", text, "direct", 0, 0,
     "root's xdsh, xdcp, rpower, ..., nodestat on a head with service nodes when clusterwsd "
     "does not answer on local_socket: direct (run from this host, with a warning) or fail "
     "(refuse, nothing run)",
     "direct|fail"},
    {"sn_credits", num, "4", 1, 1024,
     "result batches a service node may send before the head credits them"},
    {"sn_batch_nodes", num, "128", 1, 100000, "node results in one batch from a service node"},
    {"sn_batch_bytes", num, "4194304", 1024, 268435456,
     "bytes of output in one batch from a service node (a larger result goes alone)"},
    {"sn_copy_max", num, "16777216", 0, 50331648,
     "bytes of files an xdcp/nodecopy sends a service node inside its share (more: its nodes "
     "get an error)"},

    // -- provisioning re-apply through the change feed (actors/reapply_actor.hpp)
    {"provision_reapply", text, "off", 0, 0,
     "on: a node created, removed, or whose name, MAC or addresses change (also through its "
     "groups or site domain/dhcpinterfaces), re-runs makehosts, makedhcp (and makedns once "
     "configured) for it",
     "off|on"},
    {"provision_reapply_delay_ms", num, "500", 0, 60000,
     "milliseconds from a burst's first change to its one re-apply"},
    {"xnba_mirror", text, "off", 0, 0,
     "on: nodeset (and every boot state change the daemon sees) writes xCAT's "
     "<tftp root>/xcat/xnba/nodes/<node> files, for tools that read them",
     "off|on"},

    // -- provisioning: the node-facing boot listener (http/boot_listener.hpp)
    {"boot_listen", text, "", 0, 0,
     "ADDR:PORT of the node-facing boot listener (plain HTTP, provisioning network); empty: off"},
    {"boot_max_connections", num, "4096", 1, 1000000,
     "boot listener connections beyond this are closed at once"},
    {"boot_max_header_bytes", num, "8192", 1024, 1048576,
     "largest request line and headers on the boot listener (431)"},
    {"boot_idle_timeout", num, "30", 1, 3600,
     "seconds a boot listener connection may make no progress (reading or writing) before it is "
     "closed"},
    {"boot_max_streams", num, "64", 1, 100000,
     "kernel and initrd files sent at once by the boot listener; more are answered 503"},
    {"boot_status_batch_ms", num, "5", 0, 1000,
     "install status changes arriving within this many ms share one store write"},
    {"xcat_status_listen", text, "", 0, 0,
     "ADDR:PORT for xCAT's port-3002 status protocol (installstatus, next) from the nodes' own "
     "addresses, no token; empty: off"},
    {"install_template_dir", text, "/usr/share/clusterws/install", 0, 0,
     "root of the shipped install templates (<dir>/<platform>/); the site's "
     "<installdir>/custom/install/<platform>/ is tried first"},
    {"install_bad_token_limit", num, "5", 0, 1000000,
     "refused install tokens within one install that mark the node failed (0: never)"},
    {"install_deadline_kernel", num, "300", 0, 31 * day,
     "seconds from a node's boot script to its kernel before it is marked failed (0: none)"},
    {"install_deadline_installing", num, "900", 0, 31 * day,
     "seconds from a node's kernel to its preseed/kickstart or installing callback (0: none)"},
    {"install_deadline_installed", num, "7200", 0, 31 * day,
     "seconds from installing to the installed callback (0: none)"},
    {"install_deadline_check_s", num, "10", 1, day,
     "how often the boot listener looks for installs past a stage deadline"},

    // -- service nodes (docs/service-nodes.md): the link, its trust and its liveness
    {"sn_listen", text, "", 0, 0,
     "ADDR:PORT of the head's service-node listener (TLS with the service-node CA; port 0 "
     "picks one; empty: off)"},
    {"sn_name", text, "", 0, 0,
     "a service node (clusterwsd --service-node): its name, as the head knows it"},
    {"sn_head", text, "", 0, 0,
     "a service node: ADDR:PORT of its head's service-node listener (it dials the head)"},
    {"sn_heartbeat_ms", num, "1000", 50, 60000,
     "milliseconds between heartbeats on a service-node link, both ways"},
    {"sn_dead_after_ms", num, "5000", 200, 3600000,
     "a service-node link silent this long is down (more than twice sn_heartbeat_ms)"},
    {"sn_redial_min_ms", num, "1000", 50, 600000,
     "a service node's first wait before dialing the head again (doubled each failure)"},
    {"sn_redial_max_ms", num, "30000", 50, 3600000,
     "a service node's longest wait between dials of the head"},
    {"sn_connect_timeout_ms", num, "10000", 100, 600000,
     "milliseconds a service node waits for the head's TLS link and registration"},
    {"sn_replay_cache", num, "100000", 16, 10000000,
     "delegated request ids a service node remembers until they expire (replays refused)"},
    {"sn_request_ttl_ms", num, "60000", 1000, 300000,
     "milliseconds a delegated request's seal is valid (a service node refuses it after; keep "
     "the clocks within this)"},

    // -- consoles (docs/consoles.md): the console server inside the daemon
    {"console_hold", text, "on", 0, 0,
     "on: every console (nodehm.cons) is held open and logged; on-demand: only while watched",
     "on|on-demand"},
    {"console_max", num, "4096", 0, 1000000,
     "consoles open at once; the rest wait (name order) with a per-node error"},
    {"console_backoff_min_ms", num, "1000", 10, 3600000,
     "first wait before a lost or refused console is opened again (doubles each time)"},
    {"console_backoff_max_ms", num, "60000", 10, 86400000,
     "longest wait between attempts to open a console again"},
    {"console_keepalive_ms", num, "15000", 100, 600000,
     "a held console asks its BMC something this often (ipmi_sim drops a session after 30 s "
     "without a request); a BMC gone is found within this plus 3 s"},
    {"console_log_dir", text, "", 0, 0,
     "console logs, one file per node (default /var/log/consoles, <home>/consoles with --home)"},
    {"console_log_max_bytes", num, "16777216", 4096, 1ULL << 40,
     "a console log is moved to <node>.1 before it would grow past this"},
    {"console_log_keep", num, "4", 0, 1000,
     "rotated logs kept per node (<node>.1 newest); disk use is at most nodes * "
     "console_log_max_bytes * (keep + 1)"},
    {"console_log_timestamps", text, "false", 0, 0,
     "true: every line of a console log begins with its UTC time", "false|true"},
    {"console_replay_bytes", num, "65536", 0, 16777216,
     "the last bytes of each console kept in memory for a watcher who attaches"},
    {"console_watcher_queue_bytes", num, "1048576", 1024, 1ULL << 30,
     "bytes a console watcher may leave unacknowledged before it is dropped"},
    {"console_watcher_socket_bytes", num, "65536", 0, 16777216,
     "a console WebSocket's kernel send buffer (0: the kernel's own, up to 4 MiB): with "
     "console_watcher_queue_bytes, what a watcher that stops reading holds before it is dropped"},
    {"console_kvm_keepalive_s", num, "5", 1, 600,
     "a cons=kvm console's libvirt connection is probed this often; after 4 probes unanswered "
     "(libvirtd gone) its consoles are lost and reconnect"},
    {"console_kvm_openers", num, "8", 1, 256,
     "hypervisors whose cons=kvm consoles are opened at once (libvirt's calls block: each on a "
     "thread while it has work)"},
    // -- error log (stderr: the journal under systemd)
    {"log_level", text, "info", 0, 0,
     "least severe lines written: error, warning, notice (start, stop), info, debug",
     "error|warning|notice|info|debug"},
    {"log_summary_seconds", num, "60", 1, day,
     "repeated failures (TLS handshakes, 503s, commits) are summarised once per period"},
    // -- retired: accepted with any value and ignored; the daemon warns when one is set
    {"caf_threads", retired, "", 0, 0, "the io threads run the actors (io_threads)"},
    {"caf_moderate_polls", retired, "", 0, 0, "the io threads run the actors, no worker polls"},
    {"caf_aggressive_polls", retired, "", 0, 0, "the io threads run the actors, no worker polls"},
  };
  return schema;
}

base::settings load_settings(const std::filesystem::path& config) {
  auto s = base::settings::load(config, settings_schema());
  try { // a text with a grammar of its own: checked here, so every reader refuses it alike
    parse_app_ports(s.text("nodestat_ports"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(config.string() + ": nodestat_ports: " + e.what());
  }
  return s;
}

store::noderange_options noderange_limits(const base::settings& s) {
  store::noderange_options o;
  o.max_nodes = s.number("noderange_max");
  o.max_regex = s.number("noderange_regex_max");
  return o;
}

shell_config shell_settings(const base::settings& s, const std::filesystem::path& home) {
  shell_config c;
  c.fanout = s.number("ssh_fanout");
  c.fanout_max = s.number("ssh_fanout_max");
  c.port = static_cast<uint16_t>(s.number("ssh_port"));
  c.command_timeout = std::chrono::seconds(s.number("ssh_command_timeout"));
  c.key_dir = path_or(s.text("ssh_key_dir"), home / "ssh");
  return c;
}

copy_config copy_settings(const base::settings& s, const std::filesystem::path& home) {
  copy_config c;
  c.root = path_or(s.text("copy_root"), home / "copy");
  c.memory_max = s.number("copy_memory_max");
  c.chunk = s.number("copy_chunk_bytes");
  c.files_max = s.number("copy_files_max");
  c.pull_node_max = s.number("copy_pull_node_max");
  c.pull_run_max = s.number("copy_pull_run_max");
  c.pull_free_min = s.number("copy_pull_free_min");
  return c;
}

delegation_settings delegation_settings_from(const base::settings& s) {
  delegation_settings d;
  d.fallback = s.text("sn_fallback") == "direct" ? sn_fallback::direct : sn_fallback::fail;
  d.credits = static_cast<uint32_t>(s.number("sn_credits"));
  d.batch_nodes = static_cast<uint32_t>(s.number("sn_batch_nodes"));
  d.batch_bytes = s.number("sn_batch_bytes");
  d.copy_max = s.number("sn_copy_max");
  return d;
}

wire::request_limits sn_request_limits(const base::settings& s) {
  wire::request_limits l;
  l.max_copy_bytes = s.number("sn_copy_max");
  l.max_copy_files = s.number("copy_files_max");
  return l;
}

template_limits template_settings(const base::settings& s) {
  template_limits l;
  l.max_bytes = s.number("template_max_bytes");
  l.max_depth = s.number("template_include_depth");
  return l;
}

template_cache_limits template_cache_settings(const base::settings& s) {
  template_cache_limits l;
  l.max_entries = s.number("template_cache_entries");
  l.max_bytes = s.number("template_cache_bytes");
  return l;
}

nodestat_config nodestat_settings(const base::settings& s) {
  nodestat_config c;
  c.timeout = std::chrono::milliseconds(s.number("nodestat_timeout_ms"));
  c.fanout = s.number("nodestat_fanout");
  c.ssh_port = static_cast<uint16_t>(s.number("ssh_port"));
  try {
    c.apps = parse_app_ports(s.text("nodestat_ports"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("nodestat_ports: " + std::string{e.what()});
  }
  return c;
}

ssh::engine_config engine_settings(const base::settings& s, const std::filesystem::path& home) {
  ssh::engine_config c;
  c.known_hosts = path_or(s.text("ssh_known_hosts"), home / "ssh" / "known_hosts");
  c.host_keys = ssh::parse_host_key_policy(s.text("ssh_host_key_policy"));
  c.connect_timeout = std::chrono::seconds(s.number("ssh_connect_timeout"));
  c.pool_idle = std::chrono::seconds(s.number("ssh_pool_idle"));
  c.max_pooled = s.number("ssh_max_pooled");
  c.output_max = s.number("ssh_output_max");
  return c;
}

hardware_config hardware_settings(const base::settings& s) {
  hardware_config c;
  c.fanout = s.number("ipmi_fanout");
  c.port = static_cast<uint16_t>(s.number("ipmi_port"));
  c.sel.max_entries = s.number("ipmi_sel_max_entries");
  c.sel.clear_polls = static_cast<int>(s.number("ipmi_sel_clear_polls"));
  c.sdr_max_records = s.number("ipmi_sdr_max_records");
  c.fru_max_bytes = s.number("ipmi_fru_max_bytes");
  c.sdr_cache = std::make_shared<ipmi::sdr_cache>(s.number("ipmi_sdr_cache"));
  return c;
}

virt::hypervisor_config virt_settings(const base::settings& s) {
  virt::hypervisor_config c;
  c.threads = s.number("kvm_threads");
  c.timeout = std::chrono::seconds(s.number("kvm_timeout"));
  c.idle = std::chrono::seconds(s.number("kvm_idle"));
  c.stop_wait = std::chrono::seconds(s.number("kvm_stop_wait"));
  return c;
}

ipmi::engine_config ipmi_settings(const base::settings& s) {
  ipmi::engine_config c;
  c.pool_idle = std::chrono::seconds(s.number("ipmi_pool_idle"));
  c.max_pooled = s.number("ipmi_max_pooled");
  c.node_timeout = std::chrono::seconds(s.number("ipmi_node_timeout"));
  return c;
}

dns_config dns_settings(const base::settings& s, const std::filesystem::path& home) {
  dns_config c;
  c.conf_dir = s.text("dns_conf_dir");
  c.zone_dir = s.text("dns_zone_dir");
  c.server = s.text("dns_server");
  c.key_file = s.text("dns_key_file");
  c.batch = s.number("dns_update_batch");
  c.reload_command = s.text("dns_reload_command");
  c.timeout_s = static_cast<unsigned>(s.number("dns_timeout"));
  c.state_file = home / "dns-records";
  return c;
}

} // namespace cws::api

#pragma once

// Namespace aliases shared by the HTTP layer (as in Beast's examples).

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace cws::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

/// Every connection lives on one io_context run by one thread: its handlers need no strand
/// (what other threads hand a session goes through one for its order: session.hpp),
/// and the concrete executor spares the type-erased any_io_executor on every operation.
using io_executor = net::io_context::executor_type;
using tcp_socket = net::basic_stream_socket<tcp, io_executor>;
using tcp_stream = beast::basic_stream<tcp, io_executor>;
/// The local Unix socket's stream (plain HTTP: the kernel names the peer, SO_PEERCRED).
using unix_protocol = net::local::stream_protocol;
using unix_socket = net::basic_stream_socket<unix_protocol, io_executor>;
using unix_stream = beast::basic_stream<unix_protocol, io_executor>;
using steady_timer
  = net::basic_waitable_timer<std::chrono::steady_clock,
                              net::wait_traits<std::chrono::steady_clock>, io_executor>;

} // namespace cws::http

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/job.hpp"
#include "base/node_result.hpp"
#include "store/codec.hpp"
#include "store/error.hpp"

namespace cws::api {

/// How a call failed: the one error vocabulary of the request layer. Carried as a value;
/// http/render is the only place that maps it to an HTTP status and an xCAT errorcode.
enum class errc : uint8_t {
  none,         ///< done
  failed,       ///< the command failed; the messages say why
  bad_request,  ///< the request itself is malformed
  unauthorized, ///< bad credentials, or no policy allows it
  unavailable,  ///< the service could not complete it (timeout, disk, commit failure)
  stale,        ///< authorized on data that changed since: authorize again (never rendered)
  // Refusals of the request's form, before any call is made (http/router, http/session):
  not_found,        ///< no such resource (xCAT: 404 "Unsupported resource.")
  not_allowed,      ///< the resource has no such method (405)
  missing_data,     ///< a part the operation needs is missing (400, xCAT errorcode 3)
  body_too_large,   ///< the body exceeds body_limit (413)
  header_too_large, ///< the header exceeds header_limit (431)
  not_implemented,  ///< a transfer coding the service does not implement (501)
  forbidden,        ///< a web console session's request without its CSRF token or origin (403)
};

/// The request-layer code of a store error: a database failure is the service's, the rest
/// are the command's.
errc from_store(store::store_errc code);

/// One object of a listing, its attributes kept encoded (store/codec.hpp): a 100,000-node
/// answer stays compact until it is rendered.
struct object_record {
  std::string name;
  std::string encoded;

  object_record() = default;

  object_record(std::string n, const store::attr_map& attrs)
      : name(std::move(n)), encoded(store::encode(attrs)) {
    // nop
  }

  /// The attributes, decoded.
  store::attr_map attrs() const {
    return store::record_view{encoded}.to_map();
  }
};

class object_pages;

/// The result of a call.
struct api_result {
  errc error = errc::none;
  /// Success that created or ran something (HTTP 201 where xCAT gives it).
  bool created = false;
  /// list / nodels: names.
  std::vector<std::string> names;
  /// show / site_show / token_list: objects with their attributes.
  std::vector<object_record> objects;
  /// show of a large listing: its objects, to be read page by page (api/object_pages.hpp).
  std::shared_ptr<object_pages> pages;
  /// failed: the error lines; ok: informational lines.
  std::vector<std::string> messages;
  /// token_create: id and expiry text.
  std::string token_id;
  std::string token_expire;
  /// nodeshell and detailed node deletes: one entry per node, in noderange order.
  std::vector<base::node_result> nodes;
  /// An async fan-out call: accepted (202) as job `job_id`.
  bool accepted = false;
  std::string job_id;
  /// job_list, job_show: the jobs.
  std::shared_ptr<const std::vector<job_info>> jobs;
  /// console_log: the text answered as it is (text/plain).
  std::string text;
  /// node_table: how many nodes the table has, and the first row's position (the rows in
  /// `objects`, in table order).
  size_t total = 0;
  size_t offset = 0;
  /// Who asked: the authenticated user (or, when authentication failed, the name claimed).
  std::string user;
  /// The caller proved who they are (false when authentication failed).
  bool authenticated = false;

  bool ok() const {
    return error == errc::none;
  }

  /// A failure with one message.
  static api_result failure(errc e, std::string message);

  /// A failed command with its messages.
  static api_result failure(std::vector<std::string> messages);
};

} // namespace cws::api

#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/result.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"

namespace cws::api {

/// A listing too large to hold whole (GET /nodes/all on a large cluster), read a page at a
/// time in name order from one read transaction: every page sees the same snapshot, and only
/// one page is in memory. Not thread-safe: one caller at a time (the transaction is not
/// tied to a thread, MDB_NOTLS). Holds an LMDB reader slot until it is destroyed.
class object_pages {
 public:
  /// Lists `names` (sorted here) of type `t`, with only `only` when given, from `txn`. The
  /// names must have been checked (store::listing_errors): a missing one is skipped.
  object_pages(std::shared_ptr<const store::database> db, store::read_txn txn, store::object_type t,
               std::vector<std::string> names, std::vector<std::string> only, bool only_attrs);

  object_pages(const object_pages&) = delete;
  object_pages& operator=(const object_pages&) = delete;

  /// The next up to `count` objects; empty when every object has been read.
  std::vector<object_record> next(size_t count);

  /// How many objects the listing has.
  size_t size() const noexcept {
    return names_.size();
  }

  /// Shows `bmcpassword` as "********" (a reader other than root).
  void hide_bmc_passwords(bool hide) noexcept {
    hide_ = hide;
  }

 private:
  bool hide_ = false;
  std::shared_ptr<const store::database> db_;
  store::read_txn txn_;
  store::cluster_view view_;
  store::object_type type_;
  std::vector<std::string> names_;
  std::vector<std::string> only_;
  bool only_attrs_;
  size_t pos_ = 0;
  size_t since_release_ = 0;
};

using object_pages_ptr = std::shared_ptr<object_pages>;

} // namespace cws::api

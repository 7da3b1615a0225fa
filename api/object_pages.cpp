#include "api/object_pages.hpp"

#include <algorithm>

#include "store/definitions.hpp"
#include "store/tables.hpp"

namespace cws::api {

object_pages::object_pages(std::shared_ptr<const store::database> db, store::read_txn txn,
                           store::object_type t, std::vector<std::string> names,
                           std::vector<std::string> only, bool only_attrs)
    : db_(std::move(db)), txn_(std::move(txn)), view_(txn_), type_(t), names_(std::move(names)),
      only_(std::move(only)), only_attrs_(only_attrs) {
  // the answer is keyed by name; a listing in name order streams in the order it renders
  if (!std::is_sorted(names_.begin(), names_.end())) {
    std::sort(names_.begin(), names_.end());
  }
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
}

std::vector<object_record> object_pages::next(size_t count) {
  std::vector<object_record> page;
  if (pos_ >= names_.size()) {
    return page;
  }
  auto end = std::min(names_.size(), pos_ + std::max<size_t>(count, 1));
  std::vector<std::string> slice(std::make_move_iterator(names_.begin() + pos_),
                                 std::make_move_iterator(names_.begin() + end));
  page.reserve(slice.size());
  store::list_objects(view_, type_, slice, only_attrs_ ? &only_ : nullptr, {},
                      [&](store::listed_object&& o) {
                        if (hide_) {
                          store::hide_bmc_passwords(o.attrs);
                        }
                        page.emplace_back(std::move(o.name), o.attrs);
                      });
  since_release_ += end - pos_;
  pos_ = end;
  if (since_release_ >= store::read_txn::release_every || pos_ == names_.size()) {
    since_release_ = 0;
    txn_.release_resident_pages();
  }
  return page;
}

} // namespace cws::api

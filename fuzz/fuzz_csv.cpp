// libFuzzer: any tabrestore input either parses or is refused with a message; never a crash.
// What is parsed is stable: written back as tabdump writes it and parsed again, it gives the
// same rows (values holding a line break excepted: lines are read without their CR).
// The first byte picks the table; the input is also read as chtab keys.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/tables.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const auto& catalog = cws::store::table_catalog();
  const auto& table = catalog[data[0] % catalog.size()];
  std::string text{reinterpret_cast<const char*>(data) + 1, size - 1};
  cws::store::key_values keys;
  if (cws::store::parse_key_values(text, keys).empty() && keys.empty()) {
    std::abort(); // success names at least one key
  }
  cws::store::csv_table rows;
  if (!cws::store::parse_csv(text, table, rows).empty()) {
    return 0;
  }
  std::string again = "#";
  for (size_t i = 0; i < rows.columns.size(); ++i) {
    again += (i > 0 ? "," : "") + rows.columns[i];
  }
  again += "\n";
  for (const auto& row : rows.rows) {
    if (row.size() != rows.columns.size()) {
      std::abort();
    }
    bool empty = true;
    for (const auto& v : row) {
      if (v && v->find_first_of("\r\n") != std::string::npos) {
        return 0;
      }
      empty = empty && !v;
    }
    if (empty) {
      return 0; // an all-unset row is written as a blank line, which is skipped
    }
    again += cws::store::csv_line(row) + "\n";
  }
  cws::store::csv_table re;
  if (!cws::store::parse_csv(again, table, re).empty() || re.columns != rows.columns
      || re.rows != rows.rows) {
    std::abort();
  }
  return 0;
}

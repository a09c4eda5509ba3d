// A sweep's output table: one row per point, written as PREFIX.csv and PREFIX.json, read back
// for --resume and for `sweep merge`.
//
//   Table t;
//   if (Status s = ReadTable("out.csv", &t, /*must_exist=*/false); !s.ok()) return s;
//   t.rows[point] = row;
//   Status written = WriteOutputs(t, "out");   // out.csv, out.json
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery::sweep_internal {

// The metric columns of every row, in order. critical_path_*: what the step's critical path
// spent in GPU compute and in communication (report/breakdown.h); the rest of end_ns is CPU and
// remote memory.
extern const std::vector<std::string> kMetrics;

// A field as CSV writes it (RFC 4180 quoting when needed).
std::string Csv(const std::string& s);

// Fields joined into one CSV line, with its newline.
std::string CsvLine(const std::vector<std::string>& fields);

struct Table {
  std::vector<std::string> header;
  std::map<int, std::vector<std::string>> rows;  // by point index
};

// The sweep output at `path` into *t (its header, and its complete rows by point); a missing
// file is an error only when `must_exist`.
Status ReadTable(const std::string& path, Table* t, bool must_exist);

// `t` as <out>.csv and <out>.json, each written beside and renamed into place.
Status WriteOutputs(const Table& t, const std::string& out);

}  // namespace orrery::sweep_internal

#include "sweep/table.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "common/json.h"
#include "sweep/files.h"
#include "sweep/sweep.h"

namespace orrery::sweep_internal {

const std::vector<std::string> kMetrics = {"end_ns",
                                           "compute_ns",
                                           "communication_ns",
                                           "exposed_communication_ns",
                                           "overlap_percent",
                                           "alg_bw_gbps",
                                           "bus_bw_gbps",
                                           "critical_path_compute_ns",
                                           "critical_path_communication_ns",
                                           "events"};

namespace {

// A per-job column ("job.<name>.<metric>"): numeric, as the metrics are.
bool IsJobColumn(const std::string& col) { return col.compare(0, 4, "job.") == 0; }

// One CSV line into fields (RFC 4180 quoting); false if the line is incomplete.
bool ParseCsvLine(const std::string& line, std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) return false;
  fields->push_back(cur);
  return true;
}

}  // namespace

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + Csv(fields[i]);
  return line + "\n";
}

Status ReadTable(const std::string& path, Table* t, bool must_exist) {
  std::ifstream f(path);
  if (!f) {
    return must_exist ? Status::Error(path + ": cannot read: " + std::strerror(errno))
                      : Status::Ok();
  }
  std::string line;
  std::vector<std::string> fields;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    if (!ParseCsvLine(line, &fields)) continue;  // a line cut short by an interruption
    if (n == 1) {
      if (fields.empty() || fields[0] != "point") {
        return Status::Error(path +
                             ":1: not a sweep output (its header does not start with "
                             "'point')");
      }
      t->header = fields;
      continue;
    }
    if (fields.size() != t->header.size()) continue;  // incomplete line
    char* end = nullptr;
    const long idx = std::strtol(fields[0].c_str(), &end, 10);
    if (*end != '\0' || idx < 0) continue;
    t->rows[static_cast<int>(idx)] = fields;
  }
  return Status::Ok();
}

Status WriteOutputs(const Table& t, const std::string& out) {
  std::string csv;
  for (size_t i = 0; i < t.header.size(); ++i) csv += (i ? "," : "") + Csv(t.header[i]);
  csv += "\n";
  std::string json = "[\n";
  size_t k = 0;
  for (const auto& [idx, row] : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) csv += (i ? "," : "") + Csv(row[i]);
    csv += "\n";
    json += "  {";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string& col = t.header[i];
      const bool numeric = (col == "point" || IsJobColumn(col) ||
                            std::find(kMetrics.begin(), kMetrics.end(), col) != kMetrics.end()) &&
                           !row[i].empty();
      json += (i ? ", " : "") + JsonString(col) + ": " + (numeric ? row[i] : JsonString(row[i]));
    }
    json += ++k < t.rows.size() ? "},\n" : "}\n";
  }
  json += "]\n";
  // Write beside and rename: a reader (or an interruption) never sees half a file.
  for (const auto& [path, text] :
       {std::pair<std::string, std::string>{out + ".csv", csv}, {out + ".json", json}}) {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      if (!f) return Status::Error(tmp + ": cannot write: " + std::strerror(errno));
      f << text;
      if (!f) return Status::Error(tmp + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      return Status::Error(path + ": cannot replace: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace orrery::sweep_internal

namespace orrery {

using sweep_internal::BaseFileOf;
using sweep_internal::FileText;
using sweep_internal::ReadTable;
using sweep_internal::Table;
using sweep_internal::WriteBaseFile;
using sweep_internal::WriteOutputs;

Status MergeSweepOutputs(const std::vector<std::string>& csv_files, const std::string& out) {
  if (csv_files.empty()) return Status::Error("sweep merge: no shard files given");
  Table merged;
  for (const std::string& f : csv_files) {
    Table t;
    Status s = ReadTable(f, &t, true);
    if (!s.ok()) return s;
    if (t.header.empty()) return Status::Error(f + ": empty, not a sweep output");
    if (merged.header.empty()) {
      merged.header = t.header;
    } else if (t.header != merged.header) {
      return Status::Error(f + ": its columns differ from " + csv_files[0] +
                           "'s; the shards come from different sweeps");
    }
    for (auto& [idx, row] : t.rows) {
      auto it = merged.rows.find(idx);
      if (it != merged.rows.end() && it->second != row) {
        return Status::Error(f + ": point " + std::to_string(idx) +
                             " is also in an earlier file with a different result");
      }
      merged.rows[idx] = row;
    }
  }
  // The shards' bases (PREFIX.base beside each CSV): the same, or the shards ran on different
  // files; the merged output gets it, for a later --resume to compare.
  std::string base;
  bool every_base = true;
  for (const std::string& f : csv_files) {
    const std::optional<std::string> text = FileText(BaseFileOf(f));
    every_base = every_base && text.has_value();
    if (!text) continue;
    if (!base.empty() && *text != base) {
      return Status::Error(BaseFileOf(f) + " differs from " + csv_files[0] +
                           "'s: the shards ran on different base files (an edit between "
                           "them); run the shards of one base again");
    }
    base = *text;
  }
  Status written = WriteOutputs(merged, out);
  if (!written.ok() || !every_base || base.empty()) return written;
  return WriteBaseFile(out + ".base", base);
}

}  // namespace orrery

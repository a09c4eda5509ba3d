// LoadCsv: a CSV table of measurements, its header first (which columns give the sizes, the
// times or bandwidths, GPUs and nodes), then each row into the measurement of its GPU count.
#include <cmath>
#include <filesystem>
#include <map>

#include "validate/nccl_tests_internal.h"

namespace orrery::nccl_tests_internal {
namespace {

// Where a table's columns are (-1 = absent), and which one gives the times (`kind`).
struct CsvColumns {
  std::vector<std::string> header;
  int size = -1, gpus = -1, nodes = -1, value = -1, in_place = -1;
  std::string kind;
};

// The header line (after comments): its columns, or what is wrong with it.
StatusOr<CsvColumns> ReadHeader(const std::string& path, std::istream& f, int* n) {
  // Lines starting with '#' are comments (a table's source), before the header or between rows.
  // CRLF endings, a byte-order mark and spaces around names and values are allowed.
  std::string line;
  while (NextLine(f, &line, n)) {
    line = Trim(line);
    if (!line.empty() && line[0] != '#') break;
  }
  CsvColumns c;
  c.header = CsvFields(line);
  auto col = [&](const char* name) {  // any case: "GPUs" is gpus
    for (size_t i = 0; i < c.header.size(); ++i) {
      if (Lower(c.header[i]) == Lower(name)) return static_cast<int>(i);
    }
    return -1;
  };
  c.size = col("size_bytes");
  c.gpus = col("gpus");
  c.nodes = col("nodes");
  for (const char* k :
       {"time_us", "algbw_GBps_out_of_place", "busbw_GBps_out_of_place", "busbw_GBps_in_place"}) {
    if (col(k) >= 0) {
      c.value = col(k);
      c.kind = k;
      break;
    }
  }
  c.in_place = col("busbw_GBps_in_place");
  if (c.size >= 0 && c.value >= 0) return c;
  if (c.header.empty() || (c.header.size() == 1 && c.header[0].empty())) {
    return Status::Error(path + ": no header line (the file is empty or only comments); " +
                         "expected a 'size_bytes' column and one of time_us, " +
                         "algbw_GBps_out_of_place, busbw_GBps_out_of_place, busbw_GBps_in_place");
  }
  // At most 120 characters of it (a binary file's "line" can be megabytes).
  const std::string shown = line.size() > 120 ? line.substr(0, 120) + "..." : line;
  return Status::Error(path + ":" + std::to_string(*n) + ": the header is '" + shown +
                       "'; expected a 'size_bytes' column and one of time_us, "
                       "algbw_GBps_out_of_place, busbw_GBps_out_of_place, "
                       "busbw_GBps_in_place");
}

// The time column `c` (named `k`) of row `v` gives: a time, or size / bandwidth.
Status TimeFrom(const std::string& where, const std::vector<std::string>& v, int size_col, int c,
                const std::string& k, uint64_t size, const std::string& collective, int gpus,
                double* time_us) {
  double value = 0;
  if (!ParseDouble(v[c], &value) || !std::isfinite(value) || value <= 0) {
    return Status::Error(where + "size " + v[size_col] + ": " + k + " '" + v[c] +
                         "'; expected a positive number");
  }
  if (k == "time_us") {
    *time_us = value;
    if (!TimeInRange(value)) {
      return Status::Error(where + "size " + v[size_col] + ": time_us '" + v[c] + "'; expected " +
                           kMeasuredTimeRange);
    }
    return Status::Ok();
  }
  if (size == 0) {
    return Status::Error(where + "size 0 with " + k +
                         " gives no time (time = size / bandwidth); leave the row out");
  }
  double algbw = value;
  if (k.rfind("busbw", 0) == 0) algbw = value / NcclBusFactor(collective, gpus);
  *time_us = static_cast<double>(size) / (algbw * 1e9) * 1e6;
  if (!TimeInRange(*time_us)) {
    return Status::Error(where + "size " + v[size_col] + ": " + k + " '" + v[c] +
                         "' gives a time of " + ShortNumber(*time_us) + " us; expected " +
                         kMeasuredTimeRange + " (size / bandwidth)");
  }
  return Status::Ok();
}

// Row `v` (line `n`) into the measurement of its GPU count in *by_gpus.
Status ReadRow(const std::string& path, int n, const std::vector<std::string>& v,
               const CsvColumns& c, const std::string& collective, int gpus_hint,
               std::map<int, NcclMeasurement>* by_gpus) {
  const std::string where = path + ":" + std::to_string(n) + ": ";
  if (static_cast<int>(v.size()) != static_cast<int>(c.header.size())) {
    return Status::Error(where + std::to_string(v.size()) + " fields; the header has " +
                         std::to_string(c.header.size()));
  }
  uint64_t size = 0;
  if (!ParseSize(v[c.size], &size)) {
    return Status::Error(
        where + "size '" + v[c.size] + "' (size_bytes); expected " +
        (ParseUnsigned(v[c.size], &size) ? kSizeRange : "a whole number of bytes >= 0"));
  }
  int gpus = gpus_hint;
  if (c.gpus >= 0 && !ParseCount(v[c.gpus], &gpus)) {
    return Status::Error(where + "gpus '" + v[c.gpus] + "'; expected a whole number of GPUs >= 1");
  }
  if (gpus <= 0) {
    return Status::Error(path + ": no 'gpus' column; give the GPU count (the machine's)");
  }
  int nodes = 0;
  if (c.nodes >= 0 && !ParseCount(v[c.nodes], &nodes)) {
    return Status::Error(where + "nodes '" + v[c.nodes] +
                         "'; expected a whole number of nodes >= 1");
  }
  NcclMeasurement& m = (*by_gpus)[gpus];
  m.gpus = gpus;
  m.gpus_from_file = c.gpus >= 0;
  m.collective = collective;
  m.source = path + (c.gpus >= 0 ? " (" + std::to_string(gpus) + " GPUs)" : "");
  if (c.nodes >= 0) {
    if (m.nodes > 0 && m.nodes != nodes) {
      return Status::Error(where + "nodes " + std::to_string(nodes) + " for " +
                           std::to_string(gpus) + " GPUs, where an earlier row of " +
                           std::to_string(gpus) + " GPUs has " + std::to_string(m.nodes) +
                           "; one GPU count is one layout of nodes");
    }
    m.nodes = nodes;
  }
  double time_us = 0, in_place_us = 0;
  if (Status st = TimeFrom(where, v, c.size, c.value, c.kind, size, collective, gpus, &time_us);
      !st.ok()) {
    return st;
  }
  // The in-place times: the table's own when they are its times, else a busbw_GBps_in_place
  // column beside them (empty or N/A: not measured).
  if (c.in_place == c.value) {
    in_place_us = time_us;
  } else if (c.in_place >= 0 && !v[c.in_place].empty() && v[c.in_place] != "N/A") {
    if (Status st = TimeFrom(where, v, c.size, c.in_place, "busbw_GBps_in_place", size, collective,
                             gpus, &in_place_us);
        !st.ok()) {
      return st;
    }
  }
  m.rows.push_back(NcclRow{size, time_us, in_place_us});
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<NcclMeasurement>> LoadCsv(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint,
                                               int default_gpus) {
  int n = 0;
  StatusOr<CsvColumns> columns = ReadHeader(path, f, &n);
  if (!columns.ok()) return columns.status();
  std::string several;
  const std::string collective =
      !collective_hint.empty()
          ? collective_hint
          : CollectiveIn(std::filesystem::path(path).filename().string(), &several);
  if (collective.empty()) {
    return Status::Error(
        path + ": the file name names " +
        (several.empty() ? std::string("no collective") : "several collectives (" + several + ")") +
        "; name it with --collective");
  }
  if (columns->nodes >= 0 && columns->gpus < 0 && gpus_hint <= 0) {
    // Rows on different node counts would all run on one GPU count.
    return Status::Error(path + ": a 'nodes' column but no 'gpus' column; add each row's GPU " +
                         "count (nodes x GPUs per node) as 'gpus', or give --gpus when every row " +
                         "has one");
  }
  if (gpus_hint <= 0 && columns->nodes < 0) gpus_hint = default_gpus;
  std::map<int, NcclMeasurement> by_gpus;
  std::string line;
  while (NextLine(f, &line, &n)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    Status s = ReadRow(path, n, CsvFields(line), *columns, collective, gpus_hint, &by_gpus);
    if (!s.ok()) return s;
  }
  std::vector<NcclMeasurement> out;
  for (auto& [g, m] : by_gpus) out.push_back(std::move(m));
  if (out.empty()) return Status::Error(path + ": no data rows");
  return out;
}

}  // namespace orrery::nccl_tests_internal

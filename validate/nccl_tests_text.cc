#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "validate/nccl_tests_internal.h"

namespace orrery::nccl_tests_internal {
namespace {

// The times a measured collective can take: from 1 ns (nccl-tests prints 0.01 us at best) to
// 1e9 us (17 minutes; 8 GiB at 10 MB/s takes 14). Outside, the figure is a typo or corruption.
constexpr double kMinTimeUs = 1e-3;
constexpr double kMaxTimeUs = 1e9;

}  // namespace

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string w;
  while (ss >> w) out.push_back(w);
  return out;
}

bool ParseUnsigned(const std::string& s, uint64_t* v) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  *v = std::strtoull(s.c_str(), nullptr, 10);
  return errno == 0;
}

const char* const kSizeRange = "a whole number of bytes from 0 to 9223372036854775807 (2^63 - 1)";
bool ParseSize(const std::string& s, uint64_t* v) {
  return ParseUnsigned(s, v) && *v <= static_cast<uint64_t>(INT64_MAX);
}

// A decimal number ("41.2", "4e-07", "-1"); not hex, inf or nan, which strtod would also read.
bool ParseDouble(const std::string& s, double* v) {
  if (s.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0' && errno == 0;
}

// A count of GPUs or nodes: a whole number >= 1 ("4.5", "8x", "0" are not).
bool ParseCount(const std::string& s, int* v) {
  uint64_t u = 0;
  if (!ParseUnsigned(s, &u) || u < 1 || u > static_cast<uint64_t>(1) << 30) return false;
  *v = static_cast<int>(u);
  return true;
}

// The next line of `f` (its number in `n`), without the '\r' of a CRLF ending and, on the first
// line, without a UTF-8 byte-order mark: files saved on Windows or by spreadsheets read as any.
bool NextLine(std::istream& f, std::string* line, int* n) {
  if (!std::getline(f, *line)) return false;
  ++*n;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  if (*n == 1 && line->compare(0, 3, "\xEF\xBB\xBF") == 0) line->erase(0, 3);
  return true;
}

// The comma-separated fields of a CSV line, each trimmed ("gpus , size_bytes" reads as
// "gpus", "size_bytes").
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, ',')) {
    c = Trim(c);
    // A spreadsheet's quotes around a field ("size_bytes", "41.2").
    if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = Trim(c.substr(1, c.size() - 2));
    out.push_back(c);
  }
  if (!line.empty() && line.back() == ',') out.push_back("");  // a last empty field
  return out;
}

// The collective `text` names (nccl-tests' name: all_reduce, alltoall, ...), or "" when it names
// none or several (`several` then lists them). Case and '-' or '_' do not matter, nor does the
// separator inside a name ("allreduce", "All-Reduce"); a name inside a longer one is that one
// ("all_reduce" holds "reduce", "reduce_scatter" holds "scatter").
std::string CollectiveIn(const std::string& text, std::string* several) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"all_reduce", "all_reduce"},
      {"allreduce", "all_reduce"},
      {"all_gather", "all_gather"},
      {"allgather", "all_gather"},
      {"reduce_scatter", "reduce_scatter"},
      {"reducescatter", "reduce_scatter"},
      {"alltoall", "alltoall"},
      {"all_to_all", "alltoall"},
      {"broadcast", "broadcast"},
      {"reduce", "reduce"},
      {"sendrecv", "sendrecv"},
      {"gather", "gather"},
      {"scatter", "scatter"},
      {"hypercube", "hypercube"}};
  std::string t = Lower(text);
  std::replace(t.begin(), t.end(), '-', '_');
  struct Match {
    size_t begin, end;
    const char* name;
  };
  std::vector<Match> found;
  for (const auto& [alias, name] : kAliases) {
    for (size_t at = t.find(alias); at != std::string::npos; at = t.find(alias, at + 1)) {
      found.push_back({at, at + std::strlen(alias), name});
    }
  }
  std::set<std::string> names;
  for (const Match& m : found) {
    const bool inside = std::any_of(found.begin(), found.end(), [&](const Match& o) {
      return o.begin <= m.begin && m.end <= o.end && o.end - o.begin > m.end - m.begin;
    });
    if (!inside) names.insert(m.name);
  }
  if (names.size() == 1) return *names.begin();
  if (names.size() > 1 && several != nullptr) {
    for (const std::string& n : names) *several += (several->empty() ? "" : " and ") + n;
  }
  return "";
}

std::string ShortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool TimeInRange(double t) { return std::isfinite(t) && t >= kMinTimeUs && t <= kMaxTimeUs; }

}  // namespace orrery::nccl_tests_internal

#include "validate/nccl_tests.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace orrery {

const char* const kMeasuredTimeRange = "a number of microseconds from 0.001 to 1e9";

namespace {

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

// A row's size: a whole number of bytes that a Chakra comm_size (an int64) can hold.
constexpr const char* kSizeRange =
    "a whole number of bytes from 0 to 9223372036854775807 (2^63 - 1)";
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

// Drops a launcher prefix: "0: ", "12:", "[1,0]<stdout>:", "node3: ".
std::string StripPrefix(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return "";
  if (line[i] == '[') {
    const size_t close = line.find("]<stdout>:", i);
    if (close != std::string::npos) return line.substr(close + 10);
  }
  const size_t colon = line.find(':', i);
  if (colon != std::string::npos && colon > i) {
    const std::string head = line.substr(i, colon - i);
    // Not "NCCL_ALGO=allreduce:ring" (an environment line, whose ':' is NCCL's).
    if (head.find_first_of(" \t#=") == std::string::npos && head.size() < 32) {
      return line.substr(colon + 1);
    }
  }
  return line;
}

// The collective `text` names (nccl-tests' name: all_reduce, alltoall, ...), or "" when it names
// none or several (`several` then lists them). Case and '-' or '_' do not matter, nor does the
// separator inside a name ("allreduce", "All-Reduce"); a name inside a longer one is that one
// ("all_reduce" holds "reduce", "reduce_scatter" holds "scatter").
std::string CollectiveIn(const std::string& text, std::string* several = nullptr) {
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

// "NCCL_ALGO=Ring" (an environment dump or a comment) or NCCL's own "NCCL_ALGO set by
// environment to Ring", for `variable` (NCCL_ALGO, NCCL_PROTO): the value the run was limited to
// in NCCL's syntax ("Ring", "NVLS,Ring", "^NVLS"), as written; "" = none.
std::string ForcedSetting(const std::string& line, const std::string& variable) {
  size_t at = line.find(variable);
  if (at == std::string::npos) return "";
  at += variable.size();
  const std::string kSetBy = " set by environment to";
  if (line.compare(at, kSetBy.size(), kSetBy) == 0) {
    at += kSetBy.size();
  } else if (at < line.size() && line[at] == '=') {
    ++at;
  } else {
    return "";
  }
  while (at < line.size() && (line[at] == ' ' || line[at] == '"' || line[at] == '\'')) ++at;
  std::string value;  // NCCL's per-collective form too: "allreduce:tree;allgather:ring"
  for (;
       at < line.size() && (std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == ',' ||
                            line[at] == '^' || line[at] == ':' || line[at] == ';');
       ++at) {
    value += line[at];
  }
  return value;
}

// Whether `line` exports `variable` for the rest of a job script ("export NCCL_ALGO=Ring"),
// rather than setting it for one command ("NCCL_ALGO=Ring mpirun ...") or reporting it for one
// run (NCCL's "NCCL_ALGO set by environment to Ring").
bool Exports(const std::string& line, const std::string& variable) {
  const size_t at = line.find(variable);
  const size_t e = line.rfind("export ", at);
  return at != std::string::npos && e != std::string::npos;
}

// NCCL's per-collective form ("allreduce:tree,ring;allgather:ring"): the entry for `collective`
// (all_reduce -> allreduce), "" when it has none (no limit); any other value as it is.
std::string ForCollective(const std::string& value, const std::string& collective) {
  if (value.find(':') == std::string::npos) return value;
  std::string key = Lower(collective);
  key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
  std::stringstream ss(value);
  std::string entry;
  while (std::getline(ss, entry, ';')) {
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) continue;
    if (Lower(entry.substr(0, colon)) == key) return entry.substr(colon + 1);
  }
  return "";
}

// NCCL_ALGO's value in lower case ("ring", "nvls,ring", "^nvls"), as Orrery names algorithms.
std::string ForcedAlgorithm(const std::string& line) {
  return Lower(ForcedSetting(line, "NCCL_ALGO"));
}

// The fields of a data row `w` (size, count, type, ...) before its first time: a reduction op (a
// word: "sum", "none") follows the type unless the row has none (older nccl-tests' all_gather
// and broadcast: "size count type [root] time ..."); then `root` or not, which the groups of four
// (time, algbw, busbw, #wrong) after them tell. `w` has at least 4 fields.
size_t FieldsBeforeTime(const std::vector<std::string>& w) {
  const size_t op = w[3] != "N/A" && std::isalpha(static_cast<unsigned char>(w[3][0])) ? 4 : 3;
  return (w.size() - op) % 4 == 1 ? op + 1 : op;
}

// Whether `w` (a line's fields) is a row of the table whatever its first field, the size: a
// whole-number count, a type (a word: "float"), then at least two more fields, each a number or
// N/A after the reduction op if there is one (root, times, bandwidths, #wrong). Such a line with
// a bad size is an error; any other line that does not start with a size and a count is not a
// row and is skipped as before (NCCL INFO lines, "NCCL version 2.18.5+cuda12.2", a launcher's
// or a job script's chatter).
bool IsRowButForItsSize(const std::vector<std::string>& w) {
  uint64_t count = 0;
  if (w.size() < 5 || !ParseUnsigned(w[1], &count)) return false;
  if (!std::isalpha(static_cast<unsigned char>(w[2][0]))) return false;
  double x = 0;
  for (size_t i = std::isalpha(static_cast<unsigned char>(w[3][0])) ? 4 : 3; i < w.size(); ++i) {
    if (w[i] != "N/A" && !ParseDouble(w[i], &x)) return false;
  }
  return true;
}

// The times a measured collective can take: from 1 ns (nccl-tests prints 0.01 us at best) to
// 1e9 us (17 minutes; 8 GiB at 10 MB/s takes 14). Outside, the figure is a typo or corruption.
constexpr double kMinTimeUs = 1e-3;
constexpr double kMaxTimeUs = 1e9;

std::string ShortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool TimeInRange(double t) { return std::isfinite(t) && t >= kMinTimeUs && t <= kMaxTimeUs; }

// The columns of nccl-tests' table header ("#  size  count  type  redop  root  time  algbw
// busbw  #wrong  time ..."), without its '#'; empty when `w` (a line's fields) is not that line.
std::vector<std::string> TableColumns(const std::vector<std::string>& w) {
  std::vector<std::string> c(w.begin() + (w[0] == "#" ? 1 : 0), w.end());
  if (!c.empty() && c[0].size() > 1 && c[0][0] == '#') c[0].erase(0, 1);  // "#size"
  if (c.size() < 4 || c[0] != "size" || c[1] != "count") return {};
  // Up to the last column that closes a group (another process's text glued to the line is not
  // columns).
  for (size_t i = c.size(); i-- > 2;) {
    if (c[i] == "#wrong" || c[i] == "wrong" || c[i] == "error" || c[i] == "timestamp") {
      c.resize(i + 1);
      break;
    }
  }
  return c;
}

// Where a table's fields are, from its header line: the out-of-place and in-place times
// (nccl-tests' "time", "cputime" with -C), their #wrong, and how many fields a whole row has (a
// "timestamp" column is a date and a time). `fields` 0 = no header seen: rows are read by their
// shape (FieldsBeforeTime: in-place 4 fields after out-of-place, #wrong 3 after each time).
struct TableLayout {
  size_t first = 0;
  size_t in_place = 0;  // 0 = no in-place group
  std::vector<size_t> wrong;
  size_t fields = 0;
  int line = 0;
  std::string names;  // "size, count, type, ..." for messages
};

TableLayout LayoutOf(const std::vector<std::string>& columns, int line) {
  TableLayout l;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == "time" || columns[i] == "cputime") {
      if (l.fields == 0) {
        l.first = i;
        l.fields = columns.size() + (columns.back() == "timestamp" ? 1 : 0);
      } else if (l.in_place == 0) {
        l.in_place = i;
      }
    }
    if (columns[i] == "#wrong" || columns[i] == "wrong") l.wrong.push_back(i);
  }
  l.line = line;
  for (const std::string& c : columns) l.names += (l.names.empty() ? "" : " ") + c;
  return l;
}

// The start of a data row in `w` behind a launcher's prefix this reader does not strip (a
// kubectl pod name, a timestamp): the first field of three that read as a size, a count and a
// type; 0 when there is none.
size_t RowStart(const std::vector<std::string>& w) {
  uint64_t u = 0;
  for (size_t i = 0; i + 2 < w.size() && i < 8; ++i) {
    if (ParseUnsigned(w[i], &u) && ParseUnsigned(w[i + 1], &u) &&
        std::isalpha(static_cast<unsigned char>(w[i + 2][0]))) {
      return i;
    }
  }
  return 0;
}

// Whether `w` holds a data row's start (a size, a count and a type) anywhere RowStart looks.
bool LooksLikeRow(const std::vector<std::string>& w) {
  uint64_t u = 0;
  const size_t s = RowStart(w);
  return w.size() > s + 2 && ParseUnsigned(w[s], &u) && ParseUnsigned(w[s + 1], &u) &&
         std::isalpha(static_cast<unsigned char>(w[s + 2][0]));
}

// One run of an nccl-tests binary in a log: its header, Rank lines and table. Logs that hold
// several (a job script running all_reduce_perf at 8 then at 16 GPUs) give one measurement each.
struct LogRun {
  NcclMeasurement m;
  std::map<std::string, int> host_ranks;  // host -> its Rank lines
  std::set<int> ranks, groups;
  int n_threads = 0, n_gpus = 0;
  int line = 0;  // where the run starts
  // The kinds of header line seen ("# nccl-tests version", "# Collective test starting", "#
  // nThread"): a second of one kind starts the next run, even when this one printed no rows.
  std::set<std::string> marks;
  TableLayout layout;
  int wrong_rows = 0, first_wrong_line = 0;
  // 2019-era nccl-tests printed the time column in milliseconds: a row whose time is a
  // thousandth of size / algbw says so, and the run's times are then scaled to microseconds.
  bool millis = false;
  // A host and device seen twice: nccl-tests cuts host names at their first '.', so hosts named
  // by IP address (10.0.0.1, 10.0.0.2) all print as "10"; the names then do not count nodes.
  std::set<std::pair<std::string, int>> host_devices;
  bool hosts_ambiguous = false;
  std::string failed_check;  // "# Out of bounds values : 3 FAILED"
};

StatusOr<std::vector<NcclMeasurement>> LoadLog(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint) {
  std::vector<LogRun> runs(1);
  runs[0].line = 1;
  // NCCL_ALGO / NCCL_PROTO seen after a run's rows: the next run's (NCCL prints them when the
  // next run's communicators start), or this one's when no run follows.
  std::string next_algorithm, next_protocol;
  // What a job script exported: every later run has it unless the run says otherwise (one set
  // for a single command, or printed by NCCL, holds for that run only).
  std::string exported_algorithm, exported_protocol;
  std::string line;
  int n = 0;
  int cut_row_line = 0;  // the line of a row cut before its type, if it is the last one
  std::string cut_row;
  while (NextLine(f, &line, &n)) {
    const std::string whole = StripPrefix(line);  // "export NCCL_ALGO=Ring  # ..." keeps both
    std::string body = whole;
    // A comment behind a prefix StripPrefix does not know ("2024-05-01T12:00:00Z # Rank ..."):
    // from its '#'; but a data row with a comment after it ("... 0  # outlier") is the row.
    if (const size_t hash = body.find('#'); hash != std::string::npos) {
      const std::vector<std::string> before = Split(body.substr(0, hash));
      body = LooksLikeRow(before) ? body.substr(0, hash) : body.substr(hash);
    }
    std::vector<std::string> w = Split(body);
    // A line that starts like a data row but ends before its type (a log cut off there): an
    // error when nothing follows it (see after the loop).
    if (!w.empty()) {
      uint64_t number = 0;
      cut_row_line = 0;
      // Larger than the last row's size, as the next row's would be (a script's "echo $?" after
      // the table prints a 0).
      if (w.size() <= 2 && w[0][0] != '#' && ParseUnsigned(w[0], &number) &&
          !runs.back().m.rows.empty() && number > runs.back().m.rows.back().size &&
          (w.size() == 1 || ParseUnsigned(w[1], &number))) {
        cut_row_line = n;
        cut_row = Trim(body);
      }
    }
    if (w.empty()) continue;
    LogRun* run = &runs.back();
    if (w[0][0] == '#') {
      const char* mark = body.find("Collective test starting:") != std::string::npos ? "collective"
                         : body.find("nccl-tests version") != std::string::npos      ? "version"
                         : (w.size() > 2 && w[1] == "nThread")                       ? "nthread"
                                                                                     : nullptr;
      if (mark != nullptr && (!run->m.rows.empty() || run->marks.count(mark) > 0)) {
        const std::string algorithm = next_algorithm.empty() ? exported_algorithm : next_algorithm;
        const std::string protocol = next_protocol.empty() ? exported_protocol : next_protocol;
        runs.emplace_back();
        run = &runs.back();
        run->line = n;
        run->m.algorithm = algorithm;
        run->m.protocol = protocol;
        next_algorithm.clear();
        next_protocol.clear();
      }
      if (mark != nullptr) run->marks.insert(mark);
    }
    if (const std::string a = ForcedAlgorithm(whole); !a.empty()) {
      (run->m.rows.empty() ? run->m.algorithm : next_algorithm) = a;
      if (Exports(whole, "NCCL_ALGO")) exported_algorithm = a;
    }
    if (const std::string p = ForcedSetting(whole, "NCCL_PROTO"); !p.empty()) {
      (run->m.rows.empty() ? run->m.protocol : next_protocol) = p;
      if (Exports(whole, "NCCL_PROTO")) exported_protocol = p;
    }
    NcclMeasurement& m = run->m;
    if (w[0][0] == '#') {
      const size_t start = body.find("Collective test starting:");
      if (start != std::string::npos) {
        m.collective = CollectiveIn(body.substr(start));
        if (m.collective.empty() && !collective_hint.empty()) {
          m.collective = collective_hint;  // --collective names what this header does not
        } else if (m.collective.empty()) {
          return Status::Error(path + ":" + std::to_string(n) + ": '# " + Trim(body.substr(start)) +
                               "' names no collective nccl-tests measures (all_reduce, "
                               "all_gather, reduce_scatter, alltoall, broadcast, reduce, ...); "
                               "name it with --collective");
        }
        if (!collective_hint.empty() && !m.collective.empty() && m.collective != collective_hint) {
          return Status::Error(path + ":" + std::to_string(n) + ": the log measured " +
                               m.collective + " ('# " + Trim(body.substr(start)) +
                               "') but --collective is '" + collective_hint +
                               "'; leave --collective out, or give " + m.collective);
        }
      }
      if (const std::vector<std::string> c = TableColumns(w); !c.empty()) {
        run->layout = LayoutOf(c, n);
      }
      if (body.find("Out of bounds values") != std::string::npos &&
          body.find("FAILED") != std::string::npos) {
        run->failed_check = Trim(body);
      }
      // "#  Rank  3 Group  0 Pid 1000 on node000 device 3 [...] NVIDIA H100"
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        if (w[i] == "Rank" && i == 1) {
          uint64_t rank = 0;
          if (!ParseUnsigned(w[i + 1], &rank) || rank >= (uint64_t{1} << 24)) {
            return Status::Error(path + ":" + std::to_string(n) + ": rank '" + w[i + 1] +
                                 "'; expected a whole number from 0 to 16777215");
          }
          run->ranks.insert(static_cast<int>(rank));
          std::string host;
          int device = -1;
          for (size_t j = i; j + 1 < w.size(); ++j) {
            if (w[j] == "on") host = w[j + 1];
            if (w[j] == "device") device = std::atoi(w[j + 1].c_str());
            if (w[j] == "Group") run->groups.insert(std::atoi(w[j + 1].c_str()));
          }
          if (!host.empty()) {
            ++run->host_ranks[host];
            if (device >= 0 && !run->host_devices.insert({host, device}).second) {
              run->hosts_ambiguous = true;
            }
          }
          break;
        }
        int count = 0;
        if ((w[i] == "nThread" || w[i] == "nGpus") &&
            (!ParseCount(w[i + 1], &count) || count > (1 << 20))) {
          return Status::Error(path + ":" + std::to_string(n) + ": " + w[i] + " '" + w[i + 1] +
                               "'; expected a whole number from 1 to 1048576");
        }
        if (w[i] == "nThread") run->n_threads = count;
        if (w[i] == "nGpus") run->n_gpus = count;
      }
      continue;
    }
    // A data row: size count type op [root] then groups of (time algbw busbw wrong).
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (const size_t s = RowStart(w); s > 0) w.erase(w.begin(), w.begin() + s);
    uint64_t size = 0, count = 0;
    // Under a table's header, a line of its fields whose times and bandwidths are numbers is a
    // row even when its size or count is not one (a corrupted row is named, not dropped).
    if (const TableLayout& l = run->layout;
        l.fields > 0 && w.size() == l.fields && w.size() >= l.first + 4 &&
        (!ParseUnsigned(w[0], &size) || !ParseUnsigned(w[1], &count))) {
      bool numbers = true;
      double x = 0;
      for (size_t i = l.first; i < l.first + 4; ++i) {
        numbers = numbers && (w[i] == "N/A" || ParseDouble(w[i], &x));
      }
      if (numbers) {
        return Status::Error(path + ":" + std::to_string(n) +
                             ": a data row's size and count are '" + w[0] + "' and '" + w[1] +
                             "'; expected whole numbers of bytes and " + "elements");
      }
    }
    if (w.size() < 2 || !ParseUnsigned(w[1], &count)) continue;
    if (!ParseSize(w[0], &size)) {
      if (!IsRowButForItsSize(w)) continue;  // not a row of the table
      return Status::Error(
          where + "a data row's size is '" + w[0] + "'; expected " +
          (ParseUnsigned(w[0], &size) ? kSizeRange : "a whole number of bytes >= 0"));
    }
    const bool typed = w.size() > 2 && std::isalpha(static_cast<unsigned char>(w[2][0]));
    // A row of one group of columns under a header of two (rccl-tests -O 0, nccl-tests' trace
    // replay) is read as one group; a header shorter than its first row (wrapped onto two lines)
    // gives way to reading rows by their shape. A row shorter than its header is cut short.
    if (run->layout.fields > 0 && run->layout.in_place == 0 && w.size() > run->layout.fields &&
        typed && run->m.rows.empty()) {
      run->layout = TableLayout();  // only a header of one group of columns can be wrapped
    }
    const TableLayout& layout = run->layout;
    const bool one_group = layout.in_place > 0 && w.size() == layout.first + 4;
    if (layout.fields > 0 && w.size() != layout.fields && !one_group) {
      if (!typed) continue;  // not a row of the table
      return Status::Error(where + "the row of size " + w[0] + " has " + std::to_string(w.size()) +
                           " fields, but the table's header (line " + std::to_string(layout.line) +
                           ": " + layout.names + ") gives " + std::to_string(layout.fields) +
                           "; is the log truncated, or another line's text mixed into it?");
    }
    if (w.size() < 8) {
      if (!typed) continue;  // not a row of the table
      return Status::Error(where + "the row of size " + w[0] + " is cut short (" +
                           std::to_string(w.size()) +
                           " fields; a row has size, count, type, [redop,] [root,] then time, "
                           "algbw, busbw, #wrong); is the log truncated?");
    }
    const size_t first = layout.fields > 0 ? layout.first : FieldsBeforeTime(w);
    // The in-place time's field, 0 = none.
    const size_t second = layout.fields > 0       ? (one_group ? 0 : layout.in_place)
                          : w.size() >= first + 8 ? first + 4
                                                  : 0;
    // The out-of-place time; nccl-tests prints N/A there in some runs, and the in-place time
    // (the next group) stands in for it. A number that is not a time is an error, not replaced.
    double t = 0;
    const std::string& out = w[first];
    if (out == "N/A") {
      if (second == 0 || w[second] == "N/A") {
        return Status::Error(where + "size " + w[0] + " has no time (out-of-place '" + out +
                             "'); expected a number of microseconds");
      }
      if (!ParseMeasuredTime(w[second], &t)) {
        return Status::Error(where + "size " + w[0] + " has out-of-place time 'N/A' and " +
                             "in-place time '" + w[second] + "'; expected " + kMeasuredTimeRange);
      }
    } else if (!ParseMeasuredTime(out, &t)) {
      return Status::Error(where + "size " + w[0] + " has out-of-place time '" + out +
                           "'; expected " + kMeasuredTimeRange +
                           " (or N/A, to use the in-place time)");
    }
    // The in-place time, kept for --in-place: absent (a row of one group of columns) or N/A is
    // 0, anything else must be a time.
    double in_place = 0;
    if (second > 0 && w[second] != "N/A" && !ParseMeasuredTime(w[second], &in_place)) {
      return Status::Error(where + "size " + w[0] + " has in-place time '" + w[second] +
                           "'; expected " + kMeasuredTimeRange + " (or N/A)");
    }
    // nccl-tests' #wrong: elements that came out wrong (a number, or N/A when not checked).
    std::vector<size_t> wrong_fields = layout.wrong;
    if (layout.fields == 0) {
      wrong_fields = {first + 3};
      if (second > 0) wrong_fields.push_back(second + 3);
    }
    for (size_t g : wrong_fields) {
      if (g >= w.size()) continue;
      // A count of elements (printed with %g: 1.67772e+07 under a #wrong header); without a
      // header, older nccl-tests' relative error ("4e-07") is there instead.
      uint64_t whole = 0;
      double wrong = 0;
      if (layout.fields > 0 ? ParseDouble(w[g], &wrong) && wrong > 0
                            : ParseUnsigned(w[g], &whole) && whole > 0) {
        if (run->wrong_rows++ == 0) run->first_wrong_line = n;
        break;
      }
    }
    // Milliseconds (2019-era nccl-tests): the time is a thousandth of size / algbw (GB/s).
    if (double algbw = 0; size > 0 && first + 1 < w.size() && out != "N/A" &&
                          ParseDouble(w[first + 1], &algbw) && algbw > 0) {
      const double ratio = t / (static_cast<double>(size) / (algbw * 1e3));
      if (ratio > 5e-4 && ratio < 2e-3) run->millis = true;
    }
    m.rows.push_back(NcclRow{size, t, in_place});
  }
  if (cut_row_line > 0) {
    return Status::Error(path + ":" + std::to_string(cut_row_line) + ": the last line, '" +
                         cut_row +
                         "', is the start of a data row (size, count) with the rest missing; is "
                         "the log truncated?");
  }
  if (!next_algorithm.empty() && runs.back().m.algorithm.empty()) {
    runs.back().m.algorithm = next_algorithm;
  }
  if (!next_protocol.empty() && runs.back().m.protocol.empty()) {
    runs.back().m.protocol = next_protocol;
  }
  std::vector<NcclMeasurement> out;
  const bool several = runs.size() > 1;
  // A run with a header and no table (it stopped before its first row): left out, said with
  // the first run that has rows.
  if (several) {
    std::vector<std::string> dropped;
    std::vector<LogRun> kept;
    for (LogRun& run : runs) {
      if (run.m.rows.empty()) {
        dropped.push_back(path + ": the run from line " + std::to_string(run.line) +
                          " has no rows (it stopped before its table?) and is left out");
      } else {
        kept.push_back(std::move(run));
      }
    }
    if (!kept.empty()) {
      kept.front().m.notes.insert(kept.front().m.notes.end(), dropped.begin(), dropped.end());
      runs = std::move(kept);
    }
  }
  for (LogRun& run : runs) {
    NcclMeasurement& m = run.m;
    m.source = several ? path + " (the run from line " + std::to_string(run.line) + ")" : path;
    if (m.rows.empty()) {  // before the collective: an empty file is that, not a nameless one
      return Status::Error(m.source +
                           ": no nccl-tests data rows (lines 'size count type redop ... "
                           "time algbw busbw ...')");
    }
    if (m.collective.empty()) m.collective = collective_hint;
    if (m.collective.empty() && several) {
      // One file name cannot name the collectives of several runs (a script may run all_reduce
      // then all_gather with headers that do not say which).
      return Status::Error(m.source +
                           ": names no collective (no '# Collective test starting: <name>_perf' "
                           "line) and the log holds several runs; give each run in a file of its "
                           "own, or --collective if they all measured one");
    }
    std::string several;
    if (m.collective.empty()) {
      m.collective = CollectiveIn(std::filesystem::path(path).filename().string(), &several);
    }
    if (m.collective.empty()) {
      return Status::Error(
          m.source + ": cannot tell which collective was measured (no '# Collective test " +
          "starting: <name>_perf' line" +
          (several.empty() ? std::string(")") : "; its file name names several: " + several + ")") +
          "; name it with --collective");
    }
    m.algorithm = ForCollective(m.algorithm, m.collective);
    m.protocol = ForCollective(m.protocol, m.collective);
    if (m.rows.empty()) {
      return Status::Error(m.source +
                           ": no nccl-tests data rows (lines 'size count type redop ... "
                           "time algbw busbw ...')");
    }
    if (run.groups.size() > 1) {
      return Status::Error(
          m.source + ": its ranks are in " + std::to_string(run.groups.size()) +
          " groups (the Rank lines' 'Group'; NCCL_TESTS_SPLIT_MASK), each running its own "
          "collective at the same time; validate compares one collective over all the log's "
          "GPUs, so run nccl-tests without a split mask");
    }
    // Ranks are numbered from 0, so the highest one counts them even when a posted log kept
    // only some of its Rank lines ("Rank 7" alone: 8 GPUs).
    const int from_ranks = run.ranks.empty() ? 0 : *run.ranks.rbegin() + 1;
    if (from_ranks > 0 && gpus_hint > 0 && gpus_hint != from_ranks) {
      return Status::Error(m.source + ": --gpus is " + std::to_string(gpus_hint) +
                           " but the log's '#  Rank' lines go up to rank " +
                           std::to_string(from_ranks - 1) + " (" + std::to_string(from_ranks) +
                           " GPUs); leave --gpus out or give " + std::to_string(from_ranks));
    }
    m.gpus = from_ranks;
    if (m.gpus == 0) {
      m.gpus = gpus_hint;
      m.gpus_from_file = gpus_hint == 0;
    }
    // One process drives nThread x nGpus GPUs, so the run has a whole number of such processes.
    if (const int64_t per_process = int64_t{std::max(run.n_threads, 1)} * run.n_gpus;
        run.n_gpus > 0 && m.gpus > 0 && m.gpus % per_process != 0) {
      return Status::Error(
          m.source + ": " + std::to_string(m.gpus) + " GPUs (" +
          (from_ranks > 0 ? "the '#  Rank' lines go up to rank " + std::to_string(from_ranks - 1)
                          : "--gpus") +
          "), but its header gives nThread " + std::to_string(std::max(run.n_threads, 1)) +
          " x nGpus " + std::to_string(run.n_gpus) + " = " + std::to_string(per_process) +
          " GPUs per process; expected a multiple of " + std::to_string(per_process));
    }
    // Every host the same number of ranks: the profile's nodes are alike.
    if (static_cast<int>(run.ranks.size()) == from_ranks && !run.hosts_ambiguous &&
        run.host_ranks.size() > 1) {
      const int first = run.host_ranks.begin()->second;
      const bool even = std::all_of(run.host_ranks.begin(), run.host_ranks.end(),
                                    [first](const auto& h) { return h.second == first; });
      if (!even) {
        std::string counts;
        for (const auto& [host, k] : run.host_ranks) {
          counts += (counts.empty() ? "" : ", ") + host + ": " + std::to_string(k);
        }
        return Status::Error(m.source + ": its ranks are on " +
                             std::to_string(run.host_ranks.size()) + " hosts unevenly (" + counts +
                             "); validate compares a profile's nodes, which are alike");
      }
    }
    if (m.gpus == 0 && run.n_gpus > 0) {
      // nThread x nGpus is one process's GPUs; with MPI there are several, which only the
      // Rank lines tell.
      const int64_t product = int64_t{std::max(run.n_threads, 1)} * run.n_gpus;
      if (product > (int64_t{1} << 24)) {
        return Status::Error(m.source + ": nThread " + std::to_string(run.n_threads) + " x nGpus " +
                             std::to_string(run.n_gpus) + " = " + std::to_string(product) +
                             " GPUs; expected at most 16777216 (is the header corrupted?)");
      }
      m.gpus = static_cast<int>(product);
      m.notes.push_back(m.source + ": no '#  Rank' lines; " + std::to_string(m.gpus) +
                        " GPUs from its header (nThread " +
                        std::to_string(std::max(run.n_threads, 1)) + " x nGpus " +
                        std::to_string(run.n_gpus) +
                        ", one process); give --gpus N if several processes ran it (MPI)");
    }
    if (m.gpus == 0) {
      return Status::Error(m.source +
                           ": no '#  Rank' lines, so the number of GPUs is unknown; give it with "
                           "--gpus");
    }
    // Hosts count the nodes only when every rank's line is there (a posted log may keep some)
    // and no host repeats a device (names cut at their first '.').
    m.nodes = static_cast<int>(run.ranks.size()) == from_ranks && !run.hosts_ambiguous
                  ? static_cast<int>(run.host_ranks.size())
                  : 0;
    if (run.millis) {
      for (NcclRow& r : m.rows) {
        r.time_us *= 1e3;
        r.in_place_us *= 1e3;
      }
      m.notes.push_back(m.source +
                        ": its times are in milliseconds (2019-era nccl-tests: each is a "
                        "thousandth of size / algbw), read as such");
    }
    m.gpus_per_thread = run.n_gpus;
    if (run.wrong_rows > 0) {
      m.notes.push_back(m.source + ": " + std::to_string(run.wrong_rows) + " row" +
                        (run.wrong_rows > 1 ? "s" : "") + " with elements wrong (#wrong > 0, " +
                        "first at line " + std::to_string(run.first_wrong_line) +
                        "): NCCL computed wrong results there, so their times may not be a "
                        "working collective's");
    }
    if (!run.failed_check.empty()) {
      m.notes.push_back(m.source + ": '" + run.failed_check +
                        "': nccl-tests found wrong results in this run");
    }
    out.push_back(std::move(m));
  }
  // Every run on one GPU, each its own rank 0: mpirun started a build of nccl-tests without MPI,
  // and every process measured itself alone.
  bool all_alone = out.size() > 1;
  for (const NcclMeasurement& m : out) all_alone = all_alone && m.gpus == 1 && m.gpus_from_file;
  if (all_alone) {
    return Status::Error(path + ": holds " + std::to_string(out.size()) +
                         " runs of one GPU each, every one its own rank 0: each process measured "
                         "itself alone (nccl-tests built without MPI=1, started by mpirun?); "
                         "build nccl-tests with MPI=1 and measure again");
  }
  return out;
}

StatusOr<std::vector<NcclMeasurement>> LoadCsv(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint,
                                               int default_gpus) {
  // Lines starting with '#' are comments (a table's source), before the header or between rows.
  // CRLF endings, a byte-order mark and spaces around names and values are allowed.
  std::string line;
  int n = 0;
  while (NextLine(f, &line, &n)) {
    line = Trim(line);
    if (!line.empty() && line[0] != '#') break;
  }
  const std::vector<std::string> header = CsvFields(line);
  auto col = [&](const char* name) {  // any case: "GPUs" is gpus
    for (size_t i = 0; i < header.size(); ++i) {
      if (Lower(header[i]) == Lower(name)) return static_cast<int>(i);
    }
    return -1;
  };
  const int size_col = col("size_bytes"), gpus_col = col("gpus"), nodes_col = col("nodes");
  int value_col = -1;
  std::string kind;
  for (const char* k :
       {"time_us", "algbw_GBps_out_of_place", "busbw_GBps_out_of_place", "busbw_GBps_in_place"}) {
    if (col(k) >= 0) {
      value_col = col(k);
      kind = k;
      break;
    }
  }
  const int in_place_col = col("busbw_GBps_in_place");
  if (size_col < 0 || value_col < 0) {
    if (header.empty() || (header.size() == 1 && header[0].empty())) {
      return Status::Error(path + ": no header line (the file is empty or only comments); " +
                           "expected a 'size_bytes' column and one of time_us, " +
                           "algbw_GBps_out_of_place, busbw_GBps_out_of_place, busbw_GBps_in_place");
    }
    // At most 120 characters of it (a binary file's "line" can be megabytes).
    const std::string shown = line.size() > 120 ? line.substr(0, 120) + "..." : line;
    return Status::Error(path + ":" + std::to_string(n) + ": the header is '" + shown +
                         "'; expected a 'size_bytes' column and one of time_us, "
                         "algbw_GBps_out_of_place, busbw_GBps_out_of_place, "
                         "busbw_GBps_in_place");
  }
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
  if (nodes_col >= 0 && gpus_col < 0 && gpus_hint <= 0) {
    // Rows on different node counts would all run on one GPU count.
    return Status::Error(path + ": a 'nodes' column but no 'gpus' column; add each row's GPU " +
                         "count (nodes x GPUs per node) as 'gpus', or give --gpus when every row " +
                         "has one");
  }
  if (gpus_hint <= 0 && nodes_col < 0) gpus_hint = default_gpus;
  std::map<int, NcclMeasurement> by_gpus;
  while (NextLine(f, &line, &n)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> v = CsvFields(line);
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (static_cast<int>(v.size()) != static_cast<int>(header.size())) {
      return Status::Error(where + std::to_string(v.size()) + " fields; the header has " +
                           std::to_string(header.size()));
    }
    uint64_t size = 0;
    if (!ParseSize(v[size_col], &size)) {
      return Status::Error(
          where + "size '" + v[size_col] + "' (size_bytes); expected " +
          (ParseUnsigned(v[size_col], &size) ? kSizeRange : "a whole number of bytes >= 0"));
    }
    int gpus = gpus_hint;
    if (gpus_col >= 0 && !ParseCount(v[gpus_col], &gpus)) {
      return Status::Error(where + "gpus '" + v[gpus_col] +
                           "'; expected a whole number of GPUs >= 1");
    }
    if (gpus <= 0) {
      return Status::Error(path + ": no 'gpus' column; give the GPU count (the machine's)");
    }
    int nodes = 0;
    if (nodes_col >= 0 && !ParseCount(v[nodes_col], &nodes)) {
      return Status::Error(where + "nodes '" + v[nodes_col] +
                           "'; expected a whole number of nodes >= 1");
    }
    NcclMeasurement& m = by_gpus[gpus];
    m.gpus = gpus;
    m.gpus_from_file = gpus_col >= 0;
    m.collective = collective;
    m.source = path + (gpus_col >= 0 ? " (" + std::to_string(gpus) + " GPUs)" : "");
    if (nodes_col >= 0) {
      if (m.nodes > 0 && m.nodes != nodes) {
        return Status::Error(where + "nodes " + std::to_string(nodes) + " for " +
                             std::to_string(gpus) + " GPUs, where an earlier row of " +
                             std::to_string(gpus) + " GPUs has " + std::to_string(m.nodes) +
                             "; one GPU count is one layout of nodes");
      }
      m.nodes = nodes;
    }
    // The time a column `k` of this row gives: a time, or size / bandwidth.
    auto time_from = [&](int c, const std::string& k, double* time_us) {
      double value = 0;
      if (!ParseDouble(v[c], &value) || !std::isfinite(value) || value <= 0) {
        return Status::Error(where + "size " + v[size_col] + ": " + k + " '" + v[c] +
                             "'; expected a positive number");
      }
      if (k == "time_us") {
        *time_us = value;
        if (!TimeInRange(value)) {
          return Status::Error(where + "size " + v[size_col] + ": time_us '" + v[c] +
                               "'; expected " + kMeasuredTimeRange);
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
    };
    double time_us = 0, in_place_us = 0;
    if (Status st = time_from(value_col, kind, &time_us); !st.ok()) return st;
    // The in-place times: the table's own when they are its times, else a busbw_GBps_in_place
    // column beside them (empty or N/A: not measured).
    if (in_place_col == value_col) {
      in_place_us = time_us;
    } else if (in_place_col >= 0 && !v[in_place_col].empty() && v[in_place_col] != "N/A") {
      if (Status st = time_from(in_place_col, "busbw_GBps_in_place", &in_place_us); !st.ok()) {
        return st;
      }
    }
    m.rows.push_back(NcclRow{size, time_us, in_place_us});
  }
  std::vector<NcclMeasurement> out;
  for (auto& [g, m] : by_gpus) out.push_back(std::move(m));
  if (out.empty()) return Status::Error(path + ": no data rows");
  return out;
}

}  // namespace

bool ParseMeasuredTime(const std::string& text, double* us) {
  return ParseDouble(text, us) && TimeInRange(*us);
}

double NcclBusFactor(const std::string& c, int n) {
  if (n <= 1) return 1.0;
  const double nn = n;
  if (c == "all_reduce") return 2.0 * (nn - 1) / nn;
  if (c == "all_gather" || c == "reduce_scatter" || c == "alltoall") return (nn - 1) / nn;
  return 1.0;
}

StatusOr<std::vector<NcclMeasurement>> LoadNcclMeasurements(const std::string& path, int gpus,
                                                            const std::string& collective,
                                                            int default_gpus) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return Status::Error(path +
                         ": is a directory; expected an nccl-tests log or a CSV of "
                         "measurements");
  }
  if (const std::string why = NotARegularFile(path); !why.empty()) return Status::Error(why);
  std::ifstream f(path);
  if (!f) return Status::Error(path + ": cannot read: " + std::strerror(errno));
  {
    // Text, not UTF-16 (a log saved by some Windows editors) or a binary file: no NUL bytes in
    // its first 4 KiB.
    char head[4096];
    f.read(head, sizeof head);
    const std::streamsize got = f.gcount();
    if (std::find(head, head + got, '\0') != head + got) {
      return Status::Error(path +
                           ": is not a text file (it holds NUL bytes: UTF-16, or binary); "
                           "expected an nccl-tests log or a CSV as plain text (UTF-8 or ASCII)");
    }
    f.clear();
    f.seekg(0);
  }
  // nccl-tests' name (alltoall_perf) for the collective Chakra and Orrery call all_to_all.
  const std::string name = collective == "all_to_all" ? "alltoall" : collective;
  return IsNcclCsv(path) ? LoadCsv(path, f, gpus, name, default_gpus)
                         : LoadLog(path, f, gpus, name);
}

bool IsNcclCsv(const std::string& path) {
  if (path.size() <= 4) return false;
  return Lower(path.substr(path.size() - 4)) == ".csv";
}

}  // namespace orrery

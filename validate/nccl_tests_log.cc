// LoadLog: an nccl-tests log read line by line (LogReader: a run's header, Rank lines and table,
// a new run at a repeated header), then each run checked and made a measurement
// (MeasurementOf: its collective, its GPUs and nodes, its notes).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "validate/nccl_tests_internal.h"

namespace orrery::nccl_tests_internal {
namespace {

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
// Reads a log's lines into runs (LogReader::Read), then says what is wrong with the whole
// (LogReader::Finish).
class LogReader {
 public:
  LogReader(const std::string& path, const std::string& collective_hint)
      : path_(path), collective_hint_(collective_hint), runs_(1) {
    runs_[0].line = 1;
  }

  Status Read(std::istream& f) {
    std::string line;
    int n = 0;
    while (NextLine(f, &line, &n)) {
      const std::string whole = StripPrefix(line);  // "export NCCL_ALGO=Ring  # ..." keeps both
      std::string body = whole;
      // A comment behind a prefix StripPrefix does not know ("2024-05-01T12:00:00Z # Rank ..."):
      // from its '#'; but a data row with a comment after it ("... 0  # outlier") is the row.
      if (const size_t hash = body.find('#'); hash != std::string::npos) {
        const std::vector<std::string> before = Split(body.substr(0, hash));
        body = LooksLikeRow(before) ? body.substr(0, hash) : body.substr(hash);
      }
      const std::vector<std::string> w = Split(body);
      if (w.empty()) continue;
      NoteCutRow(body, w, n);
      const bool comment = w[0][0] == '#';
      LogRun* run = comment ? RunOf(body, w, n) : &runs_.back();
      NoteSettings(whole, run);
      Status s = comment ? ReadComment(body, w, n, run) : ReadRow(w, n, run);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  // A row cut short at the end is an error; NCCL_ALGO / NCCL_PROTO seen after the last run's
  // rows are that run's. The runs, those without rows left out when there are several (and
  // *several says there were: a run's source then names its line).
  StatusOr<std::vector<LogRun>> Finish(bool* several) {
    if (cut_row_line_ > 0) {
      return Status::Error(path_ + ":" + std::to_string(cut_row_line_) + ": the last line, '" +
                           cut_row_ +
                           "', is the start of a data row (size, count) with the rest missing; "
                           "is the log truncated?");
    }
    if (!next_algorithm_.empty() && runs_.back().m.algorithm.empty()) {
      runs_.back().m.algorithm = next_algorithm_;
    }
    if (!next_protocol_.empty() && runs_.back().m.protocol.empty()) {
      runs_.back().m.protocol = next_protocol_;
    }
    *several = runs_.size() > 1;
    if (*several) DropRunsWithoutRows();
    return std::move(runs_);
  }

 private:
  // A line that starts like a data row but ends before its type (a log cut off there): an
  // error when nothing follows it (Finish).
  void NoteCutRow(const std::string& body, const std::vector<std::string>& w, int n) {
    uint64_t number = 0;
    cut_row_line_ = 0;
    // Larger than the last row's size, as the next row's would be (a script's "echo $?" after
    // the table prints a 0).
    if (w.size() <= 2 && w[0][0] != '#' && ParseUnsigned(w[0], &number) &&
        !runs_.back().m.rows.empty() && number > runs_.back().m.rows.back().size &&
        (w.size() == 1 || ParseUnsigned(w[1], &number))) {
      cut_row_line_ = n;
      cut_row_ = Trim(body);
    }
  }

  // The run a comment line belongs to: a new one when it is a header line of a kind the current
  // run has had already, or the current run has rows.
  LogRun* RunOf(const std::string& body, const std::vector<std::string>& w, int n) {
    LogRun* run = &runs_.back();
    const char* mark = body.find("Collective test starting:") != std::string::npos ? "collective"
                       : body.find("nccl-tests version") != std::string::npos      ? "version"
                       : (w.size() > 2 && w[1] == "nThread")                       ? "nthread"
                                                                                   : nullptr;
    if (mark == nullptr) return run;
    if (!run->m.rows.empty() || run->marks.count(mark) > 0) {
      const std::string algorithm = next_algorithm_.empty() ? exported_algorithm_ : next_algorithm_;
      const std::string protocol = next_protocol_.empty() ? exported_protocol_ : next_protocol_;
      runs_.emplace_back();
      run = &runs_.back();
      run->line = n;
      run->m.algorithm = algorithm;
      run->m.protocol = protocol;
      next_algorithm_.clear();
      next_protocol_.clear();
    }
    run->marks.insert(mark);
    return run;
  }

  // NCCL_ALGO / NCCL_PROTO on the line: the run's own before its rows, else the next run's; an
  // export holds for every later run.
  void NoteSettings(const std::string& whole, LogRun* run) {
    if (const std::string a = ForcedAlgorithm(whole); !a.empty()) {
      (run->m.rows.empty() ? run->m.algorithm : next_algorithm_) = a;
      if (Exports(whole, "NCCL_ALGO")) exported_algorithm_ = a;
    }
    if (const std::string p = ForcedSetting(whole, "NCCL_PROTO"); !p.empty()) {
      (run->m.rows.empty() ? run->m.protocol : next_protocol_) = p;
      if (Exports(whole, "NCCL_PROTO")) exported_protocol_ = p;
    }
  }

  // A comment line: the collective's header, the table's header, a failed check, a Rank line
  // or the nThread / nGpus header.
  Status ReadComment(const std::string& body, const std::vector<std::string>& w, int n,
                     LogRun* run) {
    if (Status s = ReadCollectiveHeader(body, n, &run->m); !s.ok()) return s;
    if (const std::vector<std::string> c = TableColumns(w); !c.empty()) {
      run->layout = LayoutOf(c, n);
    }
    if (body.find("Out of bounds values") != std::string::npos &&
        body.find("FAILED") != std::string::npos) {
      run->failed_check = Trim(body);
    }
    return ReadRankOrCounts(w, n, run);
  }

  // "# Collective test starting: all_reduce_perf": the collective (or --collective's, when it
  // names none; another one than --collective's is an error).
  Status ReadCollectiveHeader(const std::string& body, int n, NcclMeasurement* m) {
    const size_t start = body.find("Collective test starting:");
    if (start == std::string::npos) return Status::Ok();
    m->collective = CollectiveIn(body.substr(start));
    if (m->collective.empty() && !collective_hint_.empty()) {
      m->collective = collective_hint_;  // --collective names what this header does not
    } else if (m->collective.empty()) {
      return Status::Error(path_ + ":" + std::to_string(n) + ": '# " + Trim(body.substr(start)) +
                           "' names no collective nccl-tests measures (all_reduce, "
                           "all_gather, reduce_scatter, alltoall, broadcast, reduce, ...); "
                           "name it with --collective");
    }
    if (!collective_hint_.empty() && !m->collective.empty() && m->collective != collective_hint_) {
      return Status::Error(path_ + ":" + std::to_string(n) + ": the log measured " + m->collective +
                           " ('# " + Trim(body.substr(start)) + "') but --collective is '" +
                           collective_hint_ + "'; leave --collective out, or give " +
                           m->collective);
    }
    return Status::Ok();
  }

  // "#  Rank  3 Group  0 Pid 1000 on node000 device 3 [...] NVIDIA H100", or a header's
  // "nThread 1 nGpus 8".
  Status ReadRankOrCounts(const std::vector<std::string>& w, int n, LogRun* run) {
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] == "Rank" && i == 1) return ReadRank(w, n, run);
      int count = 0;
      if ((w[i] == "nThread" || w[i] == "nGpus") &&
          (!ParseCount(w[i + 1], &count) || count > (1 << 20))) {
        return Status::Error(path_ + ":" + std::to_string(n) + ": " + w[i] + " '" + w[i + 1] +
                             "'; expected a whole number from 1 to 1048576");
      }
      if (w[i] == "nThread") run->n_threads = count;
      if (w[i] == "nGpus") run->n_gpus = count;
    }
    return Status::Ok();
  }

  Status ReadRank(const std::vector<std::string>& w, int n, LogRun* run) {
    uint64_t rank = 0;
    if (!ParseUnsigned(w[2], &rank) || rank >= (uint64_t{1} << 24)) {
      return Status::Error(path_ + ":" + std::to_string(n) + ": rank '" + w[2] +
                           "'; expected a whole number from 0 to 16777215");
    }
    run->ranks.insert(static_cast<int>(rank));
    std::string host;
    int device = -1;
    for (size_t j = 1; j + 1 < w.size(); ++j) {
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
    return Status::Ok();
  }

  // Whether `w` (from its size) is a row of the run's table, *size its size; an error for one
  // that is, with a size or count that is not a whole number.
  StatusOr<bool> IsTableRow(const std::vector<std::string>& w, int n, const LogRun& run,
                            uint64_t* size) {
    uint64_t count = 0;
    // Under a table's header, a line of its fields whose times and bandwidths are numbers is a
    // row even when its size or count is not one (a corrupted row is named, not dropped).
    if (const TableLayout& l = run.layout;
        l.fields > 0 && w.size() == l.fields && w.size() >= l.first + 4 &&
        (!ParseUnsigned(w[0], size) || !ParseUnsigned(w[1], &count))) {
      bool numbers = true;
      double x = 0;
      for (size_t i = l.first; i < l.first + 4; ++i) {
        numbers = numbers && (w[i] == "N/A" || ParseDouble(w[i], &x));
      }
      if (numbers) {
        return Status::Error(path_ + ":" + std::to_string(n) +
                             ": a data row's size and count are '" + w[0] + "' and '" + w[1] +
                             "'; expected whole numbers of bytes and " + "elements");
      }
    }
    if (w.size() < 2 || !ParseUnsigned(w[1], &count)) return false;
    if (!ParseSize(w[0], size)) {
      if (!IsRowButForItsSize(w)) return false;  // not a row of the table
      return Status::Error(
          path_ + ":" + std::to_string(n) + ": " + "a data row's size is '" + w[0] +
          "'; expected " +
          (ParseUnsigned(w[0], size) ? kSizeRange : "a whole number of bytes >= 0"));
    }
    return true;
  }

  // A data row: size count type op [root] then groups of (time algbw busbw wrong).
  Status ReadRow(std::vector<std::string> w, int n, LogRun* run) {
    const std::string where = path_ + ":" + std::to_string(n) + ": ";
    if (const size_t s = RowStart(w); s > 0) w.erase(w.begin(), w.begin() + s);
    uint64_t size = 0;
    StatusOr<bool> row = IsTableRow(w, n, *run, &size);
    if (!row.ok() || !*row) return row.status();
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
      if (!typed) return Status::Ok();  // not a row of the table
      return Status::Error(where + "the row of size " + w[0] + " has " + std::to_string(w.size()) +
                           " fields, but the table's header (line " + std::to_string(layout.line) +
                           ": " + layout.names + ") gives " + std::to_string(layout.fields) +
                           "; is the log truncated, or another line's text mixed into it?");
    }
    if (w.size() < 8) {
      if (!typed) return Status::Ok();  // not a row of the table
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
    NcclRow r{size, 0, 0};
    if (Status s = RowTimes(where, w, first, second, &r); !s.ok()) return s;
    NoteWrong(w, layout, first, second, n, run);
    // Milliseconds (2019-era nccl-tests): the time is a thousandth of size / algbw (GB/s).
    if (double algbw = 0; size > 0 && first + 1 < w.size() && w[first] != "N/A" &&
                          ParseDouble(w[first + 1], &algbw) && algbw > 0) {
      const double ratio = r.time_us / (static_cast<double>(size) / (algbw * 1e3));
      if (ratio > 5e-4 && ratio < 2e-3) run->millis = true;
    }
    run->m.rows.push_back(r);
    return Status::Ok();
  }

  // The row's out-of-place time (fields[first]) and in-place one (fields[second], 0 = none).
  // nccl-tests prints N/A for the out-of-place time in some runs, and the in-place time stands
  // in for it. A number that is not a time is an error, not replaced.
  static Status RowTimes(const std::string& where, const std::vector<std::string>& w, size_t first,
                         size_t second, NcclRow* r) {
    const std::string& out = w[first];
    if (out == "N/A") {
      if (second == 0 || w[second] == "N/A") {
        return Status::Error(where + "size " + w[0] + " has no time (out-of-place '" + out +
                             "'); expected a number of microseconds");
      }
      if (!ParseMeasuredTime(w[second], &r->time_us)) {
        return Status::Error(where + "size " + w[0] + " has out-of-place time 'N/A' and " +
                             "in-place time '" + w[second] + "'; expected " + kMeasuredTimeRange);
      }
    } else if (!ParseMeasuredTime(out, &r->time_us)) {
      return Status::Error(where + "size " + w[0] + " has out-of-place time '" + out +
                           "'; expected " + kMeasuredTimeRange +
                           " (or N/A, to use the in-place time)");
    }
    // The in-place time, kept for --in-place: absent (a row of one group of columns) or N/A is
    // 0, anything else must be a time.
    r->in_place_us = 0;
    if (second > 0 && w[second] != "N/A" && !ParseMeasuredTime(w[second], &r->in_place_us)) {
      return Status::Error(where + "size " + w[0] + " has in-place time '" + w[second] +
                           "'; expected " + kMeasuredTimeRange + " (or N/A)");
    }
    return Status::Ok();
  }

  // nccl-tests' #wrong: elements that came out wrong (a number, or N/A when not checked).
  static void NoteWrong(const std::vector<std::string>& w, const TableLayout& layout, size_t first,
                        size_t second, int n, LogRun* run) {
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
  }

  // A run with a header and no table (it stopped before its first row): left out, said with
  // the first run that has rows.
  void DropRunsWithoutRows() {
    std::vector<std::string> dropped;
    std::vector<LogRun> kept;
    for (LogRun& run : runs_) {
      if (run.m.rows.empty()) {
        dropped.push_back(path_ + ": the run from line " + std::to_string(run.line) +
                          " has no rows (it stopped before its table?) and is left out");
      } else {
        kept.push_back(std::move(run));
      }
    }
    if (!kept.empty()) {
      kept.front().m.notes.insert(kept.front().m.notes.end(), dropped.begin(), dropped.end());
      runs_ = std::move(kept);
    }
  }

  const std::string path_;
  const std::string collective_hint_;
  std::vector<LogRun> runs_;
  // NCCL_ALGO / NCCL_PROTO seen after a run's rows: the next run's (NCCL prints them when the
  // next run's communicators start), or this one's when no run follows.
  std::string next_algorithm_, next_protocol_;
  // What a job script exported: every later run has it unless the run says otherwise (one set
  // for a single command, or printed by NCCL, holds for that run only).
  std::string exported_algorithm_, exported_protocol_;
  int cut_row_line_ = 0;  // the line of a row cut before its type, if it is the last one
  std::string cut_row_;
};

// The collective m measured: its header's, --collective's, else the one its file's name names.
Status NameCollective(const std::string& path, bool several_runs,
                      const std::string& collective_hint, NcclMeasurement* m) {
  if (m->collective.empty()) m->collective = collective_hint;
  if (m->collective.empty() && several_runs) {
    // One file name cannot name the collectives of several runs (a script may run all_reduce
    // then all_gather with headers that do not say which).
    return Status::Error(m->source +
                         ": names no collective (no '# Collective test starting: <name>_perf' "
                         "line) and the log holds several runs; give each run in a file of its "
                         "own, or --collective if they all measured one");
  }
  std::string several;
  if (m->collective.empty()) {
    m->collective = CollectiveIn(std::filesystem::path(path).filename().string(), &several);
  }
  if (m->collective.empty()) {
    return Status::Error(
        m->source + ": cannot tell which collective was measured (no '# Collective test " +
        "starting: <name>_perf' line" +
        (several.empty() ? std::string(")") : "; its file name names several: " + several + ")") +
        "; name it with --collective");
  }
  return Status::Ok();
}

// Every host the same number of ranks: the profile's nodes are alike.
Status CheckHostsEven(const LogRun& run, int from_ranks, const NcclMeasurement& m) {
  if (static_cast<int>(run.ranks.size()) != from_ranks || run.hosts_ambiguous ||
      run.host_ranks.size() <= 1) {
    return Status::Ok();
  }
  const int first = run.host_ranks.begin()->second;
  const bool even = std::all_of(run.host_ranks.begin(), run.host_ranks.end(),
                                [first](const auto& h) { return h.second == first; });
  if (even) return Status::Ok();
  std::string counts;
  for (const auto& [host, k] : run.host_ranks) {
    counts += (counts.empty() ? "" : ", ") + host + ": " + std::to_string(k);
  }
  return Status::Error(m.source + ": its ranks are on " + std::to_string(run.host_ranks.size()) +
                       " hosts unevenly (" + counts +
                       "); validate compares a profile's nodes, which are alike");
}

// m->gpus and m->nodes: from the Rank lines, else --gpus, else the header's nThread x nGpus.
Status CountGpus(const LogRun& run, int gpus_hint, NcclMeasurement* m) {
  if (run.groups.size() > 1) {
    return Status::Error(
        m->source + ": its ranks are in " + std::to_string(run.groups.size()) +
        " groups (the Rank lines' 'Group'; NCCL_TESTS_SPLIT_MASK), each running its own "
        "collective at the same time; validate compares one collective over all the log's "
        "GPUs, so run nccl-tests without a split mask");
  }
  // Ranks are numbered from 0, so the highest one counts them even when a posted log kept
  // only some of its Rank lines ("Rank 7" alone: 8 GPUs).
  const int from_ranks = run.ranks.empty() ? 0 : *run.ranks.rbegin() + 1;
  if (from_ranks > 0 && gpus_hint > 0 && gpus_hint != from_ranks) {
    return Status::Error(m->source + ": --gpus is " + std::to_string(gpus_hint) +
                         " but the log's '#  Rank' lines go up to rank " +
                         std::to_string(from_ranks - 1) + " (" + std::to_string(from_ranks) +
                         " GPUs); leave --gpus out or give " + std::to_string(from_ranks));
  }
  m->gpus = from_ranks;
  if (m->gpus == 0) {
    m->gpus = gpus_hint;
    m->gpus_from_file = gpus_hint == 0;
  }
  // One process drives nThread x nGpus GPUs, so the run has a whole number of such processes.
  if (const int64_t per_process = int64_t{std::max(run.n_threads, 1)} * run.n_gpus;
      run.n_gpus > 0 && m->gpus > 0 && m->gpus % per_process != 0) {
    return Status::Error(
        m->source + ": " + std::to_string(m->gpus) + " GPUs (" +
        (from_ranks > 0 ? "the '#  Rank' lines go up to rank " + std::to_string(from_ranks - 1)
                        : "--gpus") +
        "), but its header gives nThread " + std::to_string(std::max(run.n_threads, 1)) +
        " x nGpus " + std::to_string(run.n_gpus) + " = " + std::to_string(per_process) +
        " GPUs per process; expected a multiple of " + std::to_string(per_process));
  }
  if (Status s = CheckHostsEven(run, from_ranks, *m); !s.ok()) return s;
  if (m->gpus == 0 && run.n_gpus > 0) {
    // nThread x nGpus is one process's GPUs; with MPI there are several, which only the
    // Rank lines tell.
    const int64_t product = int64_t{std::max(run.n_threads, 1)} * run.n_gpus;
    if (product > (int64_t{1} << 24)) {
      return Status::Error(m->source + ": nThread " + std::to_string(run.n_threads) + " x nGpus " +
                           std::to_string(run.n_gpus) + " = " + std::to_string(product) +
                           " GPUs; expected at most 16777216 (is the header corrupted?)");
    }
    m->gpus = static_cast<int>(product);
    m->notes.push_back(m->source + ": no '#  Rank' lines; " + std::to_string(m->gpus) +
                       " GPUs from its header (nThread " +
                       std::to_string(std::max(run.n_threads, 1)) + " x nGpus " +
                       std::to_string(run.n_gpus) +
                       ", one process); give --gpus N if several processes ran it (MPI)");
  }
  if (m->gpus == 0) {
    return Status::Error(m->source +
                         ": no '#  Rank' lines, so the number of GPUs is unknown; give it with "
                         "--gpus");
  }
  // Hosts count the nodes only when every rank's line is there (a posted log may keep some)
  // and no host repeats a device (names cut at their first '.').
  m->nodes = static_cast<int>(run.ranks.size()) == from_ranks && !run.hosts_ambiguous
                 ? static_cast<int>(run.host_ranks.size())
                 : 0;
  return Status::Ok();
}

// Times in milliseconds scaled, and what a reader should know: milliseconds, wrong results.
void FinishRows(const LogRun& run, NcclMeasurement* m) {
  if (run.millis) {
    for (NcclRow& r : m->rows) {
      r.time_us *= 1e3;
      r.in_place_us *= 1e3;
    }
    m->notes.push_back(m->source +
                       ": its times are in milliseconds (2019-era nccl-tests: each is a "
                       "thousandth of size / algbw), read as such");
  }
  m->gpus_per_thread = run.n_gpus;
  if (run.wrong_rows > 0) {
    m->notes.push_back(m->source + ": " + std::to_string(run.wrong_rows) + " row" +
                       (run.wrong_rows > 1 ? "s" : "") + " with elements wrong (#wrong > 0, " +
                       "first at line " + std::to_string(run.first_wrong_line) +
                       "): NCCL computed wrong results there, so their times may not be a "
                       "working collective's");
  }
  if (!run.failed_check.empty()) {
    m->notes.push_back(m->source + ": '" + run.failed_check +
                       "': nccl-tests found wrong results in this run");
  }
}

// One run of the log as a measurement.
StatusOr<NcclMeasurement> MeasurementOf(const std::string& path, LogRun& run, bool several,
                                        int gpus_hint, const std::string& collective_hint) {
  NcclMeasurement& m = run.m;
  m.source = several ? path + " (the run from line " + std::to_string(run.line) + ")" : path;
  const Status no_rows = Status::Error(m.source +
                                       ": no nccl-tests data rows (lines 'size count type redop "
                                       "... time algbw busbw ...')");
  if (m.rows.empty()) return no_rows;  // before the collective: an empty file is that
  if (Status s = NameCollective(path, several, collective_hint, &m); !s.ok()) return s;
  m.algorithm = ForCollective(m.algorithm, m.collective);
  m.protocol = ForCollective(m.protocol, m.collective);
  if (Status s = CountGpus(run, gpus_hint, &m); !s.ok()) return s;
  FinishRows(run, &m);
  return std::move(m);
}

}  // namespace

StatusOr<std::vector<NcclMeasurement>> LoadLog(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint) {
  LogReader reader(path, collective_hint);
  if (Status s = reader.Read(f); !s.ok()) return s;
  bool several = false;
  StatusOr<std::vector<LogRun>> runs = reader.Finish(&several);
  if (!runs.ok()) return runs.status();
  std::vector<NcclMeasurement> out;
  for (LogRun& run : *runs) {
    StatusOr<NcclMeasurement> m = MeasurementOf(path, run, several, gpus_hint, collective_hint);
    if (!m.ok()) return m.status();
    out.push_back(std::move(*m));
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

}  // namespace orrery::nccl_tests_internal

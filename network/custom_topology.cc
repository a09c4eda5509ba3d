// The custom topology file: one statement per line, '#' starts a comment.
//
//   npus 4            # NPUs npu0 .. npu3 (first statement); "npus 4 no-relay": NPUs only
//                     # send and receive, never pass traffic on
//   switch sw0 sw1    # switches (any names but npu<i>)
//   link npu0 sw0 100 500   # both directions: GB/s (GB = 2^30 B) per direction, ns
//   dims 2 2          # optional logical dimensions (product = npus); default: one of all NPUs
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/schema.h"
#include "network/graph.h"
#include "network/network_config.h"

namespace orrery {

namespace {

bool ParseNumber(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && *out == *out && *out < 1e300 &&
         *out > -1e300;
}

bool ParseCount(const std::string& text, int max, int* out) {
  double v;
  // The range before the whole-number check: converting 1e200 to an integer is undefined.
  if (!ParseNumber(text, &v) || v < 0 || v > max || v != std::floor(v)) return false;
  *out = static_cast<int>(v);
  return true;
}

// Why `n` may not name a switch, or "". npu<digits> names NPUs, declared or not: a switch so
// named would read as one in every link name (npu0->npu7). And link names are "<a>-><b>", on
// lists "d<k>:<a>-><b>": a name with '->' or a 'd<k>:' prefix would be read apart wrongly
// (slow-links).
std::string SwitchNameProblem(const std::string& n) {
  const size_t colon = n.find(':');
  const bool dimension_like =
      colon != std::string::npos && colon > 1 && n[0] == 'd' &&
      std::all_of(n.begin() + 1, n.begin() + static_cast<std::ptrdiff_t>(colon),
                  [](char c) { return c >= '0' && c <= '9'; });
  if (n.size() > 3 && n.rfind("npu", 0) == 0 &&
      std::all_of(n.begin() + 3, n.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "switch '" + n +
           "' is named like an NPU; expected any name but npu<i>, which names NPU i";
  }
  if (n.find("->") != std::string::npos || n.find("<->") != std::string::npos ||
      n.find('#') != std::string::npos || dimension_like) {
    return "switch '" + n +
           "' has '->', '#' or a 'd<k>:' prefix, which link names use; expected a "
           "name without them";
  }
  return "";
}

// The custom file read statement by statement into a graph; every problem is collected.
struct CustomFileReader {
  std::shared_ptr<PhysicalGraph> g = std::make_shared<PhysicalGraph>();
  std::map<std::string, int> device;             // name -> device id
  std::map<std::pair<int, int>, int> seen_link;  // unordered pair -> line
  std::vector<int> dims;
  Status problems;
  bool have_npus = false;

  // One statement (words `w` of `line`, `where` = "path:line: "); false when reading must stop.
  bool Statement(const std::string& where, const std::string& line, int line_no,
                 const std::vector<std::string>& w) {
    const std::string& verb = w[0];
    if (!have_npus && verb != "npus") {
      problems.Add(where + "'" + verb + "' before 'npus N'; the first statement must be 'npus N'");
      return false;
    }
    if (verb == "npus") return Npus(where, line, w);
    if (verb == "switch") {
      Switches(where, w);
    } else if (verb == "link") {
      Link(where, line, line_no, w);
    } else if (verb == "dims") {
      Dims(where, w);
    } else {
      std::string msg = where + "unknown statement '" + verb + "'";
      const std::string guess = DidYouMean(verb, {"npus", "switch", "link", "dims"});
      if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
      problems.Add(msg + "; expected one of npus, switch, link, dims");
    }
    return true;
  }

  bool Npus(const std::string& where, const std::string& line, const std::vector<std::string>& w) {
    int n = 0;
    if (have_npus) {
      problems.Add(where + "a second 'npus' statement; give the NPU count once");
    } else if (w.size() < 2 || w.size() > 3 || !ParseCount(w[1], kMaxGraphNpus, &n) || n < 2 ||
               (w.size() == 3 && w[2] != "no-relay")) {
      problems.Add(where + "'" + line +
                   "' is not a valid NPU count; expected 'npus N' with N in "
                   "[2, " +
                   std::to_string(kMaxGraphNpus) + "], optionally followed by 'no-relay'");
      return false;
    } else {
      have_npus = true;
      g->AddNpus(n, /*forwards=*/w.size() == 2);
      for (int i = 0; i < n; ++i) device["npu" + std::to_string(i)] = i;
    }
    return true;
  }

  void Switches(const std::string& where, const std::vector<std::string>& w) {
    if (w.size() < 2) problems.Add(where + "'switch' needs at least one name: 'switch sw0 sw1'");
    for (size_t i = 1; i < w.size(); ++i) {
      if (device.count(w[i])) {
        problems.Add(where + "device '" + w[i] + "' is declared twice" +
                     (w[i].rfind("npu", 0) == 0 ? " (npu<i> names are the NPUs)" : ""));
        continue;
      }
      const std::string problem = SwitchNameProblem(w[i]);
      if (!problem.empty()) {
        problems.Add(where + problem);
        continue;
      }
      device[w[i]] = g->AddDevice(w[i], false, true);
    }
  }

  // The device a link end names, or -1 (a problem added).
  int LinkEnd(const std::string& where, const std::string& name) {
    auto it = device.find(name);
    if (it != device.end()) return it->second;
    std::vector<std::string> names;
    for (const auto& [known, id] : device) names.push_back(known);
    std::string msg = where + "link end '" + name + "' is not a declared device";
    const std::string guess = DidYouMean(name, names);
    if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
    problems.Add(msg + "; declare switches with 'switch NAME' before their links");
    return -1;
  }

  void Link(const std::string& where, const std::string& line, int line_no,
            const std::vector<std::string>& w) {
    double bw = 0, lat = 0;
    if (w.size() != 5) {
      problems.Add(where + "'" + line + "' is not a link; expected 'link A B GBps ns'");
      return;
    }
    const int ends[2] = {LinkEnd(where, w[1]), LinkEnd(where, w[2])};
    bool ok = ends[0] >= 0 && ends[1] >= 0;
    if (!ParseNumber(w[3], &bw) || !(bw > 0)) {
      problems.Add(where + "link bandwidth is '" + w[3] +
                   "'; expected a number > 0 and below 1e300 (GB/s)");
      ok = false;
    }
    if (!ParseNumber(w[4], &lat) || !(lat >= 0) || lat > 1e12) {
      problems.Add(where + "link latency is '" + w[4] + "'; expected a number in [0, 1e12] (ns)");
      ok = false;
    }
    if (!ok) return;
    if (ends[0] == ends[1]) {
      problems.Add(where + "link from '" + w[1] + "' to itself; a link joins two devices");
      return;
    }
    const std::pair<int, int> key{std::min(ends[0], ends[1]), std::max(ends[0], ends[1])};
    auto [it, inserted] = seen_link.emplace(key, line_no);
    if (!inserted) {
      problems.Add(where + "duplicate link " + w[1] + " <-> " + w[2] + " (already at line " +
                   std::to_string(it->second) +
                   "); each pair of devices has one link, "
                   "bidirectional");
      return;
    }
    g->AddBidirectional(ends[0], ends[1], Bandwidth::FromGiBps(bw), Time::FromNsDouble(lat));
  }

  void Dims(const std::string& where, const std::vector<std::string>& w) {
    dims.clear();
    double product = 1;
    for (size_t i = 1; i < w.size(); ++i) {
      int d = 0;
      if (!ParseCount(w[i], kMaxGraphNpus, &d) || d < 2) {
        problems.Add(where + "dimension '" + w[i] + "' is not an integer >= 2");
        d = 2;
      }
      dims.push_back(d);
      product *= d;
    }
    if (dims.empty()) problems.Add(where + "'dims' needs at least one size: 'dims 8 4'");
    if (!dims.empty() && product != g->num_npus) {
      problems.Add(where + "dims multiply to " + FormatNumber(product) + " but there are " +
                   std::to_string(g->num_npus) + " NPUs; expected a product of " +
                   std::to_string(g->num_npus));
    }
  }
};

// The routed graph as a Topology of logical dimensions (`dims`, or one of every NPU).
StatusOr<Topology> TopologyOfGraph(const std::string& path, std::shared_ptr<PhysicalGraph> g,
                                   std::vector<int> dims) {
  if (g->links.empty()) return Status::Error(path + ": no 'link' statements");
  g->description = "custom: " + path;
  Status routed = g->BuildRoutes();
  if (!routed.ok()) return routed.WithContext(path);

  Topology t;
  if (dims.empty()) dims.push_back(g->num_npus);
  // Logical dimensions only: their bandwidth and latency are not used (GraphNetwork routes over
  // the links); the first link's are recorded for reports.
  for (int d : dims) {
    Dimension dim;
    dim.type = BlockType::kSwitch;
    dim.npus = d;
    dim.bandwidth = g->links[0].bandwidth;
    dim.latency = g->links[0].latency;
    t.dims.push_back(dim);
  }
  t.graph = std::move(g);
  return t;
}

}  // namespace

StatusOr<Topology> LoadCustomTopology(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::Error(path +
                         ": is a directory; expected a custom topology file ('npus N', "
                         "'switch <names>', 'link <a> <b> <GB/s> <ns>' lines)");
  }
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open the file");
  CustomFileReader r;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (!r.Statement(where, line, line_no, w)) return r.problems;
  }
  if (!r.have_npus && r.problems.ok())
    r.problems.Add(path + ": no 'npus N' statement (empty file?)");
  if (!r.problems.ok()) return r.problems.Capped(kMaxProblemsPerFile, path);
  return TopologyOfGraph(path, std::move(r.g), std::move(r.dims));
}

}  // namespace orrery

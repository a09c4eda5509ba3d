#include "analyze/compare.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include "common/flags.h"
#include "config/flag_schema.h"
#include "profile/input_file.h"
#include "profile/json_value.h"

namespace orrery {
namespace analyze {

namespace {

using profile::JsonValue;

// Every number under `v`, by its dotted path (arrays are left out: per-stream and per-kernel
// lists are not compared).
void Flatten(const JsonValue& v, const std::string& prefix, std::map<std::string, double>* out) {
  if (v.is_number()) {
    (*out)[prefix] = v.number;
    return;
  }
  if (!v.is_object()) return;
  for (const auto& [k, child] : v.members) {
    Flatten(child, prefix.empty() ? k : prefix + "." + k, out);
  }
}

const char* const kOrder[] = {
    "span_us",
    "busy_us",
    "idle_us",
    "compute_us",
    "communication_us",
    "memory_us",
    "comm_overlap_pct",
    "temporal_breakdown.exposed_communication_us",
    "temporal_breakdown.memory_only_us",
    "kernels.compute.sum_us",
    "kernels.communication.sum_us",
    "kernels.memory.sum_us",
    "kernels.compute.count",
    "kernels.communication.count",
    "kernels.memory.count",
    "idle_by_cause.host_wait_us",
    "idle_by_cause.kernel_wait_us",
    "idle_by_cause.other_us",
};

std::string Fmt(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

StatusOr<ReportFile> ReadAnalysisReport(const std::string& path) {
  StatusOr<std::string> text = profile::ReadProfileFile(path);
  if (!text.ok()) return text.status();
  StatusOr<JsonValue> v = profile::ParseJson(*text, path);
  if (!v.ok()) return v.status();
  const JsonValue* ranks = v->is_object() ? v->Find("ranks") : nullptr;
  const JsonValue* tool = v->is_object() ? v->Find("tool") : nullptr;
  if (ranks == nullptr || !ranks->is_array() || tool == nullptr || tool->text != "orrery analyze") {
    return Status::Error(path +
                         ": not a report of orrery analyze (no \"tool\": \"orrery "
                         "analyze\" with a \"ranks\" list); write one with orrery analyze "
                         "TRACE --report FILE.json");
  }
  ReportFile f;
  f.path = path;
  for (const JsonValue& r : ranks->items) {
    const JsonValue* rank = r.Find("rank");
    if (rank == nullptr || !rank->AsInt64()) {
      return Status::Error(path + ": an entry of \"ranks\" has no whole-number \"rank\"");
    }
    ReportRank rr;
    rr.rank = static_cast<int>(*rank->AsInt64());
    if (const JsonValue* s = r.Find("source"); s != nullptr) rr.source = s->text;
    if (const JsonValue* s = r.Find("simulated"); s != nullptr) rr.simulated = s->boolean;
    Flatten(r, "", &rr.values);
    rr.values.erase("rank");
    f.ranks.push_back(std::move(rr));
  }
  return f;
}

std::vector<std::string> ComparedFields(const ReportRank& a, const ReportRank& b) {
  std::vector<std::string> fields;
  for (const char* f : kOrder) {
    if (a.values.count(f) || b.values.count(f)) fields.push_back(f);
  }
  std::set<std::string> kinds;
  for (const ReportRank* r : {&a, &b}) {
    for (const auto& [k, v] : r->values) {
      if (k.rfind("critical_path.by_kind_us.", 0) == 0) kinds.insert(k);
    }
  }
  if (a.values.count("critical_path.total_us") || b.values.count("critical_path.total_us")) {
    fields.push_back("critical_path.total_us");
  }
  fields.insert(fields.end(), kinds.begin(), kinds.end());
  return fields;
}

std::string CompareReports(const ReportFile& measured, const ReportFile& simulated) {
  std::string out;
  char line[512];
  std::set<int> matched;
  for (const ReportRank& m : measured.ranks) {
    auto it = std::find_if(simulated.ranks.begin(), simulated.ranks.end(),
                           [&](const ReportRank& s) { return s.rank == m.rank; });
    std::string note;
    if (it == simulated.ranks.end() && measured.ranks.size() == 1) {
      // One profiled rank is imported as <prefix>.0.et: it ran as NPU 0.
      it = std::find_if(simulated.ranks.begin(), simulated.ranks.end(),
                        [](const ReportRank& s) { return s.rank == 0; });
      note = " (NPU 0: one profiled rank is imported as rank 0)";
    }
    if (it == simulated.ranks.end()) {
      out += "rank " + std::to_string(m.rank) + ": not in " + simulated.path + "\n";
      continue;
    }
    matched.insert(it->rank);
    out +=
        "rank " + std::to_string(m.rank) + ": " + m.source + " against " + it->source + note + "\n";
    std::snprintf(line, sizeof line, "  %-44s %14s %14s %14s %9s\n", "field", "measured",
                  "simulated", "difference", "diff %");
    out += line;
    for (const std::string& f : ComparedFields(m, *it)) {
      const auto a = m.values.find(f), b = it->values.find(f);
      const bool has_a = a != m.values.end(), has_b = b != it->values.end();
      const double va = has_a ? a->second : 0, vb = has_b ? b->second : 0;
      char pct[32] = "";
      if (has_a && has_b && va != 0 && f != "comm_overlap_pct") {
        std::snprintf(pct, sizeof pct, "%+.2f%%", 100.0 * (vb - va) / std::fabs(va));
      }
      std::snprintf(line, sizeof line, "  %-44s %14s %14s %14s %9s\n", f.c_str(),
                    has_a ? Fmt(va).c_str() : "-", has_b ? Fmt(vb).c_str() : "-",
                    has_a && has_b ? Fmt(vb - va).c_str() : "-", pct);
      out += line;
    }
  }
  int others = 0;
  for (const ReportRank& s : simulated.ranks) others += matched.count(s.rank) ? 0 : 1;
  if (others > 0) {
    out += std::to_string(others) + " rank(s) of " + simulated.path +
           " have no measured counterpart (a replicated run's copies): not compared\n";
  }
  return out;
}

namespace {

// The flags of compare: its two reports.
struct CompareFlags {
  std::string measured;
  std::string simulated;
};

const FlagSchema<CompareFlags>& CompareFlagSchema() {
  static const FlagSchema<CompareFlags>* schema = [] {
    using F = CompareFlags;
    auto* s = new FlagSchema<F>();
    s->String("measured", &F::measured)
        .Default("required")
        .Help("the measured run's report (orrery analyze --report; or the first argument)");
    s->String("simulated", &F::simulated)
        .Default("required")
        .Help("the simulated run's report (or the second argument)");
    return s;
  }();
  return *schema;
}

int CompareError(const std::string& message) {
  std::fprintf(stderr, "error: %s (see orrery compare --help)\n", message.c_str());
  return 1;
}

}  // namespace

std::vector<KeyDoc> CompareFlagDocs() { return CompareFlagSchema().Docs(); }

int CompareMain(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc("orrery compare MEASURED.json SIMULATED.json");
  desc.add_options()("help,h", "print this help");
  CompareFlagSchema().AddTo(&desc);
  po::positional_options_description positional;
  positional.add("measured", 1).add("simulated", 1);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc, &positional), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return CompareError(std::string("compare: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout << "usage: orrery compare MEASURED.json SIMULATED.json\n\n"
                 "Two reports of orrery analyze (--report) side by side: every rank present in "
                 "both, each field\nmeasured, simulated, the difference and the difference in "
                 "percent of the measured value\n(comm_overlap_pct: in points).\n\n"
              << desc << "\n";
    return 0;
  }
  CompareFlags f;
  if (const Status flags = CompareFlagSchema().Apply(vm, &f); !flags.ok()) {
    return CompareError(flags.WithContext("compare").message());
  }
  if (f.measured.empty() || f.simulated.empty()) {
    return CompareError("expected two reports: orrery compare MEASURED.json SIMULATED.json");
  }
  StatusOr<ReportFile> m = ReadAnalysisReport(f.measured);
  if (!m.ok()) {
    std::fprintf(stderr, "error: %s\n", m.status().message().c_str());
    return 1;
  }
  StatusOr<ReportFile> s = ReadAnalysisReport(f.simulated);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.status().message().c_str());
    return 1;
  }
  std::fputs(CompareReports(*m, *s).c_str(), stdout);
  return 0;
}

}  // namespace analyze
}  // namespace orrery

// `orrery compare MEASURED.json SIMULATED.json`: two `orrery analyze --report` files side by
// side, per rank and per category, with the differences.
//
//   StatusOr<ReportFile> m = ReadAnalysisReport("measured.json");
//   StatusOr<ReportFile> s = ReadAnalysisReport("simulated.json");
//   std::string table = CompareReports(*m, *s);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"

namespace orrery {
namespace analyze {

// One rank of a report: every number it carries, by its path ("busy_us",
// "temporal_breakdown.idle_us", "critical_path.by_kind_us.host", ...).
struct ReportRank {
  int rank = 0;
  std::string source;
  bool simulated = false;
  std::map<std::string, double> values;
};

struct ReportFile {
  std::string path;
  std::vector<ReportRank> ranks;
};

StatusOr<ReportFile> ReadAnalysisReport(const std::string& path);

// The fields compared, in the order printed: the per-rank fields, the temporal breakdown, the
// kernel sums per category, idle time by cause, the critical path by kind.
std::vector<std::string> ComparedFields(const ReportRank& a, const ReportRank& b);

// The side-by-side text (ranks present in both; the others are listed).
std::string CompareReports(const ReportFile& measured, const ReportFile& simulated);

// `orrery compare MEASURED.json SIMULATED.json`; returns the process exit code.
// The flags of compare (its two reports, also given as arguments) as docs/cli.md lists them.
std::vector<KeyDoc> CompareFlagDocs();

int CompareMain(int argc, char** argv);

}  // namespace analyze
}  // namespace orrery

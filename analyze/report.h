// `orrery analyze`'s outputs: the JSON report (--report) and the summary printed on stdout.
//
//   JobReport job = AnalyzeJob(ranks, options);
//   Status s = WriteAnalysisJson(job, options, "measured.json");
//   std::fputs(AnalysisSummary(job).c_str(), stdout);
//
// Times in the JSON report are microseconds with nanosecond precision (three decimals), exactly
// the integer nanoseconds the analyses computed. Both outputs are deterministic.
#pragma once

#include <string>

#include "analyze/analyses.h"
#include "common/status.h"

namespace orrery {
namespace analyze {

// Microseconds with three decimals from whole nanoseconds: 1234567 -> "1234.567".
std::string UsText(int64_t ns);

std::string AnalysisJson(const JobReport& job, const AnalyzeOptions& o);
Status WriteAnalysisJson(const JobReport& job, const AnalyzeOptions& o, const std::string& path);
std::string AnalysisSummary(const JobReport& job);

}  // namespace analyze
}  // namespace orrery

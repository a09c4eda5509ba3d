// `orrery analyze TRACE... [--report FILE.json]`: Holistic Trace Analysis' analyses of PyTorch
// profiles (one file per rank) or of an Orrery `--timeline` (every NPU it shows).
#include "analyze/analyze_main.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "analyze/analyses.h"
#include "analyze/report.h"
#include "analyze/timeline.h"
#include "common/flags.h"
#include "config/flag_schema.h"
#include "profile/job_check.h"
#include "profile/kineto.h"

namespace orrery {
namespace analyze {

namespace po = boost::program_options;

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// "0-3,8" -> {0,1,2,3,8}; false on a malformed list.
bool ParseRankList(const std::string& s, std::vector<int>* out) {
  size_t i = 0;
  while (i <= s.size()) {
    const size_t comma = s.find(',', i);
    const std::string item =
        s.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
    const size_t dash = item.find('-');
    const auto a = ParseWholeNumber(item.substr(0, dash), 1u << 30);
    const auto b =
        dash == std::string::npos ? a : ParseWholeNumber(item.substr(dash + 1), 1u << 30);
    if (!a || !b || *b < *a) return false;
    for (uint64_t r = *a; r <= *b; ++r) out->push_back(static_cast<int>(r));
    if (comma == std::string::npos) break;
    i = comma + 1;
  }
  return !out->empty();
}

// The flags of analyze, one field each.
struct AnalyzeFlags {
  std::vector<std::string> traces;
  std::string report;
  std::string ranks;
  int top_kernels = AnalyzeOptions().top_kernels;
  double kernel_wait_us = 30;
  double launch_cutoff_us = 100;
  double runtime_cutoff_us = 50;
  double straggler_tolerance = AnalyzeOptions().straggler_tolerance;
};

const FlagSchema<AnalyzeFlags>& AnalyzeFlagSchema() {
  static const FlagSchema<AnalyzeFlags>* schema = [] {
    using F = AnalyzeFlags;
    auto* s = new FlagSchema<F>();
    s->Repeated("trace", &F::traces)
        .Default("required")
        .Help(
            "PyTorch profiles (.json or .json.gz, one per rank) or an Orrery --timeline (or give "
            "them as the arguments)");
    s->String("report", &F::report).Help("write the analyses as JSON to this file");
    s->String("ranks", &F::ranks)
        .Help("analyse only these ranks (an Orrery timeline: NPUs), e.g. 0-7,64");
    s->Integer("top-kernels", &F::top_kernels)
        .Min(0)
        .Max(1 << 30)
        .Help("kernels listed per rank, by total time");
    s->Number("kernel-wait-us", &F::kernel_wait_us)
        .Unit("us")
        .Min(0)
        .Max(1e12)
        .Help("idle time by cause: a gap shorter than this (not host-bound) is kernel wait");
    s->Number("launch-delay-cutoff-us", &F::launch_cutoff_us)
        .Unit("us")
        .Min(0)
        .Max(1e12)
        .Help("launch statistics: a longer launch delay is an outlier");
    s->Number("runtime-cutoff-us", &F::runtime_cutoff_us)
        .Unit("us")
        .Min(0)
        .Max(1e12)
        .Help("launch statistics: a longer CUDA runtime call is an outlier");
    s->Number("straggler-tolerance", &F::straggler_tolerance)
        .Min(0)
        .Max(1e6)
        .Help(
            "a rank more than this fraction above the median busy or compute time is a "
            "straggler");
    return s;
  }();
  return *schema;
}

}  // namespace

std::vector<KeyDoc> AnalyzeFlagDocs() { return AnalyzeFlagSchema().Docs(); }

int AnalyzeMain(int argc, char** argv) {
  po::options_description desc("orrery analyze TRACE... [options]");
  desc.add_options()("help,h", "print this help");
  AnalyzeFlagSchema().AddTo(&desc);
  po::positional_options_description positional;
  positional.add("trace", -1);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc, &positional), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string(e.what()) + " (see orrery analyze --help)");
  }
  if (vm.count("help")) {
    std::cout << "usage: orrery analyze TRACE... [--report FILE.json]\n\n"
                 "Where the GPU time of a measured or simulated run went, per rank: span, busy, "
                 "idle, compute,\ncommunication, memory, overlap; idle time by cause; kernels; "
                 "launch statistics; the\ncritical path; rank imbalance (definitions: "
                 "analyze/README.md).\n\n"
              << desc << "\n";
    return 0;
  }
  AnalyzeFlags f;
  if (const Status flags = AnalyzeFlagSchema().Apply(vm, &f); !flags.ok()) {
    return Fail(flags.WithContext("analyze").message());
  }
  const std::vector<std::string>& files = f.traces;
  const std::string& report = f.report;
  const std::string& ranks_flag = f.ranks;
  if (files.empty()) return Fail("no trace given (see orrery analyze --help)");
  AnalyzeOptions o;
  o.top_kernels = f.top_kernels;
  o.straggler_tolerance = f.straggler_tolerance;
  o.kernel_wait_ns = static_cast<int64_t>(f.kernel_wait_us * 1000 + 0.5);
  o.launch_delay_cutoff_ns = static_cast<int64_t>(f.launch_cutoff_us * 1000 + 0.5);
  o.runtime_cutoff_ns = static_cast<int64_t>(f.runtime_cutoff_us * 1000 + 0.5);
  std::vector<int> only;
  if (!ranks_flag.empty() && !ParseRankList(ranks_flag, &only)) {
    return Fail("--ranks is '" + ranks_flag + "'; expected ranks and ranges, e.g. 0-7,64");
  }
  std::vector<profile::KinetoTrace> traces;
  for (const std::string& f : files) {
    StatusOr<profile::KinetoTrace> t = profile::LoadKinetoTrace(f);
    if (!t.ok()) return Fail(t.status().message());
    traces.push_back(std::move(*t));
  }
  std::vector<const profile::KinetoTrace*> view;
  for (const auto& t : traces) view.push_back(&t);
  if (traces.size() > 1 && traces[0].orrery_timeline) {
    return Fail("give one Orrery timeline at a time (it holds every NPU of its run)");
  }
  StatusOr<std::vector<int>> ranks = profile::RanksOf(view);
  if (!ranks.ok()) return Fail(ranks.status().message());
  std::vector<RankTimeline> timelines;
  for (size_t i = 0; i < traces.size(); ++i) {
    for (RankTimeline& t : TimelinesOf(std::move(traces[i]), (*ranks)[i])) {
      if (!only.empty() && std::find(only.begin(), only.end(), t.rank) == only.end()) continue;
      timelines.push_back(std::move(t));
    }
  }
  if (timelines.empty()) return Fail("no rank left to analyse (--ranks '" + ranks_flag + "')");
  const JobReport job = AnalyzeJob(timelines, o);
  if (!report.empty()) {
    if (Status s = WriteAnalysisJson(job, o, report); !s.ok()) return Fail(s.message());
  }
  std::fputs(AnalysisSummary(job).c_str(), stdout);
  return 0;
}

}  // namespace analyze
}  // namespace orrery

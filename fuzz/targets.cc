// Every parser's fuzz target, one function each (fuzz/BUILD compiles this file once per target
// with ORRERY_FUZZ_<TARGET> defined). Each writes the fuzzer's bytes where its loader reads a
// file and loads it: any Status is a fine answer, a crash, a hang or a sanitizer report is not.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"

// Each target's parser (and only its: the target depends on that library alone).
#if defined(ORRERY_FUZZ_CHAKRA_ET)
#include "et_feeder/trace.h"
#elif defined(ORRERY_FUZZ_SYSTEM_CONFIG)
#include "config/system_config.h"
#elif defined(ORRERY_FUZZ_NETWORK_CONFIG)
#include "network/network_config.h"
#elif defined(ORRERY_FUZZ_MEMORY_CONFIG)
#include "memory/memory_config.h"
#elif defined(ORRERY_FUZZ_NCCL_MODEL)
#include "nccl/nccl_model.h"
#elif defined(ORRERY_FUZZ_COMM_GROUPS)
#include "config/comm_group_config.h"
#elif defined(ORRERY_FUZZ_JOBS)
#include "runner/jobs_config.h"
#elif defined(ORRERY_FUZZ_SWEEP_SPEC)
#include "sweep/sweep.h"
#elif defined(ORRERY_FUZZ_NCCL_TESTS_LOG) || defined(ORRERY_FUZZ_NCCL_TESTS_CSV)
#include "validate/nccl_tests.h"
#elif defined(ORRERY_FUZZ_TEXT_WORKLOAD)
#include "et_feeder/text_workload.h"
#elif defined(ORRERY_FUZZ_KINETO_TRACE)
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "analyze/analyses.h"
#include "analyze/timeline.h"
#include "et_feeder/trace.h"
#include "profile/importer.h"
#include "profile/job_check.h"
#include "profile/kineto.h"
#elif defined(ORRERY_FUZZ_EXECUTION_TRACE)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "et_feeder/trace.h"
#include "profile/et_import.h"
#include "profile/execution_trace.h"
#endif

#if defined(ORRERY_FUZZ_KINETO_TRACE) || defined(ORRERY_FUZZ_EXECUTION_TRACE)
// What an import writes must load: a trace Orrery writes and then refuses is a bug, reported as
// a crash.
void CheckWrittenTracesLoad(const orrery::StatusOr<orrery::profile::ImportResult>& r) {
  if (!r.ok()) return;
  for (const orrery::profile::RankImport& rank : r->ranks) {
    orrery::StatusOr<orrery::et::Trace> t = orrery::et::Trace::Load(rank.path);
    if (!t.ok()) {
      std::fprintf(stderr, "imported trace does not load: %s\n", t.status().message().c_str());
      std::abort();
    }
  }
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
#if defined(ORRERY_FUZZ_CHAKRA_ET)
  (void)et::Trace::Load(FuzzInputFile(data, size, "t.0.et"));
#elif defined(ORRERY_FUZZ_SYSTEM_CONFIG)
  (void)LoadSystemConfig(FuzzInputFile(data, size, "system.json"));
#elif defined(ORRERY_FUZZ_NETWORK_CONFIG)
  NetworkParams params;
  (void)LoadNetworkConfig(FuzzInputFile(data, size, "network.yml"), &params);
#elif defined(ORRERY_FUZZ_MEMORY_CONFIG)
  (void)LoadMemoryConfig(FuzzInputFile(data, size, "memory.json"));
#elif defined(ORRERY_FUZZ_NCCL_MODEL)
  (void)LoadNcclModel(FuzzInputFile(data, size, "nccl.yaml"));
#elif defined(ORRERY_FUZZ_COMM_GROUPS)
  (void)LoadCommGroupConfig(FuzzInputFile(data, size, "groups.json"), 64);
#elif defined(ORRERY_FUZZ_JOBS)
  (void)LoadJobsFile(FuzzInputFile(data, size, "jobs.yml"), 64);
#elif defined(ORRERY_FUZZ_SWEEP_SPEC)
  (void)LoadSweepSpec(FuzzInputFile(data, size, "spec.sweep.yaml"));
#elif defined(ORRERY_FUZZ_NCCL_TESTS_LOG)
  (void)LoadNcclMeasurements(FuzzInputFile(data, size, "run.log"), 0);
#elif defined(ORRERY_FUZZ_NCCL_TESTS_CSV)
  (void)LoadNcclMeasurements(FuzzInputFile(data, size, "run_all_reduce.csv"), 0, "", 8);
#elif defined(ORRERY_FUZZ_TEXT_WORKLOAD)
  et::TextWorkloadOptions options;
  (void)et::ConvertTextWorkloadText(std::string(reinterpret_cast<const char*>(data), size),
                                    "workload.txt", options);
#elif defined(ORRERY_FUZZ_KINETO_TRACE)
  // As `orrery import --kineto` and `orrery analyze` read a profile: loaded, its rank checked,
  // imported (written beside the input), and analysed.
  const std::string path = FuzzInputFile(data, size, "rank-0.json");
  StatusOr<profile::KinetoTrace> t = profile::LoadKinetoTrace(path);
  if (!t.ok()) return 0;
  if (!t->orrery_timeline) {
    const std::vector<const profile::KinetoTrace*> view = {&*t};
    StatusOr<std::vector<int> > ranks = profile::RanksOf(view);
    if (ranks.ok() && profile::CheckNoRankMissing(view, *ranks).ok()) {
      profile::ImportOptions o;
      o.output_prefix = path + ".imported";
      const int world = t->world_size.value_or(1);
      CheckWrittenTracesLoad(profile::ImportKinetoTraces({*t}, *ranks, world, o));
    }
  }
  const std::vector<analyze::RankTimeline> timelines = analyze::TimelinesOf(std::move(*t), 0);
  (void)analyze::AnalyzeJob(timelines, analyze::AnalyzeOptions{});
#elif defined(ORRERY_FUZZ_EXECUTION_TRACE)
  // As `orrery import --et` reads an execution trace: loaded and imported (beside the input).
  const std::string path = FuzzInputFile(data, size, "rank-0.et.json");
  StatusOr<profile::ExecutionTrace> e = profile::LoadExecutionTrace(path);
  if (!e.ok()) return 0;
  profile::ImportOptions o;
  o.output_prefix = path + ".imported";
  const int world = e->world_size > 1 ? static_cast<int>(e->world_size) : 1;
  CheckWrittenTracesLoad(profile::ImportExecutionTraces({std::move(*e)}, {}, {0}, world, o));
#else
#error "define the target: fuzz/BUILD's orrery_fuzz_target sets ORRERY_FUZZ_<NAME>"
#endif
  return 0;
}

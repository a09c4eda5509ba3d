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
#include "config/network_config.h"
#elif defined(ORRERY_FUZZ_MEMORY_CONFIG)
#include "memory/memory_config.h"
#elif defined(ORRERY_FUZZ_NCCL_MODEL)
#include "config/nccl_model.h"
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
#else
#error "define the target: fuzz/BUILD's orrery_fuzz_target sets ORRERY_FUZZ_<NAME>"
#endif
  return 0;
}

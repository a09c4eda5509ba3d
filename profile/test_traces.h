// Test helpers: Kineto traces written by hand, event by event, and the real profiles of
// ../shared/traces.
//
//   KinetoText k;  k.rank = 0;  k.world = 2;
//   k.Kernel("gemm", /*stream=*/7, /*start_us=*/100, /*dur_us=*/10, /*correlation=*/1);
//   k.Runtime("cudaLaunchKernel", /*tid=*/1, 90, 5, /*correlation=*/1);
//   std::string json = k.Json();
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "common/test_data.h"

namespace orrery {
namespace profile {

struct KinetoText {
  int rank = -1;  // no distributedInfo.rank when < 0
  int world = -1;
  std::string extra_top;  // more top-level members, "\"k\": v, "
  std::vector<std::string> events;

  void Kernel(const std::string& name, int stream, double start_us, double dur_us, int correlation,
              const std::string& more_args = "") {
    Gpu("kernel", name, stream, start_us, dur_us, correlation, more_args);
  }
  void Gpu(const std::string& cat, const std::string& name, int stream, double start_us,
           double dur_us, int correlation, const std::string& more_args = "") {
    events.push_back("{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
                     "\", \"pid\": 0, \"tid\": " + std::to_string(stream) +
                     ", \"ts\": " + Num(start_us) + ", \"dur\": " + Num(dur_us) +
                     ", \"args\": {\"correlation\": " + std::to_string(correlation) +
                     ", \"stream\": " + std::to_string(stream) + more_args + "}}");
  }
  void Runtime(const std::string& name, int tid, double start_us, double dur_us, int correlation) {
    events.push_back("{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" + name +
                     "\", \"pid\": 100, \"tid\": " + std::to_string(tid) +
                     ", \"ts\": " + Num(start_us) + ", \"dur\": " + Num(dur_us) +
                     ", \"args\": {\"correlation\": " + std::to_string(correlation) + "}}");
  }
  void CpuOp(const std::string& name, int tid, double start_us, double dur_us,
             const std::string& args = "") {
    events.push_back("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
                     "\", \"pid\": 100, \"tid\": " + std::to_string(tid) + ", \"ts\": " +
                     Num(start_us) + ", \"dur\": " + Num(dur_us) + ", \"args\": {" + args + "}}");
  }
  std::string Json() const {
    std::string s = "{" + extra_top;
    if (rank >= 0 || world > 0) {
      s += "\"distributedInfo\": {";
      if (rank >= 0) s += "\"rank\": " + std::to_string(rank) + (world > 0 ? ", " : "");
      if (world > 0) s += "\"world_size\": " + std::to_string(world);
      s += "}, ";
    }
    s += "\"traceEvents\": [\n";
    for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "") + events[i];
    return s + "\n]}\n";
  }
  static std::string Num(double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.3f", v);
    return b;
  }
};

// The real profiles of ../shared/traces, through the runfiles (@orrery_shared//:traces in the
// test's data; common/test_data.h); "" when they are not there.
inline std::string TracesDir() { return SharedDir("traces"); }

inline const char kTracesDirHelp[] =
    "../shared/traces is not in the runfiles: the test needs @orrery_shared//:traces in its "
    "data, and ../shared beside the checkout (common/test_data.h)";

// The Kineto profiles of ../shared/traces (relative to TracesDir()).
inline const std::vector<std::string>& KinetoProfiles() {
  static const std::vector<std::string> files = {
      "hta/trace_filter/sampled_rank-0.json.gz",
      "hta/trace_filter/sampled_rank-1.json.gz",
      "hta/nccl_parser_config/nccl_data.json.gz",
      "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
      "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
      "hta/execution_trace/benchmark_simple_add_trace.json.gz",
      "param/linear_kineto.json.gz",
  };
  return files;
}

// The execution traces of ../shared/traces, each with its run's Kineto profile when there is
// one ("" when not).
inline const std::vector<std::pair<std::string, std::string>>& ExecutionTraces() {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"hta/execution_trace/benchmark_simple_add_et.json.gz",
       "hta/execution_trace/benchmark_simple_add_trace.json.gz"},
      {"param/linear_et.json.gz", ""},
      {"param/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz", ""},
      {"chakra/1.0.2-chakra.0.0.4.json.gz", ""},
  };
  return files;
}

}  // namespace profile
}  // namespace orrery

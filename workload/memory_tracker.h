// The local memory tracker (`track-local-mem`): the peak of the tensors an NPU holds, from the
// `inputs` / `outputs` attributes of its trace nodes.
//
//   LocalMemoryTracker tracker(/*npu=*/3);
//   Status s = tracker.Record(node_id, "matmul", start, end, trace.tensor_inputs(i),
//                             trace.tensor_outputs(i));
//   uint64_t peak = tracker.PeakBytes();
//   tracker.WriteChromeTrace("local_mem_trace.3.json");
//
// Each attribute is a string_list [name, size, name, size, ...] (size in bytes, at most 2^50:
// a pebibyte). A node that
// finishes having run over [start, end) reads its inputs and writes its outputs in that interval.
// A tensor is held from the start of its write to the end of its last read (never freed if never
// read); a tensor read before any write is taken to exist from time 0. The usage at a time is the
// sum of the tensors held then (writes starting at that time counted, tensors whose last read
// ends then not); the peak is its maximum. Semantics of ASTRA-sim's LocalMemUsageTracker (see
// workload/README.md for what differs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/units.h"

namespace orrery {

class LocalMemoryTracker {
 public:
  explicit LocalMemoryTracker(int npu) : npu_(npu) {}

  // Records a finished node. Errors name the node, the attribute and the bad value; a tensor
  // written twice is an error (ASTRA-sim asserts).
  Status Record(uint64_t node_id, std::string_view node_name, Time start, Time end,
                const std::optional<std::vector<std::string_view>>& inputs,
                const std::optional<std::vector<std::string_view>>& outputs);

  uint64_t PeakBytes() const;
  // When the peak was first reached.
  Time PeakTime() const;
  size_t tensors() const { return tensors_.size(); }

  // Chrome / Perfetto JSON as ASTRA-sim writes to `<local-mem-trace-filename>.<npu>.json`:
  // tensorWrite / tensorRead B-E pairs (pid = NPU, tid = tensor), tensorLifetime B-E pairs
  // (pid = NPU + 1000000) and a "GPU Memory Usage (MB)" counter (pid = NPU + 2000000).
  Status WriteChromeTrace(const std::string& path) const;

 private:
  struct Access {
    Time start, end;
    uint64_t node_id;
    bool implicit = false;  // the write of a tensor read first (no node)
  };
  struct Tensor {
    uint64_t size = 0;
    Access write;
    std::vector<Access> reads;
  };
  // Usage after every change: time -> bytes held.
  std::map<Time, uint64_t> Timeline() const;

  int npu_;
  std::map<std::string, Tensor, std::less<>> tensors_;  // by name (ordered: stable output)
  std::map<uint64_t, std::string> node_names_;
};

// "1.50 MB": bytes in B, KB, MB, GB or TB (powers of 1024), two decimals (bytes: none).
std::string FormatMemory(uint64_t bytes);

}  // namespace orrery

// One rank's GPU activity, read the same way from a measured PyTorch profile (Kineto) and from
// Orrery's `--timeline` of a simulated run, so that the two are analysed by the same code.
//
//   StatusOr<profile::KinetoTrace> t = profile::LoadKinetoTrace("rank-0.json.gz");
//   std::vector<RankTimeline> ranks = TimelinesOf(*t);   // one for a profile, one per NPU shown
//   for (const Activity& a : ranks[0].activities) ... a.category ...
//
// Categories (README "Definitions"): a kernel whose name contains "nccl" (any case) is
// communication, a memcpy or memset is memory, any other kernel is compute. In Orrery's
// timeline: collectives, sends and receives are communication, GPU compute nodes named
// "Memcpy ..." or "Memset ..." (an imported profile's copies) and remote memory are memory,
// other GPU compute nodes are compute; CPU nodes are host work, not GPU activity.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile/kineto.h"

namespace orrery {
namespace analyze {

enum class Category : uint8_t { kCompute, kCommunication, kMemory };
const char* CategoryName(Category c);  // "compute", "communication", "memory"

struct Activity {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = -1;  // CUDA stream; in a simulated run, the track
  uint32_t name = 0;    // into RankTimeline::names
  Category category = Category::kCompute;
  // The CUDA runtime call that launched it (measured profiles): its start and end, -1 unknown.
  int64_t launch_start_ns = -1;
  int64_t launch_end_ns = -1;
};

// A host (CPU) span: a simulated CPU node, or a measured CUDA runtime call.
struct HostSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t name = 0;
};

// A segment of a critical path recorded with the timeline (Orrery's).
struct PathSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int npu = 0;
  uint32_t name = 0;
  std::string kind;
};

struct RankTimeline {
  int rank = 0;
  std::string source;      // file
  bool simulated = false;  // an Orrery timeline
  std::shared_ptr<const profile::NameTable> names;
  std::vector<Activity> activities;  // by start, then end
  std::vector<HostSpan> host;        // by start
  // The critical path the simulator recorded (simulated runs; shared by every NPU of a run).
  std::shared_ptr<const std::vector<PathSegment>> recorded_path;
};

// The ranks a file holds: a profile is one rank (distributedInfo's, else `fallback_rank`), an
// Orrery timeline one per NPU shown. Takes the trace's name table.
std::vector<RankTimeline> TimelinesOf(profile::KinetoTrace&& trace, int fallback_rank);

}  // namespace analyze
}  // namespace orrery

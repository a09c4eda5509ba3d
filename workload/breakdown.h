// Where one NPU's time went: Holistic Trace Analysis' temporal breakdown (unions of intervals
// per kind, so two overlapping kernels count once).
//
// The executor keeps it as it runs (BreakdownAccumulator: a count of running nodes per kind,
// and how long each condition held), so a run needs no per-node record for it:
//
//   BreakdownAccumulator acc;
//   acc.Begin(Track::kGpu, t0);  ...  acc.End(Track::kGpu, t1);   // in time order
//   NpuBreakdown b = acc.Result(finish);
//
// BreakdownOf computes the same from a list of intervals (NpuExecutor::activities(), kept when
// a run records timelines or reports).
#pragma once

#include <cstdint>
#include <vector>

#include "common/units.h"

namespace orrery {

// Where a node's time shows on a timeline: the hardware slot it held, or kRecv for receives
// (which hold none and may overlap one another).
enum class Track : uint8_t { kCpu, kGpu, kComm, kRecv, kMemory };
const char* TrackName(Track t);

// No node: `Activity::after` of a node that began at the start of the run.
inline constexpr uint32_t kNoNode = 0xFFFFFFFFu;

// Why a node began when it did, or (on a critical path) what the segment before it is.
enum class PathLink : uint8_t {
  kStart,       // began at time 0, waiting for nothing
  kDependency,  // began when `after`, the last of its dependencies, ended
  kSlot,        // was ready earlier; began when `after` freed its hardware slot
  kCollective,  // (critical path) a collective that could not end before another NPU joined it
  kMessage,     // (critical path) a receive whose message another NPU sent later
};
const char* PathLinkName(PathLink l);

// One node's execution on one NPU (NpuExecutor::activities()).
struct Activity {
  uint32_t node;  // index in the NPU's trace
  Track track;
  Time start;
  Time end;
  // Why it began at `start` (kStart, kDependency or kSlot), and the node of the same NPU whose
  // end let it begin (kNoNode for kStart); a dependency through nodes that take no time
  // (metadata) leads to the node those waited for.
  PathLink link = PathLink::kStart;
  uint32_t after = kNoNode;
};

struct NpuBreakdown {
  Time total;          // when the NPU finished
  Time compute;        // GPU compute (union)
  Time cpu;            // CPU ops (union)
  Time communication;  // collectives, sends and receives (union)
  Time overlapped;     // communication during GPU compute
  Time exposed;        // communication - overlapped
  Time memory;         // remote memory accesses (union)
  Time idle;           // total - (union of everything above)
  // overlapped / communication, in percent (0 without communication): HTA's overlap.
  double overlap_percent() const;
};

NpuBreakdown BreakdownOf(const std::vector<Activity>& activity, Time finish);

// The mean NPU: each field's mean over `breakdowns` (non-negative times), rounded down to the
// picosecond, without summing the times themselves: thousands of NPUs whose sum passes the end
// of simulated time (int64 picoseconds) would saturate the sum. Empty gives zeros.
NpuBreakdown MeanBreakdown(const std::vector<NpuBreakdown>& breakdowns);

// The breakdown of intervals that begin and end in time order (a simulation's clock): equal,
// to the picosecond, to BreakdownOf of the same intervals once every one has ended.
class BreakdownAccumulator {
 public:
  void Begin(Track track, Time now);
  void End(Track track, Time now);
  NpuBreakdown Result(Time finish) const;

 private:
  enum Kind { kGpuKind, kCpuKind, kCommKind, kMemoryKind, kNumKinds };
  static Kind KindOf(Track track);
  void Advance(Time now);  // credits the time since the last change to what held over it

  int64_t last_ = 0;                  // ps
  uint32_t running_[kNumKinds] = {};  // intervals of each kind open now
  int64_t held_[kNumKinds] = {};      // ps with at least one of the kind open
  int64_t overlapped_ = 0;            // ps with GPU compute and communication both open
  int64_t busy_ = 0;                  // ps with anything open
};

}  // namespace orrery

// The critical path of a recorded run: the chain of node executions, across NPUs, that ends when
// the slowest NPU finishes and runs back to time 0 without a gap. Each segment is a node (or
// the part of one after what it waited for); shortening one shortens the step unless another
// chain takes over. The path is exactly as long as the step, so the time it spends in compute,
// communication and memory says what bounds it.
//
//   std::vector<CriticalPathNpu> npus = ...;  // per NPU: NpuExecutor's activities(), joins(),
//                                             // point_to_point() and finish
//   std::vector<PathSegment> path = FindCriticalPath(npus);   // in time order
//
// The walk starts at the node that ended last on the slowest NPU (the lowest id among equals)
// and goes back:
//  - from a node to the node of the same NPU whose end let it begin (Activity::after): the
//    last of its dependencies, or the node that freed its hardware slot;
//  - from a collective to the member of its communicator group that reached the system layer
//    last, when that was later than this NPU: the collective could not end before; this NPU's
//    part covers the time after that member joined, and the path goes on through that member's
//    launch floor and what that member waited for (the last-arriving rank, as in Holistic
//    Trace Analysis' critical path);
//  - from a receive to the send that sent its message, when that send began after the receive
//    was posted.
#pragma once

#include <cstdint>
#include <vector>

#include "common/units.h"
#include "workload/breakdown.h"

namespace orrery {

// A collective as it reached the system layer (after its launch floor), in the NPU's order.
// The k-th collective of a communicator group on each member is the same collective (the
// system layer's matching, system/collective_order.h).
struct CollectiveJoin {
  uint32_t node;  // index in the NPU's trace
  int group;      // the system layer's communicator group (0 = every NPU)
  Time joined;
  // The NPUs it runs with (NpuSystem::CollectiveSpan): how many, and the lowest, which tells
  // apart the collectives of one world call that a trace's involved_dim or a short
  // implementation list confines to parts of the machine.
  int members = 1;
  int first = 0;
  uint64_t bytes = 0;  // comm_size x --comm-scale, before any protocol efficiency
};

// A send or receive as the NPU issued it. The k-th send from A to B with a tag and size is
// received by the k-th receive at B from A with that tag and size (system/message_matcher.h).
struct PointToPoint {
  uint32_t node;
  bool send;
  int peer;  // the NPU it goes to (send) or comes from (receive)
  int64_t tag;
  uint64_t bytes;
};

// What one NPU recorded.
struct CriticalPathNpu {
  const std::vector<Activity>* activities = nullptr;  // in completion order
  const std::vector<CollectiveJoin>* joins = nullptr;
  const std::vector<PointToPoint>* point_to_point = nullptr;
  Time finish;
};

struct PathSegment {
  int npu = 0;
  uint32_t node = kNoNode;  // index in the NPU's trace
  Track track = Track::kGpu;
  Time start, end;
  // What the segment before this one is: nothing (kStart, at time 0), the node `from_node` of
  // the same NPU (kDependency, kSlot), or node `from_node` of NPU `from_npu`: the member that
  // joined this collective last (kCollective) or the send of this receive's message (kMessage).
  PathLink link = PathLink::kStart;
  int from_npu = -1;
  uint32_t from_node = kNoNode;
};

// The path in time order: contiguous, from 0 to the slowest NPU's finish. Segments of no
// length (nodes that took no time) are left out; the links around them stay. Empty when no
// node took time.
std::vector<PathSegment> FindCriticalPath(const std::vector<CriticalPathNpu>& npus);

}  // namespace orrery

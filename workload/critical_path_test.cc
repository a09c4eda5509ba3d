// The critical path walk on hand-made records: each case's path is derived by hand.
#include "workload/critical_path.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

Time Ns(int64_t ns) { return Time::FromNs(ns); }

Activity Act(uint32_t node, Track track, int64_t start, int64_t end,
             PathLink link = PathLink::kStart, uint32_t after = kNoNode) {
  return Activity{node, track, Ns(start), Ns(end), link, after};
}

// An NPU's records; `finish` is its last activity's end.
struct Npu {
  std::vector<Activity> activities;
  std::vector<CollectiveJoin> joins;
  std::vector<PointToPoint> p2p;
};

std::vector<PathSegment> Path(const std::vector<Npu>& npus) {
  std::vector<CriticalPathNpu> in(npus.size());
  for (size_t i = 0; i < npus.size(); ++i) {
    in[i].activities = &npus[i].activities;
    in[i].joins = &npus[i].joins;
    in[i].point_to_point = &npus[i].p2p;
    in[i].finish = npus[i].activities.empty() ? Time::Zero() : npus[i].activities.back().end;
  }
  return FindCriticalPath(in);
}

// (npu, node, start ns, end ns, link, from npu, from node)
struct Want {
  int npu;
  uint32_t node;
  int64_t start, end;
  PathLink link;
  int from_npu;
  uint32_t from_node;
};

void Expect(const std::vector<PathSegment>& got, const std::vector<Want>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("segment " + std::to_string(i));
    EXPECT_EQ(got[i].npu, want[i].npu);
    EXPECT_EQ(got[i].node, want[i].node);
    EXPECT_EQ(got[i].start, Ns(want[i].start));
    EXPECT_EQ(got[i].end, Ns(want[i].end));
    EXPECT_EQ(got[i].link, want[i].link);
    EXPECT_EQ(got[i].from_npu, want[i].from_npu);
    EXPECT_EQ(got[i].from_node, want[i].from_node);
  }
}

// One NPU: a [0, 10) and b [0, 4) start together; c waits for b (dependency), d was ready at 0
// but waited for a's slot; e (no time) follows d. The path ends with d, not with c.
TEST(CriticalPath, FollowsDependenciesAndSlotsOnOneNpu) {
  std::vector<Npu> npus(1);
  npus[0].activities = {
      Act(1, Track::kCpu, 0, 4),
      Act(2, Track::kCpu, 4, 6, PathLink::kDependency, 1),
      Act(0, Track::kGpu, 0, 10),
      Act(3, Track::kGpu, 10, 25, PathLink::kSlot, 0),
      Act(4, Track::kGpu, 25, 25, PathLink::kDependency, 3),
  };
  Expect(Path(npus),
         {{0, 0, 0, 10, PathLink::kStart, -1, kNoNode}, {0, 3, 10, 25, PathLink::kSlot, 0, 0}});
}

// Two NPUs join a collective: NPU 0 at 5 after its node 0 [0, 5); NPU 1 at 40 after its node
// 0 [0, 30) and a launch floor [30, 40). Both end it at 70; NPU 0 then runs node 2 to 90. The
// path: NPU 1's node 0, its launch floor, NPU 0's collective from 40, NPU 0's node 2.
TEST(CriticalPath, CollectiveGoesThroughTheLastMemberToJoin) {
  std::vector<Npu> npus(2);
  npus[0].activities = {Act(0, Track::kGpu, 0, 5),
                        Act(1, Track::kComm, 5, 70, PathLink::kDependency, 0),
                        Act(2, Track::kGpu, 70, 90, PathLink::kDependency, 1)};
  npus[0].joins = {{1, 0, Ns(5)}};
  npus[1].activities = {Act(0, Track::kGpu, 0, 30),
                        Act(1, Track::kComm, 30, 70, PathLink::kDependency, 0)};
  npus[1].joins = {{1, 0, Ns(40)}};
  Expect(Path(npus), {{1, 0, 0, 30, PathLink::kStart, -1, kNoNode},
                      {1, 1, 30, 40, PathLink::kDependency, 1, 0},
                      {0, 1, 40, 70, PathLink::kCollective, 1, 1},
                      {0, 2, 70, 90, PathLink::kDependency, 0, 1}});
}

// Collectives match by their position in each group: NPU 0's second world collective is NPU
// 1's second, although NPU 1 ran a group-3 collective between them.
TEST(CriticalPath, CollectivesMatchByPositionInTheirGroup) {
  std::vector<Npu> npus(2);
  npus[0].activities = {Act(0, Track::kComm, 0, 10),
                        Act(1, Track::kComm, 10, 50, PathLink::kDependency, 0)};
  npus[0].joins = {{0, 0, Ns(0)}, {1, 0, Ns(10)}};
  npus[1].activities = {Act(0, Track::kComm, 0, 10),
                        Act(5, Track::kComm, 10, 20, PathLink::kDependency, 0),
                        Act(1, Track::kComm, 20, 50, PathLink::kDependency, 5)};
  npus[1].joins = {{0, 0, Ns(0)}, {5, 3, Ns(10)}, {1, 0, Ns(20)}};
  // NPU 0 finishes at 50 as NPU 1 does: NPU 0 is the slowest (lowest id among equals). Both
  // joined the first collective at 0: NPU 1's part of it is on the path, which it reached.
  Expect(Path(npus), {{1, 0, 0, 10, PathLink::kStart, -1, kNoNode},
                      {1, 5, 10, 20, PathLink::kDependency, 1, 0},
                      {0, 1, 20, 50, PathLink::kCollective, 1, 1}});
}

// A member that joined after this NPU's part had ended was not waited for: a broadcast's root
// (NPU 0) joins at 0 and is done at 65, then computes to 165; NPU 1 computes to 100 before it
// joins. The path stays on NPU 0 and is exactly as long as the step (it had gone on to NPU 1's
// compute, 200 ns of path in a 165 ns step).
TEST(CriticalPath, AMemberThatJoinedAfterThisPartEndedIsNotWaitedFor) {
  std::vector<Npu> npus(2);
  npus[0].activities = {Act(1, Track::kComm, 0, 65),
                        Act(2, Track::kGpu, 65, 165, PathLink::kDependency, 1)};
  npus[0].joins = {{1, 0, Ns(0)}};
  npus[1].activities = {Act(0, Track::kGpu, 0, 100),
                        Act(1, Track::kComm, 100, 110, PathLink::kDependency, 0)};
  npus[1].joins = {{1, 0, Ns(100)}};
  Expect(Path(npus), {{0, 1, 0, 65, PathLink::kStart, -1, kNoNode},
                      {0, 2, 65, 165, PathLink::kDependency, 0, 1}});
}

// A world collective that involved_dim confines to parts of the machine is one collective per
// part, told apart by its lowest member: NPUs 0 and 1 run theirs while NPUs 2 and 3 run
// another. NPU 0's part waits for NPU 1 (joined at 5), not for NPU 2 (joined at 20, in the
// other part).
TEST(CriticalPath, PartsOfAConfinedWorldCollectiveAreSeparate) {
  std::vector<Npu> npus(4);
  npus[0].activities = {Act(1, Track::kComm, 0, 30),
                        Act(2, Track::kGpu, 30, 200, PathLink::kDependency, 1)};
  npus[0].joins = {{1, 0, Ns(0), 2, 0}};
  npus[1].activities = {Act(0, Track::kGpu, 0, 5),
                        Act(1, Track::kComm, 5, 30, PathLink::kDependency, 0)};
  npus[1].joins = {{1, 0, Ns(5), 2, 0}};
  npus[2].activities = {Act(0, Track::kGpu, 0, 20),
                        Act(1, Track::kComm, 20, 40, PathLink::kDependency, 0)};
  npus[2].joins = {{1, 0, Ns(20), 2, 2}};
  npus[3].activities = {Act(1, Track::kComm, 0, 40)};
  npus[3].joins = {{1, 0, Ns(0), 2, 2}};
  Expect(Path(npus), {{1, 0, 0, 5, PathLink::kStart, -1, kNoNode},
                      {0, 1, 5, 30, PathLink::kCollective, 1, 1},
                      {0, 2, 30, 200, PathLink::kDependency, 0, 1}});
}

// NPU 1 posts a receive at 0; NPU 0 sends its message at 30, after node 0, and it arrives at
// 45; NPU 1 then computes to 60. The path: NPU 0's node 0, the message, NPU 1's compute.
// A second message, sent before its receive was posted, keeps the receive's own start.
TEST(CriticalPath, ReceiveGoesThroughALaterSend) {
  std::vector<Npu> npus(2);
  npus[0].activities = {Act(0, Track::kGpu, 0, 30),
                        Act(1, Track::kComm, 30, 45, PathLink::kDependency, 0),
                        Act(2, Track::kComm, 0, 20)};
  npus[0].p2p = {{2, true, 1, 7, 64}, {1, true, 1, 7, 4096}};
  npus[1].activities = {Act(9, Track::kRecv, 0, 45),
                        Act(3, Track::kGpu, 45, 60, PathLink::kDependency, 9),
                        Act(4, Track::kRecv, 60, 70, PathLink::kDependency, 3)};
  npus[1].p2p = {{9, false, 0, 7, 4096}, {4, false, 0, 7, 64}};
  Expect(Path(npus), {{0, 0, 0, 30, PathLink::kStart, -1, kNoNode},
                      {1, 9, 30, 45, PathLink::kMessage, 0, 1},
                      {1, 3, 45, 60, PathLink::kDependency, 1, 9},
                      {1, 4, 60, 70, PathLink::kDependency, 1, 3}});
}

TEST(CriticalPath, EmptyWhenNothingRan) { EXPECT_TRUE(Path({Npu{}, Npu{}}).empty()); }

}  // namespace
}  // namespace orrery

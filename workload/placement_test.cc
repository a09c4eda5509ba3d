#include "workload/placement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "system/test_network.h"

namespace orrery {
namespace {

TEST(DataParallelGroups, ParsesTheFlag) {
  StatusOr<DataParallelGroups> d = ParseDataParallelGroups("");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->world);
  EXPECT_TRUE(d->groups.empty());

  d = ParseDataParallelGroups("none");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->world);
  EXPECT_TRUE(d->groups.empty());

  d = ParseDataParallelGroups(" 3, world ,2");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->world);
  EXPECT_EQ(d->groups, (std::set<int>{2, 3}));
  EXPECT_EQ(FormatDataParallelGroups(*d), "world,2,3");

  d = ParseDataParallelGroups("2");  // without 'world': the world group stays in its copy
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->world);
  EXPECT_EQ(FormatDataParallelGroups(*d), "2");
  EXPECT_EQ(FormatDataParallelGroups(DataParallelGroups{false, {}}), "none");
}

TEST(DataParallelGroups, RefusesWhatIsNotAGroup) {
  for (const char* bad :
       {"0", "-1", "wrold", "2,,3", "1.5", "1000000000", "99999999999", "none,2", "none,none"}) {
    StatusOr<DataParallelGroups> d = ParseDataParallelGroups(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.status().message().find("--dp-groups"), std::string::npos) << bad;
    EXPECT_NE(d.status().message().find("'world', 'none', or a comma list of communicator group "
                                        "ids (1 to 999999999)"),
              std::string::npos)
        << d.status().message();
  }
  // Each bad item once, by its position.
  StatusOr<DataParallelGroups> d = ParseDataParallelGroups("world,,");
  ASSERT_FALSE(d.ok());
  ASSERT_EQ(d.status().problems().size(), 2u);
  EXPECT_EQ(d.status().problems()[0].rfind("--dp-groups: item 2 of 'world,,' is empty", 0), 0u)
      << d.status().problems()[0];
  EXPECT_EQ(d.status().problems()[1].rfind("--dp-groups: item 3 of 'world,,' is empty", 0), 0u);
  d = ParseDataParallelGroups("none,2");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("item 1 of 'none,2' is 'none', which stands alone"),
            std::string::npos);
  // The largest id.
  d = ParseDataParallelGroups("999999999");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->groups, std::set<int>{999999999});
}

TEST(Placement, NpuRunsRankOfCopy) {
  Placement rep(/*ranks=*/8, /*copies=*/4, DataParallelGroups{});
  EXPECT_EQ(rep.num_npus(), 32);
  // NPU r = copy * 8 + rank.
  EXPECT_EQ(rep.Rank(13), 5);
  EXPECT_EQ(rep.Copy(13), 1);
  EXPECT_EQ(rep.Npu(1, 5), 13);
  EXPECT_EQ(rep.Npu(3, 7), 31);
  EXPECT_TRUE(rep.IsDataParallel(0));
  EXPECT_FALSE(rep.IsDataParallel(2));
  EXPECT_EQ(rep.Describe(),
            "trace of 8 ranks run as 4 copies on 32 NPUs; data-parallel groups: world");
  EXPECT_EQ(Placement(1, 1, DataParallelGroups{false, {}}).Describe(),
            "trace of 1 rank run as 1 copy on 1 NPUs; data-parallel groups: none (independent "
            "jobs)");
}

TEST(Placement, RootsOfDataParallelGroupsAreInCopyZero) {
  Placement rep(4, 3, DataParallelGroups{true, {2}});
  // Every copy names the same root of a data-parallel group: rank 1 of copy 0.
  EXPECT_EQ(rep.RootNpu(/*pg=*/0, /*root=*/1, /*npu=*/9), 1);
  EXPECT_EQ(rep.RootNpu(2, 1, 9), 1);
  // Another group's root is in the NPU's copy: NPU 9 is copy 2, so rank 1 is NPU 9.
  EXPECT_EQ(rep.RootNpu(3, 1, 9), 9);
  EXPECT_EQ(rep.RootNpu(3, -1, 9), -1);  // the group's first member, as without copies
}

struct Machine {
  explicit Machine(int npus) : net(sim, Topology{{RingDimension(npus, 50, 500)}}) {}
  Simulation sim;
  FixedDelayNetwork net;
  SystemLayer system{sim, net, SystemParams{}};
};

TEST(Placement, DataParallelGroupsSpanEveryCopyOthersStayInTheirs) {
  // A trace of 4 ranks (tensor-parallel pairs {0,1} {2,3} as group 1, data-parallel pairs
  // {0,2} {1,3} as groups 2 and 3), run as 3 copies on 12 NPUs.
  Machine m(12);
  Placement rep(4, 3, DataParallelGroups{true, {2, 3}});

  // Group 2 is data-parallel: ranks {0, 2} of every copy, {0,2, 4,6, 8,10}, defined once
  // whichever NPU defines it.
  StatusOr<int> dp = rep.Define(m.system, 2, {0, 2}, /*npu=*/6);
  ASSERT_TRUE(dp.ok()) << dp.status().message();
  ASSERT_NE(m.system.GroupMembers(*dp), nullptr);
  EXPECT_EQ(*m.system.GroupMembers(*dp), (std::vector<int>{0, 2, 4, 6, 8, 10}));
  StatusOr<int> again = rep.Define(m.system, 2, {0, 2}, /*npu=*/11);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *dp);
  EXPECT_EQ(rep.Find(m.system, 2, 1), dp.value());

  // Group 1 is not: copy 1 (NPUs 4..7) gets its own {4, 5}.
  StatusOr<int> tp1 = rep.Define(m.system, 1, {0, 1}, /*npu=*/5);
  ASSERT_TRUE(tp1.ok());
  EXPECT_EQ(*m.system.GroupMembers(*tp1), (std::vector<int>{4, 5}));
  EXPECT_NE(*tp1, *dp);
  // Copy 2 has not defined its group 1 yet.
  EXPECT_EQ(rep.Find(m.system, 1, 9), std::nullopt);
  StatusOr<int> tp2 = rep.Define(m.system, 1, {0, 1}, /*npu=*/9);
  ASSERT_TRUE(tp2.ok());
  EXPECT_EQ(*m.system.GroupMembers(*tp2), (std::vector<int>{8, 9}));
  EXPECT_NE(*tp2, *tp1);

  // The world is data-parallel here: every NPU, system group 0.
  EXPECT_EQ(rep.Find(m.system, 0, 7), 0);
  // Group 3 was never defined.
  EXPECT_EQ(rep.UndefinedDataParallelGroups(), std::vector<int>{3});
}

TEST(Placement, AWorldThatIsNotDataParallelIsEachCopysOwnNpus) {
  Machine m(8);
  Placement rep(4, 2, DataParallelGroups{false, {}});
  EXPECT_EQ(rep.Lookup(0, 5), std::nullopt);  // defined on first use
  std::optional<int> world1 = rep.Find(m.system, 0, 5);
  ASSERT_TRUE(world1.has_value());
  EXPECT_EQ(*m.system.GroupMembers(*world1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(rep.Lookup(0, 6), world1);
  std::optional<int> world0 = rep.Find(m.system, 0, 2);
  ASSERT_TRUE(world0.has_value());
  EXPECT_EQ(*m.system.GroupMembers(*world0), (std::vector<int>{0, 1, 2, 3}));
}

TEST(Placement, AMemberOutsideTheTraceIsNamed) {
  Machine m(8);
  Placement rep(4, 2, DataParallelGroups{});
  StatusOr<int> id = rep.Define(m.system, 5, {0, 4}, 0);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().message(),
            "member of communicator group 5 is '4'; expected a rank of the trace in [0, 3] "
            "(--replicate-trace runs its 4 ranks as 2 copies)");
}

TEST(Placement, JobsRunTheirRanksOnTheirNpusTheRestIdle) {
  Machine m(10);
  Placement jobs({{"train", {6, 4, 7, 5}}, {"serve", {0, 1}}}, /*num_npus=*/10);
  EXPECT_TRUE(jobs.jobs());
  EXPECT_EQ(jobs.copies(), 2);
  EXPECT_EQ(jobs.num_npus(), 10);
  // Rank r of a job runs on the r-th NPU it lists.
  EXPECT_EQ(jobs.Copy(4), 0);
  EXPECT_EQ(jobs.Rank(4), 1);
  EXPECT_EQ(jobs.Npu(0, 2), 7);
  EXPECT_EQ(jobs.RanksOf(7), 4);
  EXPECT_EQ(jobs.RanksOf(1), 2);
  EXPECT_TRUE(jobs.Idle(2));
  EXPECT_EQ(jobs.RanksOf(9), 0);
  // Each job's traces follow the one before: train's ranks are traces 0..3, serve's 4..5.
  EXPECT_EQ(jobs.num_traces(), 6);
  EXPECT_EQ(jobs.TraceIndex(6), 0);
  EXPECT_EQ(jobs.TraceIndex(5), 3);
  EXPECT_EQ(jobs.TraceIndex(1), 5);
  EXPECT_EQ(jobs.TraceIndex(3), -1);
  EXPECT_EQ(jobs.PeerNpu(/*npu=*/5, /*rank=*/0), 6);
  EXPECT_EQ(jobs.PeerNpu(1, 0), 0);
  EXPECT_EQ(jobs.NameOf(7), "job 'train', rank 2");
  EXPECT_EQ(jobs.NameOf(8), "idle");
  EXPECT_EQ(jobs.Describe(), "2 jobs on 10 NPUs: 'train' on NPUs 4-7, 'serve' on NPUs 0-1; 4 idle");
  // No group spans jobs: each job's world is its own NPUs
  EXPECT_FALSE(jobs.IsDataParallel(0));
  std::optional<int> world = jobs.Find(m.system, 0, 5);
  ASSERT_TRUE(world.has_value());
  // (the system layer keeps a group's members in id order, as from a comm-group file).
  EXPECT_EQ(*m.system.GroupMembers(*world), (std::vector<int>{4, 5, 6, 7}));
  StatusOr<int> tp = jobs.Define(m.system, 1, {0, 1}, /*npu=*/1);
  ASSERT_TRUE(tp.ok()) << tp.status().message();
  EXPECT_EQ(*m.system.GroupMembers(*tp), (std::vector<int>{0, 1}));
  StatusOr<int> bad = jobs.Define(m.system, 2, {0, 2}, /*npu=*/0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "member of communicator group 2 is '2'; expected a rank of job 'serve' in [0, 1] "
            "(--jobs keeps sends, receives and groups inside a job)");
}

TEST(Placement, NpuRangesAreWrittenAsTheFlagsReadThem) {
  EXPECT_EQ(FormatNpuRanges({}), "");
  EXPECT_EQ(FormatNpuRanges({3}), "3");
  EXPECT_EQ(FormatNpuRanges({7, 0, 1, 2, 5, 9, 8}), "0-2,5,7-9");
}

}  // namespace
}  // namespace orrery

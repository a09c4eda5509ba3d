// `nccl-model` in ordinary runs: the shipped hgx-h100 profile (whose system.yaml names its
// nccl.yaml) runs each collective with NCCL's choice for its size, the same machinery
// `orrery validate` uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/test_files.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "validate/validate.h"
#include "workload/executor.h"

namespace orrery {
namespace {

const char kProfile[] = "configs/machines/hgx-h100";

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// One all-reduce per rank file, or several chained one after the other.
std::string WriteAllReduces(const std::string& name, const std::vector<uint64_t>& sizes) {
  const std::string prefix = Tmp(name);
  for (int r = 0; r < 8; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string name = "ar" + std::to_string(i);
      nodes.push_back(
          i == 0 ? et::MakeCollNode(i, name, ChakraProtoMsg::ALL_REDUCE, sizes[i])
                 : et::MakeCollNode(i, name, ChakraProtoMsg::ALL_REDUCE, sizes[i], {i - 1}));
    }
    EXPECT_TRUE(et::WriteTraceFile(et::RankTracePath(prefix, r), nodes).ok());
  }
  return prefix;
}

// A copy of shipped profile `profile` in temporary directory `name`, every line of its `file`
// passed through `edit`; returns the directory.
std::string CopyProfile(const std::string& profile, const std::string& name,
                        const std::string& file,
                        const std::function<std::string(const std::string&)>& edit) {
  const std::string dir = Tmp(name);
  EXPECT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  for (const char* f : {"system.yaml", "network.yaml", "nccl.yaml"}) {
    std::ifstream in("configs/machines/" + profile + "/" + f);
    std::ofstream out(dir + "/" + f);
    std::string line;
    while (std::getline(in, line)) out << (f == file ? edit(line) : line) << "\n";
  }
  return dir;
}

// 16 ranks, chained all-reduces of `sizes` on two communicator groups: ranks below `split` in
// group "1", the rest in "2"; writes <prefix>.groups.json beside the rank files.
std::string WriteTwoGroupAllReduces(const std::string& name, const std::vector<uint64_t>& sizes,
                                    int split) {
  const std::string prefix = Tmp(name);
  for (int r = 0; r < 16; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ChakraProtoMsg::Node n =
          i == 0 ? et::MakeCollNode(i, "ar", ChakraProtoMsg::ALL_REDUCE, sizes[i])
                 : et::MakeCollNode(i, "ar", ChakraProtoMsg::ALL_REDUCE, sizes[i], {i - 1});
      et::SetStringAttr(&n, "pg_name", r < split ? "1" : "2");
      nodes.push_back(n);
    }
    EXPECT_TRUE(et::WriteTraceFile(et::RankTracePath(prefix, r), nodes).ok());
  }
  std::string groups = "{\"1\": [";
  for (int r = 0; r < 16; ++r) {
    groups += (r == split ? "], \"2\": [" : (r > 0 ? ", " : "")) + std::to_string(r);
  }
  std::ofstream(prefix + ".groups.json") << groups << "]}";
  return prefix;
}

RunOptions ProfileRun(const std::string& workload) {
  RunOptions o;
  o.workload = workload;
  o.system_config = std::string(kProfile) + "/system.yaml";
  o.network_config = std::string(kProfile) + "/network.yaml";
  return o;
}

// A plain run of one all-reduce on the profile takes exactly the time `orrery validate` prints
// for that size: validate is a run with the profile's nccl-model.
TEST(NcclRun, SingleCollectivesTakeWhatValidatePrints) {
  const std::vector<uint64_t> sizes = {1024, 65536, 4u << 20, 256u << 20};
  const std::string log = Tmp("sizes.log");
  {
    std::ofstream f(log);
    f << "# nccl-tests all_reduce_perf\n";
    for (int r = 0; r < 8; ++r)
      f << "#  Rank  " << r << " Group  0 Pid 1 on host device " << r
        << " [0x00] NVIDIA H100 80GB HBM3\n";
    f << "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n";
    // The measured times do not matter here; only the simulated column is compared.
    for (uint64_t s : sizes) {
      f << s << " " << s / 4 << " float sum -1 100.0 1.0 1.0 0 100.0 1.0 1.0 0\n";
    }
  }
  ValidateOptions v;
  v.measurements = log;
  v.machine = kProfile;
  v.collective = "all_reduce";
  StatusOr<ValidationReport> report = Validate(v);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->rows.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    StatusOr<RunResult> r =
        RunSimulation(ProfileRun(WriteAllReduces("one_" + std::to_string(i), {sizes[i]})));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(report->rows[i].size, sizes[i]);
    EXPECT_DOUBLE_EQ(r->end.Ns() / 1e3, report->rows[i].simulated_us) << sizes[i] << " B";
    ASSERT_EQ(r->nccl_choices.size(), 1u);
    EXPECT_EQ(r->nccl_choices[0].choice, report->rows[i].choice) << sizes[i] << " B";
    // The tuner's probe of the collective alone is the run itself.
    EXPECT_EQ(r->nccl_choices[0].predicted, r->end);
  }
}

// Small and large all-reduces in one trace take different algorithms. By hand, from
// configs/machines/hgx-h100/nccl.yaml: a choice costs floor + time to move size / efficiency.
//   1 KiB: ring/LL's floor is 0 + 5.0 us; nvls/Simple's is 5.5 + 32.8 = 38.4 us, and 1 KiB at
//          LL's 0.0191 is 54 KB, well under 1 us at 450 GB/s: ring/LL wins.
//   1 GiB: each GPU moves 2(n-1)/n = 1.75 x size over NVLink in a ring, (n+1)/n = 1.125 x size
//          with NVLS (the switch reduces): ring/Simple 1.75 / 0.787 = 2.22 x size, nvls/Simple
//          1.125 / (0.952 x 128/141.4 x 0.787) = 1.66 x size (its 128 KiB chunks),
//          LL 1.75 / 0.0191 = 92 x size: nvls/Simple wins.
TEST(NcclRun, SmallAndLargeCollectivesTakeDifferentAlgorithms) {
  RunOptions o = ProfileRun(WriteAllReduces("mixed", {1024, 1u << 30, 1024}));
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nccl_choices.size(), 2u);  // the second 1 KiB one reuses the first choice
  EXPECT_EQ(r->nccl_choices[0].size, 1024u);
  EXPECT_EQ(r->nccl_choices[0].choice, "ring/LL");
  EXPECT_EQ(r->nccl_choices[0].group_size, 8);
  EXPECT_EQ(r->nccl_choices[1].size, uint64_t{1} << 30);
  EXPECT_EQ(r->nccl_choices[1].choice, "nvls/Simple");
  // The chunks ran those algorithms (the timeline's "algorithm" argument).
  std::set<std::string> small, large;
  for (const ChunkPhaseRecord& c : r->phases[0]) {
    (c.node_id == 1 ? large : small).insert(c.algorithm);
  }
  EXPECT_EQ(small, std::set<std::string>{"ring"});
  EXPECT_EQ(large, std::set<std::string>{"nvls"});
}

// Validates an nccl-tests log of `collective` (reduction `op`) on 8 GPUs at `sizes`, every
// measured time 30 us, on profile `machine`: the report, for its simulated times.
StatusOr<ValidationReport> ValidateSizes(const std::string& machine, const std::string& collective,
                                         const std::string& op,
                                         const std::vector<uint64_t>& sizes) {
  const std::string log = Tmp("sizes_" + collective + ".log");
  std::ofstream f(log);
  f << "# Collective test starting: " << collective << "_perf\n";
  for (int i = 0; i < 8; ++i)
    f << "#  Rank  " << i << " Group  0 Pid 1 on host device " << i << "\n";
  for (uint64_t size : sizes) {
    f << size << " " << size / 4 << " float " << op << " -1 30 0 0 0 30 0 0 0\n";
  }
  f.close();
  ValidateOptions o;
  o.measurements = log;
  o.machine = machine;
  return Validate(o);
}

// The protocol's extra bytes divide into the profile's chunks evenly: at LL's efficiency (0.019)
// a 4 B all-reduce is 212 B, which 16 chunks of 13 B leave 4 B over, one more chunk and a second
// round of 14 ring steps. Rounded up to the splits, the tiniest collectives take LL's floor alike.
TEST(NcclRun, TheTiniestCollectivesTakeOneRound) {
  EXPECT_EQ(InflateForEfficiency(4, 0.0191, 16) % 16, 0u);
  EXPECT_EQ(InflateForEfficiency(4, 0.0191, 12) % 12, 0u);
  EXPECT_EQ(InflateForEfficiency(uint64_t{1} << 30, 0.5, 16), uint64_t{1} << 31);  // unchanged
  const struct {
    const char* collective;
    const char* op;
    std::vector<uint64_t> sizes;
  } cases[] = {{"all_reduce", "sum", {4, 8, 16, 32}}, {"all_gather", "none", {32, 64, 128, 256}}};
  for (const auto& c : cases) {
    StatusOr<ValidationReport> r =
        ValidateSizes("configs/machines/dgx-a100", c.collective, c.op, c.sizes);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->rows.size(), c.sizes.size());
    for (const ValidationRow& row : r->rows) {
      EXPECT_EQ(row.choice, "ring/LL") << c.collective << " " << row.size;
      // The bytes add at most 0.1 us here; a second round would add about 10 us.
      EXPECT_NEAR(row.simulated_us, r->rows.back().simulated_us, 0.1)
          << c.collective << " " << row.size;
    }
  }
}

// The protocol's extra bytes are the size / efficiency, give or take one 4 KiB page
// (kEfficiencyGrainBytes). The power of two they were rounded to was once capped at 1 MiB, not a
// page: from 1 to 16 MiB that added up to a fifth of the bytes (2 MiB at LL128's 0.6028 on
// dgx-a100 moved 4 MiB, not 3.32 MiB), and A100's 1-16 MiB rows ran that much slower.
TEST(NcclRun, ProtocolEfficiencyAddsTheBytesItCostsAndNoMore) {
  for (uint64_t size = uint64_t{1} << 20; size <= (uint64_t{16} << 20); size *= 2) {
    for (double efficiency : {0.6028, 0.7868}) {
      const double exact = static_cast<double>(size) / efficiency;
      const uint64_t moved = InflateForEfficiency(size, efficiency, 16);
      EXPECT_GE(static_cast<double>(moved), exact) << size << " at " << efficiency;
      EXPECT_LT(static_cast<double>(moved), exact + kEfficiencyGrainBytes)
          << size << " at " << efficiency;
      EXPECT_EQ(moved % kEfficiencyGrainBytes, 0u) << size << " at " << efficiency;
    }
  }
}

// On a profile with a lane per chunk (lanes: [16], 16 splits), a size that does not divide into
// the chunks is rounded up to one that does, even at protocol-efficiency 1: ASTRA-sim's rule
// makes the remainder one more whole chunk, which ran alone on one lane, a second round at a
// sixteenth of the bandwidth (2 GiB + 4 B took twice 2 GiB's time).
TEST(NcclRun, ASizeOffTheChunksTakesNoSecondRoundOnLanes) {
  const std::string dir =
      CopyProfile("dgx-a100", "a100_eff1", "system.yaml", [](const std::string& l) {
        if (l.rfind("nccl-model", 0) == 0) return std::string();
        if (l.rfind("protocol-efficiency", 0) == 0) return std::string("protocol-efficiency: 1");
        return l;
      });
  ASSERT_EQ(std::remove((dir + "/nccl.yaml").c_str()), 0);  // validate would run NCCL's choice
  StatusOr<ValidationReport> r =
      ValidateSizes(dir, "all_reduce", "sum",
                    {uint64_t{2} << 30, (uint64_t{2} << 30) + 4, 1 << 20, (1 << 20) + 4});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_EQ(r->rows[0].choice, "");  // the profile's own ring, no NCCL model
  EXPECT_NEAR(r->rows[1].simulated_us / r->rows[0].simulated_us, 1, 1e-4);
  EXPECT_NEAR(r->rows[3].simulated_us / r->rows[2].simulated_us, 1, 1e-3);
}

// A communicator group is tuned as itself: two disjoint groups of 4 on the switch each get a
// choice for 4 GPUs, probed alone; running side by side on disjoint ports they do not slow each
// other, so the run ends when the probe said.
TEST(NcclRun, GroupsAreTunedForTheirOwnSize) {
  const std::string groups = Tmp("groups.json");
  std::ofstream(groups) << R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})";
  const std::string prefix = Tmp("grouped");
  for (int r = 0; r < 8; ++r) {
    ChakraProtoMsg::Node n = et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 1u << 20);
    et::SetStringAttr(&n, "pg_name", r < 4 ? "1" : "2");
    ASSERT_TRUE(et::WriteTraceFile(et::RankTracePath(prefix, r), {n}).ok());
  }
  RunOptions o = ProfileRun(prefix);
  o.comm_group_config = groups;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nccl_choices.size(), 2u);  // one per group: the group is part of the key
  EXPECT_EQ(r->nccl_choices[0].group_size, 4);
  EXPECT_EQ(r->nccl_choices[1].group_size, 4);
  EXPECT_EQ(r->nccl_choices[0].choice, r->nccl_choices[1].choice);
  EXPECT_EQ(r->nccl_choices[0].predicted, r->end);

  // The whole machine's choice for the same size is a different collective (8 GPUs).
  StatusOr<RunResult> world = RunSimulation(ProfileRun(WriteAllReduces("world", {1u << 20})));
  ASSERT_TRUE(world.ok()) << world.status().message();
  ASSERT_EQ(world->nccl_choices.size(), 1u);
  EXPECT_EQ(world->nccl_choices[0].group_size, 8);
  EXPECT_NE(world->nccl_choices[0].predicted, r->nccl_choices[0].predicted);
}

// NCCL offers tree for all-reduce only, and NVLS for a reduce-scatter or all-gather within one
// node only: across the two nodes of dgx-h100-ndr both go by ring (NCCL's flat ring), and
// forcing tree on one is a clear error naming why.
TEST(NcclRun, ReduceScatterAndAllGatherAcrossNodesGoByRing) {
  for (const char* collective : {"reduce_scatter", "all_gather"}) {
    const std::string csv = Tmp(std::string("two_nodes-") + collective + ".csv");
    std::ofstream(csv) << "gpus,size_bytes,time_us\n16,1048576,100\n16,1073741824,10000\n";
    ValidateOptions v;
    v.measurements = csv;
    v.machine = "configs/machines/dgx-h100-ndr";
    StatusOr<ValidationReport> report = Validate(v);
    ASSERT_TRUE(report.ok()) << report.status().message();
    ASSERT_EQ(report->rows.size(), 2u);
    for (const ValidationRow& row : report->rows) {
      EXPECT_EQ(row.choice.rfind("ring/", 0), 0u)
          << collective << " " << row.size << " " << row.choice;
    }
    v.algorithm = "tree";
    StatusOr<ValidationReport> tree = Validate(v);
    ASSERT_FALSE(tree.ok()) << collective;
    EXPECT_NE(tree.status().message().find("NCCL's tree runs all-reduce only"), std::string::npos)
        << tree.status().message();
    v.algorithm = "nvls";
    StatusOr<ValidationReport> nvls = Validate(v);
    ASSERT_FALSE(nvls.ok()) << collective;
    EXPECT_NE(nvls.status().message().find("within one node only"), std::string::npos)
        << nvls.status().message();
  }
}

// Inside one node NCCL's tree is a chain, which Orrery does not model; a group inside one node
// of the two-node dgx-h100-ndr is therefore never run as "tree" (which would be the ring in its
// node at tree's constants: it won at 128 MiB before), and forcing tree on it is a clear error.
// The whole machine, two nodes, still runs tree when forced.
TEST(NcclRun, AGroupInsideOneNodeIsNeverRunAsTree) {
  const std::vector<uint64_t> sizes = {uint64_t{1} << 16, uint64_t{4} << 20, uint64_t{128} << 20};
  const std::string prefix = WriteTwoGroupAllReduces("node_grouped", sizes, 8);
  const std::string groups = prefix + ".groups.json";
  RunOptions o;
  o.workload = prefix;
  o.system_config = "configs/machines/dgx-h100-ndr/system.yaml";
  o.network_config = "configs/machines/dgx-h100-ndr/network.yaml";
  o.comm_group_config = groups;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nccl_choices.size(), 2 * sizes.size());  // per group and size
  for (const NcclTunedCollective& c : r->nccl_choices) {
    EXPECT_EQ(c.group_size, 8);
    EXPECT_EQ(c.choice.rfind("tree/", 0), std::string::npos) << c.size << " B: " << c.choice;
  }
  o.nccl_algorithm = "tree";
  StatusOr<RunResult> tree = RunSimulation(o);
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("inside one node NCCL's tree is a chain"),
            std::string::npos)
      << tree.status().message();

  const std::string world = Tmp("two_nodes_world");
  for (int r = 0; r < 16; ++r) {
    ASSERT_TRUE(et::WriteTraceFile(
                    et::RankTracePath(world, r),
                    {et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, uint64_t{128} << 20)})
                    .ok());
  }
  o.workload = world;
  o.comm_group_config = "";
  StatusOr<RunResult> across = RunSimulation(o);
  ASSERT_TRUE(across.ok()) << across.status().message();
  ASSERT_EQ(across->nccl_choices.size(), 1u);
  EXPECT_EQ(across->nccl_choices[0].choice.rfind("tree/", 0), 0u) << across->nccl_choices[0].choice;
}

// A group the simulator runs as one flat ring over its members (group-collectives: flat, or a
// group that is not a sub-grid of the network) is offered ring only: any other choice would be
// that ring at another algorithm's constants, under that algorithm's name. On dgx-h100-ndr a
// node's eight GPUs under flat, and twelve GPUs over two nodes under the profile's hierarchical
// mode, both take ring at every size, and forcing another algorithm names why; the same node's
// group under hierarchical still takes NVLS at 128 MiB.
TEST(NcclRun, AGroupRunAsAFlatRingIsOfferedRingOnly) {
  int replaced = 0;
  const std::string flat =
      CopyProfile("dgx-h100-ndr", "ndr_flat", "system.yaml", [&](const std::string& line) {
        if (line != "group-collectives: hierarchical") return line;
        ++replaced;
        return std::string("group-collectives: flat");
      });
  ASSERT_EQ(replaced, 1);
  const std::vector<uint64_t> sizes = {uint64_t{1} << 16, uint64_t{4} << 20, uint64_t{128} << 20};
  auto workload = [&](const std::string& name, int split) {
    return WriteTwoGroupAllReduces(name, sizes, split);
  };
  struct Case {
    std::string dir;
    int split;
  };
  for (const Case& c : {Case{flat, 8}, Case{"configs/machines/dgx-h100-ndr", 12}}) {
    RunOptions o;
    o.workload = workload("flat_ring_" + std::to_string(c.split), c.split);
    o.system_config = c.dir + "/system.yaml";
    o.network_config = c.dir + "/network.yaml";
    o.comm_group_config = o.workload + ".groups.json";
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << c.dir << ": " << r.status().message();
    ASSERT_EQ(r->nccl_choices.size(), 2 * sizes.size()) << c.dir;  // per group and size
    bool checked = false;
    for (const NcclTunedCollective& t : r->nccl_choices) {
      // Under flat both groups are flat; under hierarchical only the 12-GPU one is.
      if (c.split == 12 && t.group_size != 12) continue;
      checked = true;
      EXPECT_EQ(t.choice.rfind("ring/", 0), 0u) << c.dir << " " << t.size << " B: " << t.choice;
    }
    EXPECT_TRUE(checked);
    o.nccl_algorithm = c.split == 8 ? "nvls" : "nvlstree";
    StatusOr<RunResult> forced = RunSimulation(o);
    ASSERT_FALSE(forced.ok()) << c.dir;
    EXPECT_NE(forced.status().message().find("runs as one flat ring over its members"),
              std::string::npos)
        << forced.status().message();
  }
  // The profile's own hierarchical mode runs a node's group with NCCL's choice there.
  RunOptions o;
  o.workload = workload("hierarchical_nodes", 8);
  o.system_config = "configs/machines/dgx-h100-ndr/system.yaml";
  o.network_config = "configs/machines/dgx-h100-ndr/network.yaml";
  o.comm_group_config = o.workload + ".groups.json";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::set<std::string> large;
  for (const NcclTunedCollective& t : r->nccl_choices) {
    if (t.size == sizes.back()) large.insert(t.choice.substr(0, t.choice.find('/')));
  }
  EXPECT_EQ(large, std::set<std::string>{"nvls"});
}

// A ring's steps inside the node each pay the protocol's step-latency-us on top of its floor
// (nccl/nccl_model.h, LatencyAt): on dgx-a100 a 256 MiB all-reduce (ring/Simple, 14 steps)
// ends exactly 14 x 2.93 us later than on the same profile without it; a 7-step reduce-scatter
// 7 x 2.93 us later.
TEST(NcclRun, EveryRingStepInsideTheNodePaysTheProtocolsStepLatency) {
  int dropped = 0;
  const std::string plain =
      CopyProfile("dgx-a100", "a100_no_steps", "nccl.yaml", [&](const std::string& line) {
        const size_t at = line.find(", step-latency-us:");
        if (at == std::string::npos) return line;
        ++dropped;
        return line.substr(0, at) + "}";
      });
  ASSERT_EQ(dropped, 2);  // LL128's and Simple's
  const std::string workload = WriteAllReduces("steps", {256u << 20});
  auto run = [&](const std::string& dir) {
    RunOptions o;
    o.workload = workload;
    o.system_config = dir + "/system.yaml";
    o.network_config = dir + "/network.yaml";
    return RunSimulation(o);
  };
  StatusOr<RunResult> with = run("configs/machines/dgx-a100");
  StatusOr<RunResult> without = run(plain);
  ASSERT_TRUE(with.ok()) << with.status().message();
  ASSERT_TRUE(without.ok()) << without.status().message();
  ASSERT_EQ(with->nccl_choices.size(), 1u);
  ASSERT_EQ(without->nccl_choices.size(), 1u);
  EXPECT_EQ(with->nccl_choices[0].choice, "ring/Simple");
  EXPECT_EQ(without->nccl_choices[0].choice, "ring/Simple");
  EXPECT_EQ(with->end - without->end, Time::FromNsDouble(14 * 2930.0));

  const std::string csv = Tmp("a100_rs.csv");
  std::ofstream(csv) << "gpus,size_bytes,time_us\n8,268435456,1000\n";
  ValidateOptions v;
  v.measurements = csv;
  v.collective = "reduce_scatter";
  v.machine = "configs/machines/dgx-a100";
  StatusOr<ValidationReport> a = Validate(v);
  v.machine = plain;
  StatusOr<ValidationReport> b = Validate(v);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(a->rows.size(), 1u);
  ASSERT_EQ(b->rows.size(), 1u);
  EXPECT_EQ(a->rows[0].choice, "ring/Simple");
  EXPECT_NEAR(a->rows[0].simulated_us - b->rows[0].simulated_us, 7 * 2.93, 1e-6);
}

// Forcing an algorithm (NCCL_ALGO) keeps to it at every size.
TEST(NcclRun, AForcedAlgorithmIsKept) {
  RunOptions o = ProfileRun(WriteAllReduces("forced", {1024, 1u << 30}));
  o.nccl_algorithm = "ring";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nccl_choices.size(), 2u);
  EXPECT_EQ(r->nccl_choices[0].choice, "ring/LL");
  EXPECT_EQ(r->nccl_choices[1].choice, "ring/Simple");
}

// NCCL_ALGO limits all-reduce, reduce-scatter and all-gather only: an all-to-all (NCCL's
// point-to-point sends) and a broadcast (which falls back to ring, NCCL 2.22) still run under
// --nccl-algorithm nvls, as NCCL's ring would run them; the all-reduce keeps nvls. They had been
// refused ("NCCL's NVLS runs all-reduce, reduce-scatter and all-gather only").
TEST(NcclRun, AForcedAlgorithmLeavesOtherCollectivesAlone) {
  const std::string prefix = Tmp("forced_other");
  for (int r = 0; r < 8; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes = {
        et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 1u << 26),
        et::MakeCollNode(1, "a2a", ChakraProtoMsg::ALL_TO_ALL, 1u << 26, {0}),
        et::MakeCollNode(2, "bcast", ChakraProtoMsg::BROADCAST, 1u << 20, {1})};
    ASSERT_TRUE(et::WriteTraceFile(et::RankTracePath(prefix, r), nodes).ok());
  }
  RunOptions o = ProfileRun(prefix);
  o.nccl_algorithm = "nvls";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nccl_choices.size(), 3u);
  EXPECT_EQ(r->nccl_choices[0].choice, "nvls/Simple");
  EXPECT_EQ(r->nccl_choices[1].choice.rfind("p2p/", 0), 0u) << r->nccl_choices[1].choice;
  EXPECT_EQ(r->nccl_choices[2].choice.rfind("ring/", 0), 0u) << r->nccl_choices[2].choice;
  // An all-reduce across two nodes under nvls: the one real reason is given, and the choices
  // the forced algorithm left out are counted on one line, not listed as reasons.
  const std::string two_nodes = Tmp("forced_two_nodes");
  for (int rank = 0; rank < 16; ++rank) {
    ASSERT_TRUE(
        et::WriteTraceFile(et::RankTracePath(two_nodes, rank),
                           {et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 1u << 26)})
            .ok());
  }
  RunOptions ndr;
  ndr.workload = two_nodes;
  ndr.system_config = "configs/machines/dgx-h100-ndr/system.yaml";
  ndr.network_config = "configs/machines/dgx-h100-ndr/network.yaml";
  ndr.nccl_algorithm = "nvls";
  r = RunSimulation(ndr);
  ASSERT_FALSE(r.ok());
  const std::string error = r.status().message();
  EXPECT_NE(error.find("nvls/Simple: NCCL's NVLS runs within one node only"), std::string::npos)
      << error;
  EXPECT_NE(error.find("other choices left out by the forced algorithm"), std::string::npos)
      << error;
  EXPECT_EQ(error.find("ring/Simple"), std::string::npos) << error;
}

// A bad nccl-model names the system file, the key and the value.
TEST(NcclRun, AMissingModelIsOneClearError) {
  const std::string sys = Tmp("bad_system.yaml");
  std::ofstream(sys) << "nccl-model: no_such_nccl.yaml\nall-reduce-implementation: [ring]\n";
  RunOptions o = ProfileRun(WriteAllReduces("bad", {1024}));
  o.system_config = sys;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find(sys + ": 'nccl-model' no_such_nccl.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no_such_nccl.yaml"), std::string::npos) << msg;
}

// A collective no choice can run for one and the same reason (here a reduction without
// 'local-mem-bw') gets that reason once, as without the model, not once per choice.
TEST(NcclRun, OneReasonForEveryChoiceIsGivenOnce) {
  const std::string dir =
      CopyProfile("hgx-h100", "no_mem_bw", "system.yaml", [](const std::string& line) {
        return line.rfind("local-mem-bw:", 0) == 0 ? std::string("local-mem-bw: 0") : line;
      });
  RunOptions o = ProfileRun(WriteAllReduces("no_mem_bw", {1u << 20}));
  o.system_config = dir + "/system.yaml";
  o.network_config = dir + "/network.yaml";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  const std::string reason = "all-reduce needs 'local-mem-bw' (> 0) in " + dir + "/system.yaml";
  const size_t at = msg.find(reason);
  ASSERT_NE(at, std::string::npos) << msg;
  EXPECT_EQ(msg.find(reason, at + 1), std::string::npos) << msg;
  EXPECT_EQ(msg.find("no algorithm of the NCCL model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 0 'ar0'"), std::string::npos) << msg;
}

// A model that does not define the forced algorithm lists the ones it has.
TEST(NcclRun, AnUnknownForcedAlgorithmListsTheModelsOnes) {
  RunOptions o = ProfileRun(WriteAllReduces("tree", {1024}));
  o.nccl_algorithm = "tree";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("'nccl-model' nccl.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("its algorithms: nvls, ring"), std::string::npos) << msg;
}

// The tuner probes the likeliest choice first and stops probing another once it runs past the
// best time found. What it picks must be what probing every choice to the end picks: the
// fastest, the first listed on a tie. Each choice alone (a model holding just that algorithm and
// protocol) gives its full time; the whole model must pick the least of them, on one node
// (hgx-h100: ring and NVLS) and on two (dgx-h100-ndr: ring and tree), small to large.
TEST(NcclRun, TheTunerPicksWhatProbingEveryChoiceToTheEndPicks) {
  for (const std::string profile : {"configs/machines/hgx-h100", "configs/machines/dgx-h100-ndr"}) {
    StatusOr<NcclModel> model = LoadNcclModel(profile + "/nccl.yaml");
    ASSERT_TRUE(model.ok()) << model.status().message();
    StatusOr<std::vector<NcclChoice>> choices = Choices(*model, "");
    ASSERT_TRUE(choices.ok());
    RunOptions o;
    o.system_config = profile + "/system.yaml";
    o.network_config = profile + "/network.yaml";
    const int npus = profile.find("ndr") != std::string::npos ? 16 : 8;
    for (uint64_t size :
         {uint64_t{1024}, uint64_t{65536}, uint64_t{4} << 20, uint64_t{256} << 20}) {
      o.workload = Tmp("probe_" + std::to_string(npus) + "_" + std::to_string(size));
      for (int r = 0; r < npus; ++r) {
        ASSERT_TRUE(
            et::WriteTraceFile(et::RankTracePath(o.workload, r),
                               {et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, size)})
                .ok());
      }
      o.nccl_model = "";
      StatusOr<RunResult> whole = RunSimulation(o);
      ASSERT_TRUE(whole.ok()) << whole.status().message();
      ASSERT_EQ(whole->nccl_choices.size(), 1u);
      std::string fastest;
      Time fastest_time = Time::Infinite();
      int ran = 0;
      for (const NcclChoice& c : *choices) {
        NcclModel one;
        for (NcclAlgorithm a : model->algorithms) {
          if (a.name != c.algorithm) continue;
          a.protocols = {c.protocol};
          one.algorithms.push_back(a);
        }
        for (const NcclProtocol& p : model->protocols) {
          if (p.name == c.protocol) one.protocols.push_back(p);
        }
        o.nccl_model = Tmp("one_choice.yaml");
        std::ofstream(o.nccl_model) << FormatNcclModel(one, "# " + c.algorithm + "/" + c.protocol);
        StatusOr<RunResult> alone = RunSimulation(o);
        if (!alone.ok()) {  // a choice NCCL does not run here: tree on one node, NVLS across
          EXPECT_EQ(c.algorithm, npus == 8 ? "tree" : "nvls") << alone.status().message();
          continue;
        }
        ++ran;
        ASSERT_EQ(alone->nccl_choices.size(), 1u);
        if (alone->nccl_choices[0].predicted < fastest_time) {
          fastest_time = alone->nccl_choices[0].predicted;
          fastest = alone->nccl_choices[0].choice;
        }
      }
      EXPECT_GE(ran, 4) << profile;
      EXPECT_EQ(whole->nccl_choices[0].choice, fastest) << profile << " " << size << " B";
      EXPECT_EQ(whole->nccl_choices[0].predicted, fastest_time) << profile << " " << size << " B";
    }
  }
}

// What an NCCL-model run chose for each (group, collective type, size).
using Seen = std::map<std::tuple<int, int, uint64_t>, NcclTunedCollective>;

// Communicator groups that each run a few collectives, on a network, with dgx-h100-ndr's system
// and NCCL model: run together (one trace, every group) and each group alone.
class ProbeSharing {
 public:
  ProbeSharing(std::string name, std::map<int, std::vector<int>> groups, int npus)
      : name_(std::move(name)), groups_(std::move(groups)), npus_(npus) {
    std::ofstream f(Tmp(name_ + "_groups.json"));
    f << "{";
    for (const auto& [g, members] : groups_) {
      f << (g == groups_.begin()->first ? "" : ", ") << "\"" << g << "\": [";
      for (size_t i = 0; i < members.size(); ++i) f << (i ? ", " : "") << members[i];
      f << "]";
    }
    f << "}";
  }

  static constexpr std::pair<ChakraProtoMsg::CollectiveCommType, uint64_t> kCollectives[] = {
      {ChakraProtoMsg::ALL_REDUCE, 65536},
      {ChakraProtoMsg::ALL_REDUCE, 8u << 20},
      {ChakraProtoMsg::ALL_GATHER, 1u << 20}};

  // The choices of a run of group `only`'s collectives (every group's when 0), each NPU running
  // its groups' one after another.
  Seen Run(const std::string& network, Backend backend, int only) const {
    RunOptions o;
    o.workload = Tmp(name_ + "_" + std::to_string(only));
    o.system_config = "configs/machines/dgx-h100-ndr/system.yaml";
    o.network_config = network;
    o.comm_group_config = Tmp(name_ + "_groups.json");
    o.backend = backend;
    for (int npu = 0; npu < npus_; ++npu) {
      std::vector<ChakraProtoMsg::Node> nodes = {et::MakeCompNode(1, "start", 1)};
      for (const auto& [g, members] : groups_) {
        if ((only != 0 && g != only) ||
            std::find(members.begin(), members.end(), npu) == members.end()) {
          continue;
        }
        for (const auto& [type, size] : kCollectives) {
          const uint64_t id = nodes.size() + 1;
          ChakraProtoMsg::Node n = et::MakeCollNode(id, "c" + std::to_string(id), type, size);
          et::AddDataDeps(&n, {id - 1});
          et::SetStringAttr(&n, "pg_name", std::to_string(g));
          nodes.push_back(n);
        }
      }
      EXPECT_TRUE(et::WriteTraceFile(et::RankTracePath(o.workload, npu), nodes).ok());
    }
    StatusOr<RunResult> r = RunSimulation(o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    Seen seen;
    if (!r.ok()) return seen;
    for (const NcclTunedCollective& c : r->nccl_choices) {
      seen[{c.group, static_cast<int>(c.type), c.size}] = c;
    }
    return seen;
  }

  // Every group run together, then each alone: each gets the same choice and time either way
  // (alone, nothing is shared). Returns the run together.
  Seen Together(const std::string& network, Backend backend) {
    const Seen together = Run(network, backend, 0);
    EXPECT_EQ(together.size(), groups_.size() * std::size(kCollectives));
    alone_.clear();
    for (const auto& [g, members] : groups_) {
      const Seen one = Run(network, backend, g);
      EXPECT_EQ(one.size(), std::size(kCollectives));
      alone_.insert(one.begin(), one.end());
    }
    EXPECT_EQ(alone_.size(), together.size());
    for (const auto& [key, c] : together) {
      const NcclTunedCollective& by_itself = alone_.at(key);
      EXPECT_FALSE(by_itself.shared);
      EXPECT_EQ(c.choice, by_itself.choice) << "group " << std::get<0>(key) << " " << c.size;
      EXPECT_EQ(c.predicted, by_itself.predicted) << "group " << std::get<0>(key) << " " << c.size;
    }
    return together;
  }
  // What group `g`'s collective got when run alone, after Together.
  const NcclTunedCollective& Alone(int g, int type, uint64_t size) const {
    return alone_.at({g, type, size});
  }

 private:
  std::string name_;
  std::map<int, std::vector<int>> groups_;
  int npus_;
  Seen alone_;
};

// Groups that are copies of each other on a network of dimensions (the same members, in the same
// order, moved to another node or slot, or along a ring or mesh) share one set of probes. That is
// sound only if probing each alone gives the same times, bit for bit, which this checks on
// [Ring 4, Switch 2, Switch 4] and [Mesh 4, Switch 2, Switch 4] networks: on the analytical
// backends one of each pair reuses the other's probes, each probed alone gets the same times,
// and every group gets what it gets probed alone; with a slow link, the groups whose routes
// cross it are probed on their own and the others still share. On the packet backend copies
// share when their routes are alike: where each route is the only one it can take (a mesh's
// line, one switch, and across dimensions, which it crosses in order as the analytical backends
// do), always; where there are several (two ways round a ring of 4), ECMP's hash of the NPU ids
// picks one, so a copy may share or not, and every group still gets what it gets probed alone
// (with the hash as it is, none of those share).
TEST(NcclRun, GroupsThatAreCopiesOfEachOtherShareTheirProbes) {
  const std::string dims =
      "npus_count: [ 4, 2, 4 ]\nbandwidth: [ 100.0, 50.0, 12.5 ]\n"
      "latency: [ 500.0, 700.0, 3000.0 ]\n";
  const std::string ring = Tmp("copies_net.yml");
  std::ofstream(ring) << "topology: [ Ring, Switch, Switch ]\n" << dims;
  const std::string mesh = Tmp("copies_mesh_net.yml");
  std::ofstream(mesh) << "topology: [ Mesh, Switch, Switch ]\n" << dims;
  // The ring network with one link of group 2's ring (and of group 6) at half speed.
  const std::string slow = Tmp("copies_slow_net.yml");
  std::ofstream(slow) << ReadWholeFile(ring)
                      << "slow-links: [\"npu12<->npu13\"]\nslow-link-bandwidth-scale: 0.5\n";
  // NPU id = ring (or mesh) position + 4 * slot + 8 * node. Pairs (1, 2), (3, 4), ...: a whole
  // ring in another slot and node; three of a ring in another slot; two of a ring moved along
  // it, to another slot and node; one NPU in each of nodes 0-1 and its copy in another slot;
  // one in each slot and nodes 0-1, and in another position; one in each slot in another node;
  // three of a ring moved along it, to another slot; one NPU in each of nodes 0-2 and its copy
  // in nodes 1-3, another slot and position.
  ProbeSharing sharing("copies",
                       {{1, {0, 1, 2, 3}},
                        {2, {12, 13, 14, 15}},
                        {3, {0, 2, 3}},
                        {4, {4, 6, 7}},
                        {5, {1, 2}},
                        {6, {12, 13}},
                        {7, {0, 8}},
                        {8, {5, 13}},
                        {9, {0, 4, 8, 12}},
                        {10, {3, 7, 11, 15}},
                        {11, {0, 4}},
                        {12, {10, 14}},
                        {13, {1, 2, 3}},
                        {14, {4, 5, 6}},
                        {15, {0, 8, 16}},
                        {16, {13, 21, 29}}},
                       32);
  // Per run, the pairs (by their second group) that are not alike: with the slow link, those
  // whose routes cross it; on the packet backend, those with several shortest routes (the ring's
  // NPUs 2 apart), where ECMP's hash of the NPU ids picks differently for each copy.
  const struct {
    const std::string& network;
    Backend backend;
    std::set<int> unlike;
  } kRuns[] = {{ring, Backend::kAnalyticalAware, {}}, {ring, Backend::kAnalyticalUnaware, {}},
               {mesh, Backend::kAnalyticalAware, {}}, {mesh, Backend::kPacket, {}},
               {ring, Backend::kPacket, {2, 4, 14}},  {slow, Backend::kAnalyticalAware, {2, 6}}};
  for (const auto& run : kRuns) {
    const Seen together = sharing.Together(run.network, run.backend);
    for (const auto& [key, c] : together) {
      const auto [g, type, size] = key;
      if (g % 2 == 1) continue;
      const NcclTunedCollective& other = together.at({g - 1, type, size});
      if (run.unlike.count(g) != 0) {
        EXPECT_FALSE(c.shared || other.shared)
            << run.network << " groups " << g - 1 << ", " << g << " " << size;
        continue;
      }
      // Of a pair, the one asked second (they run at once) reuses the other's probes.
      EXPECT_NE(c.shared, other.shared)
          << run.network << " groups " << g - 1 << ", " << g << " " << size;
      EXPECT_EQ(sharing.Alone(g, type, size).choice, sharing.Alone(g - 1, type, size).choice)
          << run.network << " group " << g << " " << size;
      EXPECT_EQ(sharing.Alone(g, type, size).predicted, sharing.Alone(g - 1, type, size).predicted)
          << run.network << " group " << g << " " << size;
    }
    // With the slow link, group 2's 8 MiB all-reduce is slower than that of its copy, group 1.
    if (run.network == slow) {
      const int all_reduce = static_cast<int>(ChakraProtoMsg::ALL_REDUCE);
      EXPECT_GT(together.at({2, all_reduce, 8u << 20}).predicted,
                together.at({1, all_reduce, 8u << 20}).predicted);
    }
  }
}

// On an explicit graph (a DGX-style machine: 3 nodes of 4 GPUs, each GPU's NIC on a two-tier
// fat-tree of 2 leaves of 6 NICs and 2 spines) copies share probes only when the routes among
// their members are alike (RouteSignature). NICs 0-5 (node 0, GPUs 0-1 of node 1) are on leaf 0,
// NICs 6-11 on leaf 1. Pairs (1, 2) and (3, 4): the same GPUs of another node; (5, 6): GPUs of
// nodes 0 and 2 in another slot, across the leaves either way; (7, 8) are not alike: GPU 0 of
// nodes 0 and 1 share a leaf, GPU 2 of those nodes do not, so their messages take a spine. With
// node 2's GPU 9 NVSwitch link slow, (1, 2) and (3, 4) are not alike either. Each group probed
// alone gets what it gets run together.
TEST(NcclRun, CopiesOnAGraphShareProbesWhenTheirRoutesAreAlike) {
  const std::string net = Tmp("graph_copies_net.yml");
  std::ofstream(net) << "machine: dgx\ngpus-per-node: 4\nnodes: 3\nnvswitch-bandwidth: 419.0\n"
                        "nvswitch-latency: 350.0\nnic-per-gpu: 1\nnic-bandwidth: 400.0\n"
                        "fabric-latency: 1000.0\nleaf-radix: 6\nspines: 2\n";
  ProbeSharing sharing("graph_copies",
                       {{1, {0, 1, 2, 3}},
                        {2, {8, 9, 10, 11}},
                        {3, {1, 2}},
                        {4, {9, 10}},
                        {5, {0, 8}},
                        {6, {3, 11}},
                        {7, {0, 4}},
                        {8, {2, 6}}},
                       12);
  const std::string slow_net = Tmp("graph_copies_slow_net.yml");
  std::ofstream(slow_net) << ReadWholeFile(net)
                          << "slow-links: [\"npu9<->nvs2\"]\nslow-link-bandwidth-scale: 0.5\n";
  const int all_reduce = static_cast<int>(ChakraProtoMsg::ALL_REDUCE);
  for (const auto& [slow, backend] :
       {std::pair{false, Backend::kAnalyticalAware}, std::pair{true, Backend::kAnalyticalAware},
        std::pair{false, Backend::kPacket}, std::pair{true, Backend::kPacket}}) {
    const Seen together = sharing.Together(slow ? slow_net : net, backend);
    for (const auto& [key, c] : together) {
      const auto [g, type, size] = key;
      if (g % 2 == 1) continue;
      const NcclTunedCollective& other = together.at({g - 1, type, size});
      // On the packet backend (5, 6) cross the spines on the routes ECMP's hash picks, which
      // differ between the two.
      const bool alike = g != 8 && !(slow && g <= 4) && !(backend == Backend::kPacket && g == 6);
      if (alike) {
        // Of a pair, the one asked second (they run at once) reuses the other's probes.
        EXPECT_NE(c.shared, other.shared)
            << "groups " << g - 1 << ", " << g << " " << size << " " << BackendName(backend);
        EXPECT_EQ(sharing.Alone(g, type, size).predicted,
                  sharing.Alone(g - 1, type, size).predicted)
            << "group " << g << " " << size;
      } else {
        EXPECT_FALSE(c.shared || other.shared)
            << "groups " << g - 1 << ", " << g << " " << size << (slow ? " slow" : "") << " "
            << BackendName(backend);
      }
    }
    // Through a spine: two more links each way.
    EXPECT_GT(together.at({8, all_reduce, 8u << 20}).predicted,
              together.at({7, all_reduce, 8u << 20}).predicted);
    if (slow) {
      EXPECT_GT(together.at({2, all_reduce, 8u << 20}).predicted,
                together.at({1, all_reduce, 8u << 20}).predicted);
    }
  }
}

}  // namespace
}  // namespace orrery

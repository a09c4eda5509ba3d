// The shipped machine profiles against every published measurement in ../shared/validation (see
// its README): the targets, checked on every run. Each profile's README says which file
// its numbers were fitted to; the others are predictions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "validate/calibrate.h"
#include "validate/nccl_tests.h"
#include "validate/validate.h"

namespace orrery {
namespace {

std::string Validation(const std::string& file) {
  const std::string dir = SharedDir("validation");  // ../shared/validation
  EXPECT_FALSE(dir.empty()) << SharedDirMissing("validation");
  return dir + "/" + file;
}

// A shipped profile by name, or a profile directory by path.
std::string Machine(const std::string& name) {
  return name.find('/') != std::string::npos ? name : "configs/machines/" + name;
}

struct Errors {
  double at_least_1mib = 0;  // geomean |error| over rows >= 1 MiB
  double at_least_1gib = 0;  // over rows >= 1 GiB
  double all = 0;            // over every row
  size_t rows = 0;
  std::vector<ValidationRow> table;
};

Errors Summarise(const ValidationReport& r) {
  std::vector<double> big, huge, all;
  for (const ValidationRow& v : r.rows) {
    all.push_back(v.error);
    if (v.size >= (1u << 20)) big.push_back(v.error);
    if (v.size >= (1u << 30)) huge.push_back(v.error);
  }
  return {GeomeanAbs(big), huge.empty() ? 0 : GeomeanAbs(huge), GeomeanAbs(all), all.size(),
          r.rows};
}

Errors Check(const std::string& file, const std::string& machine,
             const std::string& algorithm = "auto", int gpus = 0) {
  ValidateOptions o;
  o.measurements = file.find('/') == std::string::npos ? Validation(file) : file;
  o.machine = Machine(machine);
  o.algorithm = algorithm;
  o.gpus = gpus;
  StatusOr<ValidationReport> r = Validate(o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {1, 1, 1, 0, {}};
  std::printf("%s on %s:\n%s", file.c_str(), machine.c_str(), FormatValidation(*r).c_str());
  return Summarise(*r);
}

// The targets on `file`: `rows` rows, geomean |error| at most `from_1mib` over the rows of
// 1 MiB and more, at most 15% over all.
Errors ExpectTargets(const std::string& file, const std::string& machine, size_t rows,
                     double from_1mib, const std::string& algorithm = "auto", int gpus = 0) {
  Errors e = Check(file, machine, algorithm, gpus);
  EXPECT_EQ(e.rows, rows) << file << " " << algorithm;
  EXPECT_LE(e.at_least_1mib, from_1mib) << file << " " << algorithm;
  EXPECT_LE(e.all, 0.15) << file << " " << algorithm;
  return e;
}

// Fitted file of hgx-h100 (Azure ND H100 v5, NCCL's default: NVLS at large sizes).
TEST(PublishedData, AzureH100SingleNode) {
  ExpectTargets("azure-h100-8gpu-all_reduce-busbw.csv", "hgx-h100", 24, 0.05);
}

// Held out from hgx-h100: another H100 NVSwitch machine (nccl-tests issue #290).
TEST(PublishedData, NcclTests290SingleNodeIsPredicted) {
  ExpectTargets("h100-8gpu-nvswitch-all_reduce-default.log", "hgx-h100", 6, 0.05);
}

// Fitted file of dgx-h100-ndr (NCCL's default on two nodes: tree).
TEST(PublishedData, TwoNodeNdrDefault) {
  ExpectTargets("h100-2x8gpu-ndr-all_reduce-default.log", "dgx-h100-ndr", 11, 0.05);
}

// Held out from dgx-h100-ndr: the same machine forced to ring (NCCL_ALGO=RING in the log).
TEST(PublishedData, TwoNodeNdrRingIsPredicted) {
  ExpectTargets("h100-2x8gpu-ndr-all_reduce-ring.log", "dgx-h100-ndr", 11, 0.05);
}

// p5-h100-efa: 2 to 32 nodes (see its README for what was fitted and what is predicted).
TEST(PublishedData, AwsP5Efa) {
  ExpectTargets("aws-p5-efa-all_reduce.csv", "p5-h100-efa", 45, 0.10);
}

// All-to-all across 2 to 32 AWS p5 nodes (the same repository as the all-reduce table p5-h100-efa
// is fitted on; held out, validate/measured/README.md): NCCL's point-to-point sends to every peer,
// each GPU's inter-node share through its own NICs (the per-NIC limit: at every node count the
// measured bus bandwidth stays under what one GPU's 50 GB/s of EFA allows, 94 GB/s on 2 nodes, 52
// on 32). Within the EFA target (10%), and from 1 GiB every row within 10%. What misses is
// many nodes at small sizes (32-128 MiB on 16 and 32 nodes 27-51% fast): each GPU then sends 127 or
// 255 messages of 128 KiB to 1 MiB, and EFA's cost per message is not modelled. Until all-to-all
// ran as NCCL's sends (direct), ASTRA-sim's ring all-to-all carried each piece through up to n - 1
// GPUs and their NICs (docs/validation.md, "All-to-all").
TEST(PublishedData, AwsP5EfaAllToAllIsPredicted) {
  Errors e = ExpectTargets("validate/measured/aws-p5-efa-alltoall.csv", "p5-h100-efa", 35, 0.10);
  size_t large = 0;
  for (const ValidationRow& row : e.table) {
    if (row.size < (uint64_t{1} << 30)) continue;
    ++large;
    EXPECT_LE(std::abs(row.error), 0.10) << row.gpus << " GPUs, " << row.size;
    EXPECT_EQ(row.choice, "p2p/Simple");  // NCCL's sends, timed under Simple
  }
  EXPECT_EQ(large, 10u);
  std::printf("p5-h100-efa on the held-out all-to-all: %.1f%% over 35 rows\n", 100 * e.all);
}

// All-gather across 2 to 32 AWS p5 nodes (validate/measured/aws-p5-efa-all_gather.csv, the same
// repository as the all-reduce table p5-h100-efa is fitted on; held out). NCCL runs it as its
// ring (8 GPUs a node, no CollNet: neither NVLS nor PAT applies), whose per-step latency across
// the network dominates up to hundreds of MiB on many nodes: 255 steps on 32 nodes, 31 of them
// over EFA. Before the profile modelled NCCL's pipelined slices (32 active, not 4 waves of 8) and
// its steps across the network (network-step-latency-us, from NCCL's constants and the latency
// aws-ofi-nccl reports), the rows drifted as nodes grew: 12.6% on 2 nodes to 33% on 32, 41-66%
// slow at 32-512 MiB on 32 nodes. Within the EFA target (10%) overall, and on every node
// count within 12%.
TEST(PublishedData, AwsP5EfaAllGatherIsPredicted) {
  Errors e = ExpectTargets("validate/measured/aws-p5-efa-all_gather.csv", "p5-h100-efa", 35, 0.10);
  std::map<int, std::vector<double>> by_gpus;
  for (const ValidationRow& row : e.table) {
    by_gpus[row.gpus].push_back(row.error);
    EXPECT_EQ(row.choice.rfind("ring/", 0), 0u) << row.gpus << " GPUs, " << row.size;
  }
  ASSERT_EQ(by_gpus.size(), 5u);
  for (const auto& [gpus, errors] : by_gpus) {
    EXPECT_LE(GeomeanAbs(errors), 0.12) << gpus << " GPUs";
    std::printf("p5-h100-efa on the held-out all-gather, %d GPUs: %.1f%%\n", gpus,
                100 * GeomeanAbs(errors));
  }
  std::printf("p5-h100-efa on the held-out all-gather: %.1f%% over 35 rows\n", 100 * e.all);
}

// One node of the multi-node profiles: nccl-tests on 8 GPUs runs as a communicator group of the
// first node (validate's InOneNode; group-collectives: hierarchical), with the profile's own
// node model (one lane, store-and-forward, 8 channels of 4 slices) and nvls constants taken from
// hgx-h100 (fitted on Azure's table, so that table is not held out for them; #290's is). The
// multi-node fits keep NVLS-tree's own constants (nvlstree).
TEST(PublishedData, MultiNodeProfilesPredictOneNode) {
  for (const char* machine : {"dgx-h100-ndr", "p5-h100-efa"}) {
    ExpectTargets("h100-8gpu-nvswitch-all_reduce-default.log", machine, 6, 0.05);
    Errors azure =
        ExpectTargets("azure-h100-8gpu-all_reduce-busbw.csv", machine, 24, 0.05, "auto", 8);
    for (const ValidationRow& v : azure.table) EXPECT_EQ(v.gpus, 8);
  }
}

// Another collective, held out from hgx-h100 (fitted on all-reduce only): reduce-scatter on one
// H100 NVSwitch node, NVIDIA/nccl issue #1047 (validate/measured/README.md). The posted tables
// keep one Rank line or none, so the GPU count (8, from the count column) is given.
// - Ring (labelled so in the post) is predicted within the targets, forced and as
//   Orrery's tuner picks it: NVLS moves the whole buffer up each link for a reduce-scatter
//   (system/README.md, "NVLS"), so ring is the faster choice, as NCCL's maintainers say it is
//   (NVIDIA/nccl #1083), and the tuner takes it.
// - NVLS forced is within the targets too, and slower than ring as measured. NVLS's
//   efficiency (fitted on all-reduce) bounds a port's two directions together; a lone
//   reduce-scatter loads one direction only, so it runs at Simple's rate (nccl/nccl_model.h,
//   EfficiencyAt; NVIDIA/nccl #1083, #1506). That rule came after this table had been seen
//   (it was 22.6% slow without it), so the NVLS half is a weaker hold-out than the ring half.
TEST(PublishedData, HgxH100ReduceScatterIsPredicted) {
  const std::string ring_log = "validate/measured/h100-8gpu-nvswitch-reduce_scatter-ring.log";
  const std::string nvls_log = "validate/measured/h100-8gpu-nvswitch-reduce_scatter-nvls.log";
  for (const char* algorithm : {"ring", "auto"}) {
    Errors ring = ExpectTargets(ring_log, "hgx-h100", 7, 0.05, algorithm, 8);
    for (const ValidationRow& row : ring.table) {
      EXPECT_EQ(row.choice, "ring/Simple") << algorithm << " " << row.size;
    }
  }
  Errors nvls = ExpectTargets(nvls_log, "hgx-h100", 5, 0.05, "nvls", 8);
  Errors ring_on_nvls_sizes = Check(nvls_log, "hgx-h100", "ring", 8);
  ASSERT_EQ(nvls.rows, 5u);
  ASSERT_EQ(ring_on_nvls_sizes.rows, 5u);
  for (size_t i = 0; i < 5; ++i) {
    // Measured, NVLS is the slower (422 us against ring's 377 us at 128 MiB); so is the model.
    EXPECT_GT(nvls.table[i].simulated_us, ring_on_nvls_sizes.table[i].simulated_us);
  }
}

// All-gather, held out from hgx-h100: NVIDIA/nccl issue #1506's figures for one NVLink4 node at
// 1 GiB (approximate, machine unstated: validate/measured/README.md). NVLS moves D down each link
// and D/n up, ring (n-1)/n·D each way, so NVLS is the slower (300 against 350 GB/s busbw); the
// same post's NVLS all-reduce reaches 470. Like the reduce-scatter's NVLS half, the all-gather's
// NVLS row was seen before the one-way rule (nccl/nccl_model.h, EfficiencyAt; 13.8% slow
// without it), so it supports the rule rather than testing it blind.
TEST(PublishedData, NvlinkAllGatherIsPredicted) {
  const std::string prefix = "validate/measured/nvlink4-8gpu-";
  Errors nvls = ExpectTargets(prefix + "all_gather-nvls.csv", "hgx-h100", 1, 0.05, "nvls");
  Errors ring = ExpectTargets(prefix + "all_gather-ring.csv", "hgx-h100", 1, 0.05, "ring");
  Errors tuned = ExpectTargets(prefix + "all_gather-ring.csv", "hgx-h100", 1, 0.05);
  Errors all_reduce = ExpectTargets(prefix + "all_reduce-nvls.csv", "hgx-h100", 1, 0.05);
  ASSERT_EQ(nvls.table.size(), 1u);
  ASSERT_EQ(ring.table.size(), 1u);
  ASSERT_EQ(tuned.table.size(), 1u);
  ASSERT_EQ(all_reduce.table.size(), 1u);
  EXPECT_GT(nvls.table[0].simulated_us, ring.table[0].simulated_us);
  EXPECT_EQ(tuned.table[0].choice, "ring/Simple");
  EXPECT_EQ(all_reduce.table[0].choice, "nvls/Simple");
}

// Other GPU counts, held out from hgx-h100 (fitted on 8 GPUs): NVLS all-reduce on 5 to 8 GPUs of
// one H100 node, NVIDIA/nccl issue #1455 (validate/measured/README.md). NVLS moves D + D/n each
// way over each GPU's link, so the algorithm bandwidth grows with n as n / (n + 1); the post's
// figures do (258 to 273 GB/s). Within the targets, and relative to 8 GPUs each count is
// predicted within 1% (moving D each way, whatever n, was 5.5% off at 5 GPUs). At 2 GiB NCCL's
// NVLS chunk is 128 KiB for every count here (nccl/nccl_model.h, NcclChunking).
TEST(PublishedData, HgxH100NvlsScalesWithTheGpuCount) {
  Errors e = ExpectTargets("validate/measured/h100-nvswitch-nvls-all_reduce-gpus.csv", "hgx-h100",
                           4, 0.05, "nvls");
  ASSERT_EQ(e.table.size(), 4u);
  const ValidationRow& eight = e.table.back();
  ASSERT_EQ(eight.gpus, 8);
  for (const ValidationRow& row : e.table) {
    EXPECT_EQ(row.choice, "nvls/Simple");
    const double relative = (1 + row.error) / (1 + eight.error) - 1;
    EXPECT_LE(std::abs(relative), 0.01) << row.gpus << " GPUs";
  }
}

// A sibling GPU, held out from hgx-h100: Azure's ND H200 v5 table (validate/measured/README.md),
// from the same guide as the H100 table hgx-h100 was fitted on, run through hgx-h100 unchanged.
// HGX H200 keeps H100's NVLink4 and third-generation NVSwitch (NVLS), with more and faster HBM
// and, here, NCCL 2.20.5 instead of 2.18.5. Within the targets, and from 64 MiB every row
// within 4%. From 64 KiB to 4 MiB the model runs 24-38% slow: H200's table is flat at 31 us from
// 64 KiB to 512 KiB, where the H100 table (and so the fit) sits at 42 us.
TEST(PublishedData, HgxH100PredictsTheSiblingH200) {
  Errors e =
      ExpectTargets("validate/measured/azure-h200-8gpu-all_reduce-busbw.csv", "hgx-h100", 24, 0.05);
  size_t large = 0;
  for (const ValidationRow& row : e.table) {
    if (row.size < (uint64_t{64} << 20)) continue;
    ++large;
    EXPECT_LE(std::abs(row.error), 0.04) << row.size;
    EXPECT_EQ(row.choice, "nvls/Simple") << row.size;
  }
  EXPECT_EQ(large, 8u);
  std::printf("hgx-h100 on Azure's H200 table: %.1f%% from 1 MiB, %.1f%% over all sizes\n",
              100 * e.at_least_1mib, 100 * e.all);
}
// Held out from dgx-a100, which was built from public specifications and hgx-h100's fit only
// (sources in validate/measured/README.md): the sibling-generation prediction. Geomean within
// 15% over all sizes on every table; from 1 MiB within 5% on two of the four (OCI, the 8-rank
// gcm table). The misses, within 10% from 1 MiB: the galvatron `-g 8` capture, 8.7% (its 2-32
// MiB rows run 11-24% slower than simulated, and its 128-512 MiB rows 5-12% slower than the
// other tables'), and Azure's ND A100 v4 table, 5.3% (16-128 MiB 15-21% slower than simulated).
// Azure's was 4.6% while protocol efficiency rounded its bytes to a power of two of up to 1 MiB,
// which added up to a fifth of them between 1 and 16 MiB (workload/executor.h,
// kEfficiencyGrainBytes).
TEST(PublishedData, DgxA100SiblingGenerationIsPredicted) {
  const struct {
    const char* file;
    size_t rows;
    bool within_5_percent_from_1mib;
  } kFiles[] = {{"validate/measured/a100-8gpu-nvswitch-all_reduce-oci.log", 28, true},
                {"validate/measured/a100-8gpu-nvswitch-all_reduce-galvatron.log", 11, false},
                {"validate/measured/a100-8gpu-nvswitch-all_reduce-gcm.log", 6, true},
                {"validate/measured/azure-a100-8gpu-all_reduce-busbw.csv", 24, false}};
  for (const auto& f : kFiles) {
    Errors e = Check(f.file, "dgx-a100");
    EXPECT_EQ(e.rows, f.rows) << f.file;
    EXPECT_LE(e.all, 0.15) << f.file;
    EXPECT_LE(e.at_least_1mib, f.within_5_percent_from_1mib ? 0.05 : 0.10) << f.file;
    EXPECT_GT(e.at_least_1gib, 0) << f.file;
    EXPECT_LE(e.at_least_1gib, 0.10) << f.file;
  }
}

// Other collectives on the sibling generation, held out from dgx-a100: all-reduce, reduce-scatter
// and all-gather measured on one 8 x A100 node (`-g 8`) and kept together in SuperBench's test
// fixture (validate/measured/README.md); their 0-byte rows are left out (NCCL runs nothing for
// them) and give nccl-tests' own time per iteration, about 34 us, at which rows up to 64 KiB are
// compared (validate/README.md, "nccl-tests' own floor"; without it 7.2%, 14.0% and 22.2% over
// all sizes). All-reduce is within the targets. Reduce-scatter and all-gather are within
// 15% over all sizes but miss 5% from 1 MiB: reduce-scatter 5.2%, where the model runs LL128's
// 1-8 MiB 18-35% fast (it was 4.9% while protocol efficiency added up to a fifth of the bytes
// there: kEfficiencyGrainBytes), all-gather 13.9%, 5-29% fast at every size from 1 MiB.
// Measured, this machine's all-gather is 4-13% slower than its reduce-scatter at every size from
// 16 MiB (busbw 223 against 232 GB/s at 8 GiB), where the model makes it slightly faster (no
// reduction). Part of that is the out-of-place all-gather's copy of each rank's own part
// (DgxA100AllGatherInPlace, next); the rest is this host's larger floors, which a fit on its
// three collectives finds (OneA100HostsThreeCollectivesFittedTogether) and no public
// specification gives. From 1 GiB all three are within 10%.
TEST(PublishedData, DgxA100OtherCollectivesOfOneMachine) {
  const std::string prefix = "validate/measured/a100-8gpu-nvswitch-";
  Errors all_reduce = ExpectTargets(prefix + "all_reduce-superbench.log", "dgx-a100", 32, 0.05);
  Errors reduce_scatter = Check(prefix + "reduce_scatter-superbench.log", "dgx-a100");
  EXPECT_EQ(reduce_scatter.rows, 29u);
  EXPECT_LE(reduce_scatter.all, 0.15);
  EXPECT_LE(reduce_scatter.at_least_1mib, 0.10);
  Errors all_gather = Check(prefix + "all_gather-superbench.log", "dgx-a100");
  EXPECT_EQ(all_gather.rows, 29u);
  EXPECT_LE(all_gather.all, 0.15);
  EXPECT_GT(all_gather.at_least_1mib, 0.05);  // the miss docs/validation.md states
  for (const Errors* e : {&all_reduce, &reduce_scatter, &all_gather}) {
    EXPECT_GT(e->at_least_1gib, 0);
    EXPECT_LE(e->at_least_1gib, 0.10);
  }
  std::printf(
      "dgx-a100, one A100 machine's other collectives, from 1 MiB / all sizes: "
      "all-reduce %.1f%% / %.1f%%, reduce-scatter %.1f%% / %.1f%% (not within 5%% from 1 MiB), "
      "all-gather %.1f%% / %.1f%% (not within 5%% from 1 MiB)\n",
      100 * all_reduce.at_least_1mib, 100 * all_reduce.all, 100 * reduce_scatter.at_least_1mib,
      100 * reduce_scatter.all, 100 * all_gather.at_least_1mib, 100 * all_gather.all);
}

// The same all-gather compared on its in-place times (--in-place). Orrery's collectives copy
// nothing locally, so they are the in-place collective; out of place, NCCL's ring all-gather
// also copies each rank's own part of the output (its first step, directCopySend), and on this
// machine that costs 3-6% from 128 MiB (155 us at 1 GiB; from 512 MiB 0.7-0.9 times copying a
// rank's 1/8 at the A100-40GB's 1555 GB/s, read and write). The model's time is the same either
// way; from 1 GiB the in-place rows are within 5% where the out-of-place ones are not, from 1 MiB
// the all-gather still misses (1-128 MiB run 14-27% fast, as the reduce-scatter's 1-32 MiB).
TEST(PublishedData, DgxA100AllGatherInPlace) {
  ValidateOptions o;
  o.measurements = "validate/measured/a100-8gpu-nvswitch-all_gather-superbench.log";
  o.machine = Machine("dgx-a100");
  StatusOr<ValidationReport> out = Validate(o);
  ASSERT_TRUE(out.ok()) << out.status().message();
  o.in_place = true;
  StatusOr<ValidationReport> in = Validate(o);
  ASSERT_TRUE(in.ok()) << in.status().message();
  std::printf("in place:\n%s", FormatValidation(*in).c_str());
  ASSERT_EQ(in->rows.size(), out->rows.size());
  for (size_t i = 0; i < in->rows.size(); ++i) {
    // (The harness floor differs: each column's own rows of 0 bytes.)
    EXPECT_EQ(in->rows[i].collective_us, out->rows[i].collective_us);
    if (in->rows[i].size >= (1u << 27)) {  // the copy shows from 128 MiB
      EXPECT_GT(out->rows[i].measured_us, in->rows[i].measured_us) << in->rows[i].size;
    }
  }
  const Errors e_out = Summarise(*out), e_in = Summarise(*in);
  EXPECT_EQ(e_in.rows, 29u);
  EXPECT_GT(e_out.at_least_1gib, 0.05);
  EXPECT_LE(e_in.at_least_1gib, 0.05);
  EXPECT_LT(e_in.at_least_1mib, e_out.at_least_1mib);
  EXPECT_GT(e_in.at_least_1mib, 0.05);  // the miss docs/validation.md states
  std::printf(
      "dgx-a100, SuperBench's all-gather from 1 GiB / 1 MiB / all sizes: out of place %.1f%% / "
      "%.1f%% / %.1f%%, in place %.1f%% / %.1f%% / %.1f%%\n",
      100 * e_out.at_least_1gib, 100 * e_out.at_least_1mib, 100 * e_out.all,
      100 * e_in.at_least_1gib, 100 * e_in.at_least_1mib, 100 * e_in.all);
}

// Broadcast and reduce on the same A100 host (SuperBench's fixture, held out from dgx-a100):
// NCCL runs them as rings, a pipeline of slices along the GPUs (broadcast-reduce-algorithm:
// ring, which nccl-model implies; system/README.md), and the profile, built for all-reduce,
// predicts both within the targets. Their rows up to 64 KiB sit at nccl-tests' own time
// per iteration, as the host's other logs do. As binomial trees (the default without an NCCL
// model) the root would send the whole buffer three times
// (Validate.BroadcastAndReduceRunAsNcclsRing).
TEST(PublishedData, DgxA100BroadcastAndReduceOfOneMachine) {
  const std::string prefix = "validate/measured/a100-8gpu-nvswitch-";
  for (const char* c : {"broadcast", "reduce"}) {
    Errors e = ExpectTargets(prefix + c + "-superbench.log", "dgx-a100", 32, 0.05);
    for (const ValidationRow& row : e.table) {
      if (row.size >= (uint64_t{1} << 30)) {
        EXPECT_LE(std::abs(row.error), 0.03) << c << row.size;
      }
    }
    std::printf("dgx-a100, SuperBench's %s: %.1f%% from 1 MiB, %.1f%% over all sizes\n", c,
                100 * e.at_least_1mib, 100 * e.all);
  }
}

// Another A100 node's all-reduce, all-gather and all-to-all (Azure NDm A100 v4, NCCL 2.17.1, 8
// MPI ranks, in-place; MSCCL++'s performance page, validate/measured/README.md): a latency at
// 1 KiB and a bus bandwidth at 1 GiB each, held out from dgx-a100. At 1 GiB the all-reduce is
// within 1%, the all-gather and all-to-all 9% slow: this node moves them at 254 GB/s of bus
// bandwidth (85% of the links) against its all-reduce's 231, where SuperBench's host ran its
// all-gather slower than its all-reduce (213-221 GB/s at 1 GiB): the two A100 nodes' all-gathers
// differ by 15% in place, and the profile (232 GB/s) sits between them. The all-to-all is NCCL's
// point-to-point sends to every peer at once; the profiles ran it as a ring until this table
// showed it 4.3x (1 GiB) and 4.9x (1 KiB) slow (Validate.AllToAllInsideANodeRunsAtThePortRate).
// The 1 KiB rows were timed with CUDA-graph launches (-G 1), below the launch floors the
// profiles carry, and are printed, not checked.
TEST(PublishedData, DgxA100AllToAllAndAnotherNodesCollectives) {
  for (const char* c : {"all_reduce", "all_gather", "alltoall"}) {
    const std::string f = std::string("validate/measured/a100-8gpu-ndmv4-") + c + ".csv";
    Errors e = Check(f, "dgx-a100");
    ASSERT_EQ(e.table.size(), 2u) << f;
    const ValidationRow& gib = e.table[1];
    ASSERT_EQ(gib.size, uint64_t{1} << 30) << f;
    EXPECT_EQ(gib.choice, std::string(c) == "alltoall" ? "p2p/Simple" : "ring/Simple") << f;
    EXPECT_LE(std::abs(gib.error), std::string(c) == "all_reduce" ? 0.02 : 0.10) << f;
    std::printf("dgx-a100 on NDm A100 v4's %s: %+.1f%% at 1 GiB, %+.1f%% at 1 KiB\n", c,
                100 * gib.error, 100 * e.table[0].error);
  }
  // The two A100 nodes' in-place all-gathers at 1 GiB, and the profile's between them.
  ValidateOptions o;
  o.machine = Machine("dgx-a100");
  o.in_place = true;
  o.measurements = "validate/measured/a100-8gpu-nvswitch-all_gather-superbench.log";
  StatusOr<ValidationReport> superbench = Validate(o);
  o.measurements = "validate/measured/a100-8gpu-ndmv4-all_gather.csv";
  o.in_place = false;  // the page's figures are in place already
  StatusOr<ValidationReport> ndmv4 = Validate(o);
  ASSERT_TRUE(superbench.ok() && ndmv4.ok());
  auto at_1gib = [](const ValidationReport& r) {
    for (const ValidationRow& row : r.rows)
      if (row.size == (uint64_t{1} << 30)) return row;
    return ValidationRow{};
  };
  const ValidationRow sb = at_1gib(*superbench), nd = at_1gib(*ndmv4);
  ASSERT_GT(sb.measured_us, 0);
  ASSERT_GT(nd.measured_us, 0);
  EXPECT_GT(sb.measured_us / nd.measured_us, 1.14);  // 4258.8 against 3704.9 us
  EXPECT_EQ(sb.simulated_us, nd.simulated_us);
  EXPECT_GT(nd.simulated_us, nd.measured_us);
  EXPECT_LT(sb.simulated_us, sb.measured_us);
}

// Calibrating on several logs at once tells apart what one log cannot. Azure's H100 table runs
// NVLS at every large size, and NVLS always runs with Simple, so alone it fixes only the product
// of their efficiencies: fitted on it alone, Simple stays where the profile has it (0.787). With
// the ring reduce-scatter table of another H100 node beside it (held out from the shipped
// profile), Simple comes out at 0.82: 450 GB/s x 0.82 = 369 GB/s of ring bus bandwidth, the
// ~370 GB/s NCCL's maintainers give for ring on NVLink4 (../shared/validation/README.md), which
// neither table states. Both tables are fitted within 1%, and #290's NVLS all-reduce, in neither,
// is predicted within 5% (1.4%).
TEST(PublishedData, CalibratingOnTwoLogsTellsSimpleFromNvls) {
  auto simple = [](const NcclModel& m) {
    for (const NcclProtocol& p : m.protocols)
      if (p.name == "Simple") return p.efficiency;
    return -1.0;
  };
  CalibrateOptions o;
  o.measurements = Validation("azure-h100-8gpu-all_reduce-busbw.csv");
  o.machine = Machine("hgx-h100");
  o.fit = {"nvls", "Simple"};
  StatusOr<CalibrationResult> alone = Calibrate(o);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_NEAR(simple(alone->model), 0.7868, 0.005);

  o.more = {"validate/measured/h100-8gpu-nvswitch-reduce_scatter-ring.log"};
  o.out = ::testing::TempDir() + "/h100-two-logs";
  StatusOr<CalibrationResult> both = Calibrate(o);
  ASSERT_TRUE(both.ok()) << both.status().message();
  std::printf("Simple's efficiency: %.4f alone, %.4f with the ring table\n", simple(alone->model),
              simple(both->model));
  EXPECT_GE(simple(both->model), 0.80);
  EXPECT_LE(simple(both->model), 0.84);
  ASSERT_EQ(both->validations.size(), 2u);
  for (const ValidationReport& v : both->validations) EXPECT_LE(v.geomean_abs_error, 0.01);
  Errors held_out = Check("h100-8gpu-nvswitch-all_reduce-default.log", o.out);
  EXPECT_EQ(held_out.rows, 6u);
  EXPECT_LE(held_out.at_least_1mib, 0.05);
}

// Options that calibrate dgx-a100 on validate/measured/`file`, writing the fit to TempDir/`out`.
CalibrateOptions DgxA100CalibratedOn(const std::string& file, const std::string& out) {
  CalibrateOptions o;
  o.measurements = "validate/measured/" + file;
  o.machine = Machine("dgx-a100");
  o.out = ::testing::TempDir() + "/" + out;
  return o;
}

// dgx-a100 calibrated on OCI's A100 table alone (fitted within 0.7%) predicts the 8-rank table
// from 1 MiB within the 5% (1.4%) and the `-g 8` capture within 10% (5.5%; 4.8% while
// protocol efficiency added up to a fifth of the bytes between 1 and 16 MiB:
// kEfficiencyGrainBytes), and Azure's A100 table within 15% over all sizes (8.3%; 6.0% from
// 1 MiB, where the H100-derived profile gives 5.3%; the next test says why the tables differ).
TEST(PublishedData, DgxA100CalibratedOnOneTablePredictsTheOthers) {
  const CalibrateOptions o =
      DgxA100CalibratedOn("a100-8gpu-nvswitch-all_reduce-oci.log", "a100-oci");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->validations[0].geomean_abs_error, 0.05);
  const struct {
    const char* file;
    double from_1mib;
  } kHeldOut[] = {{"validate/measured/a100-8gpu-nvswitch-all_reduce-galvatron.log", 0.10},
                  {"validate/measured/a100-8gpu-nvswitch-all_reduce-gcm.log", 0.05}};
  for (const auto& f : kHeldOut) {
    Errors e = Check(f.file, o.out);
    EXPECT_LE(e.at_least_1mib, f.from_1mib) << f.file;
    EXPECT_LE(e.all, 0.15) << f.file;
  }
  Errors azure = Check("validate/measured/azure-a100-8gpu-all_reduce-busbw.csv", o.out);
  EXPECT_EQ(azure.rows, 24u);
  EXPECT_LE(azure.all, 0.15);
}

// Calibrating on a log that starts below the profile's 16 chunks (SuperBench's all-reduce, from
// 4 B): calibrate's grid of simulated sizes must divide into those chunks as the runs' sizes do,
// or a remainder chunk takes a second round on a lane of its own, the grid's times jump by up to
// 2x between neighbouring sizes, and the fit follows the jumps (it once ran 17% fast at every
// size from 256 MiB, with Simple at 0.953 of line rate). Fitted on all 32 sizes, it holds at
// every one of the largest, and its Simple efficiency comes out at the H100-derived 0.787.
TEST(PublishedData, CalibratingOnALogFromFourBytesFitsEverySize) {
  const CalibrateOptions o =
      DgxA100CalibratedOn("a100-8gpu-nvswitch-all_reduce-superbench.log", "a100-superbench");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->validations[0].rows.size(), 32u);
  EXPECT_LE(r->validations[0].geomean_abs_error, 0.02);
  size_t large = 0;
  for (const ValidationRow& row : r->validations[0].rows) {
    if (row.size < (uint64_t{256} << 20)) continue;
    ++large;
    EXPECT_LE(std::abs(row.error), 0.03) << row.size;
  }
  EXPECT_EQ(large, 6u);
  // The same host's other collectives on the fitted profile (docs/validation.md, "A sibling
  // generation").
  for (const char* c : {"reduce_scatter", "all_gather"}) {
    const std::string f =
        std::string("validate/measured/a100-8gpu-nvswitch-") + c + "-superbench.log";
    Errors e = Check(f, o.out);
    EXPECT_EQ(e.rows, 29u) << f;
    std::printf("%s on the fitted profile: %.1f%% from 1 MiB, %.1f%% over all sizes\n", c,
                100 * e.at_least_1mib, 100 * e.all);
  }
  for (const NcclProtocol& p : r->model.protocols) {
    std::printf("fitted %s: latency %.3f us, efficiency %.4f\n", p.name.c_str(), p.latency_us,
                p.efficiency);
  }
}

// One host's three collectives fitted together (SuperBench's all-reduce, reduce-scatter and
// all-gather, all 90 sizes), each row compared as validate compares it: at least nccl-tests' own
// time per iteration, which each log's rows of 0 bytes give (about 34 us: one process drives the
// 8 GPUs, `-g 8`). Then one set of parameters puts all three within 5% from 1 MiB: the model's
// structure (each collective its own ring steps and floors, an all-gather no reduction) holds on
// this host. Without the floor (--harness-floor none) the rows under it, 32 B to 64 KiB, pull
// the floors down to fit them, and the all-gather misses: what this test said before the
// harness's floor was modelled. A fit, not a prediction: the shipped dgx-a100 is not fitted to it.
TEST(PublishedData, OneA100HostsThreeCollectivesFittedTogether) {
  CalibrateOptions o = DgxA100CalibratedOn("a100-8gpu-nvswitch-all_reduce-superbench.log", "");
  o.out = "";
  o.more = {"validate/measured/a100-8gpu-nvswitch-reduce_scatter-superbench.log",
            "validate/measured/a100-8gpu-nvswitch-all_gather-superbench.log"};
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->validations.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Errors e = Summarise(r->validations[i]);
    const std::string& collective = r->validations[i].collective;
    std::printf("%s fitted together: %.1f%% from 1 MiB, %.1f%% over all sizes\n",
                collective.c_str(), 100 * e.at_least_1mib, 100 * e.all);
    EXPECT_EQ(e.table.size(), i == 0 ? 32u : 29u) << collective;
    EXPECT_LE(e.at_least_1mib, 0.05) << collective;
    EXPECT_LE(e.all, 0.05) << collective;
  }
  for (const NcclProtocol& p : r->model.protocols) {
    std::printf("fitted %s: latency %.3f us, efficiency %.4f\n", p.name.c_str(), p.latency_us,
                p.efficiency);
  }

  o.harness_floor_us = 0;
  StatusOr<CalibrationResult> none = Calibrate(o);
  ASSERT_TRUE(none.ok()) << none.status().message();
  ASSERT_EQ(none->validations.size(), 3u);
  EXPECT_EQ(none->validations[2].collective, "all_gather");
  const Errors all_gather = Summarise(none->validations[2]);
  std::printf("without the harness floor, all_gather: %.1f%% from 1 MiB\n",
              100 * all_gather.at_least_1mib);
  EXPECT_GT(all_gather.at_least_1mib, 0.05);
}

// Calibrate, then predict on the sibling generation: dgx-a100 fitted on one A100 host's
// all-reduce and reduce-scatter (SuperBench's, 61 sizes, within 1.5%) predicts the same host's
// all-gather, which it never saw, within 10% from 1 MiB and within 15% over all sizes, but not
// within 5%: 8.7% out of place, 6.0% in place (its own-part copy, DgxA100AllGatherInPlace). The
// fit finds this host's larger Simple floor (about 95 us; H100's fitted table has no ring/Simple
// row inside one node, and H100's held-out ring reduce-scatter is consistent with its 32.8 us),
// which the all-reduce alone cannot tell from its step latencies.
TEST(PublishedData, OneA100HostsAllReduceAndReduceScatterPredictItsAllGather) {
  CalibrateOptions o =
      DgxA100CalibratedOn("a100-8gpu-nvswitch-all_reduce-superbench.log", "a100-ar-rs");
  o.more = {"validate/measured/a100-8gpu-nvswitch-reduce_scatter-superbench.log"};
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->validations.size(), 2u);
  for (const ValidationReport& v : r->validations) EXPECT_LE(v.geomean_abs_error, 0.03);
  for (const NcclProtocol& p : r->model.protocols) {
    std::printf("fitted %s: latency %.3f us, efficiency %.4f\n", p.name.c_str(), p.latency_us,
                p.efficiency);
    if (p.name == "Simple") {
      EXPECT_GT(p.latency_us, 80);
    }
  }
  ValidateOptions v;
  v.measurements = "validate/measured/a100-8gpu-nvswitch-all_gather-superbench.log";
  v.machine = o.out;
  for (bool in_place : {false, true}) {
    v.in_place = in_place;
    StatusOr<ValidationReport> ag = Validate(v);
    ASSERT_TRUE(ag.ok()) << ag.status().message();
    const Errors e = Summarise(*ag);
    std::printf("all-gather %s, predicted: %.1f%% from 1 MiB, %.1f%% over all sizes\n",
                in_place ? "in place" : "out of place", 100 * e.at_least_1mib, 100 * e.all);
    EXPECT_EQ(e.rows, 29u);
    EXPECT_LE(e.at_least_1mib, 0.10);
    EXPECT_GT(e.at_least_1mib, 0.05);  // the miss docs/validation.md states
    EXPECT_LE(e.all, 0.15);
  }
}

// The five A100 all-reduce tables fitted together from 1 MiB (59 sizes): fitting A100's own
// measurements instead of carrying H100's does not get every table within 5% either. The
// galvatron capture stays just above it, and getting the others close takes a Simple floor of
// about 99 us, three times H100's fitted 32.8 us, which no H100 table shows: the `-g 8` tables'
// 8-128 MiB rows run slower than the 8-rank table's (docs/validation.md, "A sibling generation").
TEST(PublishedData, FiveA100TablesFittedTogetherStillMissOne) {
  CalibrateOptions o = DgxA100CalibratedOn("a100-8gpu-nvswitch-all_reduce-oci.log", "");
  o.out = "";
  o.min_size = 1 << 20;
  const std::string dir = "validate/measured/";
  o.more = {dir + "a100-8gpu-nvswitch-all_reduce-galvatron.log",
            dir + "a100-8gpu-nvswitch-all_reduce-gcm.log",
            dir + "a100-8gpu-nvswitch-all_reduce-superbench.log",
            dir + "azure-a100-8gpu-all_reduce-busbw.csv"};
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->validations.size(), 5u);
  const size_t kRows[] = {14, 11, 6, 14, 14};
  size_t within = 0;
  for (size_t i = 0; i < 5; ++i) {
    const Errors e = Summarise(r->validations[i]);
    std::printf("table %zu fitted together: %.1f%% from 1 MiB\n", i, 100 * e.at_least_1mib);
    EXPECT_EQ(e.table.size(), kRows[i]) << i;
    EXPECT_LE(e.at_least_1mib, 0.06) << i;
    if (e.at_least_1mib <= 0.05) ++within;
  }
  EXPECT_EQ(within, 4u);
  EXPECT_GT(Summarise(r->validations[1]).at_least_1mib, 0.05);  // galvatron
  for (const NcclProtocol& p : r->model.protocols) {
    std::printf("fitted %s: latency %.3f us, efficiency %.4f\n", p.name.c_str(), p.latency_us,
                p.efficiency);
    if (p.name == "Simple") {
      EXPECT_GT(p.latency_us, 80);  // hgx-h100: 32.834
      EXPECT_NEAR(p.efficiency, 0.787, 0.01);
    }
  }
}

// Mean |log(t_a / t_b)| over the sizes of 1 MiB and more that two measured tables share.
double MeanLogDisagreement(const std::string& a, const std::string& b, size_t* shared) {
  StatusOr<std::vector<NcclMeasurement>> ma = LoadNcclMeasurements(a, 8);
  StatusOr<std::vector<NcclMeasurement>> mb = LoadNcclMeasurements(b, 8);
  EXPECT_TRUE(ma.ok() && mb.ok()) << a << " " << b;
  if (!ma.ok() || !mb.ok() || ma->size() != 1 || mb->size() != 1) return 0;
  double sum = 0;
  *shared = 0;
  for (const NcclRow& x : (*ma)[0].rows) {
    for (const NcclRow& y : (*mb)[0].rows) {
      if (x.size == y.size && x.size >= (1u << 20)) {
        sum += std::abs(std::log(x.time_us / y.time_us));
        ++*shared;
      }
    }
  }
  return *shared ? sum / *shared : 0;
}

// Why one A100 model cannot be within 5% of every A100 table in mean |log| error: the tables
// disagree with each other by more than twice that at the same sizes. For any model m, |log(g/m)| +
// |log(m/c)| >= |log(g/c)| row by row, so if two tables differ by a mean |log| of D on their shared
// rows, one of them is at least D/2 from any model there (in mean |log| error, of which the geomean
// is a gentler summary). The galvatron capture and the 8-rank gcm table (both 8 x A100 SXM4 on
// NVSwitch) differ by 11.1% on their 6 shared sizes (32 MiB-1 GiB); galvatron and Azure's table
// by 15.7% on 11 sizes; OCI's and Azure's by 13.5% on 14.
TEST(PublishedData, TheA100TablesDisagreeWithEachOtherBeyondTheTarget) {
  const std::string dir = "validate/measured/";
  size_t shared = 0;
  const double galvatron_gcm =
      MeanLogDisagreement(dir + "a100-8gpu-nvswitch-all_reduce-galvatron.log",
                          dir + "a100-8gpu-nvswitch-all_reduce-gcm.log", &shared);
  EXPECT_EQ(shared, 6u);
  EXPECT_GT(galvatron_gcm, 0.10);
  const double galvatron_azure =
      MeanLogDisagreement(dir + "a100-8gpu-nvswitch-all_reduce-galvatron.log",
                          dir + "azure-a100-8gpu-all_reduce-busbw.csv", &shared);
  EXPECT_EQ(shared, 11u);
  EXPECT_GT(galvatron_azure, 0.10);
  const double oci_azure =
      MeanLogDisagreement(dir + "a100-8gpu-nvswitch-all_reduce-oci.log",
                          dir + "azure-a100-8gpu-all_reduce-busbw.csv", &shared);
  EXPECT_EQ(shared, 14u);
  EXPECT_GT(oci_azure, 0.10);
  std::printf(
      "A100 tables, mean |log ratio| from 1 MiB: galvatron/gcm %.1f%%, galvatron/azure "
      "%.1f%%, oci/azure %.1f%%\n",
      100 * galvatron_gcm, 100 * galvatron_azure, 100 * oci_azure);
}

// How close is close on A100: each A100 table predicted by dgx-a100 (built without any A100
// measurement) against the same table "predicted" by another A100 machine's table, on the sizes
// of 1 MiB and more the two share (geomean |error| on those rows for both). Of the 20 ordered
// pairs of the five all-reduce tables, the profile is the closer in 15. It is never further from
// a table than every other machine is; the galvatron capture is the one table where it is
// further than most (8.7% against 3.9-9.5% from the other four).
TEST(PublishedData, DgxA100IsMostlyCloserToEachA100TableThanAnotherA100Is) {
  const std::string dir = "validate/measured/";
  const std::vector<std::string> files = {dir + "a100-8gpu-nvswitch-all_reduce-oci.log",
                                          dir + "a100-8gpu-nvswitch-all_reduce-galvatron.log",
                                          dir + "a100-8gpu-nvswitch-all_reduce-gcm.log",
                                          dir + "a100-8gpu-nvswitch-all_reduce-superbench.log",
                                          dir + "azure-a100-8gpu-all_reduce-busbw.csv"};
  std::vector<ValidationReport> reports;
  for (const std::string& f : files) {
    ValidateOptions o;
    o.measurements = f;
    o.machine = Machine("dgx-a100");
    o.min_size = 1 << 20;
    StatusOr<ValidationReport> r = Validate(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    reports.push_back(*r);
  }
  int pairs = 0, profile_closer = 0;
  for (size_t a = 0; a < files.size(); ++a) {
    double furthest_other = 0;
    for (size_t b = 0; b < files.size(); ++b) {
      if (a == b) continue;
      std::vector<double> other, model;
      for (const ValidationRow& x : reports[a].rows) {
        for (const ValidationRow& y : reports[b].rows) {
          if (x.size != y.size) continue;
          other.push_back(y.measured_us / x.measured_us - 1);
          model.push_back(x.error);
        }
      }
      ASSERT_GE(other.size(), 6u) << files[a] << " " << files[b];
      const double e_other = GeomeanAbs(other), e_model = GeomeanAbs(model);
      std::printf("%s by %s (%zu sizes): that table %.1f%%, dgx-a100 %.1f%%\n", files[a].c_str(),
                  files[b].c_str(), other.size(), 100 * e_other, 100 * e_model);
      ++pairs;
      if (e_model < e_other) ++profile_closer;
      furthest_other = std::max(furthest_other, e_other);
    }
    EXPECT_LT(Summarise(reports[a]).at_least_1mib, furthest_other) << files[a];
  }
  EXPECT_EQ(pairs, 20);
  EXPECT_GE(profile_closer, 15);
  std::printf("dgx-a100 is the closer predictor in %d of %d pairs\n", profile_closer, pairs);
}

}  // namespace
}  // namespace orrery

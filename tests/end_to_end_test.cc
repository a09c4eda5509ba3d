// Whole simulations through RunSimulation on small hand-derived workloads: compute, collectives
// and send/recv in one graph, on both backends.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "et_feeder/writer.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

RunOptions WriteCase(const std::string& name, const std::vector<std::vector<Node>>& ranks) {
  return WriteTestCase(name, ranks, kRingTestSystem, "Ring");
}

// 4 NPUs, Ring 50 GB/s 500 ns. Every NPU: fwd (5 us) -> 1 MiB all-reduce. NPU 0 also runs a
// 100 us GPU kernel after fwd, overlapping the all-reduce, then sends 1 MiB to NPU 1.
//   all-reduce: 5000 + 43000 = 48000 ns (43000 = ASTRA-sim's figure for this all-reduce alone)
//   send 0 -> 1 (one hop): 500 + 1048576 B / (50 * 2^30 / 1e9 B/ns) = 500 + 19531.25 -> 20031 ns
//   NPU 0: max(5000 + 100000, 48000 + 20031) = 105000, exposed 105000 - 105000 = 0
//   NPU 1: 48000 + 20031 = 68031, exposed 68031 - 5000 = 63031
//   NPUs 2, 3: 48000, exposed 43000
TEST(EndToEnd, ComputeCollectiveAndSendRecvInOneGraph) {
  const std::vector<std::vector<Node>> ranks = MixedGraphRanks();
  for (Backend backend : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware}) {
    RunOptions o = WriteCase("mixed", ranks);
    o.backend = backend;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->num_npus(), 4);
    EXPECT_EQ(r->npus[0].finish.WholeNs(), 105000);
    EXPECT_EQ(r->npus[0].exposed_communication().WholeNs(), 0);
    EXPECT_EQ(r->npus[1].finish.WholeNs(), 68031) << BackendName(backend);
    EXPECT_EQ(r->npus[1].exposed_communication().WholeNs(), 63031);
    EXPECT_EQ(r->npus[2].finish.WholeNs(), 48000);
    EXPECT_EQ(r->npus[3].finish.WholeNs(), 48000);
    EXPECT_EQ(r->npus[3].exposed_communication().WholeNs(), 43000);
    EXPECT_EQ(r->end.WholeNs(), 105000);
  }
}

// NPU 0 computes 10 us then sends 1 MiB to NPU 1; NPU 3 sends 1 MiB to NPU 1 at once.
std::vector<std::vector<Node>> TwoMessagesToNpu1() {
  std::vector<std::vector<Node>> ranks(4);
  ranks[0] = {et::MakeCompNode(1, "fwd", 10), et::MakeSendNode(2, 1, 1 << 20, 1, {1})};
  ranks[1] = {et::MakeRecvNode(1, 0, 1 << 20, 1), et::MakeRecvNode(2, 3, 1 << 20, 2)};
  ranks[2] = {et::MakeCompNode(1, "idle", 1)};
  ranks[3] = {et::MakeSendNode(1, 1, 1 << 20, 2)};
  return ranks;
}

// 4-NPU ring, 1 MiB messages (one hop: 500 + 19531.25 ns). NPU 0 computes 10 us, then sends to
// NPU 1 on link 0->1 (busy 10000 .. 29531.25). NPU 3 sends to NPU 1 at time 0; the two ways round
// are equally long, ties go clockwise: 3 -> 0 -> 1.
//   unaware: 3 -> 1 = 2 * 500 + 19531.25 -> 20531; 0 -> 1 ends 10000 + 20031 = 30031.
//   aware: 3's message reaches NPU 0 at 20031.25 but link 0->1 is busy until 29531.25, so it
//   arrives at 29531.25 + 500 + 19531.25 = 49562.5 -> 49562 ns.
TEST(EndToEnd, MessagesContendForALinkOnlyWhenCongestionAware) {
  RunOptions o = WriteCase("p2p", TwoMessagesToNpu1());
  o.backend = Backend::kAnalyticalUnaware;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 30031);
  EXPECT_EQ(r->npus[3].finish.WholeNs(), 20531);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 30031);

  o.backend = Backend::kAnalyticalAware;
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 30031);
  EXPECT_EQ(r->npus[3].finish.WholeNs(), 49562);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 49562);
}

// p2p-chunk-size: a send moves in pieces, as NCCL's p2p chunks, each stored and forwarded at the
// switch. 2 NPUs on a Switch of 50 GiB/s and 500 ns per link (2 links), 1 MiB:
//   whole (ASTRA-sim): 2 * (500 + 19531) = 40062 ns (whole ns per link, as ASTRA-sim);
//   in 128 KiB pieces: 2 * 500 + 19531.25 + 2441.40625 (one piece's serialization) = 22972 ns.
// The unaware backend stores nothing at the switch: 2 * 500 + 19531.25 = 20531 either way. An
// all-reduce is not a send: the key leaves it alone.
TEST(EndToEnd, SendsMoveInPiecesOfP2pChunkSize) {
  const std::vector<std::vector<Node>> p2p = {{et::MakeSendNode(1, 1, 1 << 20, 7)},
                                              {et::MakeRecvNode(1, 0, 1 << 20, 7)}};
  const std::vector<std::vector<Node>> all_reduce = {
      {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)},
      {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)}};
  std::string pieces = kRingTestSystem;
  pieces.replace(pieces.rfind('}'), 1, ", \"p2p-chunk-size\": 131072 }");
  struct Case {
    Backend backend;
    const char* system;
    int64_t send_ns;
  };
  std::map<int, int64_t> all_reduce_ns;
  int i = 0;
  for (const Case& c : {Case{Backend::kAnalyticalAware, kRingTestSystem, 40062},
                        Case{Backend::kAnalyticalAware, pieces.c_str(), 22972},
                        Case{Backend::kAnalyticalUnaware, kRingTestSystem, 20531},
                        Case{Backend::kAnalyticalUnaware, pieces.c_str(), 20531}}) {
    SCOPED_TRACE(i);
    RunOptions o = WriteTestCase("pieces" + std::to_string(i), p2p, c.system, "Switch");
    o.backend = c.backend;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->npus[1].finish.WholeNs(), c.send_ns);
    o = WriteTestCase("pieces_ar" + std::to_string(i), all_reduce, c.system, "Switch");
    o.backend = c.backend;
    r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    all_reduce_ns[i++] = r->end.WholeNs();
  }
  EXPECT_EQ(all_reduce_ns[0], all_reduce_ns[1]);
  EXPECT_EQ(all_reduce_ns[2], all_reduce_ns[3]);
}

// --link-stats on the case above (aware): both messages cross link 0->1, NPU 3's also 3->0;
// every link is busy for its messages' serialization, 1 MiB / 50 GiB/s = 19531.25 ns each,
// truncated to whole ns per message as ASTRA-sim's congestion-aware links do (19531), and
// the file ranks the links by busy time, most loaded first, with utilisation = busy / end.
TEST(EndToEnd, LinkStatsFileRanksLinksByBusyTime) {
  RunOptions o = WriteCase("linkstats", TwoMessagesToNpu1());
  o.backend = Backend::kAnalyticalAware;
  o.link_stats = TestTmp("linkstats.csv");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::ifstream in(o.link_stats);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "rank,link,bytes,busy_ns,utilisation");
  const double end = 49562;  // 29531 + 500 + 19531: each link truncates its own time
  char row[160];
  std::snprintf(row, sizeof row, "1,npu0->npu1,%d,%.3f,%.6f", 2 << 20, 39062.0, 39062.0 / end);
  EXPECT_EQ(lines[1], row);
  std::snprintf(row, sizeof row, "2,npu3->npu0,%d,%.3f,%.6f", 1 << 20, 19531.0, 19531.0 / end);
  EXPECT_EQ(lines[2], row);
  for (size_t i = 3; i < lines.size(); ++i) {  // every other link: idle
    EXPECT_NE(lines[i].find(",0,0.000,0.000000"), std::string::npos) << lines[i];
  }
  ASSERT_EQ(r->links.size(), lines.size() - 1);  // the same figures feed the summary

  o.link_stats = "/nonexistent-dir/links.csv";  // an unwritable path: a clear error
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--link-stats /nonexistent-dir/links.csv"),
            std::string::npos);
}

// One 1 MiB all-reduce per NPU, in one chunk, on a given network.
RunOptions AllReduceCase(const std::string& name, int npus, const std::string& network,
                         const std::string& impl) {
  std::vector<std::vector<Node>> ranks(npus);
  for (auto& r : ranks) r = {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)};
  RunOptions o = WriteCase(name, ranks);
  std::ofstream(o.system_config) << R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1, "all-reduce-implementation": )"
                                 << impl << R"(, "collective-optimization": "localBWAware",
    "local-mem-bw": 1600 })";
  std::ofstream(o.network_config) << network;
  return o;
}

// Switch(8), 50 GiB/s, 500 ns; one chunk of 1 MiB, msg D/8 = 131072 B, serialization
// 131072 / 53.687 = 2441.41 ns, reduction 3 * floor(131072 / 1600) = 243 ns, e = 10 ns.
// T = 2(n-1)(e + t) + (n-1) r + e = 14 (10 + t) + 1711, with t the time of one message:
//   unaware: two hops, summed then truncated once: t = floor(2 * 500 + 2441.41) = 3441
//   aware: up and down links, each truncated:      t = 2 * floor(500 + 2441.41) = 5882
// Each NPU sends to the next one through its own up-link and the receiver's own down-link,
// so nothing contends.
TEST(EndToEnd, SwitchNetworkAllReduceOnBothBackends) {
  const std::string net =
      "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  for (Backend backend : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware}) {
    RunOptions o = AllReduceCase("switch8", 8, net, R"(["ring"])");
    o.backend = backend;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t t = backend == Backend::kAnalyticalUnaware ? 3441 : 5882;
    for (const NpuStats& npu : r->npus) {
      EXPECT_EQ(npu.finish.WholeNs(), 14 * (10 + t) + 1711) << BackendName(backend);
    }
  }
}

// Ring(4) x Switch(2): dim 0 at 100 GiB/s / 100 ns, dim 1 at 25 GiB/s / 1000 ns, one 1 MiB chunk,
// localBWAware: reduce-scatter on dim 0, all-reduce on dim 1 of D/4, all-gather on dim 0.
//   RS dim 0 (n=4): msg 262144 B, t0 = floor(100 + 2441.41) = 2541, r = 3 * 163 = 489:
//     3 (10 + 2541 + 489) + 10 = 9130 on both backends (one hop, no contention)
//   AR dim 1 (n=2) of 262144 B: msg 131072, serialization 4882.81, r = 243:
//     unaware t1 = floor(2 * 1000 + 4882.81) = 6882:   2 (10 + 6882) + 243 + 10 = 14037
//     aware   t1 = 2 * floor(1000 + 4882.81) = 11764:  2 (10 + 11764) + 243 + 10 = 23801
//   AG dim 0: msg 262144, no reduction: 3 (10 + 2541) + 10 = 7663
TEST(EndToEnd, TwoDimensionalRingBySwitchOnBothBackends) {
  const std::string net =
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100.0, 25.0 ]\n"
      "latency: [ 100.0, 1000.0 ]\n";
  for (Backend backend : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware}) {
    RunOptions o = AllReduceCase("ring_switch", 8, net, R"(["ring", "ring"])");
    o.backend = backend;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t ar = backend == Backend::kAnalyticalUnaware ? 14037 : 23801;
    for (const NpuStats& npu : r->npus) {
      EXPECT_EQ(npu.finish.WholeNs(), 9130 + ar + 7663) << BackendName(backend);
    }
  }
}

// --npu-compute-scale multiplies one NPU's compute on top of --compute-scale: 10 us of compute
// with --compute-scale=2 and factors 1.5 (NPU 1) and 0.25 (NPU 3) takes 20, 30, 20 and 5 us.
TEST(EndToEnd, PerNpuComputeScaleModelsStragglers) {
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCompNode(1, "fwd", 10)};
  RunOptions o = WriteCase("straggler", ranks);
  o.compute_scale = 2;
  o.npu_compute_scale = "1:1.5,3:0.25";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<int64_t> want = {20000, 30000, 20000, 5000};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r->npus[i].finish.WholeNs(), want[i]) << "NPU " << i;

  o.npu_compute_scale = "4:2";  // the network has NPUs 0..3
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--npu-compute-scale: '4' in '4:2' is not NPU ids in [0, 3]"),
            std::string::npos)
      << r.status().message();
}

// One degraded link in a ring: `slow-links` runs npu3 <-> npu4 at half its bandwidth. The ring
// all-reduce crosses every clockwise link with the same bytes, so the slow link is busy twice as
// long for them (to a nanosecond per chunk: each chunk's time is truncated on its own), and it
// bounds the step: every ring step waits for it.
TEST(EndToEnd, ASlowLinkCarriesTheSameBytesAtHalfTheRate) {
  std::vector<std::vector<Node>> ranks(8);
  for (auto& r : ranks) {
    r = {et::MakeCollNode(1, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 8 << 20)};
  }
  for (Backend backend : {Backend::kAnalyticalAware, Backend::kPacket}) {
    RunOptions o = WriteCase("slow_link", ranks);
    o.backend = backend;
    o.record = true;
    StatusOr<RunResult> plain = RunSimulation(o);
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    std::ofstream(o.network_config, std::ios::app)
        << "slow-links: [\"npu3<->npu4\"]\nslow-link-bandwidth-scale: 0.5\n";
    StatusOr<RunResult> slow = RunSimulation(o);
    ASSERT_TRUE(slow.ok()) << slow.status().message();
    std::map<std::string, LinkStats> links;
    for (const LinkStats& l : slow->links) links[l.name] = l;
    const LinkStats& degraded = links["npu3->npu4"];
    const LinkStats& healthy = links["npu2->npu3"];
    ASSERT_GT(healthy.bytes, 0u) << BackendName(backend);
    EXPECT_EQ(degraded.bytes, healthy.bytes) << BackendName(backend);
    EXPECT_NEAR(degraded.busy.Ns(), 2 * healthy.busy.Ns(), 64) << BackendName(backend);
    EXPECT_GT(slow->end.Ns(), 1.5 * plain->end.Ns()) << BackendName(backend);
    EXPECT_LT(slow->end.Ns(), 2.0 * plain->end.Ns()) << BackendName(backend);
  }
  // The congestion-unaware backend has no links to slow: the file's key is named, once.
  RunOptions o = WriteCase("slow_link_unaware", ranks);
  o.backend = Backend::kAnalyticalUnaware;
  std::ofstream(o.network_config, std::ios::app) << "slow-links: [\"npu3<->npu4\"]\n";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), o.network_config +
                                      ":5: key 'slow-links' needs a backend that models links, "
                                      "analytical-aware or packet; --network-backend "
                                      "analytical-unaware has none");
}

// What a run records of each collective and message is what it simulated: bytes after
// --comm-scale, and the NPUs a world collective ran with when involved_dim confines it to one
// dimension of a 4 x 2 network (groups of 4, so its bus bandwidth counts 2 x 3/4 of them).
TEST(EndToEnd, RecordsShowBytesAsSimulatedAndTheNpusACollectiveSpans) {
  std::vector<std::vector<Node>> ranks(8);
  for (int r = 0; r < 8; ++r) {
    ranks[r] = {et::MakeCollNode(1, "row", ChakraProtoMsg::ALL_REDUCE, 1 << 20),
                et::MakeCollNode(2, "world", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})};
    et::SetBoolListAttr(&ranks[r][0], "involved_dim", {true, false});
  }
  ranks[0].push_back(et::MakeSendNode(3, 1, 1000, 5, {2}));
  ranks[1].push_back(et::MakeRecvNode(3, 0, 1000, 5, {2}));
  RunOptions o = WriteTestCase("records", ranks,
                               R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
      "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4,
      "all-reduce-implementation": ["ring", "ring"], "all-gather-implementation": ["ring", "ring"],
      "reduce-scatter-implementation": ["ring", "ring"],
      "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware",
      "local-mem-bw": 1600})",
                               "Ring");
  std::ofstream(o.network_config) << "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\n"
                                     "bandwidth: [ 50.0, 50.0 ]\nlatency: [ 500.0, 500.0 ]\n";
  o.record = true;
  o.comm_scale = 4;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::map<std::string, NodeRecord> npu0, npu1;
  for (const NodeRecord& n : r->activity[0]) npu0[n.name] = n;
  for (const NodeRecord& n : r->activity[1]) npu1[n.name] = n;
  EXPECT_EQ(npu0["row"].group_size, 4);
  EXPECT_EQ(npu0["row"].bytes, 4u << 20);
  EXPECT_EQ(npu0["world"].group_size, 8);
  EXPECT_EQ(npu0["world"].bytes, 4u << 20);
  EXPECT_EQ(npu0["send"].bytes, 4000u);
  EXPECT_EQ(npu1["recv"].bytes, 4000u);
}

// Two NPUs: NPU 0 runs "attn" (2e9 FLOP over 1e8 B) -> "gemm" (5e9 FLOP over 1e6 B) -> "host"
// (is_cpu_op, 7 us, replayed whatever the roofline says); NPU 1 only "gemm".
std::vector<std::vector<Node>> RooflineRanks() {
  auto roofline = [](uint64_t id, const std::string& name, uint64_t ops, uint64_t bytes,
                     uint64_t dep) {
    Node n = et::MakeCompNode(id, name, 999);  // the recorded time is ignored
    if (dep != 0) n.add_data_deps(dep);
    et::SetUint64Attr(&n, "num_ops", ops);
    et::SetUint64Attr(&n, "tensor_size", bytes);
    return n;
  };
  std::vector<std::vector<Node>> ranks(2);
  Node host = et::MakeCompNode(3, "host", 7, {2});
  for (auto& a : *host.mutable_attr()) {
    if (a.name() == "is_cpu_op") a.set_bool_val(true);  // MakeCompNode wrote false
  }
  ranks[0] = {roofline(1, "attn", 2000000000, 100000000, 0),
              roofline(2, "gemm", 5000000000, 1000000, 1), host};
  ranks[1] = {roofline(1, "gemm", 5000000000, 1000000, 0)};
  return ranks;
}

// Roofline: peak-perf 100 TFLOPS, local-mem-bw 1000 GB/s (1e12 B/s).
//   "attn": intensity 20 FLOP/B: memory roof 2e13 < peak 1e14, so 2e9 / 2e13 s = 100000 ns.
//   "gemm": intensity 5000: memory roof 5e15 > peak, so 5e9 / 1e14 s = 50000.
// NPU 0 runs attn -> gemm -> host: 157000 ns; NPU 1 only "gemm": 50000 ns.
TEST(EndToEnd, RooflineTimesComputeNodes) {
  RunOptions o = WriteCase("roofline", RooflineRanks());
  std::ofstream(o.system_config) << R"({
    "scheduling-policy": "LIFO", "collective-optimization": "baseline",
    "preferred-dataset-splits": 1, "roofline-enabled": 1, "peak-perf": 100,
    "local-mem-bw": 1000 })";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 157000);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 50000);
}

// The same nodes with a GPU model (gpu-model, beside the system configuration) in place of
// peak-perf and local-mem-bw: BF16 peak 100 TFLOPS at GEMM efficiency 0.5 (5e13 FLOP/s), HBM
// 1000 GB/s at memory efficiency 0.5 (5e11 B/s), 2 us per kernel.
//   "attn": memory roof 5e11 * 20 = 1e13 < 5e13: 2e9 / 1e13 s = 200000 ns, + 2000 = 202000.
//   "gemm": memory roof 2.5e15 > 5e13: 5e9 / 5e13 s = 100000 ns, + 2000 = 102000.
// NPU 0: 202000 + 102000 + 7000 = 311000; NPU 1: 102000. Without roofline-enabled the key is an
// error; so is a GPU model that does not load, named with the key.
TEST(EndToEnd, RooflineTakesTheGpuModelsRates) {
  RunOptions o = WriteCase("roofline_gpu", RooflineRanks());
  const std::string dir = o.system_config.substr(0, o.system_config.rfind('/') + 1);
  std::ofstream(dir + "gpu.yaml") << "name: round\npeak-tflops-bf16: 100\n"
                                     "gemm-efficiency-bf16: 0.5\nmemory-bandwidth-gbps: 1000\n"
                                     "memory-efficiency: 0.5\nkernel-overhead-us: 2\n";
  const std::string system = R"({
    "scheduling-policy": "LIFO", "collective-optimization": "baseline",
    "preferred-dataset-splits": 1, "gpu-model": "gpu.yaml", )";
  std::ofstream(o.system_config) << system << R"("roofline-enabled": 1 })";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 311000);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 102000);

  std::ofstream(o.system_config) << system << R"("roofline-enabled": 0 })";
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'gpu-model' gpu.yaml times compute nodes through the "
                                      "roofline, but 'roofline-enabled' is 0"),
            std::string::npos)
      << r.status().message();

  std::ofstream(dir + "gpu.yaml") << "peak-tflops-bf16: 100\n";  // no memory-bandwidth-gbps
  std::ofstream(o.system_config) << system << R"("roofline-enabled": 1 })";
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("'gpu-model' gpu.yaml"), std::string::npos) << m;
  EXPECT_NE(m.find("memory-bandwidth-gbps"), std::string::npos) << m;
}

// Under the roofline a GPU compute node without num_ops or tensor_size is an error naming the
// node and the missing attribute (it had taken 0 ns: a step of 690 us of compute ran as 0);
// a CPU node without them replays its duration.
TEST(EndToEnd, RooflineRefusesAComputeNodeWithoutItsAttributes) {
  Node host = et::MakeCompNode(1, "host", 7);
  for (auto& a : *host.mutable_attr()) {
    if (a.name() == "is_cpu_op") a.set_bool_val(true);
  }
  Node ops_only = et::MakeCompNode(2, "gemm", 5, {1});
  et::SetUint64Attr(&ops_only, "num_ops", 1000);
  const std::string system = R"({
    "scheduling-policy": "LIFO", "collective-optimization": "baseline",
    "preferred-dataset-splits": 1, "roofline-enabled": 1, "peak-perf": 100,
    "local-mem-bw": 1000 })";
  struct Case {
    Node node;
    std::string missing;
  };
  for (const Case& c : {Case{ops_only, "no 'tensor_size' (duration_micros 5)"},
                        Case{et::MakeCompNode(2, "fwd", 9, {1}),
                             "no 'num_ops' or 'tensor_size' (duration_micros 9)"}}) {
    RunOptions o = WriteCase("roofline_missing", {{host, c.node}, {host}});
    std::ofstream(o.system_config) << system;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_FALSE(r.ok());
    const std::string m = r.status().message();
    EXPECT_NE(m.find("roofline_missing.0.et"), std::string::npos) << m;
    EXPECT_NE(m.find("roofline-enabled times a GPU compute node from its 'num_ops' and "
                     "'tensor_size', and this node has " +
                     c.missing),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("or roofline-enabled: 0"), std::string::npos) << m;
  }
  RunOptions o = WriteCase("roofline_host", {{host}, {host}});
  std::ofstream(o.system_config) << system;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 7000);
}

// replay-only replays every node from duration_micros, and ASTRA-sim's "exposed communication"
// is then the end minus every replayed node that is not a CPU op (issue_replay adds them all to
// its GPU time). Each NPU: compute 5 us -> all-reduce recorded as 10 us -> memory load of 7 us ->
// an invalid node of 0 us (1 ns) -> NPU 0 sends, NPU 1 receives, 3 us each; NPU 0 also has a CPU
// op of 2 us after the send. NPU 0 ends at 5000 + 10000 + 7000 + 1 + 3000 + 2000 = 27001, its
// exposed communication 2000 (the CPU op); NPU 1 at 25001, exposed 0. They had been 27000 and
// 25000 (the invalid node instant), exposed 22000 and 20000 (only compute had counted).
TEST(EndToEnd, ReplayOnlyCountsEveryReplayedNodeAsAstraSimDoes) {
  auto chain = [](bool sender) {
    Node coll = et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1});
    Node load = et::MakeNode(3, "load", ChakraProtoMsg::MEM_LOAD_NODE, {2});
    et::SetUint64Attr(&load, "tensor_size", 1000);
    Node invalid = et::MakeNode(4, "nothing", ChakraProtoMsg::INVALID_NODE, {3});
    Node p2p = sender ? et::MakeSendNode(5, 1, 4096, 7, {4}) : et::MakeRecvNode(5, 0, 4096, 7, {4});
    std::vector<Node> nodes = {et::MakeCompNode(1, "fwd", 5), coll, load, invalid, p2p};
    for (Node& n : nodes) {
      if (n.id() > 1)
        n.set_duration_micros(n.id() == 2 ? 10 : n.id() == 3 ? 7 : n.id() == 4 ? 0 : 3);
    }
    if (sender) {
      Node host = et::MakeCompNode(6, "host", 2, {5});
      for (auto& a : *host.mutable_attr()) {
        if (a.name() == "is_cpu_op") a.set_bool_val(true);
      }
      nodes.push_back(host);
    }
    return nodes;
  };
  RunOptions o = WriteCase("replay_only", {chain(true), chain(false)});
  std::ofstream(o.system_config) << R"({
    "scheduling-policy": "LIFO", "collective-optimization": "baseline",
    "preferred-dataset-splits": 1, "replay-only": 1 })";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 27001);
  EXPECT_EQ(r->npus[0].exposed_communication().WholeNs(), 2000);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 25001);
  EXPECT_EQ(r->npus[1].exposed_communication().WholeNs(), 0);
  // --compute-scale multiplies compute nodes only (the replayed communication and memory had
  // doubled too): NPU 0 + 5000 + 2000, NPU 1 + 5000.
  o.compute_scale = 2;
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 34001);
  EXPECT_EQ(r->npus[1].finish.WholeNs(), 30001);
}

// --compute-scale multiplies host-side collective operators too (PyTorch's c10d::allreduce_, a
// COMM_COLL node with is_cpu_op and no comm_type: CPU work), as compute nodes: 100 us of each at
// scale 2 is 400 us (the operator had stayed at 100 us).
TEST(EndToEnd, ComputeScaleMultipliesHostSideCollectiveOperators) {
  Node op = et::MakeNode(1, "c10d::allreduce_", ChakraProtoMsg::COMM_COLL_NODE);
  op.set_duration_micros(100);
  et::SetBoolAttr(&op, "is_cpu_op", true);
  const std::vector<Node> rank = {op, et::MakeCompNode(2, "gemm", 100, {1})};
  RunOptions o = WriteCase("scaled_operator", {rank, rank});
  o.compute_scale = 2;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->npus[0].finish.WholeNs(), 400000);
}

// What a stuck run names first: (1) a broadcast one member never issued is that, not a missing
// COMM_RECV (the others finish; only the root's messages to it stay unreceived); (2) the NPU
// held by a receive comes before those waiting in the collective it holds up, its running node
// before the nodes behind it, with a count of the nodes left out; sizes are as simulated
// (--comm-scale).
TEST(EndToEnd, StuckRunsNameTheirCauseFirst) {
  std::vector<std::vector<Node>> bc(4);
  for (int r = 0; r < 3; ++r) {
    bc[r] = {et::MakeCollNode(1, "bc", ChakraProtoMsg::BROADCAST, 1 << 20)};
  }
  bc[3] = {et::MakeCompNode(1, "busy", 1)};
  StatusOr<RunResult> r = RunSimulation(WriteCase("stuck_bc", bc));
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_EQ(m.rfind("the simulation finished, but not every member of a collective ran it", 0), 0u)
      << m;
  EXPECT_NE(m.find("(broadcast of 1048576 B, root: first member, node 1 'bc' on NPU 0) was never "
                   "issued by NPU 3"),
            std::string::npos)
      << m;

  std::vector<std::vector<Node>> held(4);
  for (int r = 0; r < 4; ++r) {
    held[r] = {et::MakeCollNode(10, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)};
  }
  held[3] = {et::MakeRecvNode(100, /*peer=*/0, 4096, /*tag=*/9)};
  for (uint64_t id = 1; id <= 8; ++id) {
    held[3].push_back(et::MakeCompNode(id, "after" + std::to_string(id), 1, {100}));
  }
  held[3].push_back(et::MakeCollNode(10, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {8}));
  RunOptions o = WriteCase("stuck_held", held);
  o.comm_scale = 2;
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  m = r.status().message();
  const size_t first = m.find("\n  NPU ");
  ASSERT_NE(first, std::string::npos) << m;
  EXPECT_EQ(m.compare(first + 3,
                      std::string("NPU 3 node 100 'recv': running since 0 ns, waiting "
                                  "to receive from NPU 0 (tag 9, 8192 B)")
                          .size(),
                      "NPU 3 node 100 'recv': running since 0 ns, waiting to receive from NPU 0 "
                      "(tag 9, 8192 B)"),
            0)
      << m;
  EXPECT_NE(m.find("... and 5 more unfinished nodes"), std::string::npos) << m;
}

// Remote memory, 4 NPUs each loading 1 MB (1e6 B) at t = 0, latency 1000 ns, 100 GB/s
// (100 B/ns): one access = 1000 + 1e6 / 100 = 11000 ns.
//   PER_NPU: all in parallel, every NPU finishes at 11000.
//   PER_NODE with 2 NPUs per node: per node, FIFO: the first at 11000, the second at 22000.
//   MEMORY_POOL: one FIFO: 11000, 22000, 33000, 44000 in issue order (NPU order at t = 0).
TEST(EndToEnd, RemoteMemoryTypesQueueAsDocumented) {
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) {
    r = {et::MakeNode(1, "load_weights", ChakraProtoMsg::MEM_LOAD_NODE)};
    et::SetUint64Attr(&r[0], "tensor_size", 1000000);
  }
  struct Case {
    std::string memory;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 1000,
           "remote-mem-bw": 100})",
       {11000, 11000, 11000, 11000}},
      {R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 1000,
           "remote-mem-bw": 100, "num-nodes": 2, "num-npus-per-node": 2})",
       {11000, 22000, 11000, 22000}},
      {R"({"memory-type": "MEMORY_POOL", "remote-mem-latency": 1000, "remote-mem-bw": 100})",
       {11000, 22000, 33000, 44000}},
  };
  for (const Case& c : cases) {
    RunOptions o = WriteCase("memory", ranks);
    o.memory_config = TestTmp("memory.mem.json");
    std::ofstream(o.memory_config) << c.memory;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(r->npus[i].finish.WholeNs(), c.want[i]) << c.memory << " NPU " << i;
    }
  }
}

// collective-launch-latency delays every collective by that much (43000 -> 45000 ns with
// 2000 ns); protocol-efficiency 0.5 makes 1 MiB move as 2 MiB does.
TEST(EndToEnd, LaunchLatencyAndProtocolEfficiency) {
  auto run = [](uint64_t size, const std::string& extra) {
    std::vector<std::vector<Node>> ranks(4);
    for (auto& r : ranks) r = {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, size)};
    RunOptions o = WriteCase("nccl_keys", ranks);
    o.backend = Backend::kAnalyticalUnaware;
    std::ofstream(o.system_config) << R"({
      "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
      "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
      "collective-optimization": "localBWAware", "local-mem-bw": 1600)"
                                   << extra << "}";
    StatusOr<RunResult> r = RunSimulation(o);
    return r.ok() ? r->end.WholeNs() : -1;  // -1: the configuration was rejected
  };
  EXPECT_EQ(run(1 << 20, ""), 43000);
  EXPECT_EQ(run(1 << 20, R"(, "collective-launch-latency": 2000)"), 45000);
  EXPECT_EQ(run(1 << 20, R"(, "protocol-efficiency": 0.5)"), run(2 << 20, ""));
  EXPECT_GT(run(2 << 20, ""), 43000);
  EXPECT_EQ(run(1 << 20, R"(, "protocol-efficiency": 0)"), -1);  // must be > 0
}

TEST(EndToEnd, RunsAreBitForBitRepeatable) {
  std::vector<std::vector<Node>> ranks(8);
  for (int i = 0; i < 8; ++i) {
    ranks[i] = {et::MakeCompNode(1, "fwd", 3 + i),
                et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 3 << 20, {1}),
                et::MakeCollNode(3, "a2a", ChakraProtoMsg::ALL_TO_ALL, 1 << 20, {1}),
                et::MakeCompNode(4, "bwd", 7, {2})};
  }
  for (Backend backend : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware}) {
    RunOptions o = WriteCase("repeat", ranks);
    o.backend = backend;
    StatusOr<RunResult> a = RunSimulation(o);
    StatusOr<RunResult> b = RunSimulation(o);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(a->events, b->events);
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(a->npus[i].finish, b->npus[i].finish);
      EXPECT_EQ(a->npus[i].communication, b->npus[i].communication);
    }
  }
}

// A COMM_COLL_NODE without comm_type: a host-side operator (is_cpu_op true, as PyTorch's
// c10d::allreduce_) runs as CPU work of its duration; any other is refused, naming the node
// (it would otherwise run as compute and leave its peers waiting).
TEST(EndToEnd, CollectiveNodeWithoutCommTypeIsHostWorkOrAnError) {
  auto host_op = [](bool cpu) {
    Node n = et::MakeNode(1, "c10d::allreduce_", ChakraProtoMsg::COMM_COLL_NODE);
    n.set_duration_micros(7);
    et::SetBoolAttr(&n, "is_cpu_op", cpu);
    return n;
  };
  std::vector<std::vector<Node>> ranks(2, std::vector<Node>{host_op(true)});
  StatusOr<RunResult> r = RunSimulation(WriteCase("host_coll", ranks));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->end.WholeNs(), 7000);

  ranks[1] = {host_op(false)};
  r = RunSimulation(WriteCase("gpu_coll_without_type", ranks));
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find(TestTmp("gpu_coll_without_type.1.et") +
                   ": NPU 1 node 1 'c10d::allreduce_': a "
                   "COMM_COLL_NODE with no 'comm_type'; a collective needs 'comm_type', 0..9 "
                   "(ALL_REDUCE"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("only a host-side operator (is_cpu_op true) may have neither"),
            std::string::npos)
      << m;
  // comm_type without comm_size (not a barrier): the same, naming comm_size.
  Node no_size = et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 64);
  for (int i = 0; i < no_size.attr_size(); ++i) {
    if (no_size.attr(i).name() == "comm_size") no_size.mutable_attr()->DeleteSubrange(i, 1);
  }
  ranks = {{no_size}, {no_size}};
  r = RunSimulation(WriteCase("coll_without_size", ranks));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 1 'ar': a COMM_COLL_NODE with no 'comm_size'"),
            std::string::npos)
      << r.status().message();
}

// A send or receive without its peer or its size says which attribute is missing.
TEST(EndToEnd, PointToPointWithoutPeerOrSizeIsNamed) {
  auto without = [](Node n, const std::string& name) {
    for (int i = 0; i < n.attr_size(); ++i) {
      if (n.attr(i).name() == name) n.mutable_attr()->DeleteSubrange(i, 1);
    }
    return n;
  };
  const Node send = et::MakeSendNode(1, 1, 4096, 0), recv = et::MakeRecvNode(1, 0, 4096, 0);
  StatusOr<RunResult> r =
      RunSimulation(WriteCase("send_without_dst", {{without(send, "comm_dst")}, {recv}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "NPU 0 node 1 'send': a COMM_SEND_NODE with no 'comm_dst'; expected another NPU "
                "id in [0, 1]"),
            std::string::npos)
      << r.status().message();
  r = RunSimulation(WriteCase("recv_without_size", {{send}, {without(recv, "comm_size")}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "NPU 1 node 1 'recv': a COMM_RECV_NODE with no 'comm_size'; expected its bytes"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace orrery

// ASTRA-sim's parity knobs end to end through RunSimulation, on small generated workloads with
// hand-derived expectations: the local memory tracker (track-local-mem), the rendezvous
// protocol and the LogGP shared bus (model-shared-bus).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "et_feeder/writer.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

RunOptions WriteCase(const std::string& name, const std::vector<std::vector<Node>>& ranks,
                     const std::string& extra_system_keys) {
  return WriteTestCase(
      name, ranks,
      R"({ "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
    "collective-optimization": "baseline", "local-mem-bw": 1600)" +
          extra_system_keys + " }",
      "Ring");
}

Node WithTensors(Node n, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  if (!inputs.empty()) et::SetStringListAttr(&n, "inputs", inputs);
  if (!outputs.empty()) et::SetStringListAttr(&n, "outputs", outputs);
  return n;
}

// Two NPUs. Each: fwd (4 us) writes act (NPU r: (r+1) MiB); the gradient all-reduce (1 MiB, 2
// NPUs: 2(n-1)(e + t) + (n-1) r + e with t = floor(500 + 524288 B / 53.687 B/ns) = 10265,
// r = 3 * floor(524288 / 1600) = 981: 2 * 10275 + 981 + 10 = 21541 ns) reads act and writes
// grad (1 MiB); update (2 us) reads grad and the weights w (3 MiB, never written: held from 0).
//   [0, 4000) fwd, [4000, 25541) all-reduce, [25541, 27541) update.
//   Held: 0: w + act = 3 + (r+1) MiB; 4000: + grad = 5 + r MiB; 25541: - act = 4 MiB;
//   27541: 0. Peak: (5 + r) MiB at 4000 ns.
TEST(ParityKnobsTest, LocalMemoryTrackerPeakPerNpuAndTraceFiles) {
  std::vector<std::vector<Node>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[r] = {
        WithTensors(et::MakeCompNode(1, "fwd", 4), {}, {"act", std::to_string((r + 1) << 20)}),
        WithTensors(et::MakeCollNode(2, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1}),
                    {"act", std::to_string((r + 1) << 20)}, {"grad", "1048576"}),
        WithTensors(et::MakeCompNode(3, "update", 2, {2}), {"grad", "1048576", "w", "3145728"}, {}),
    };
  }
  const std::string out = Tmp("memtrace");
  RunOptions o = WriteCase("mem", ranks,
                           R"(, "track-local-mem": 1, "local-mem-trace-filename": ")" + out + "\"");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->local_mem_tracked);
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(r->npus[n].finish.WholeNs(), 27541);
    EXPECT_EQ(r->npus[n].peak_local_memory, static_cast<uint64_t>(5 + n) << 20) << "NPU " << n;
    std::ifstream f(out + "." + std::to_string(n) + ".json");
    ASSERT_TRUE(f.good()) << "no trace file for NPU " << n;
    std::stringstream ss;
    ss << f.rdbuf();
    // The counter at 4 us holds (5 + n) MiB.
    EXPECT_NE(ss.str().find("\"ts\": 4.000, \"pid\": " + std::to_string(2000000 + n) +
                            ", \"args\": {\"MB\": " + std::to_string(5 + n) + ".000000"),
              std::string::npos)
        << ss.str();
  }
}

TEST(ParityKnobsTest, LocalMemoryTrackerRejectsATensorListOfTheWrongType) {
  Node n = et::MakeCompNode(1, "fwd", 4);
  et::SetStringAttr(&n, "outputs", "act,1024");
  std::vector<std::vector<Node>> ranks(2, {n});
  StatusOr<RunResult> off = RunSimulation(WriteCase("memtype_off", ranks, ""));
  EXPECT_TRUE(off.ok()) << off.status().message();  // not read without the tracker
  StatusOr<RunResult> on = RunSimulation(WriteCase("memtype", ranks, R"(, "track-local-mem": 1,
      "local-mem-trace-filename": ")" + Tmp("memtype_trace") + "\""));
  ASSERT_FALSE(on.ok());
  EXPECT_NE(on.status().message().find(
                "NPU 0 node 1 'fwd': attribute 'inputs' or 'outputs' is not a string_list"),
            std::string::npos)
      << on.status().message();
}

TEST(ParityKnobsTest, LocalMemoryTrackerOffMeansNoPeak) {
  std::vector<std::vector<Node>> ranks(
      2, {WithTensors(et::MakeCompNode(1, "fwd", 4), {}, {"act", "1024"})});
  StatusOr<RunResult> r = RunSimulation(WriteCase("memoff", ranks, ""));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->local_mem_tracked);
  EXPECT_EQ(r->npus[0].peak_local_memory, 0u);
}

// NPU 0 sends 1 MiB to NPU 1 at time 0; NPU 1 computes 10 us, then posts the receive. One hop
// on a 50 GiB/s (53.687 B/ns), 500 ns ring: data t = 500 + 1048576 / 53.687 = 20031.25 ns;
// handshake (8192 B) h = 500 + 8192 / 53.687 = 652.59 ns (each truncated to whole ns on the
// congestion-unaware backend, as ASTRA-sim's; the aware one keeps picoseconds).
//   eager: the data leaves at 0 and arrives at 20031: both sides finish then (the receive,
//     posted at 10000, completes on arrival).
//   rendezvous: the receiver's ready message leaves at 10000 and reaches NPU 0 at 10000 + h;
//     only then does the data leave: both finish at 10000 + h + t = 30683.
TEST(ParityKnobsTest, RendezvousMovesDataOnlyAfterTheReceiverIsReady) {
  std::vector<std::vector<Node>> ranks(2);
  ranks[0] = {et::MakeSendNode(1, /*peer=*/1, 1 << 20, /*tag=*/5)};
  ranks[1] = {et::MakeCompNode(1, "busy", 10),
              et::MakeRecvNode(2, /*peer=*/0, 1 << 20, /*tag=*/5, {1})};
  for (Backend backend : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware}) {
    for (bool rendezvous : {false, true}) {
      RunOptions o = WriteCase("rdv", ranks, "");
      o.backend = backend;
      o.rendezvous = rendezvous;
      StatusOr<RunResult> r = RunSimulation(o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      const int64_t expected = rendezvous ? 10000 + 652 + 20031 : 20031;
      EXPECT_EQ(r->npus[0].finish.WholeNs(), expected) << BackendName(backend) << rendezvous;
      EXPECT_EQ(r->npus[1].finish.WholeNs(), expected) << BackendName(backend) << rendezvous;
    }
  }
}

// A run that cannot finish under rendezvous is reported, on every backend, in the trace's words:
// a receive whose send never comes (once: not again as its unreceived ready message) and a send
// whose receive is never posted (NPU 0's message waits). The first had read a freed
// ready-message sink and crashed; the second named an encoded "rendezvous tag 20".
TEST(ParityKnobsTest, RendezvousStuckRunsAreReported) {
  std::vector<std::vector<Node>> recv_only(2), send_only(2);
  recv_only[1] = {et::MakeRecvNode(1, /*peer=*/0, 4096, /*tag=*/6)};
  send_only[0] = {et::MakeSendNode(1, /*peer=*/1, 4096, /*tag=*/5)};
  for (Backend backend :
       {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware, Backend::kPacket}) {
    for (bool receive : {true, false}) {
      RunOptions o = WriteCase("rdv_stuck", receive ? recv_only : send_only, "");
      o.backend = backend;
      o.rendezvous = true;
      StatusOr<RunResult> r = RunSimulation(o);
      ASSERT_FALSE(r.ok()) << BackendName(backend);
      const std::string m = r.status().message();
      EXPECT_NE(m.find(receive ? "NPU 1 waits to receive from NPU 0 (tag 6, 4096 B), never sent"
                               : "NPU 0's message to NPU 1 (tag 5) waits for NPU 1 to post its "
                                 "receive (--rendezvous-protocol)"),
                std::string::npos)
          << BackendName(backend) << ": " << m;
      // Once: the ready message NPU 1 sent is not a second line; no encoded tag shows. A send
      // that waits for its receive says what rendezvous requires.
      EXPECT_EQ(m.find("ready message"), std::string::npos) << m;
      EXPECT_EQ(m.find("a send completes only once its receive is posted") != std::string::npos,
                !receive)
          << m;
      EXPECT_EQ(m.find("rendezvous tag"), std::string::npos) << m;
    }
  }
}

// A 1 MiB all-reduce on 2 NPUs (one chunk): ring, 2 messages of 512 KiB per NPU. With
// rendezvous each message first waits for an 8192-byte ready message from its receiver (h =
// floor(500 + 8192 / 53.687) = 652 on the unaware backend), which the receiver sends as soon
// as it posts the receive, i.e. when the phase starts or the previous step lands:
//   eager: 2(e + t) + r + e = 21541 (t = 10265, r = 981, e = 10; see the test above).
//   rendezvous: every message step adds h: 21541 + 2 * 652 = 22845.
TEST(ParityKnobsTest, RendezvousAddsOneHandshakePerCollectiveMessageStep) {
  std::vector<std::vector<Node>> ranks(
      2, {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)});
  for (bool rendezvous : {false, true}) {
    RunOptions o = WriteCase("rdv_ar", ranks, "");
    o.backend = Backend::kAnalyticalUnaware;
    o.rendezvous = rendezvous;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->npus[0].finish.WholeNs(), rendezvous ? 21541 + 2 * 652 : 21541);
  }
}

// The same 1 MiB all-reduce on 2 NPUs over the LogGP shared bus (L 100, o 20, g 40, G 0.01,
// local-reduction-delay 1) instead of endpoint-delay. Messages of S = 512 KiB; per hand-off
// (system/loggp.h; M = memory-bus crossing floor(2o + L + (S−1)·0.0038) = 2132,
// B = NPU–MA crossing floor(2o + L + (S−1)·G) = 5382, P = S/100 + 50 = 5292):
//   1st (injected): read from memory, cross to the MA: M + B;
//   2nd (received, reduced, last of its round so not sent back): B + 2M (to memory and back
//     for the reduction) + P + M (written back), then the 3·S/local-mem-bw reduction r = 981;
//   3rd (injected, second round): M + B.
// Two network messages t = 10265 in between: T = 5M + 3B + P + r + 2t.
TEST(ParityKnobsTest, SharedBusReplacesEndpointDelayWithLogGp) {
  std::vector<std::vector<Node>> ranks(
      2, {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)});
  RunOptions o = WriteCase("bus", ranks,
                           R"(, "model-shared-bus": 1, "L": 100, "o": 20, "g": 40, "G": 0.01,
                           "local-reduction-delay": 1)");
  o.backend = Backend::kAnalyticalUnaware;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t S = 524288;
  const int64_t M = static_cast<int64_t>(20 + (S - 1) * 0.0038 + 100 + 20);
  const int64_t B = static_cast<int64_t>(20 + (S - 1) * 0.01 + 100 + 20);
  const int64_t P = static_cast<int64_t>(S / 100) + 50;
  const int64_t t = 10265, red = 981;
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(r->npus[n].finish.WholeNs(), 5 * M + 3 * B + P + red + 2 * t);
  }
}

// doubleBinaryTree on 2 NPUs over the same bus: NPU 0 is the leaf, NPU 1 the root (tree 0).
// Every hop carries D = 1 MiB: M = floor(140 + (D−1)·0.0038), B = floor(140 + (D−1)·0.01),
// P = D/100 + 50, r = 3·floor(D/1600), t = floor(500 + D/53.687) = 20031.
//   leaf: inject (M + B), send D (t);
//   root: receive, reduce and send back: B + 2M (to memory and back) + P + 2M (written, read
//     back) + B (back to the MA), then r; it sends D to the leaf (t) and is done:
//     root = M + B + t + 4M + 2B + P + r;
//   leaf: receives D (t later) and hands it in unprocessed: B + M.
TEST(ParityKnobsTest, SharedBusDoubleBinaryTree) {
  std::vector<std::vector<Node>> ranks(
      2, {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)});
  RunOptions o = WriteCase("bus_dbt", ranks, "");
  std::ofstream(o.system_config) << R"({ "all-reduce-implementation": ["doubleBinaryTree"],
    "local-mem-bw": 1600, "model-shared-bus": 1, "L": 100, "o": 20, "g": 40, "G": 0.01 })";
  o.backend = Backend::kAnalyticalUnaware;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t D = 1 << 20;
  const int64_t M = static_cast<int64_t>(20 + (D - 1) * 0.0038 + 100 + 20);
  const int64_t B = static_cast<int64_t>(20 + (D - 1) * 0.01 + 100 + 20);
  const int64_t P = static_cast<int64_t>(D / 100) + 50;
  const int64_t red = 3 * 655, t = 20031;
  const int64_t root = M + B + t + 4 * M + 2 * B + P + red;
  EXPECT_EQ(r->npus[1].finish.WholeNs(), root);
  EXPECT_EQ(r->npus[0].finish.WholeNs(), root + t + B + M);
}

}  // namespace
}  // namespace orrery

// The LogGP shared bus, with times derived by hand from the model in system/loggp.h:
//   a transfer leaves its end after offset + G·(size−1) and lands after
//   offset + G·(size−1) + L + o (whole ns), offset = o, or g minus the time since the end's
//   previous send when that is larger; a reduction takes (size/100)·local-reduction-delay + 50.
#include "system/loggp.h"

#include <gtest/gtest.h>

#include <map>

namespace orrery {
namespace {

struct Recorder : EventTarget {
  Simulation* sim = nullptr;
  std::map<uint64_t, int64_t> at;
  void OnEvent(uint64_t arg) override { at[arg] = sim->now().WholeNs(); }
};

LogGpParams Params(int64_t g) {
  LogGpParams p;
  p.L = 100;
  p.o = 20;
  p.g = g;
  p.G = 0.01;
  p.local_reduction_delay = 1;
  return p;
}

TEST(LogGpTest, BackToBackSendsWaitForTheGap) {
  // 1001 bytes: G·(size−1) = 10 ns. Both leave the MA side at time 0, one after the other.
  //   first: offset o = 20; the MA side is busy until 20 + 10 = 30; it lands at 20+10+100+20 = 150.
  //   second, g = 40: at 30 the gap left is 40 − 0 > o, offset 40: lands at 30 + 40+10+100+20.
  //   second, g = 5: o wins, offset 20: lands at 30 + 150.
  for (int64_t g : {40, 5}) {
    Simulation sim;
    SharedBus bus(sim, Params(g), /*attach_memory=*/false);
    Recorder rec;
    rec.sim = &sim;
    bus.Transfer(/*from_npu=*/false, 1001, false, false, &rec, 1);
    bus.Transfer(/*from_npu=*/false, 1001, false, false, &rec, 2);
    sim.Run();
    EXPECT_EQ(rec.at[1], 150);
    EXPECT_EQ(rec.at[2], g == 40 ? 30 + 170 : 30 + 150) << "g = " << g;
  }
}

TEST(LogGpTest, AfterMoreThanEightSendsInARowTheOtherEndGoesFirst) {
  // g = 0 (offset always o = 20), 1001-byte messages: a send takes 30 ns, lands 150 ns after it
  // starts. The MA end queues ten messages, then the NPU end one (x), all at time 0; the NPU end
  // is receiving, so x waits. MA sends r1..r9 back to back (r_k lands at 30(k−1) + 150); after
  // its 9th send in a row (at 270) it stops, since x is waiting. The NPU end is free once its
  // last pending receive lands (r9 at 390) and sends x, which lands at 390 + 150 = 540; then the
  // MA end sends r10, landing at 540 + 150 = 690 (without the rule: 270 + 150 = 420).
  Simulation sim;
  SharedBus bus(sim, Params(0), /*attach_memory=*/false);
  Recorder rec;
  rec.sim = &sim;
  for (uint64_t k = 1; k <= 10; ++k) bus.Transfer(/*from_npu=*/false, 1001, false, false, &rec, k);
  bus.Transfer(/*from_npu=*/true, 1001, false, false, &rec, 100);
  sim.Run();
  for (uint64_t k = 1; k <= 9; ++k) EXPECT_EQ(rec.at[k], 30 * static_cast<int64_t>(k - 1) + 150);
  EXPECT_EQ(rec.at[100], 540);
  EXPECT_EQ(rec.at[10], 690);
}

TEST(LogGpTest, ProcessedAndSentBackWithoutMemoryBus) {
  // MA -> NPU, processed and sent back: lands at 150, reduced in 1001/100 + 50 = 60, then goes
  // back NPU -> MA (the NPU side's previous state was receiving: offset o): 150 + 60 + 150.
  Simulation sim;
  SharedBus bus(sim, Params(40), /*attach_memory=*/false);
  Recorder rec;
  rec.sim = &sim;
  bus.Transfer(/*from_npu=*/false, 1001, /*processed=*/true, /*send_back=*/true, &rec, 1);
  sim.Run();
  EXPECT_EQ(rec.at[1], 150 + 60 + 150);
}

// With the memory bus attached (G' = 0.0038 ns/B): M = floor(2o + L + (S−1)·G') is one
// crossing of the memory bus, B = floor(2o + L + (S−1)·G) one of the NPU–MA bus.
class MemoryBusTest : public ::testing::Test {
 protected:
  const uint64_t S = 524288;
  const int64_t M = static_cast<int64_t>(20 + (S - 1) * 0.0038 + 100 + 20);
  const int64_t B = static_cast<int64_t>(20 + (S - 1) * 0.01 + 100 + 20);
  const int64_t P = static_cast<int64_t>(S / 100) + 50;
};

TEST_F(MemoryBusTest, InjectedMessageIsReadFromMemoryThenCrossesTheBus) {
  Simulation sim;
  SharedBus bus(sim, Params(40), /*attach_memory=*/true);
  Recorder rec;
  rec.sim = &sim;
  bus.Transfer(/*from_npu=*/true, S, false, false, &rec, 1);
  sim.Run();
  EXPECT_EQ(M, 2132);  // 140 + 1992.29
  EXPECT_EQ(rec.at[1], M + B);
}

TEST_F(MemoryBusTest, ReceivedProcessedMessageRoundTripsMemoryThenIsWrittenBack) {
  // Lands on the NPU side (B), written to memory and read back (2M), reduced (P), written to
  // memory for good (M).
  Simulation sim;
  SharedBus bus(sim, Params(40), /*attach_memory=*/true);
  Recorder rec;
  rec.sim = &sim;
  bus.Transfer(/*from_npu=*/false, S, /*processed=*/true, false, &rec, 1);
  sim.Run();
  EXPECT_EQ(rec.at[1], B + 2 * M + P + M);
}

TEST_F(MemoryBusTest, ReceivedUnprocessedMessageIsWrittenToMemory) {
  Simulation sim;
  SharedBus bus(sim, Params(40), /*attach_memory=*/true);
  Recorder rec;
  rec.sim = &sim;
  bus.Transfer(/*from_npu=*/false, S, false, false, &rec, 1);
  sim.Run();
  EXPECT_EQ(rec.at[1], B + M);
}

// A run stopped while transfers are under way (an aborted run; one run again without a symmetry
// that broke, as tests/parity_knobs_test's SharedBusDoubleBinaryTree does) leaves requests in
// the buses' queues, one crossing the memory bus holding its parent: the bus frees them. ASan
// (scripts/test.sh's sanitizer pass) fails this test on a leak: 224 bytes in 4 requests before
// the fix.
TEST_F(MemoryBusTest, TransfersUnderWayWhenTheRunStopsAreFreedWithTheBus) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  {
    SharedBus bus(sim, Params(40), /*attach_memory=*/true);
    bus.Transfer(/*from_npu=*/true, S, false, false, &rec, 1);   // reading memory until M
    bus.Transfer(/*from_npu=*/false, S, true, true, &rec, 2);    // crossing the bus until B
    bus.Transfer(/*from_npu=*/false, S, false, false, &rec, 3);  // queued behind it
    sim.Run(Time::FromNs(M - 1));
    EXPECT_TRUE(rec.at.empty());
    EXPECT_GT(sim.pending_events(), 0u);
  }
  EXPECT_TRUE(rec.at.empty());
}

}  // namespace
}  // namespace orrery

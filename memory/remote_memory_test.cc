#include "memory/remote_memory.h"

#include <gtest/gtest.h>

#include <map>

namespace orrery {
namespace {

struct Recorder : MemoryCompletion {
  explicit Recorder(Simulation& s) : sim(s) {}
  void OnMemoryDone(uint64_t token) override { done[token] = sim.now(); }
  Simulation& sim;
  std::map<uint64_t, Time> done;
};

MemoryConfig Config(MemoryType type) {
  MemoryConfig c;
  c.type = type;
  c.remote_mem_latency_ns = 100;
  c.remote_mem_bw_bytes_per_ns = 3;  // 3 bytes per ns
  c.num_nodes = 2;
  c.num_npus_per_node = 2;
  return c;
}

TEST(RemoteMemory, NoExpansionIsAnErrorNamingTheType) {
  Simulation sim;
  RemoteMemory mem(sim, MemoryConfig{}, 4);
  Recorder r(sim);
  Status s = mem.Issue(1, Bytes(10), &r, 7);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("NO_MEMORY_EXPANSION"), std::string::npos);
  EXPECT_NE(s.message().find("MEMORY_POOL"), std::string::npos);
}

TEST(RemoteMemory, PerNpuAccessesAreIndependent) {
  // 100 ns + trunc(1000 / 3) = 100 + 333 = 433 ns each, all in parallel.
  Simulation sim;
  RemoteMemory mem(sim, Config(MemoryType::kPerNpuMemoryExpansion), 4);
  Recorder r(sim);
  ASSERT_TRUE(mem.Issue(0, Bytes(1000), &r, 1).ok());
  ASSERT_TRUE(mem.Issue(0, Bytes(1000), &r, 2).ok());
  ASSERT_TRUE(mem.Issue(3, Bytes(1000), &r, 3).ok());
  sim.Run();
  EXPECT_EQ(r.done[1], Time::FromNs(433));
  EXPECT_EQ(r.done[2], Time::FromNs(433));
  EXPECT_EQ(r.done[3], Time::FromNs(433));
  EXPECT_EQ(mem.accesses(), 3u);
  EXPECT_EQ(mem.bytes(), 3000u);
}

TEST(RemoteMemory, PerNodeSerialisesWithinANodeOnly) {
  // NPUs 0,1 share node 0; NPU 2 is node 1. Node 0: 433 then 866; node 1: 433.
  Simulation sim;
  RemoteMemory mem(sim, Config(MemoryType::kPerNodeMemoryExpansion), 4);
  Recorder r(sim);
  ASSERT_TRUE(mem.Issue(0, Bytes(1000), &r, 1).ok());
  ASSERT_TRUE(mem.Issue(1, Bytes(1000), &r, 2).ok());
  ASSERT_TRUE(mem.Issue(2, Bytes(1000), &r, 3).ok());
  sim.Run();
  EXPECT_EQ(r.done[1], Time::FromNs(433));
  EXPECT_EQ(r.done[2], Time::FromNs(866));
  EXPECT_EQ(r.done[3], Time::FromNs(433));
}

TEST(RemoteMemory, PoolSerialisesEverything) {
  Simulation sim;
  RemoteMemory mem(sim, Config(MemoryType::kMemoryPool), 4);
  Recorder r(sim);
  ASSERT_TRUE(mem.Issue(0, Bytes(1000), &r, 1).ok());
  ASSERT_TRUE(mem.Issue(3, Bytes(300), &r, 2).ok());
  sim.Run();
  EXPECT_EQ(r.done[1], Time::FromNs(433));
  EXPECT_EQ(r.done[2], Time::FromNs(433 + 100 + 100));  // 300 / 3 = 100 ns transfer
}

}  // namespace
}  // namespace orrery

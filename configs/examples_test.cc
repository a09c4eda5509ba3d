// The example configs in configs/ and ASTRA-sim's own example configs load without error.
#include <algorithm>
#include <filesystem>

#include "config/system_config.h"
#include "config/test_files.h"
#include "gtest/gtest.h"
#include "memory/memory_config.h"
#include "network/network_config.h"

namespace orrery {
namespace {

TEST(ExamplesTest, SystemRing) {
  StatusOr<SystemConfig> c = LoadSystemConfig(RunfilePath("configs/system/ring.json"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->preferred_dataset_splits, 4);
  EXPECT_EQ(c->all_reduce_implementation, (std::vector<std::string>{"ring"}));
}

TEST(ExamplesTest, Networks) {
  // Expected NPU counts are the products of npus_count.
  const struct {
    const char* path;
    int npus;
    size_t dims;
  } kNets[] = {
      {"configs/network/ring_8.yml", 8, 1},
      {"configs/network/torus_2d_4x4.yml", 4 * 4, 2},
      {"configs/network/dgx_like_8x4.yml", 8 * 4, 2},
      {"configs/network/torus_2d_8x8.yml", 8 * 8, 2},
      {"configs/network/dgx_h100_64.yml", 8 * 8, 2},
  };
  for (const auto& n : kNets) {
    StatusOr<Topology> t = LoadNetworkConfig(RunfilePath(n.path));
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->num_npus(), n.npus) << n.path;
    EXPECT_EQ(t->dims.size(), n.dims) << n.path;
  }
}

TEST(ExamplesTest, Memories) {
  StatusOr<MemoryConfig> none =
      LoadMemoryConfig(RunfilePath("configs/memory/no_memory_expansion.json"));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->type, MemoryType::kNoMemoryExpansion);
  StatusOr<MemoryConfig> pool = LoadMemoryConfig(RunfilePath("configs/memory/memory_pool.json"));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(pool->type, MemoryType::kMemoryPool);
  EXPECT_GT(pool->remote_mem_bw_bytes_per_ns, 0);
}

// ASTRA-sim's example inputs must load unchanged.
class CompatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(CompatDir(&dir_)) << CompatDirHelp();
    dir_ += "/astra-sim/examples/";
  }
  std::string dir_;
};

TEST_F(CompatTest, SystemConfigs) {
  for (const char* f : {"system/native_collectives/Ring_4chunks.json",
                        "system/native_collectives/HGX-H100-validated.json",
                        "system/custom_collectives/custom_collective.json"}) {
    StatusOr<SystemConfig> c = LoadSystemConfig(dir_ + f);
    EXPECT_TRUE(c.ok()) << c.status().message();
  }
  StatusOr<SystemConfig> hgx =
      LoadSystemConfig(dir_ + "system/native_collectives/HGX-H100-validated.json");
  ASSERT_TRUE(hgx.ok());
  EXPECT_EQ(hgx->active_chunks_per_dimension, 2);
  EXPECT_EQ(hgx->local_mem_bw_gbps, 3350);
  EXPECT_EQ(hgx->collective_optimization, "localBWAware");
  ASSERT_TRUE(hgx->endpoint_delay_ns.has_value());
  EXPECT_EQ(*hgx->endpoint_delay_ns, 10);
  StatusOr<SystemConfig> custom =
      LoadSystemConfig(dir_ + "system/custom_collectives/custom_collective.json");
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->scheduling_policy, "FIFO");
  EXPECT_EQ(custom->all_reduce_implementation_custom.size(), 1u);
  EXPECT_FALSE(custom->endpoint_delay_ns.has_value());
}

TEST_F(CompatTest, NetworkConfigs) {
  const struct {
    const char* file;
    int npus;
  } kNets[] = {
      {"network/analytical/Ring_4npus.yml", 4},
      {"network/analytical/Ring_8npus.yml", 8},
      {"network/analytical/Ring_16npus.yml", 16},
      {"network/analytical/HGX-H100-validated.yml", 8},
  };
  for (const auto& n : kNets) {
    StatusOr<Topology> t = LoadNetworkConfig(dir_ + n.file);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->num_npus(), n.npus) << n.file;
  }
  StatusOr<Topology> hgx = LoadNetworkConfig(dir_ + "network/analytical/HGX-H100-validated.yml");
  ASSERT_TRUE(hgx.ok());
  EXPECT_EQ(hgx->dims[0].type, BlockType::kSwitch);
  EXPECT_EQ(hgx->dims[0].latency.ps(), 936250);  // 936.25 ns
}

// Every file of each kind in the corpus, so files added later are covered too.
std::vector<std::string> FilesIn(const std::string& dir, const std::string& extension) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == extension) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_F(CompatTest, EveryCorpusConfigLoads) {
  const std::vector<std::string> systems = FilesIn(dir_ + "system/native_collectives", ".json");
  const std::vector<std::string> networks = FilesIn(dir_ + "network/analytical", ".yml");
  const std::vector<std::string> memories = FilesIn(dir_ + "remote_memory/analytical", ".json");
  EXPECT_GE(systems.size(), 2u);
  EXPECT_GE(networks.size(), 4u);
  EXPECT_GE(memories.size(), 1u);
  for (const std::string& f : systems) {
    StatusOr<SystemConfig> c = LoadSystemConfig(f);
    EXPECT_TRUE(c.ok()) << c.status().message();
  }
  for (const std::string& f : networks) {
    StatusOr<Topology> t = LoadNetworkConfig(f);
    EXPECT_TRUE(t.ok()) << t.status().message();
  }
  for (const std::string& f : memories) {
    StatusOr<MemoryConfig> m = LoadMemoryConfig(f);
    EXPECT_TRUE(m.ok()) << m.status().message();
  }
}

TEST_F(CompatTest, MemoryConfigs) {
  StatusOr<MemoryConfig> m =
      LoadMemoryConfig(dir_ + "remote_memory/analytical/no_memory_expansion.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->type, MemoryType::kNoMemoryExpansion);
}

}  // namespace
}  // namespace orrery

// Every YAML reader goes through one loader that bounds alias expansion (config/yaml_aliases.h):
// an alias bomb is refused at its alias, in every kind of file, before anything expands it.
//
// The bombs here are 20 levels of ten aliases each (10^20 nodes once expanded): a reader that
// walked them would never finish, so this test's own timeout stands for "refused before
// expanding" (the issue's 9-level bomb is measured with the CLI: README "Bad input").
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "config/comm_group_config.h"
#include "config/schema.h"
#include "config/system_config.h"
#include "config/yaml_aliases.h"
#include "memory/memory_config.h"
#include "nccl/nccl_model.h"
#include "network/network_config.h"
#include "runner/jobs_config.h"
#include "sweep/sweep.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

// `levels` anchors, each a list of ten aliases of the one before, as key `bomb` of a map that
// starts with `head` (the file's real keys) and ends with `tail`.
std::string Bomb(int levels, const std::string& head = "", const std::string& tail = "") {
  std::string text = head + "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int l = 1; l < levels; ++l) {
    const std::string prev = "*l" + std::to_string(l - 1);
    text += "l" + std::to_string(l) + ": &l" + std::to_string(l) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  return text + tail;
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = TestTmp(name);
  std::ofstream(path) << text;
  return path;
}

// The refusal: at the line of the alias that passes the limit, naming it.
void ExpectRefused(const Status& s, const std::string& path) {
  ASSERT_FALSE(s.ok()) << path << " was accepted";
  EXPECT_NE(s.message().find(path + ":"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("alias '*l"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("a YAML alias bomb?"), std::string::npos) << s.message();
}

TEST(AliasBombTest, CountsExpandedNodesFromFirstPrinciples) {
  // Level 0 is a list of ten scalars: 11 nodes. Level l holds ten aliases of level l - 1:
  // size(l) = 1 + 10 size(l - 1), so size(1) = 111, size(2) = 1111, and each alias of level
  // l - 1 adds size(l - 1) nodes: the aliases of levels 1..L add 10 (size(0) + .. + size(L-1)).
  // Three levels: 10 (11 + 111) = 1220 nodes added.
  const std::string three = Bomb(3);
  EXPECT_TRUE(CheckYamlAliases(three, "t.yml", 1220).ok());
  const Status over = CheckYamlAliases(three, "t.yml", 1219);
  ASSERT_FALSE(over.ok());
  // The last alias (level 2's tenth, line 3) passes 1219: it repeats level 1's 111 nodes.
  EXPECT_NE(over.message().find("t.yml:3: alias '*l1' repeats a node of 111 nodes"),
            std::string::npos)
      << over.message();
  // A few aliases of a small map, as a hand-written config uses them, pass the default bound.
  EXPECT_TRUE(CheckYamlAliases("a: &a {x: 1, y: 2}\nb: *a\nc: *a\n", "t.yml").ok());
  // No alias, or text that is not YAML: left to the loader.
  EXPECT_TRUE(CheckYamlAliases("a: 1\n", "t.yml").ok());
  EXPECT_TRUE(CheckYamlAliases("a: [*\n", "t.yml").ok());
}

// yaml-cpp 0.7 returns an empty document at a stray ',' ']' or '}' again and again: its
// LoadAll never ended (found by fuzzing the comm-group loader). The shared loader refuses it.
TEST(AliasBombTest, AStraySeparatorWhereADocumentStartsIsRefusedNotLoopedOn) {
  for (const std::string& text :
       {std::string(", 5, 6, 7]}\n"), std::string("a: 1\n]\n"), std::string("}")}) {
    const StatusOr<YAML::Node> doc = ParseYamlDocument(text, "g.json");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_NE(doc.status().message().find("not valid YAML/JSON"), std::string::npos)
        << doc.status().message();
  }
  const std::string p = Write("stray_groups.json", ", 5, 6, 7]}\n");
  const Status s = LoadCommGroupConfig(p, 8).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(p + ":1:1: not valid YAML/JSON: ',' where a value should start"),
            std::string::npos)
      << s.message();
}

TEST(AliasBombTest, EveryConfigReaderRefusesIt) {
  const int kLevels = 20;
  {
    const std::string p = Write("bomb_system.json", Bomb(kLevels, "scheduling-policy: LIFO\n"));
    ExpectRefused(LoadSystemConfig(p).status(), p);
  }
  {
    const std::string p = Write(
        "bomb_network.yml", Bomb(kLevels, "topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\n"));
    ExpectRefused(LoadNetworkConfig(p).status(), p);
  }
  {
    const std::string p =
        Write("bomb_memory.json", Bomb(kLevels, "memory-type: NO_MEMORY_EXPANSION\n"));
    ExpectRefused(LoadMemoryConfig(p).status(), p);
  }
  {
    const std::string p = Write("bomb_groups.json", Bomb(kLevels, "\"1\": [0, 1]\n"));
    ExpectRefused(LoadCommGroupConfig(p, 4).status(), p);
  }
  {
    const std::string p = Write("bomb_jobs.yml", Bomb(kLevels, "jobs:\n  - workload: t\n"));
    ExpectRefused(LoadJobsFile(p).status(), p);
  }
  {
    const std::string p = Write("bomb_nccl.yaml", Bomb(kLevels, "algorithms: {}\n"));
    ExpectRefused(LoadNcclModel(p).status(), p);
  }
  {
    const std::string p =
        Write("bomb_sweep.yaml", Bomb(kLevels, "base: {system: s.json, network: n.yml}\n",
                                      "grid: {backend: [analytical-aware]}\n"));
    ExpectRefused(LoadSweepSpec(p).status(), p);
  }
  {
    const std::string p = Write("bomb_plain.yml", Bomb(kLevels));
    ExpectRefused(ReadYamlDocument(p).status(), p);
  }
}

TEST(AliasBombTest, ThePerNodeCustomImplementationFileRefusesItInARun) {
  // A file the system config names, read when the run sets up its collectives.
  RunOptions o = WriteTestCase(
      "bomb_run", {{et::MakeCompNode(1, "c", 1)}, {et::MakeCompNode(1, "c", 1)}},
      R"({"scheduling-policy": "LIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
          "all-reduce-implementation": ["ring"], "collective-optimization": "baseline",
          "per-node-custom-implementation": ")" +
          TestTmp("bomb_per_node.yml") + "\"}",
      "Ring");
  const std::string per_node = Write("bomb_per_node.yml", Bomb(20, "1: algo\n"));
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(per_node + ":"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("a YAML alias bomb?"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace orrery

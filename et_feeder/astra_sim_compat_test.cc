// Every trace writer's ASTRA-sim output holds only nodes ASTRA-sim 2.0 runs
// (et_feeder/astra_sim_compat.h says which, from its source): generate-llm with --astra-sim
// (metadata_node = false), gen_workload and convert-text as they write.
#include "et_feeder/astra_sim_compat.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "et_feeder/llm_workload.h"
#include "et_feeder/text_workload.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

// The nodes of a .et file (GlobalMetadata skipped): varint32 length, then the message.
std::vector<Node> ReadNodes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Node> nodes;
  size_t pos = 0;
  for (bool first = true; pos < b.size(); first = false) {
    uint32_t len = 0;
    for (int shift = 0; pos < b.size(); shift += 7) {
      const uint8_t c = static_cast<uint8_t>(b[pos++]);
      len |= static_cast<uint32_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) break;
    }
    if (!first) {
      nodes.emplace_back();
      EXPECT_TRUE(nodes.back().ParseFromArray(b.data() + pos, static_cast<int>(len))) << path;
    }
    pos += len;
  }
  return nodes;
}

TEST(AstraSimCompatTest, GenerateLlmWithAstraSimWritesOnlyWhatItRuns) {
  struct Case {
    const char* what;
    void (*set)(LlmConfig*);
  };
  const Case cases[] = {
      {"dense dp x tp x pp, 1F1B, per-layer gradient sync",
       [](LlmConfig* c) { c->dp = 2, c->tp = 2, c->pp = 2, c->grad_sync = GradSync::kPerLayer; }},
      {"interleaved, recompute, ZeRO-1",
       [](LlmConfig* c) {
         c->dp = 2, c->pp = 2, c->virtual_stages = 2, c->recompute = true;
         c->distributed_optimizer = true;
       }},
      {"mixture of experts, sequence parallel",
       [](LlmConfig* c) {
         c->dp = 2, c->tp = 2, c->experts = 4, c->ep = 2, c->sequence_parallel = true;
       }},
  };
  for (const Case& k : cases) {
    LlmConfig c;
    ASSERT_TRUE(ApplyLlmPreset("gpt3-175b", &c).ok());
    c.layers = 8;
    k.set(&c);
    ASSERT_TRUE(CheckLlmConfig(&c).ok()) << k.what << ": " << CheckLlmConfig(&c).message();
    const int64_t npus = c.dp * c.tp * c.pp;
    for (int64_t r = 0; r < npus; ++r) {
      c.metadata_node = false;
      const Status astra = CheckAstraSimRunnable(BuildLlmRank(c, r));
      EXPECT_TRUE(astra.ok()) << k.what << ", rank " << r << ": " << astra.message();
      // Without --astra-sim the groups' METADATA node comes first, and ASTRA-sim aborts on it.
      c.metadata_node = true;
      const Status plain = CheckAstraSimRunnable(BuildLlmRank(c, r));
      ASSERT_FALSE(plain.ok()) << k.what;
      EXPECT_NE(plain.message().find("'process_group:init': a METADATA_NODE aborts ASTRA-sim 2.0 "
                                     "(workload/Statistics.cc, Statistics::get_operator_type"),
                std::string::npos)
          << plain.message();
    }
  }
}

TEST(AstraSimCompatTest, ConvertTextWritesOnlyWhatItRuns) {
  for (const char* file : {"allreduce_micro.txt", "cnn_data.txt", "dlrm_hybrid.txt"}) {
    for (bool chakra : {false, true}) {
      TextWorkloadOptions o;
      o.chakra_compatible = chakra;
      StatusOr<TextWorkload> w = ConvertTextWorkload(std::string("examples/text/") + file, o);
      ASSERT_TRUE(w.ok()) << w.status().message();
      ASSERT_FALSE(w->nodes.empty()) << file;
      const Status s = CheckAstraSimRunnable(w->nodes);
      EXPECT_TRUE(s.ok()) << file << ": " << s.message();
    }
  }
}

TEST(AstraSimCompatTest, GenWorkloadWritesOnlyWhatItRuns) {
  const std::string dir = ::testing::TempDir();
  const std::vector<std::string> runs = {
      "collective --type all_reduce --size 1048576 --npus 4 --out " + dir + "/ar",
      "collective --type all_gather --size 1048576 --npus 4 --out " + dir + "/ag",
      "collective --type reduce_scatter --size 1048576 --npus 4 --out " + dir + "/rs",
      "collective --type all_to_all --size 1048576 --npus 4 --out " + dir + "/a2a",
      "dp-step --npus 8 --out " + dir + "/dp",
  };
  for (const std::string& args : runs) {
    ASSERT_EQ(std::system(("./et_feeder/gen_workload " + args + " > /dev/null").c_str()), 0)
        << args;
    const std::string prefix = args.substr(args.rfind(' ') + 1);
    for (int r = 0; r < 4; ++r) {
      const std::vector<Node> nodes = ReadNodes(RankTracePath(prefix, r));
      ASSERT_FALSE(nodes.empty()) << prefix << " rank " << r;
      const Status s = CheckAstraSimRunnable(nodes);
      EXPECT_TRUE(s.ok()) << args << ": " << s.message();
    }
  }
}

// The checker itself, on each kind of node ASTRA-sim 2.0 refuses.
TEST(AstraSimCompatTest, NamesEachNodeAstraSimRefuses) {
  Node cpu = MakeCompNode(1, "host", 5);
  cpu.mutable_attr()->Clear();
  SetBoolAttr(&cpu, "is_cpu_op", true);
  Node reduce = MakeCollNode(2, "reduce", ChakraProtoMsg::REDUCE, 64);
  Node send = MakeNode(3, "send", ChakraProtoMsg::COMM_SEND_NODE);
  SetIntAttr(&send, "comm_size", 64);
  Node load = MakeNode(4, "load", ChakraProtoMsg::MEM_LOAD_NODE);
  const Status s = CheckAstraSimRunnable({cpu, reduce, send, load, MakeCompNode(5, "gemm", 5)});
  ASSERT_EQ(s.problems().size(), 4u) << s.message();
  EXPECT_NE(s.problems()[0].find("node 1 'host': a CPU operator"), std::string::npos);
  EXPECT_NE(s.problems()[1].find("node 2 'reduce': collective 1: ASTRA-sim 2.0 throws"),
            std::string::npos);
  EXPECT_NE(s.problems()[2].find("node 3 'send': a send without comm_dst"), std::string::npos);
  EXPECT_NE(s.problems()[3].find("node 4 'load': MEM_LOAD_NODE"), std::string::npos);
}

}  // namespace
}  // namespace et
}  // namespace orrery

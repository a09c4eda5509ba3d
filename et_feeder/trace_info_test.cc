// `orrery trace-info`: the description of a hand-made trace, line by line, and its JSON form.
#include "et_feeder/trace_info.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

std::vector<Node> HandMade() {
  Node cpu = MakeNode(2, "host", ChakraProtoMsg::COMP_NODE, {1});
  cpu.set_duration_micros(5);
  SetBoolAttr(&cpu, "is_cpu_op", true);
  Node grouped = MakeCollNode(3, "ar", ChakraProtoMsg::ALL_REDUCE, 1024, {1});
  SetStringAttr(&grouped, "pg_name", "1");
  Node load = MakeNode(8, "load", ChakraProtoMsg::MEM_LOAD_NODE);
  SetIntAttr(&load, "tensor_size", 4096);
  return {
      MakeCompNode(1, "fwd", 10),
      cpu,
      grouped,
      MakeCollNode(4, "ag", ChakraProtoMsg::ALL_GATHER, 2048, {3}),
      MakeSendNode(5, /*peer=*/1, 100, /*tag=*/0, {2}),
      MakeRecvNode(6, /*peer=*/3, 100, /*tag=*/0),
      // 7 -> 1 is implied by 7 -> 2 -> 1; 99 is not in the file.
      MakeCompNode(7, "bwd", 20, {4, 2, 1, 99}),
      load,
  };
}

TEST(TraceInfo, DescribesEveryKindOfNodeAndTheLongestChain) {
  const std::string path = ::testing::TempDir() + "/info.0.et";
  ASSERT_TRUE(WriteTraceFile(path, HandMade()).ok());
  StatusOr<Trace> t = Trace::Load(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(DescribeTrace(*t),
            "  nodes: 8 (trace version 0.0.4)\n"
            "    MEM_LOAD_NODE: 1\n"
            "    COMP_NODE: 3 (2 GPU, 1 CPU with is_cpu_op)\n"
            "    COMM_SEND_NODE: 1\n"
            "    COMM_RECV_NODE: 1\n"
            "    COMM_COLL_NODE: 2\n"
            "  compute (duration_micros): GPU 30.000 us, CPU 5.000 us\n"
            "  collectives (comm_type: count (comm_size)):\n"
            "    ALL_REDUCE: 1 (1024 B)\n"
            "    ALL_GATHER: 1 (2048 B)\n"
            "  groups (pg_name: collectives): none (every NPU): 1, '1': 1\n"
            "  sends: 1 (100 B) to 1; receives: 1 (100 B) from 3\n"
            "  remote memory: loads 1 (4096 B), stores 0 (0 B)\n"
            "  dependencies: 6 kept, 1 implied by others (dropped), 1 naming ids not in the file "
            "(count as done), e.g. node 7 -> 99\n"
            // fwd (10) -> host (5) -> bwd (20); the way through the collectives has 30 us
            "  longest dependency chain by compute: 35.000 us over 3 nodes, ending at node 7 'bwd' "
            "(a step takes at least this on any network, and at least its GPU compute on one GPU "
            "stream)\n");
}

TEST(TraceInfo, JsonIsOneDocumentWithTheMetadataAndEveryNode) {
  const std::string path = ::testing::TempDir() + "/json.0.et";
  const std::string json = ::testing::TempDir() + "/json.0.json";
  ASSERT_TRUE(WriteTraceFile(path, HandMade()).ok());
  Status s = WriteTraceJson(path, json);
  ASSERT_TRUE(s.ok()) << s.message();
  YAML::Node doc = YAML::LoadFile(json);  // JSON is YAML
  EXPECT_EQ(doc["metadata"]["version"].as<std::string>(), "0.0.4");
  ASSERT_EQ(doc["nodes"].size(), 8u);
  EXPECT_EQ(doc["nodes"][0]["name"].as<std::string>(), "fwd");
  EXPECT_EQ(doc["nodes"][0]["durationMicros"].as<std::string>(), "10");  // uint64: a string
  EXPECT_EQ(doc["nodes"][6]["type"].as<std::string>(), "COMP_NODE");
  ASSERT_EQ(doc["nodes"][6]["dataDeps"].size(), 4u);
  EXPECT_EQ(doc["nodes"][6]["dataDeps"][3].as<std::string>(), "99");  // as written
  EXPECT_EQ(doc["nodes"][2]["attr"][3]["name"].as<std::string>(), "pg_name");
  EXPECT_EQ(doc["nodes"][2]["attr"][3]["stringVal"].as<std::string>(), "1");

  // A trace of the metadata alone is a document with no nodes.
  const std::string empty = ::testing::TempDir() + "/empty.0.et";
  ASSERT_TRUE(WriteTraceFile(empty, {}).ok());
  ASSERT_TRUE(WriteTraceJson(empty, json).ok());
  doc = YAML::LoadFile(json);
  EXPECT_EQ(doc["nodes"].size(), 0u);
  EXPECT_EQ(doc["metadata"]["version"].as<std::string>(), "0.0.4");

  EXPECT_NE(WriteTraceJson(path, ::testing::TempDir() + "/no/such/dir.json")
                .message()
                .find("no/such/dir.json: cannot write"),
            std::string::npos);
}

}  // namespace
}  // namespace et
}  // namespace orrery

// ASTRA-sim 1.0 text workloads: each parallelism's graph node by node (as Chakra's text converter
// builds it), NONE communications, Chakra-compatible output, the files, and every input error.
#include "et_feeder/text_workload.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "et_feeder/trace.h"

namespace orrery {
namespace et {
namespace {

// "id name dep,dep" per node, e.g. "8 COMP_NODE_b_FWD 7,3".
std::vector<std::string> Render(const TextWorkload& w) {
  std::vector<std::string> out;
  for (const auto& n : w.nodes) {
    std::string deps;
    for (uint64_t d : n.data_deps()) deps += (deps.empty() ? "" : ",") + std::to_string(d);
    out.push_back(std::to_string(n.id()) + " " + n.name() + (deps.empty() ? "" : " " + deps));
  }
  return out;
}

TextWorkload Convert(const std::string& text, int passes = 1, bool compatible = false) {
  TextWorkloadOptions o;
  o.num_passes = passes;
  o.chakra_compatible = compatible;
  StatusOr<TextWorkload> w = ConvertTextWorkloadText(text, "w.txt", o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : TextWorkload();
}

std::string Error(const std::string& text, int passes = 1) {
  TextWorkloadOptions o;
  o.num_passes = passes;
  StatusOr<TextWorkload> w = ConvertTextWorkloadText(text, "w.txt", o);
  EXPECT_FALSE(w.ok());
  return w.ok() ? "" : w.status().message();
}

const char* kData =
    "DATA\n"
    "2\n"
    "a -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 1000 1\n"
    "b\t-1\t20\tNONE\t0\t21\tNONE\t0\t22\tALLREDUCE\t2000\t1\n";

TEST(TextWorkload, DataParallelIsForwardThenBackwardWithEachLayersGradientAllReduce) {
  TextWorkload w = Convert(kData, /*passes=*/2);
  EXPECT_EQ(w.parallelism, "DATA");
  EXPECT_EQ(w.layers, 2);
  EXPECT_EQ(Render(w), (std::vector<std::string>{
                           "0 COMP_NODE_a_FWD",
                           "1 COMP_NODE_b_FWD 0",
                           "2 COMP_NODE_b_BWD_WG 1",
                           "3 COMM_COLL_NODE_b_ALLREDUCE 2",
                           "4 COMP_NODE_b_BWD_IG 2",
                           "5 COMP_NODE_a_BWD_WG 4",  // the first layer has no input gradient
                           "6 COMM_COLL_NODE_a_ALLREDUCE 5",
                           // pass 2: each layer's forward waits for its weights' all-reduce
                           "7 COMP_NODE_a_FWD 6",
                           "8 COMP_NODE_b_FWD 7,3",
                           "9 COMP_NODE_b_BWD_WG 8",
                           "10 COMM_COLL_NODE_b_ALLREDUCE 9",
                           "11 COMP_NODE_b_BWD_IG 9",
                           "12 COMP_NODE_a_BWD_WG 11",
                           "13 COMM_COLL_NODE_a_ALLREDUCE 12",
                       }));
  EXPECT_EQ(w.nodes[1].duration_micros(), 20u);
  EXPECT_EQ(w.nodes[4].duration_micros(), 21u);
  EXPECT_EQ(w.nodes[2].duration_micros(), 22u);
  // As Chakra writes them: comm_type and comm_size as int64, no is_cpu_op.
  const auto& comm = w.nodes[3];
  EXPECT_EQ(comm.type(), ChakraProtoMsg::COMM_COLL_NODE);
  ASSERT_EQ(comm.attr_size(), 2);
  EXPECT_EQ(comm.attr(0).name(), "comm_type");
  EXPECT_EQ(comm.attr(0).int64_val(), ChakraProtoMsg::ALL_REDUCE);
  EXPECT_EQ(comm.attr(1).name(), "comm_size");
  EXPECT_EQ(comm.attr(1).int64_val(), 2000);
  EXPECT_EQ(w.nodes[0].attr_size(), 0);
  ASSERT_EQ(w.metadata.attr_size(), 2);
  EXPECT_EQ(w.metadata.attr(0).string_val(), "1.0.2-chakra.1.0.0");
  EXPECT_EQ(w.metadata.attr(1).name(), "input_file");
  EXPECT_EQ(w.metadata.attr(1).string_val(), kData);
}

TEST(TextWorkload, ANoneCommunicationIsNoNodeUnlessChakraCompatible) {
  const std::string text =
      "DATA\n2\n"
      "a -1 10 NONE 0 11 NONE 0 12 NONE 0 1\n"
      "b -1 20 NONE 0 21 NONE 0 22 ALLREDUCE 2000 1\n";
  TextWorkload w = Convert(text, /*passes=*/2);
  EXPECT_EQ(Render(w), (std::vector<std::string>{
                           "0 COMP_NODE_a_FWD",
                           "1 COMP_NODE_b_FWD 0",
                           "2 COMP_NODE_b_BWD_WG 1",
                           "3 COMM_COLL_NODE_b_ALLREDUCE 2",
                           "4 COMP_NODE_b_BWD_IG 2",
                           "5 COMP_NODE_a_BWD_WG 4",
                           "6 COMP_NODE_a_FWD 5",  // waits for what a's NONE would have
                           "7 COMP_NODE_b_FWD 6,3",
                           "8 COMP_NODE_b_BWD_WG 7",
                           "9 COMM_COLL_NODE_b_ALLREDUCE 8",
                           "10 COMP_NODE_b_BWD_IG 8",
                           "11 COMP_NODE_a_BWD_WG 10",
                       }));
  EXPECT_EQ(w.none_left_out, 2);
  EXPECT_EQ(w.none_written, 0);

  TextWorkload c = Convert(text, /*passes=*/1, /*compatible=*/true);
  EXPECT_EQ(Render(c), (std::vector<std::string>{
                           "0 COMP_NODE_a_FWD",
                           "1 COMP_NODE_b_FWD 0",
                           "2 COMP_NODE_b_BWD_WG 1",
                           "3 COMM_COLL_NODE_b_ALLREDUCE 2",
                           "4 COMP_NODE_b_BWD_IG 2",
                           "5 COMP_NODE_a_BWD_WG 4",
                           "6 COMM_COLL_NODE_a_NONE 5",
                       }));
  EXPECT_EQ(c.nodes[6].attr(0).int64_val(), ChakraProtoMsg::ALL_REDUCE);  // Chakra's enum 0
  EXPECT_EQ(c.nodes[6].attr(1).int64_val(), 0);
  EXPECT_EQ(c.none_written, 1);
  EXPECT_EQ(c.none_left_out, 0);
}

const char* kModel =
    "MODEL\n2\n"
    "a -1 10 ALLGATHER 100 11 REDUCESCATTER 101 12 NONE 0 1\n"
    "b -1 20 ALLGATHER 200 21 REDUCESCATTER 201 22 NONE 0 1\n";

TEST(TextWorkload, ModelParallelCommunicatesAfterEveryForwardAndInputGradientStep) {
  TextWorkload w = Convert(kModel, /*passes=*/2);
  EXPECT_EQ(Render(w), (std::vector<std::string>{
                           "0 COMP_NODE_a_FWD",
                           "1 COMM_COLL_NODE_a_ALLGATHER 0",
                           "2 COMP_NODE_b_FWD 1",
                           "3 COMM_COLL_NODE_b_ALLGATHER 2",
                           "4 COMP_NODE_b_BWD_IG 3",
                           "5 COMM_COLL_NODE_b_REDUCESCATTER 4",
                           "6 COMP_NODE_b_BWD_WG 4",
                           "7 COMP_NODE_a_BWD_IG 6,5",  // no communication after the first
                           "8 COMP_NODE_a_BWD_WG 7",
                           // pass 2: a layer's forward waits for its weight-gradient step
                           "9 COMP_NODE_a_FWD 8",
                           "10 COMM_COLL_NODE_a_ALLGATHER 9",
                           "11 COMP_NODE_b_FWD 10,6",
                           "12 COMM_COLL_NODE_b_ALLGATHER 11",
                           "13 COMP_NODE_b_BWD_IG 12",
                           "14 COMM_COLL_NODE_b_REDUCESCATTER 13",
                           "15 COMP_NODE_b_BWD_WG 13",
                           "16 COMP_NODE_a_BWD_IG 15,14",
                           "17 COMP_NODE_a_BWD_WG 16",
                       }));
  EXPECT_EQ(w.nodes[5].attr(0).int64_val(), ChakraProtoMsg::REDUCE_SCATTER);
  EXPECT_EQ(w.nodes[5].attr(1).int64_val(), 201);
  EXPECT_EQ(w.nodes[1].attr(0).int64_val(), ChakraProtoMsg::ALL_GATHER);
}

const char* kHybrid =
    "a -1 10 ALLGATHER 100 11 REDUCESCATTER 101 12 ALLREDUCE 102 1\n"
    "b -1 20 ALLGATHER 200 21 REDUCESCATTER 201 22 ALLREDUCE 202 1\n";

TEST(TextWorkload, HybridsAlsoAllReduceWeightGradients) {
  const std::vector<std::string> data_model = {
      "0 COMP_NODE_a_FWD",
      "1 COMM_COLL_NODE_a_ALLGATHER 0",
      "2 COMP_NODE_b_FWD 1",
      "3 COMM_COLL_NODE_b_ALLGATHER 2",
      "4 COMP_NODE_b_BWD_IG 3",
      "5 COMM_COLL_NODE_b_IG_COMM__REDUCESCATTER 4",  // Chakra's name for this one
      "6 COMP_NODE_b_BWD_WG 4",
      "7 COMM_COLL_NODE_b_ALLREDUCE 6",
      "8 COMP_NODE_a_BWD_IG 6,5",
      "9 COMP_NODE_a_BWD_WG 8",
      "10 COMM_COLL_NODE_a_ALLREDUCE 9",
      // pass 2: the weights' all-reduce first, then the layer before
      "11 COMP_NODE_a_FWD 10",
      "12 COMM_COLL_NODE_a_ALLGATHER 11",
      "13 COMP_NODE_b_FWD 7,12",
  };
  TextWorkload dm = Convert(std::string("HYBRID_DATA_MODEL\n2\n") + kHybrid, /*passes=*/2);
  ASSERT_EQ(dm.nodes.size(), 22u);
  std::vector<std::string> got = Render(dm);
  got.resize(data_model.size());
  EXPECT_EQ(got, data_model);

  std::vector<std::string> model_data = data_model;
  model_data[5] = "5 COMM_COLL_NODE_b_REDUCESCATTER 4";
  TextWorkload md = Convert(std::string("HYBRID_MODEL_DATA\n2\n") + kHybrid, /*passes=*/2);
  got = Render(md);
  got.resize(model_data.size());
  EXPECT_EQ(got, model_data);
}

const char* kDlrm =
    "HYBRID_DLRM 1\n3\n"
    "emb -1 10 ALLTOALL 100 11 ALLTOALL 101 12 NONE 0 1\n"
    "bottom -1 20 NONE 0 21 NONE 0 22 ALLREDUCE 202 1\n"
    "top -1 30 NONE 0 31 NONE 0 32 ALLREDUCE 302 1\n";

TEST(TextWorkload, DlrmExchangesEmbeddingsByAllToAllAroundTheBottomLayers) {
  TextWorkload w = Convert(kDlrm, /*passes=*/2);
  std::vector<std::string> got = Render(w);
  ASSERT_EQ(got.size(), 24u);
  got.resize(16);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "0 COMP_NODE_emb_FWD",
                     "1 COMM_COLL_NODE_emb_ALLTOALL 0",
                     "2 COMP_NODE_bottom_FWD 0,1",  // the last bottom layer waits for it
                     "3 COMP_NODE_top_FWD 2",
                     "4 COMP_NODE_top_BWD_WG 3",
                     "5 COMM_COLL_NODE_top_ALLREDUCE 4",
                     "6 COMP_NODE_top_BWD_IG 4",
                     "7 COMM_COLL_NODE_emb_ALLTOALL 6",  // embeddings' gradients, backward
                     "8 COMP_NODE_bottom_BWD_WG 6",
                     "9 COMM_COLL_NODE_bottom_ALLREDUCE 8",
                     "10 COMP_NODE_bottom_BWD_IG 8",
                     "11 COMP_NODE_emb_BWD_WG 10,7",
                     // pass 2: emb has no weight all-reduce (NONE), so its step
                     "12 COMP_NODE_emb_FWD 11",
                     "13 COMM_COLL_NODE_emb_ALLTOALL 12",
                     "14 COMP_NODE_bottom_FWD 9,12,13",
                     "15 COMP_NODE_top_FWD 5,14",
                 }));
  EXPECT_EQ(w.nodes[7].attr(1).int64_val(), 101);  // the input-gradient size
  EXPECT_EQ(w.none_left_out, 0);                   // NONE weights: no node in Chakra either
  // The ENHANCED spelling builds the same graph.
  std::string enhanced = kDlrm;
  enhanced.replace(0, 11, "HYBRID_DLRM_ENHANCED");
  EXPECT_EQ(Render(Convert(enhanced, 2)), Render(w));
}

TEST(TextWorkload, MicroIsOneCollectivePerLayerAndPass) {
  TextWorkload w = Convert("MICRO\n1\nconv1 -1 5 NONE 0 5 NONE 0 5  ALLTOALL 4096 5\n", 3);
  EXPECT_EQ(Render(w), (std::vector<std::string>{"0 COMM_COLL_NODE_conv1_ALLTOALL",
                                                 "1 COMM_COLL_NODE_conv1_ALLTOALL",
                                                 "2 COMM_COLL_NODE_conv1_ALLTOALL"}));
  EXPECT_EQ(w.nodes[0].attr(0).int64_val(), ChakraProtoMsg::ALL_TO_ALL);
  EXPECT_EQ(w.nodes[0].attr(1).int64_val(), 4096);
}

TEST(TextWorkload, FilesAreTheSameOnEveryNpuOrNumberedOnAsChakraDoes) {
  const std::string dir = ::testing::TempDir();
  TextWorkload w = Convert(kModel);
  ASSERT_TRUE(WriteTextWorkload(w, dir + "/model", 3).ok());
  TextWorkload c = Convert(kModel, 1, /*compatible=*/true);
  ASSERT_TRUE(WriteTextWorkload(c, dir + "/chakra", 3).ok());
  for (int r = 0; r < 3; ++r) {
    StatusOr<Trace> t = Trace::Load(RankTracePath(dir + "/model", r));
    ASSERT_TRUE(t.ok()) << t.status().message();
    StatusOr<Trace> u = Trace::Load(RankTracePath(dir + "/chakra", r));
    ASSERT_TRUE(u.ok()) << u.status().message();
    ASSERT_EQ(t->size(), 9u);
    ASSERT_EQ(u->size(), 9u);
    for (uint32_t i = 0; i < t->size(); ++i) {
      EXPECT_EQ(t->id(i), i);
      EXPECT_EQ(u->id(i), 9u * r + i);  // Chakra's converter numbers on across NPUs
      EXPECT_EQ(t->name(i), u->name(i));
      ASSERT_EQ(t->parents(i).size(), u->parents(i).size());
      for (size_t p = 0; p < t->parents(i).size(); ++p) {
        EXPECT_EQ(t->parents(i)[p], u->parents(i)[p]);  // the same graph
      }
    }
    EXPECT_EQ(t->comm_size(5), std::optional<uint64_t>(201));
    EXPECT_EQ(t->comm_type(5), std::optional<CollectiveType>(CollectiveType::kReduceScatter));
  }
}

TEST(TextWorkload, BadInputNamesTheFileLineColumnAndValue) {
  EXPECT_EQ(Error(""),
            "w.txt: empty; an ASTRA-sim 1.0 text workload starts with its parallelism (MICRO, "
            "DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM <last bottom "
            "layer>, HYBRID_DLRM_ENHANCED <last bottom layer>)");
  EXPECT_NE(Error("HYBRID_TRANSFORMER model_parallel_NPU_group: 8\n1\n"
                  "conv1 -1 5 ALLREDUCE 1048576 5 NONE 0 5 NONE 0 5\n")
                .find("w.txt:1: the parallelism is 'HYBRID_TRANSFORMER'; expected MICRO"),
            std::string::npos);
  // Past 5e7 nodes per NPU (it had built them all, 2.5 GB for 8 million, before writing).
  EXPECT_EQ(Error("DATA\n1\na -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 1000 1\n", 10000000),
            "w.txt: 1 layers x 10000000 passes (--num-passes) could write up to 60000000 nodes per "
            "NPU; expected at most 50000000: fewer passes");
  EXPECT_EQ(Error("DATA\n"),
            "w.txt: no layer count after line 1; expected a line with the "
            "number of layers");
  EXPECT_EQ(Error("DATA\ntwo\n"),
            "w.txt:2: the number of layers is 'two'; expected one whole number from 1 to "
            "1000000");
  EXPECT_EQ(Error("DATA\n2\na -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 1000 1\n"),
            "w.txt:2: says 2 layers, but the file has 1 layer lines");
  EXPECT_EQ(Error("DATA\n1\na -1 10 NONE 0 11 NONE\n"),
            "w.txt:3: a layer line has 12 columns (name reserved fwd_time fwd_type fwd_size "
            "ig_time ig_type ig_size wg_time wg_type wg_size update); this one has 7");
  EXPECT_EQ(Error("DATA\n1\na -1 10 NONE 0 11 NONE 0 12 ALLREDUC 1000 1\n"),
            "w.txt:3: column 10 (weight-gradient communication type) of layer 'a' is "
            "'ALLREDUC'; expected ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or NONE");
  EXPECT_EQ(Error("DATA\n1\na -1 -10 NONE 0 11 NONE 0 12 ALLREDUCE 1e3 1\n"),
            "w.txt:3: column 3 (forward compute time) of layer 'a' is '-10'; expected a whole "
            "number from 0 to 2^63-1\n"
            "w.txt:3: column 11 (weight-gradient communication size) of layer 'a' is '1e3'; "
            "expected a whole number from 0 to 2^63-1");
  EXPECT_NE(Error("DATA\n1\na -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 9223372036854775808 1\n")
                .find("is '9223372036854775808'; expected a whole number"),
            std::string::npos);
  EXPECT_EQ(Error(kData, 0), "w.txt: the number of passes is '0'; expected a whole number >= 1");
  EXPECT_EQ(Error("HYBRID_DLRM\n1\ne -1 1 ALLTOALL 1 1 ALLTOALL 1 1 NONE 0 1\n"),
            "w.txt:1: HYBRID_DLRM needs the index of the last bottom-MLP layer after it, e.g. "
            "'HYBRID_DLRM 4'; got ''");
  EXPECT_EQ(Error("HYBRID_DLRM 2\n3\ne -1 1 ALLTOALL 1 1 ALLTOALL 1 1 NONE 0 1\n"
                  "b -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"
                  "t -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            "w.txt:1: the last bottom-MLP layer is 2; with 3 layers expected 1 to 1 (layer 0 is "
            "the embeddings, whose forward all-to-all that layer waits for, and a layer must "
            "follow it)");
  // Layer 0 as the last bottom layer would wait for its own all-to-all (Chakra's converter
  // crashes; it had been written with no layer waiting for the first pass's all-to-all).
  EXPECT_EQ(Error("HYBRID_DLRM 0\n2\ne -1 1 ALLTOALL 1 1 ALLTOALL 1 1 NONE 0 1\n"
                  "t -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            "w.txt:1: the last bottom-MLP layer is 0; with 2 layers expected none (at least 3 "
            "layers are needed) (layer 0 is the embeddings, whose forward all-to-all that layer "
            "waits for, and a layer must follow it)");
  EXPECT_EQ(Error("HYBRID_DLRM 1\n3\ne -1 1 NONE 0 1 ALLTOALL 1 1 NONE 0 1\n"
                  "b -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"
                  "t -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            "w.txt:3: HYBRID_DLRM: the forward communication of layer 0 ('e', the embeddings) "
            "is NONE; expected ALLTOALL, which the top layers wait for");
  EXPECT_EQ(Error("HYBRID_DLRM 1\n3\ne -1 1 ALLTOALL 1 1 ALLTOALL 1 1 NONE 0 1\n"
                  "b -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"
                  "t -1 1 ALLREDUCE 4 1 NONE 0 1 ALLREDUCE 8 1\n"),
            "w.txt:5: HYBRID_DLRM: the forward communication of layer 't' is ALLREDUCE; this "
            "parallelism runs ALLTOALL or NONE forward (Chakra's converter drops any other)");

  StatusOr<TextWorkload> missing =
      ConvertTextWorkload(::testing::TempDir() + "/no_such.txt", TextWorkloadOptions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such.txt: cannot read the text workload: No "
                                            "such file or directory"),
            std::string::npos);
  Status s = WriteTextWorkload(Convert(kData), ::testing::TempDir() + "/no/such/dir/w", 2);
  EXPECT_NE(s.message().find("no/such/dir/w.0.et: cannot create trace file"), std::string::npos);
}

TEST(TextWorkload, BlankLinesAndCarriageReturnsAreIgnored) {
  TextWorkload w = Convert(std::string("DATA\r\n\n2\r\n") +
                           "a -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 1000 1\r\n\n" +
                           "b -1 20 NONE 0 21 NONE 0 22 ALLREDUCE 2000 1\r\n\n");
  EXPECT_EQ(Render(w), Render(Convert(kData)));
}

}  // namespace
}  // namespace et
}  // namespace orrery

#include "et_feeder/writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "et_feeder/trace.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(WriterTest, FramingIsVarint32LengthThenMessage) {
  const std::string path = TempPath("framing.0.et");
  Node n = MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 1048576);
  ASSERT_TRUE(WriteTraceFile(path, {n}).ok());
  const std::string bytes = ReadBytes(path);
  // GlobalMetadata{version: "0.0.4"} = tag 0x0a, length 5, "0.0.4": 7 bytes, prefixed by 0x07.
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes[0], '\x07');
  EXPECT_EQ(bytes.substr(1, 7), std::string("\x0a\x05"
                                            "0.0.4"));
  // Then one Node: a one-byte prefix (< 128) and exactly that many bytes.
  const size_t node_size = n.ByteSizeLong();
  ASSERT_LT(node_size, 128u);
  EXPECT_EQ(static_cast<uint8_t>(bytes[8]), node_size);
  EXPECT_EQ(bytes.size(), 9 + node_size);
  Node back;
  ASSERT_TRUE(back.ParseFromString(bytes.substr(9)));
  EXPECT_EQ(back.SerializeAsString(), n.SerializeAsString());
}

TEST(WriterTest, AppendDelimitedUsesMultiByteVarintsForLargeMessages) {
  Node n = MakeCompNode(1, std::string(200, 'n'), 1);
  std::string bytes;
  AppendDelimited(n, &bytes);
  const size_t size = n.ByteSizeLong();  // > 127, so two varint bytes: low 7 bits | 0x80, rest
  ASSERT_GT(size, 127u);
  ASSERT_LT(size, 16384u);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), (size & 0x7f) | 0x80);
  EXPECT_EQ(static_cast<uint8_t>(bytes[1]), size >> 7);
  EXPECT_EQ(bytes.size(), 2 + size);
}

TEST(WriterTest, BuildersSetWhatTheSimulatorReads) {
  const std::string path = TempPath("builders.0.et");
  Node comp = MakeCompNode(1, "gemm", 25, {});
  Node coll = MakeCollNode(2, "ag", ChakraProtoMsg::ALL_GATHER, 4096, {1});
  Node send = MakeSendNode(3, /*peer=*/5, /*size=*/777, /*tag=*/42, {2});
  Node recv = MakeRecvNode(4, /*peer=*/6, /*size=*/888, /*tag=*/43, {2});
  Node meta = MakeMetadataNode(5, "process_group:init", "[[]]");
  Node mem = MakeNode(6, "load", ChakraProtoMsg::MEM_LOAD_NODE, {1});
  SetUint64Attr(&mem, "tensor_size", 1 << 20);
  ASSERT_TRUE(WriteTraceFile(path, {comp, coll, send, recv, meta, mem}).ok());
  StatusOr<Trace> t = Trace::Load(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 6u);
  EXPECT_EQ(t->type(0), NodeType::kComp);
  EXPECT_EQ(t->duration_micros(0), 25u);
  EXPECT_EQ(t->is_cpu_op(0), std::optional<bool>(false));
  EXPECT_EQ(t->comm_type(1), std::optional<CollectiveType>(CollectiveType::kAllGather));
  EXPECT_EQ(t->comm_size(1), std::optional<uint64_t>(4096));
  EXPECT_EQ(t->type(2), NodeType::kCommSend);
  EXPECT_EQ(t->name(2), "send");
  EXPECT_EQ(t->comm_dst(2), std::optional<int64_t>(5));
  EXPECT_EQ(t->comm_src(2), std::nullopt);  // ASTRA-sim defaults it to the own rank
  EXPECT_EQ(t->comm_size(2), std::optional<uint64_t>(777));
  EXPECT_EQ(t->comm_tag(2), std::optional<int64_t>(42));
  EXPECT_EQ(t->type(3), NodeType::kCommRecv);
  EXPECT_EQ(t->comm_src(3), std::optional<int64_t>(6));
  EXPECT_EQ(t->comm_size(3), std::optional<uint64_t>(888));
  EXPECT_EQ(t->comm_tag(3), std::optional<int64_t>(43));
  EXPECT_EQ(t->metadata_inputs(4), std::optional<std::string_view>("[[]]"));
  EXPECT_EQ(t->type(5), NodeType::kMemLoad);
  EXPECT_EQ(t->tensor_size(5), std::optional<uint64_t>(1 << 20));
  EXPECT_EQ(t->parents(2).size(), 1u);
}

TEST(WriterTest, EveryValueTypeRoundTripsThroughTheFile) {
  // The proto a writer produces must come back bit-identical from the file, for every oneof.
  Node n = MakeNode(1, "all_types", ChakraProtoMsg::COMP_NODE);
  for (IntEncoding enc : kAllIntEncodings) SetIntAttr(&n, IntEncodingName(enc), -5 + 100, enc);
  SetUint64Attr(&n, "u64_max", ~0ull);
  SetBoolAttr(&n, "b", true);
  SetDoubleAttr(&n, "d", 0.25);
  SetFloatAttr(&n, "f", 0.5f);
  SetStringAttr(&n, "s", "text");
  SetBytesAttr(&n, "by", std::string("\0\xff", 2));
  SetBoolListAttr(&n, "bl", {true, false});
  SetInt64ListAttr(&n, "il", {-1, 2});
  SetDoubleListAttr(&n, "dl", {1.5});
  SetStringListAttr(&n, "sl", {"a", "b"});
  AddAttr(&n, "raw")->mutable_sfixed32_list()->add_values(-9);
  const std::string path = TempPath("values.0.et");
  ASSERT_TRUE(WriteTraceFile(path, {n}, "9.9.9").ok());
  const std::string bytes = ReadBytes(path);
  // Skip the GlobalMetadata (1-byte prefix + body), then read the node's 1- or 2-byte prefix.
  const size_t meta_end = 1 + static_cast<uint8_t>(bytes[0]);
  size_t pos = meta_end;
  uint32_t size = static_cast<uint8_t>(bytes[pos]) & 0x7f;
  if (static_cast<uint8_t>(bytes[pos]) & 0x80) size |= static_cast<uint32_t>(bytes[++pos]) << 7;
  ++pos;
  ASSERT_EQ(bytes.size(), pos + size);
  Node back;
  ASSERT_TRUE(back.ParseFromString(bytes.substr(pos)));
  ASSERT_EQ(back.attr_size(), n.attr_size());
  EXPECT_EQ(back.SerializeAsString(), n.SerializeAsString());
  EXPECT_EQ(back.attr(0).int32_val(), 95);
  EXPECT_EQ(back.attr(9).sfixed64_val(), 95);
  EXPECT_EQ(back.attr(10).uint64_val(), ~0ull);
  StatusOr<Trace> t = Trace::Load(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->version(), "9.9.9");
}

TEST(WriterTest, WriteRankFilesNamesFilesByRank) {
  const std::string prefix = TempPath("ranks");
  std::vector<std::vector<Node>> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[r] = {MakeSendNode(1, (r + 1) % 3, 100 * (r + 1), r),
                MakeRecvNode(2, (r + 2) % 3, 100, r, {1})};
  }
  ASSERT_TRUE(WriteRankFiles(prefix, ranks).ok());
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(RankTracePath(prefix, r), prefix + "." + std::to_string(r) + ".et");
    StatusOr<Trace> t = Trace::Load(RankTracePath(prefix, r));
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(t->size(), 2u);
    EXPECT_EQ(t->comm_dst(0), std::optional<int64_t>((r + 1) % 3));
    EXPECT_EQ(t->comm_size(0), std::optional<uint64_t>(100 * (r + 1)));
  }
}

// Strings whose bytes are not UTF-8 (a name from someone's file) are written with U+FFFD for
// each bad byte, wherever they are in the node or the metadata: the trace loads (proto3 strings
// must be UTF-8). Valid strings are written as they are, and absent fields stay absent.
TEST(WriterTest, StringsThatAreNotUtf8AreWrittenWithTheReplacementCharacter) {
  const std::string path = TempPath("utf8.0.et");
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  auto* a = md.add_attr();
  a->set_name("source");
  a->set_string_val("dir\xff/x.json");
  StatusOr<TraceWriter> w = TraceWriter::Open(path, md);
  ASSERT_TRUE(w.ok()) << w.status().message();
  Node bad = MakeCompNode(1, "layer\xc3", 5);
  SetStringAttr(&bad, "pg_name", "7\x80");
  Node meta = MakeMetadataNode(2, "process_group:init", "[{'pg_name': '\xfe'}]");
  Node good = MakeCompNode(3, "caf\xc3\xa9", 5);
  for (const Node& n : {bad, meta, good}) ASSERT_TRUE(w->Write(n).ok());
  ASSERT_TRUE(w->Close().ok());
  StatusOr<Trace> t = Trace::Load(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ(t->name(0), "layer\xef\xbf\xbd");
  EXPECT_EQ(t->pg_name(0), std::optional<std::string_view>("7\xef\xbf\xbd"));
  EXPECT_EQ(t->metadata_inputs(1),
            std::optional<std::string_view>("[{'pg_name': '\xef\xbf\xbd'}]"));
  EXPECT_EQ(t->name(2), "caf\xc3\xa9");
  // The good node went out as given: its bytes are in the file.
  std::string framed;
  AppendDelimited(good, &framed);
  EXPECT_NE(ReadBytes(path).find(framed), std::string::npos);
}

TEST(WriterTest, UnwritablePathIsAnError) {
  const std::string path = TempPath("no_such_dir/x.0.et");
  StatusOr<TraceWriter> w = TraceWriter::Open(path);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr(path));
  EXPECT_THAT(w.status().message(), HasSubstr("cannot create"));
}

TEST(WriterTest, WriteAfterCloseIsAnError) {
  StatusOr<TraceWriter> w = TraceWriter::Open(TempPath("closed.0.et"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(w->Write(MakeCompNode(1, "a", 1)).ok());
  EXPECT_TRUE(w->Close().ok());  // closing twice is harmless
}

TEST(WriterTest, BytesWrittenCountsPrefixesAndBodies) {
  const std::string path = TempPath("count.0.et");
  StatusOr<TraceWriter> w = TraceWriter::Open(path);
  ASSERT_TRUE(w.ok());
  Node n = MakeCompNode(1, "a", 1);
  ASSERT_TRUE(w->Write(n).ok());
  // 8 bytes of framed GlobalMetadata (see FramingIsVarint32LengthThenMessage) + 1 + node size.
  EXPECT_EQ(w->bytes_written(), 8 + 1 + n.ByteSizeLong());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(ReadBytes(path).size(), w->bytes_written());
}

}  // namespace
}  // namespace et
}  // namespace orrery

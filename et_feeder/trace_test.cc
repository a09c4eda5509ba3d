#include "et_feeder/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file holding GlobalMetadata then `nodes`, as raw bytes (so tests can cut or corrupt it).
std::string Framed(const std::vector<Node>& nodes, std::vector<size_t>* offsets = nullptr) {
  std::string bytes;
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version(kDefaultTraceVersion);
  AppendDelimited(meta, &bytes);
  for (const Node& n : nodes) {
    if (offsets != nullptr) offsets->push_back(bytes.size());
    AppendDelimited(n, &bytes);
  }
  return bytes;
}

Trace LoadOk(const std::string& path, const LoadOptions& options = {}) {
  StatusOr<Trace> t = Trace::Load(path, options);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

Trace WriteAndLoad(const std::string& name, const std::vector<Node>& nodes) {
  const std::string path = TempPath(name);
  Status s = WriteTraceFile(path, nodes);
  EXPECT_TRUE(s.ok()) << s.message();
  return LoadOk(path);
}

std::string LoadError(const std::string& path, const LoadOptions& options = {}) {
  StatusOr<Trace> t = Trace::Load(path, options);
  EXPECT_FALSE(t.ok()) << path << " loaded but should not have";
  return t.status().message();
}

std::string LoadErrorOf(const std::string& name, const std::vector<Node>& nodes) {
  const std::string path = TempPath(name);
  EXPECT_TRUE(WriteTraceFile(path, nodes).ok());
  return LoadError(path);
}

TEST(TraceTest, SortsByIdAndKeepsNodeFields) {
  Node c = MakeCompNode(30, "gemm_c", 7, {10, 20});
  c.set_start_time_micros(1234);
  Node a = MakeCompNode(10, "a", 5);
  Node b = MakeCollNode(20, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1024, {10});
  const Trace t = WriteAndLoad("sorts.0.et", {c, a, b});
  EXPECT_EQ(t.version(), "0.0.4");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.id(0), 10u);
  EXPECT_EQ(t.id(1), 20u);
  EXPECT_EQ(t.id(2), 30u);
  EXPECT_EQ(t.name(0), "a");
  EXPECT_EQ(t.name(1), "grad_sync");
  EXPECT_EQ(t.name(2), "gemm_c");
  EXPECT_EQ(t.type(1), NodeType::kCommColl);
  EXPECT_EQ(t.type(2), NodeType::kComp);
  EXPECT_EQ(t.duration_micros(2), 7u);
  EXPECT_EQ(t.start_time_micros(2), 1234u);
  EXPECT_EQ(t.start_time_micros(0), 0u);
  // 30 depends on 10 and 20; 20 on 10, so 30 -> 10 is implied by 30 -> 20 -> 10 and dropped.
  ASSERT_EQ(t.parents(2).size(), 1u);
  EXPECT_EQ(t.parents(2)[0], 1u);
  ASSERT_EQ(t.parents(1).size(), 1u);
  EXPECT_EQ(t.parents(1)[0], 0u);
  ASSERT_EQ(t.children(0).size(), 1u);
  EXPECT_EQ(t.children(0)[0], 1u);
  ASSERT_EQ(t.children(1).size(), 1u);
  EXPECT_EQ(t.children(1)[0], 2u);
  EXPECT_TRUE(t.parents(0).empty());
  EXPECT_EQ(t.edge_count(), 2u);
  EXPECT_EQ(t.implied_dependency_count(), 1u);
  EXPECT_EQ(t.Find(20), std::optional<uint32_t>(1));
  EXPECT_EQ(t.Find(21), std::nullopt);
  EXPECT_EQ(t.dangling_dependency_count(), 0u);
}

TEST(TraceTest, EveryAttributeRoundTrips) {
  Node n = MakeNode(1, "everything", ChakraProtoMsg::COMM_SEND_NODE);
  SetBoolAttr(&n, "is_cpu_op", true);
  SetIntAttr(&n, "num_ops", 1000000000000LL);
  SetUint64Attr(&n, "tensor_size", 1ull << 40);
  SetIntAttr(&n, "comm_type", ChakraProtoMsg::REDUCE_SCATTER);
  SetUint64Attr(&n, "comm_size", std::numeric_limits<uint64_t>::max());
  SetIntAttr(&n, "comm_src", 3, IntEncoding::kInt32);
  SetIntAttr(&n, "comm_dst", -1, IntEncoding::kSint32);
  SetIntAttr(&n, "comm_tag", 500000001, IntEncoding::kInt32);
  SetIntAttr(&n, "comm_priority", std::numeric_limits<int64_t>::min(), IntEncoding::kSfixed64);
  SetStringAttr(&n, "pg_name", "7");
  SetBoolListAttr(&n, "involved_dim", {true, false, true});
  // Attributes nobody reads, of the other value types, are ignored.
  SetDoubleAttr(&n, "op_time", 1.5);
  SetBytesAttr(&n, "blob", std::string("\0\1", 2));
  // The local memory tracker's tensor lists.
  SetStringListAttr(&n, "inputs", {"t0", "16", "w", "4096"});
  SetStringListAttr(&n, "outputs", {"", "0"});
  Node bare = MakeNode(2, "bare", ChakraProtoMsg::COMP_NODE);
  Node meta = MakeMetadataNode(3, "process_group:init", "[[{\"pg_name\": \"0\", \"ranks\": []}]]");
  const Trace t = WriteAndLoad("attrs.0.et", {n, bare, meta});
  ASSERT_EQ(t.size(), 3u);

  EXPECT_EQ(t.is_cpu_op(0), std::optional<bool>(true));
  EXPECT_EQ(t.num_ops(0), std::optional<uint64_t>(1000000000000ull));
  EXPECT_EQ(t.tensor_size(0), std::optional<uint64_t>(1ull << 40));
  EXPECT_EQ(t.comm_type(0), std::optional<CollectiveType>(CollectiveType::kReduceScatter));
  EXPECT_EQ(t.comm_size(0), std::optional<uint64_t>(std::numeric_limits<uint64_t>::max()));
  EXPECT_EQ(t.comm_src(0), std::optional<int64_t>(3));
  EXPECT_EQ(t.tensor_inputs(0),
            (std::optional<std::vector<std::string_view>>({"t0", "16", "w", "4096"})));
  EXPECT_EQ(t.tensor_outputs(0), (std::optional<std::vector<std::string_view>>({"", "0"})));
  EXPECT_EQ(t.tensor_inputs(1), std::nullopt);
  EXPECT_FALSE(t.tensor_list_has_wrong_type(0));
  EXPECT_EQ(t.comm_dst(0), std::optional<int64_t>(-1));
  EXPECT_EQ(t.comm_tag(0), std::optional<int64_t>(500000001));
  EXPECT_EQ(t.comm_priority(0), std::optional<int64_t>(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(t.pg_name(0), std::optional<std::string_view>("7"));
  EXPECT_EQ(t.involved_dim(0), std::optional<std::vector<bool>>({true, false, true}));
  EXPECT_EQ(t.metadata_inputs(0), std::nullopt);

  EXPECT_EQ(t.is_cpu_op(1), std::nullopt);
  EXPECT_EQ(t.num_ops(1), std::nullopt);
  EXPECT_EQ(t.tensor_size(1), std::nullopt);
  EXPECT_EQ(t.comm_type(1), std::nullopt);
  EXPECT_EQ(t.comm_size(1), std::nullopt);
  EXPECT_EQ(t.comm_src(1), std::nullopt);
  EXPECT_EQ(t.comm_dst(1), std::nullopt);
  EXPECT_EQ(t.comm_tag(1), std::nullopt);
  EXPECT_EQ(t.comm_priority(1), std::nullopt);
  EXPECT_EQ(t.pg_name(1), std::nullopt);
  EXPECT_EQ(t.involved_dim(1), std::nullopt);

  EXPECT_EQ(t.type(2), NodeType::kMetadata);
  EXPECT_EQ(t.metadata_inputs(2),
            std::optional<std::string_view>("[[{\"pg_name\": \"0\", \"ranks\": []}]]"));
}

TEST(TraceTest, SparseValuesLandInTheRightSlots) {
  // Only some slots present: values must be found by slot, not by position.
  Node a = MakeNode(1, "a", ChakraProtoMsg::COMM_RECV_NODE);
  SetIntAttr(&a, "comm_tag", 11);
  SetIntAttr(&a, "comm_src", 5);  // written after comm_tag, stored in slot order
  Node b = MakeNode(2, "b", ChakraProtoMsg::COMP_NODE);
  SetIntAttr(&b, "tensor_size", 22);
  const Trace t = WriteAndLoad("sparse.0.et", {a, b});
  EXPECT_EQ(t.comm_src(0), std::optional<int64_t>(5));
  EXPECT_EQ(t.comm_tag(0), std::optional<int64_t>(11));
  EXPECT_EQ(t.comm_dst(0), std::nullopt);
  EXPECT_EQ(t.tensor_size(1), std::optional<uint64_t>(22));
  EXPECT_EQ(t.num_ops(1), std::nullopt);
}

TEST(TraceTest, EveryIntegerEncodingConvertsToEveryIntegerAttribute) {
  const char* kUnsignedAttrs[] = {"num_ops", "tensor_size", "comm_size"};
  const char* kSignedAttrs[] = {"comm_src", "comm_dst", "comm_tag", "comm_priority"};
  std::vector<Node> nodes;
  for (IntEncoding enc : kAllIntEncodings) {
    const int64_t k = static_cast<int64_t>(nodes.size());
    Node n = MakeNode(k, IntEncodingName(enc), ChakraProtoMsg::COMP_NODE);
    // 100 + k and 200 + k fit every encoding; comm_type 6 = ALL_TO_ALL.
    for (const char* a : kUnsignedAttrs) SetIntAttr(&n, a, 100 + k, enc);
    for (const char* a : kSignedAttrs) SetIntAttr(&n, a, 200 + k, enc);
    SetIntAttr(&n, "comm_type", 6, enc);
    SetIntAttr(&n, "is_cpu_op", 1, enc);
    nodes.push_back(n);
  }
  const Trace t = WriteAndLoad("encodings.0.et", nodes);
  ASSERT_EQ(t.size(), 10u);
  for (uint32_t i = 0; i < t.size(); ++i) {
    SCOPED_TRACE(std::string(t.name(i)));
    const uint64_t k = i;  // node id k sits at index k
    EXPECT_EQ(t.num_ops(i), std::optional<uint64_t>(100 + k));
    EXPECT_EQ(t.tensor_size(i), std::optional<uint64_t>(100 + k));
    EXPECT_EQ(t.comm_size(i), std::optional<uint64_t>(100 + k));
    EXPECT_EQ(t.comm_src(i), std::optional<int64_t>(200 + k));
    EXPECT_EQ(t.comm_dst(i), std::optional<int64_t>(200 + k));
    EXPECT_EQ(t.comm_tag(i), std::optional<int64_t>(200 + k));
    EXPECT_EQ(t.comm_priority(i), std::optional<int64_t>(200 + k));
    EXPECT_EQ(t.comm_type(i), std::optional<CollectiveType>(CollectiveType::kAllToAll));
    EXPECT_EQ(t.is_cpu_op(i), std::optional<bool>(true));
  }
}

TEST(TraceTest, NegativeValuesThroughSignedEncodings) {
  std::vector<Node> nodes;
  const IntEncoding kSigned[] = {IntEncoding::kInt32,    IntEncoding::kInt64,
                                 IntEncoding::kSint32,   IntEncoding::kSint64,
                                 IntEncoding::kSfixed32, IntEncoding::kSfixed64};
  uint64_t id = 0;
  for (IntEncoding enc : kSigned) {
    Node n = MakeNode(id++, IntEncodingName(enc), ChakraProtoMsg::COMM_RECV_NODE);
    SetIntAttr(&n, "comm_src", -7, enc);
    nodes.push_back(n);
  }
  const Trace t = WriteAndLoad("negative.0.et", nodes);
  for (uint32_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t.comm_src(i), std::optional<int64_t>(-7)) << t.name(i);
  }
}

TEST(TraceTest, BoolConvertsToIntegerAndIntegerZeroOneToIsCpuOp) {
  // feeder_v3 treats bool as an integer type: true -> 1.
  Node a = MakeNode(1, "a", ChakraProtoMsg::COMP_NODE);
  SetBoolAttr(&a, "num_ops", true);
  SetIntAttr(&a, "is_cpu_op", 0, IntEncoding::kInt64);
  Node b = MakeNode(2, "b", ChakraProtoMsg::COMP_NODE);
  SetBoolAttr(&b, "is_cpu_op", false);
  const Trace t = WriteAndLoad("boolint.0.et", {a, b});
  EXPECT_EQ(t.num_ops(0), std::optional<uint64_t>(1));
  EXPECT_EQ(t.is_cpu_op(0), std::optional<bool>(false));
  EXPECT_EQ(t.is_cpu_op(1), std::optional<bool>(false));
}

TEST(TraceTest, FirstAttributeOfANameWins) {
  Node n = MakeNode(1, "dup", ChakraProtoMsg::COMM_COLL_NODE);
  SetIntAttr(&n, "comm_size", 10);
  SetIntAttr(&n, "comm_size", 20);
  SetStringAttr(&n, "pg_name", "first");
  SetStringAttr(&n, "pg_name", "second");
  const Trace t = WriteAndLoad("firstwins.0.et", {n});
  EXPECT_EQ(t.comm_size(0), std::optional<uint64_t>(10));
  EXPECT_EQ(t.pg_name(0), std::optional<std::string_view>("first"));
}

struct BadAttr {
  const char* label;
  void (*set)(Node*);
  const char* attr;
  const char* found;
  const char* expected;
};

TEST(TraceTest, WrongAttributeTypesAreClearErrors) {
  const BadAttr kCases[] = {
      {"double for integer", [](Node* n) { SetDoubleAttr(n, "comm_size", 1.0); }, "comm_size",
       "double_val", "an integer"},
      {"float for integer", [](Node* n) { SetFloatAttr(n, "num_ops", 2.0f); }, "num_ops",
       "float_val", "an integer"},
      {"string for number", [](Node* n) { SetStringAttr(n, "tensor_size", "12"); }, "tensor_size",
       "string_val", "an integer"},
      {"list for scalar", [](Node* n) { SetInt64ListAttr(n, "comm_src", {1}); }, "comm_src",
       "int64_list", "an integer"},
      {"list for comm_type", [](Node* n) { SetInt64ListAttr(n, "comm_type", {0}); }, "comm_type",
       "int64_list", "an integer"},
      {"string for bool", [](Node* n) { SetStringAttr(n, "is_cpu_op", "true"); }, "is_cpu_op",
       "string_val", "bool_val"},
      {"int for pg_name", [](Node* n) { SetIntAttr(n, "pg_name", 1); }, "pg_name", "int64_val",
       "string_val"},
      {"int list for involved_dim",
       [](Node* n) {
         SetInt64ListAttr(n, "involved_dim", {1, 1});
       },
       "involved_dim", "int64_list", "bool_list"},
      {"bool for involved_dim", [](Node* n) { SetBoolAttr(n, "involved_dim", true); },
       "involved_dim", "bool_val", "bool_list"},
      {"no value", [](Node* n) { AddAttr(n, "comm_tag"); }, "comm_tag", "no value", "an integer"},
  };
  int k = 0;
  for (const BadAttr& c : kCases) {
    SCOPED_TRACE(c.label);
    Node n = MakeNode(42, "victim", ChakraProtoMsg::COMM_COLL_NODE);
    c.set(&n);
    const std::string path = TempPath("badattr" + std::to_string(k++) + ".0.et");
    ASSERT_TRUE(WriteTraceFile(path, {MakeCompNode(1, "ok", 1), n}).ok());
    const std::string m = LoadError(path);
    EXPECT_THAT(m, HasSubstr(path));
    EXPECT_THAT(m, HasSubstr("node 42"));
    EXPECT_THAT(m, HasSubstr(std::string("'") + c.attr + "'"));
    EXPECT_THAT(m, HasSubstr(c.found));
    EXPECT_THAT(m, HasSubstr(std::string("expected ") + c.expected));
  }
}

TEST(TraceTest, OutOfRangeValuesAreErrors) {
  Node a = MakeNode(5, "neg_size", ChakraProtoMsg::COMM_COLL_NODE);
  SetIntAttr(&a, "comm_size", -1);
  Node b = MakeNode(6, "bad_type", ChakraProtoMsg::COMM_COLL_NODE);
  SetIntAttr(&b, "comm_type", 12);
  Node c = MakeNode(7, "cpu2", ChakraProtoMsg::COMP_NODE);
  SetIntAttr(&c, "is_cpu_op", 2);
  Node d = MakeNode(8, "huge_tag", ChakraProtoMsg::COMM_SEND_NODE);
  SetUint64Attr(&d, "comm_tag", std::numeric_limits<uint64_t>::max());
  const std::string m = LoadErrorOf("range.0.et", {a, b, c, d});
  // All four problems are reported, not just the first.
  EXPECT_THAT(m, HasSubstr("node 5"));
  EXPECT_THAT(m, HasSubstr("'comm_size' is -1"));
  EXPECT_THAT(m, HasSubstr("node 6"));
  EXPECT_THAT(m, HasSubstr("'comm_type' is 12; expected 0..9"));
  EXPECT_THAT(m, HasSubstr("node 7"));
  EXPECT_THAT(m, HasSubstr("'is_cpu_op' is 2"));
  EXPECT_THAT(m, HasSubstr("node 8"));
  EXPECT_THAT(m, HasSubstr("'comm_tag' is 18446744073709551615"));
}

TEST(TraceTest, UnknownNodeTypeIsAnError) {
  Node n = MakeNode(9, "weird", static_cast<ChakraProtoMsg::NodeType>(42));
  const std::string m = LoadErrorOf("badtype.0.et", {n});
  EXPECT_THAT(m, HasSubstr("node 9"));
  EXPECT_THAT(m, HasSubstr("type is 42"));
}

TEST(TraceTest, MissingFile) {
  const std::string path = TempPath("does_not_exist.0.et");
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("cannot open"));
}

TEST(TraceTest, EmptyFile) {
  const std::string path = TempPath("empty.0.et");
  WriteBytes(path, "");
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("empty file"));
}

TEST(TraceTest, TruncatedMessage) {
  std::vector<size_t> offsets;
  const std::string bytes = Framed({MakeCompNode(1, "a", 1), MakeCompNode(2, "b", 1)}, &offsets);
  const std::string path = TempPath("trunc_msg.0.et");
  WriteBytes(path, bytes.substr(0, bytes.size() - 1));  // last message loses its final byte
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("truncated"));
  EXPECT_THAT(m, HasSubstr("message at byte " + std::to_string(offsets[1])));
}

TEST(TraceTest, TruncatedLengthPrefix) {
  // A node larger than 127 bytes has a 2-byte varint prefix; keep only its first byte.
  Node big = MakeCompNode(2, std::string(300, 'x'), 1);
  std::vector<size_t> offsets;
  const std::string bytes = Framed({MakeCompNode(1, "a", 1), big}, &offsets);
  const std::string path = TempPath("trunc_len.0.et");
  WriteBytes(path, bytes.substr(0, offsets[1] + 1));
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("truncated"));
  EXPECT_THAT(m, HasSubstr("length prefix at byte " + std::to_string(offsets[1])));
}

TEST(TraceTest, GarbageMessage) {
  std::vector<size_t> offsets;
  std::string bytes = Framed({MakeCompNode(1, "a", 1)}, &offsets);
  const size_t at = bytes.size();
  // Length 2, then field 1 with wire type 7 (invalid): protobuf rejects it.
  bytes += std::string("\x02\x0f\x00", 3);
  const std::string path = TempPath("garbage.0.et");
  WriteBytes(path, bytes);
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("garbage"));
  EXPECT_THAT(m, HasSubstr("byte " + std::to_string(at)));
}

// A corrupt message names what breaks it: the node, the field, its byte, and what is wrong.
TEST(TraceTest, GarbageMessageNamesTheBrokenField) {
  std::vector<size_t> offsets;
  const std::string good = Framed({MakeCompNode(1, "a", 1)}, &offsets);
  const size_t at = good.size();
  auto error_for = [&](const std::string& message) {
    std::string bytes = good;
    bytes += static_cast<char>(message.size());
    bytes += message;
    const std::string path = TempPath("broken_field.0.et");
    WriteBytes(path, bytes);
    return LoadError(path);
  };
  const std::string body = std::to_string(at + 1);  // where the message's bytes start
  // id 7 (field 1, varint), then field 1 with wire type 7.
  std::string m = error_for(std::string("\x08\x07\x0f\x00", 4));
  EXPECT_THAT(m, HasSubstr("the message at byte " + std::to_string(at) +
                           " (4 bytes) is not a valid Chakra Node: in node 7: byte " +
                           std::to_string(at + 3) +
                           ": field 'id' (#1) has wire type 7, which protobuf does not have"));
  // name (field 2) declares 40 bytes, 2 follow.
  m =
      error_for(std::string("\x08\x07\x12\x28"
                            "ab",
                            6));
  EXPECT_THAT(m, HasSubstr("in node 7: byte " + std::to_string(at + 3) +
                           ": field 'name' (#2) declares 40 bytes, but the end of its message at "
                           "byte " +
                           std::to_string(at + 7) + " comes after 2"));
  // name is not UTF-8 (proto3 strings must be).
  m =
      error_for(std::string("\x08\x07\x12\x02"
                            "a\xff",
                            6));
  EXPECT_THAT(
      m, HasSubstr("byte " + std::to_string(at + 6) + ": field 'name' (#2) is not valid UTF-8"));
  // An attribute named comm_size whose int64_val (field 9) varint is cut off.
  std::string attr = std::string(
                         "\x0a\x09"
                         "comm_size") +
                     std::string("\x48\x80", 2);
  m = error_for(std::string("\x08\x07\x52", 3) + static_cast<char>(attr.size()) + attr);
  EXPECT_THAT(m, HasSubstr("in node 7, field 'attr' (#10) named 'comm_size': byte " +
                           std::to_string(at + 1 + 4 + 11) +
                           ": field 'int64_val' (#9): its varint is cut off by the end of its "
                           "message at byte " +
                           std::to_string(at + 1 + 4 + 13)));
  // Packed data_deps (field 5) whose last varint is cut off.
  m = error_for(std::string("\x08\x07\x2a\x02\x01\x80", 6));
  EXPECT_THAT(m, HasSubstr("field 'data_deps' (#5): a packed varint is cut off"));
  // A corrupted tag: id (a varint) tagged length-delimited, its length past the end.
  m =
      error_for(std::string("\x08\x07\x0a\x05"
                            "ab",
                            6));
  EXPECT_THAT(m, HasSubstr("field 'id' (#1) (a uint64 in the schema, here tagged "
                           "length-delimited) declares 5 bytes"));
  // Field number 0.
  m = error_for(std::string("\x00\x01", 2));
  EXPECT_THAT(m, HasSubstr(": byte " + body + ": field number 0, which protobuf does not allow"));
  // A group never closed.
  m = error_for(std::string("\x08\x07\x5b\x08\x01", 5));
  EXPECT_THAT(m, HasSubstr("field #11 (not in Node) starts a group that is not closed"));
}

TEST(TraceTest, GzipFileIsNamedAsSuch) {
  const std::string path = TempPath("gz.0.et");
  WriteBytes(path, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8) + Framed({}));
  EXPECT_THAT(LoadError(path), HasSubstr(path + ": gzip-compressed (it starts with gzip's bytes "
                                                "1f 8b); traces are read uncompressed"));
}

TEST(TraceTest, OverlongVarintIsGarbage) {
  std::string bytes = Framed({});
  const size_t at = bytes.size();
  bytes += std::string(6, '\xff');
  const std::string path = TempPath("overlong.0.et");
  WriteBytes(path, bytes);
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr("garbage at byte " + std::to_string(at)));
}

TEST(TraceTest, MissingGlobalMetadataIsDetected) {
  std::string bytes;
  AppendDelimited(MakeCompNode(5, "a", 1), &bytes);
  const std::string path = TempPath("nometa.0.et");
  WriteBytes(path, bytes);
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("not a GlobalMetadata"));
}

TEST(TraceTest, ZeroLengthNodeIsAnAllDefaultNode) {
  // feeder_v3 parses a zero-length message as a Node with every field at its default.
  std::string bytes = Framed({MakeCompNode(1, "a", 1)});
  bytes += '\0';
  const std::string path = TempPath("zerolen.0.et");
  WriteBytes(path, bytes);
  const Trace t = LoadOk(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.id(0), 0u);
  EXPECT_EQ(t.type(0), NodeType::kInvalid);
  EXPECT_EQ(t.name(0), "");
}

TEST(TraceTest, DuplicateIdNamesBothPositions) {
  std::vector<size_t> offsets;
  const std::string bytes =
      Framed({MakeCompNode(4, "first", 1), MakeCompNode(2, "x", 1), MakeCompNode(4, "second", 1)},
             &offsets);
  const std::string path = TempPath("dup.0.et");
  WriteBytes(path, bytes);
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("duplicate node id 4"));
  EXPECT_THAT(m, HasSubstr("byte " + std::to_string(offsets[0])));
  EXPECT_THAT(m, HasSubstr("byte " + std::to_string(offsets[2])));
}

TEST(TraceTest, DuplicateIdInSortedFile) {
  const std::string m =
      LoadErrorOf("dup_sorted.0.et", {MakeCompNode(1, "a", 1), MakeCompNode(1, "b", 1)});
  EXPECT_THAT(m, HasSubstr("duplicate node id 1"));
}

TEST(TraceTest, DataAndCtrlDepsAreMergedAndDeduplicated) {
  Node c = MakeCompNode(3, "c", 1, {1, 2, 1});
  AddCtrlDeps(&c, {2, 1});
  const Trace t = WriteAndLoad("merge.0.et", {MakeCompNode(1, "a", 1), MakeCompNode(2, "b", 1), c});
  ASSERT_EQ(t.parents(2).size(), 2u);
  EXPECT_EQ(t.parents(2)[0], 0u);
  EXPECT_EQ(t.parents(2)[1], 1u);
  EXPECT_EQ(t.children(0).size(), 1u);
  EXPECT_EQ(t.children(1).size(), 1u);
}

// Ids 0 and 2^64 - 1 span all of uint64_t: the id table's size wrapped to 0 and the loader
// wrote past it (a crash on a 98-byte file). They load, and the dependency between them holds.
TEST(TraceTest, IdsSpanningEveryUint64Load) {
  const Trace t = WriteAndLoad("id_span.0.et",
                               {MakeCompNode(0, "a", 1), MakeCompNode(UINT64_MAX, "b", 1, {0})});
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(t.parents(1).size(), 1u);
  EXPECT_EQ(t.parents(1)[0], 0u);
}

// Ancestor sets of every node (bit a of row v: a is an ancestor of v) from parent lists, visiting
// nodes in the topological order `order` (the test's own, plain sets, not the loader's windows).
std::vector<std::vector<bool>> Ancestors(const std::vector<std::vector<uint32_t>>& parents,
                                         const std::vector<uint32_t>& order) {
  const size_t n = parents.size();
  std::vector<std::vector<bool>> anc(n, std::vector<bool>(n, false));
  for (uint32_t v : order) {
    for (uint32_t p : parents[v]) {
      anc[v][p] = true;
      for (size_t a = 0; a < n; ++a) {
        if (anc[p][a]) anc[v][a] = true;
      }
    }
  }
  return anc;
}

TEST(TraceTest, ImpliedDependenciesAreDroppedAndOrderingIsKept) {
  // Random DAGs whose ids are shuffled against their order (so index order is not topological),
  // with near and far dependencies, data and ctrl: past 4096 nodes the loader's window is
  // exceeded. Whatever it drops, every node must keep exactly the same ancestors (so it becomes
  // issuable at the same moment); up to 4096 nodes no kept dependency may be implied by another.
  for (const uint32_t n : {60u, 900u, 4096u, 6000u}) {
    SCOPED_TRACE("nodes: " + std::to_string(n));
    std::mt19937 rng(n);
    // Ids 0..n-1, or spread 1000 apart (looked up by binary search instead of a table).
    const uint64_t stride = n == 900 ? 1000 : 1;
    std::vector<uint32_t> id_at(n);  // id of the node at topological position k
    std::iota(id_at.begin(), id_at.end(), 0u);
    std::shuffle(id_at.begin(), id_at.end(), rng);
    std::vector<std::vector<uint32_t>> file_parents(n);  // by index
    std::vector<Node> nodes;
    for (uint32_t k = 0; k < n; ++k) {
      std::vector<uint64_t> data, ctrl;
      const uint32_t deps = k == 0 ? 0 : rng() % 8;
      for (uint32_t d = 0; d < deps; ++d) {
        const uint32_t back = d % 2 == 0 ? 1 + rng() % std::min(k, 20u) : 1 + rng() % k;
        (d % 3 == 0 ? ctrl : data).push_back(uint64_t{id_at[k - back]} * stride);
        file_parents[id_at[k]].push_back(id_at[k - back]);
      }
      Node node = MakeCompNode(uint64_t{id_at[k]} * stride, "n", 1);
      for (uint64_t d : data) node.add_data_deps(d);
      for (uint64_t d : ctrl) node.add_ctrl_deps(d);
      nodes.push_back(node);
    }
    const Trace t = WriteAndLoad("implied" + std::to_string(n) + ".0.et", nodes);
    ASSERT_EQ(t.size(), n);
    std::vector<std::vector<uint32_t>> kept(n);  // by index (== id / stride)
    size_t file_edges = 0;
    for (uint32_t v = 0; v < n; ++v) {
      std::sort(file_parents[v].begin(), file_parents[v].end());
      file_parents[v].erase(std::unique(file_parents[v].begin(), file_parents[v].end()),
                            file_parents[v].end());
      file_edges += file_parents[v].size();
      kept[v].assign(t.parents(v).begin(), t.parents(v).end());
      for (uint32_t p : kept[v]) {
        ASSERT_TRUE(std::binary_search(file_parents[v].begin(), file_parents[v].end(), p))
            << "node " << v << " got parent " << p << ", which the file does not list";
      }
      for (uint32_t c : t.children(v)) {
        EXPECT_TRUE(std::count(t.parents(c).begin(), t.parents(c).end(), v) == 1);
      }
    }
    EXPECT_EQ(t.edge_count() + t.implied_dependency_count(), file_edges);
    EXPECT_GT(t.implied_dependency_count(), 0u);
    const std::vector<std::vector<bool>> want = Ancestors(file_parents, id_at);
    const std::vector<std::vector<bool>> got = Ancestors(kept, id_at);
    for (uint32_t v = 0; v < n; ++v) {
      ASSERT_TRUE(got[v] == want[v]) << "node " << v << " has other ancestors than in the file";
      if (n > 4096) continue;
      for (uint32_t p : kept[v]) {
        for (uint32_t q : kept[v]) {
          ASSERT_FALSE(got[q][p]) << "node " << v << " keeps " << p << ", implied by " << q;
        }
      }
    }
  }
}

TEST(TraceTest, DanglingDependenciesAreCountedAndSatisfied) {
  Node b = MakeCompNode(2, "b", 1, {1, 99});
  AddCtrlDeps(&b, {98, 99});  // 99 again: one (node, missing id) pair
  Node c = MakeCompNode(3, "c", 1, {97});
  const std::vector<Node> nodes = {MakeCompNode(1, "a", 1), b, c};
  const std::string path = TempPath("dangling.0.et");
  ASSERT_TRUE(WriteTraceFile(path, nodes).ok());
  const Trace t = LoadOk(path);
  // Distinct (node, missing) pairs: (2,98), (2,99), (3,97) = 3.
  EXPECT_EQ(t.dangling_dependency_count(), 3u);
  ASSERT_EQ(t.dangling_dependency_sample().size(), 3u);
  EXPECT_EQ(t.dangling_dependency_sample()[0].node_id, 2u);
  EXPECT_EQ(t.dangling_dependency_sample()[0].missing_id, 98u);
  EXPECT_EQ(t.dangling_dependency_sample()[2].node_id, 3u);
  EXPECT_EQ(t.dangling_dependency_sample()[2].missing_id, 97u);
  // Only the real dependency remains: 2 -> 1. Node 3 has no parents left.
  EXPECT_EQ(t.parents(1).size(), 1u);
  EXPECT_TRUE(t.parents(2).empty());

  const std::string m = LoadError(path, LoadOptions{/*strict=*/true});
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("3 dependencies"));
  EXPECT_THAT(m, HasSubstr("node 2 -> 98"));
  EXPECT_THAT(m, HasSubstr("node 3 -> 97"));
}

TEST(TraceTest, SelfDependencyIsACycle) {
  const std::string m = LoadErrorOf("self.0.et", {MakeCompNode(5, "me", 1, {5})});
  EXPECT_THAT(m, HasSubstr("dependency cycle"));
  EXPECT_THAT(m, HasSubstr("5 -> 5"));
}

TEST(TraceTest, CycleNamesItsIds) {
  // 1 <- 2 <- 3 <- 4 and 4 <- 2 closes 2 -> 4 -> 3 -> 2; node 5 hangs behind the cycle.
  Node n2 = MakeCompNode(2, "b", 1, {1, 4});
  const std::string path = TempPath("cycle.0.et");
  ASSERT_TRUE(WriteTraceFile(path, {MakeCompNode(1, "a", 1), n2, MakeCompNode(3, "c", 1, {2}),
                                    MakeCompNode(4, "d", 1, {3}), MakeCompNode(5, "e", 1, {4})})
                  .ok());
  const std::string m = LoadError(path);
  EXPECT_THAT(m, HasSubstr(path));
  EXPECT_THAT(m, HasSubstr("dependency cycle of 3 node(s)"));
  // Walking parents from the lowest unrunnable node (2): 2 waits for 4, 4 for 3, 3 for 2.
  EXPECT_THAT(m, HasSubstr("2 -> 4 -> 3 -> 2"));
  EXPECT_THAT(m, HasSubstr("4 node(s) can never run"));
}

TEST(TraceTest, DataOnlyIgnoresCtrlDeps) {
  // 2 waits for 1 through data_deps; 1 waits for 2 through ctrl_deps: a cycle under feeder_v3
  // semantics, a chain when only data_deps count.
  Node a = MakeCompNode(1, "a", 1);
  AddCtrlDeps(&a, {2, 77});
  const std::vector<Node> nodes = {a, MakeCompNode(2, "b", 1, {1})};
  const std::string path = TempPath("dataonly.0.et");
  ASSERT_TRUE(WriteTraceFile(path, nodes).ok());
  LoadOptions both;
  both.dependencies = Dependencies::kDataAndCtrl;
  EXPECT_THAT(LoadError(path, both), HasSubstr("1 -> 2 -> 1"));
  // The default (kAuto) falls back to data_deps only, says why, and keeps the dangling count.
  const Trace automatic = LoadOk(path);
  EXPECT_THAT(automatic.ctrl_deps_ignored(), HasSubstr("1 -> 2 -> 1"));
  EXPECT_EQ(automatic.parents(1).size(), 1u);
  EXPECT_EQ(automatic.dangling_dependency_count(), 1u);
  LoadOptions data_only;
  data_only.dependencies = Dependencies::kDataOnly;
  const Trace t = LoadOk(path, data_only);
  EXPECT_TRUE(t.parents(0).empty());
  ASSERT_EQ(t.parents(1).size(), 1u);
  EXPECT_EQ(t.parents(1)[0], 0u);
  EXPECT_EQ(t.dangling_dependency_count(), 0u);  // the dangling 77 was a ctrl dep
}

TEST(TraceTest, ManySmallTracesAreCheap) {
  // 4096 ranks each loading a one-node file: the per-trace footprint must stay small.
  const std::string path = TempPath("one.0.et");
  ASSERT_TRUE(
      WriteTraceFile(path, {MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20)}).ok());
  const Trace t = LoadOk(path);
  // sizeof(Trace) + one 40-byte record, 2 values, 2 name bytes, 2 x 2 CSR offsets, path, version.
  EXPECT_LT(t.MemoryBytes(), sizeof(Trace) + 256 + path.size());
}

// The real ASTRA-sim / Chakra inputs: ../shared/compat through the runfiles.
std::string CompatFile(const std::string& relative) {
  const std::string dir = SharedDir("compat");
  if (dir.empty()) {
    ADD_FAILURE() << SharedDirMissing("compat");
    return "";
  }
  const std::string path = dir + "/" + relative;
  if (!std::ifstream(path).good()) {
    ADD_FAILURE() << "compat file " << path << " is missing";
    return "";
  }
  return path;
}

TEST(CompatTraceTest, AstraSimAllReduceMicrobenchmark) {
  const std::string path = CompatFile(
      "astra-sim/examples/workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et");
  if (path.empty()) return;
  const Trace t = LoadOk(path);
  EXPECT_EQ(t.version(), "0.0.4");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.type(0), NodeType::kCommColl);
  EXPECT_EQ(t.comm_type(0), std::optional<CollectiveType>(CollectiveType::kAllReduce));
  EXPECT_EQ(t.comm_size(0), std::optional<uint64_t>(1048576));  // 1 MB = 2^20 bytes
  EXPECT_EQ(t.is_cpu_op(0), std::optional<bool>(false));
  EXPECT_TRUE(t.parents(0).empty());
}

TEST(CompatTraceTest, ChakraPytorchModel) {
  const std::string path = CompatFile("chakra/pytorch_model.0.et");
  if (path.empty()) return;
  // All 1,277 dangling dependencies are ctrl_deps, each a distinct (node, missing id) pair (210
  // distinct missing ids); strict mode lists them before anything else is checked.
  std::string m = LoadError(path, LoadOptions{/*strict=*/true});
  EXPECT_THAT(m, HasSubstr("1277 dependencies"));
  // Under feeder_v3 semantics (data_deps ∪ ctrl_deps) this trace has cycles: e.g. node 3317
  // ('aten::mul') lists 3318 in ctrl_deps while 3318 (its CUDA kernel) lists 3317 in data_deps.
  // Only 1,381 of the 3,664 nodes could ever run, so loading it that way is an error.
  LoadOptions both;
  both.dependencies = Dependencies::kDataAndCtrl;
  m = LoadError(path, both);
  EXPECT_THAT(m, HasSubstr("dependency cycle"));
  EXPECT_THAT(m, HasSubstr("2283 node(s) can never run"));  // 3664 - 1381
  // Following data_deps only (MLCommons' legacy feeder) the trace is a DAG with no dangling ids.
  LoadOptions data_only;
  data_only.dependencies = Dependencies::kDataOnly;
  const Trace t = LoadOk(path, data_only);
  EXPECT_EQ(t.size(), 3664u);
  EXPECT_EQ(t.dangling_dependency_count(), 0u);
  size_t comp = 0, coll = 0;
  uint64_t total_duration = 0;
  for (uint32_t i = 0; i < t.size(); ++i) {
    comp += t.type(i) == NodeType::kComp;
    coll += t.type(i) == NodeType::kCommColl;
    total_duration += t.duration_micros(i);
  }
  EXPECT_EQ(comp, 3643u);
  EXPECT_EQ(coll, 21u);
  EXPECT_EQ(total_duration, 381795u);
  // The default falls back to data_deps only, and still reports the 1,277 missing ids.
  const Trace automatic = LoadOk(path);
  EXPECT_EQ(automatic.size(), 3664u);
  EXPECT_THAT(automatic.ctrl_deps_ignored(), HasSubstr("dependency cycle"));
  EXPECT_EQ(automatic.dangling_dependency_count(), 1277u);
  // Its 181,878 dependencies (data_deps) say the same ordering as 3,784 of them: the rest are
  // implied (counted by a full ancestor-set reduction outside the loader).
  EXPECT_EQ(automatic.edge_count(), 3784u);
  EXPECT_EQ(automatic.implied_dependency_count(), 181878u - 3784u);
}

}  // namespace
}  // namespace et
}  // namespace orrery

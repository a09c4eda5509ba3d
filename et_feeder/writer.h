// Writing Chakra .et files, and small builders for test traces.
//
//   using namespace orrery::et;
//   std::vector<ChakraProtoMsg::Node> rank0 = {
//       MakeCompNode(1, "gemm", /*duration_us=*/10),
//       MakeCollNode(2, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, /*deps=*/{1}),
//       MakeSendNode(3, /*peer=*/1, /*size=*/4096, /*tag=*/7, /*deps=*/{2}),
//   };
//   SetIntAttr(&rank0[0], "num_ops", 1000, IntEncoding::kUint64);
//   Status s = WriteTraceFile("/tmp/w.0.et", rank0);            // or:
//   Status s = WriteRankFiles("/tmp/w", {rank0, rank1});         // /tmp/w.0.et, /tmp/w.1.et
//
// Framing: each message is preceded by its size as a varint32; a GlobalMetadata comes first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/proto/et_def.pb.h"
#include "et_feeder/trace.h"  // RankTracePath

namespace orrery {
namespace et {

// The version string the ASTRA-sim example traces carry.
inline constexpr const char* kDefaultTraceVersion = "0.0.4";

class TraceWriter {
 public:
  static StatusOr<TraceWriter> Open(const std::string& path,
                                    const std::string& version = kDefaultTraceVersion);
  static StatusOr<TraceWriter> Open(const std::string& path,
                                    const ChakraProtoMsg::GlobalMetadata& metadata);

  TraceWriter(TraceWriter&&) = default;
  TraceWriter& operator=(TraceWriter&&) = default;
  // Closes the file if Close() was not called (errors are then lost: call Close()).
  ~TraceWriter() = default;

  Status Write(const ChakraProtoMsg::Node& node);
  // Flushes and closes; reports write errors.
  Status Close();
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  TraceWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  Status WriteMessage(const google::protobuf::MessageLite& message);
  Status Flush();

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::string buffer_;
  uint64_t bytes_written_ = 0;
};

// Appends `message` with its varint32 size prefix (to build raw or deliberately broken files).
void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out);

// Writes a GlobalMetadata{version} and the nodes, in the given order.
Status WriteTraceFile(const std::string& path, const std::vector<ChakraProtoMsg::Node>& nodes,
                      const std::string& version = kDefaultTraceVersion);
// Writes ranks[r] to "<prefix>.<r>.et" for every r.
Status WriteRankFiles(const std::string& prefix,
                      const std::vector<std::vector<ChakraProtoMsg::Node>>& ranks,
                      const std::string& version = kDefaultTraceVersion);

// Creates the directory the files "<prefix>.<r>.et" go to, and its parents, as `mkdir -p`
// (nothing when it exists or the prefix has no directory): the generators (generate-llm,
// convert-text, gen_workload) write a set of traces under a prefix the user names. An error
// naming the directory when it cannot be made (a file in the way, no permission).
Status MakeTraceDirectory(const std::string& prefix);

// ---- Node builders. `deps` go to data_deps; use AddCtrlDeps for ctrl_deps. ----

ChakraProtoMsg::Node MakeNode(uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type,
                              std::initializer_list<uint64_t> deps = {});
// COMP node with a replay duration, is_cpu_op=false (bool_val).
ChakraProtoMsg::Node MakeCompNode(uint64_t id, const std::string& name, uint64_t duration_us,
                                  std::initializer_list<uint64_t> deps = {});
// COMM_COLL node: is_cpu_op=false, comm_type and comm_size as int64_val (as Chakra writes them).
ChakraProtoMsg::Node MakeCollNode(uint64_t id, const std::string& name,
                                  ChakraProtoMsg::CollectiveCommType comm_type, uint64_t comm_size,
                                  std::initializer_list<uint64_t> deps = {});
// COMM_SEND to `peer` (comm_dst) / COMM_RECV from `peer` (comm_src): comm_size int64_val,
// comm_dst/comm_src and comm_tag int32_val, is_cpu_op=false. Named "send"/"recv".
ChakraProtoMsg::Node MakeSendNode(uint64_t id, int32_t peer, uint64_t size, int32_t tag,
                                  std::initializer_list<uint64_t> deps = {});
ChakraProtoMsg::Node MakeRecvNode(uint64_t id, int32_t peer, uint64_t size, int32_t tag,
                                  std::initializer_list<uint64_t> deps = {});
// METADATA node carrying `inputs_values` in inputs.values (PyTorch process-group info).
ChakraProtoMsg::Node MakeMetadataNode(uint64_t id, const std::string& name,
                                      const std::string& inputs_values);

void AddDataDeps(ChakraProtoMsg::Node* node, std::initializer_list<uint64_t> ids);
void AddCtrlDeps(ChakraProtoMsg::Node* node, std::initializer_list<uint64_t> ids);

// ---- Attribute setters: each appends one attribute (Trace::Load refuses a name twice). ----

// The ten protobuf integer encodings of AttributeProto.
enum class IntEncoding {
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kSint32,
  kSint64,
  kFixed32,
  kFixed64,
  kSfixed32,
  kSfixed64,
};
inline constexpr IntEncoding kAllIntEncodings[] = {
    IntEncoding::kInt32,    IntEncoding::kInt64,   IntEncoding::kUint32,  IntEncoding::kUint64,
    IntEncoding::kSint32,   IntEncoding::kSint64,  IntEncoding::kFixed32, IntEncoding::kFixed64,
    IntEncoding::kSfixed32, IntEncoding::kSfixed64};
const char* IntEncodingName(IntEncoding encoding);  // e.g. "sfixed32_val"

// The raw attribute, to set any oneof member directly.
ChakraProtoMsg::AttributeProto* AddAttr(ChakraProtoMsg::Node* node, const std::string& name);
// `value` is static_cast to the encoding's C++ type (so pass small values for 32-bit ones).
void SetIntAttr(ChakraProtoMsg::Node* node, const std::string& name, int64_t value,
                IntEncoding encoding = IntEncoding::kInt64);
void SetUint64Attr(ChakraProtoMsg::Node* node, const std::string& name, uint64_t value);
void SetBoolAttr(ChakraProtoMsg::Node* node, const std::string& name, bool value);
void SetDoubleAttr(ChakraProtoMsg::Node* node, const std::string& name, double value);
void SetFloatAttr(ChakraProtoMsg::Node* node, const std::string& name, float value);
void SetStringAttr(ChakraProtoMsg::Node* node, const std::string& name, const std::string& value);
void SetBytesAttr(ChakraProtoMsg::Node* node, const std::string& name, const std::string& value);
void SetBoolListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                     const std::vector<bool>& values);
void SetInt64ListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                      const std::vector<int64_t>& values);
void SetDoubleListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                       const std::vector<double>& values);
void SetStringListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                       const std::vector<std::string>& values);

}  // namespace et
}  // namespace orrery

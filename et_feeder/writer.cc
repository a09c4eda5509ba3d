#include "et_feeder/writer.h"

#include <google/protobuf/io/coded_stream.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/utf8.h"

namespace orrery {
namespace et {

namespace {
constexpr size_t kFlushBytes = 1 << 20;

// Chakra's schema is proto3, whose strings must be UTF-8, and a trace that breaks it does not
// load (wire_check.cc). Names and string attributes taken from other tools' files (a kernel
// name, a text workload's layer name, a path) can break it: they are written with U+FFFD for
// each bad byte, so that every trace written loads.
bool Valid(const std::string& s) { return FirstBadUtf8(s) == s.size(); }

void Repair(std::string* s) {
  if (!Valid(*s)) *s = ValidUtf8(*s);
}

template <typename Attrs>
bool AttrsValid(const Attrs& attrs) {
  for (const ChakraProtoMsg::AttributeProto& a : attrs) {
    if (!Valid(a.name()) || !Valid(a.doc_string())) return false;
    if (a.has_string_val() && !Valid(a.string_val())) return false;
    if (a.has_string_list()) {
      for (const std::string& v : a.string_list().values()) {
        if (!Valid(v)) return false;
      }
    }
  }
  return true;
}

template <typename Attrs>
void RepairAttrs(Attrs* attrs) {
  for (ChakraProtoMsg::AttributeProto& a : *attrs) {
    Repair(a.mutable_name());
    Repair(a.mutable_doc_string());
    if (a.has_string_val()) Repair(a.mutable_string_val());
    if (a.has_string_list()) {
      for (std::string& v : *a.mutable_string_list()->mutable_values()) Repair(&v);
    }
  }
}

bool IoValid(const ChakraProtoMsg::IOInfo& io) {
  return Valid(io.values()) && Valid(io.shapes()) && Valid(io.types());
}

void RepairIo(ChakraProtoMsg::IOInfo* io) {
  Repair(io->mutable_values());
  Repair(io->mutable_shapes());
  Repair(io->mutable_types());
}

bool NodeValid(const ChakraProtoMsg::Node& n) {
  return Valid(n.name()) && (!n.has_inputs() || IoValid(n.inputs())) &&
         (!n.has_outputs() || IoValid(n.outputs())) && AttrsValid(n.attr());
}

// Only the fields present are touched: an absent message stays absent.
void RepairNode(ChakraProtoMsg::Node* n) {
  Repair(n->mutable_name());
  if (n->has_inputs()) RepairIo(n->mutable_inputs());
  if (n->has_outputs()) RepairIo(n->mutable_outputs());
  RepairAttrs(n->mutable_attr());
}

}  // namespace

void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out) {
  // Serialized straight into the string's tail: a StringOutputStream would zero-fill the whole
  // spare capacity on every call.
  const size_t size = message.ByteSizeLong();
  const size_t prefix =
      google::protobuf::io::CodedOutputStream::VarintSize32(static_cast<uint32_t>(size));
  const size_t start = out->size();
  out->resize(start + prefix + size);
  uint8_t* p = reinterpret_cast<uint8_t*>(&(*out)[start]);
  p = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p);
  message.SerializeWithCachedSizesToArray(p);
}

Status MakeTraceDirectory(const std::string& prefix) {
  const std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::Ok();
  std::filesystem::create_directories(dir, ec);
  if (!ec && std::filesystem::is_directory(dir, ec)) return Status::Ok();
  // Why not: the deepest part of the path that exists is a file, or the system's reason.
  std::string why = ec ? ec.message() : "it is not a directory";
  for (std::filesystem::path p = dir; !p.empty() && p != p.parent_path(); p = p.parent_path()) {
    std::error_code e;
    if (!std::filesystem::exists(p, e)) continue;
    if (!std::filesystem::is_directory(p, e)) why = "'" + p.string() + "' is a file";
    break;
  }
  return Status::Error(prefix + ": cannot create the directory '" + dir.string() +
                       "' for its trace files: " + why);
}

StatusOr<TraceWriter> TraceWriter::Open(const std::string& path, const std::string& version) {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version(version);
  return Open(path, metadata);
}

StatusOr<TraceWriter> TraceWriter::Open(const std::string& path,
                                        const ChakraProtoMsg::GlobalMetadata& metadata) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return Status::Error(path + ": cannot create trace file: " + std::strerror(errno));
  }
  TraceWriter writer(path, f);
  Status s;
  if (Valid(metadata.version()) && AttrsValid(metadata.attr())) {
    s = writer.WriteMessage(metadata);
  } else {
    ChakraProtoMsg::GlobalMetadata repaired = metadata;
    Repair(repaired.mutable_version());
    RepairAttrs(repaired.mutable_attr());
    s = writer.WriteMessage(repaired);
  }
  if (!s.ok()) return s;
  return writer;
}

Status TraceWriter::Write(const ChakraProtoMsg::Node& node) {
  if (NodeValid(node)) return WriteMessage(node);
  ChakraProtoMsg::Node repaired = node;
  RepairNode(&repaired);
  return WriteMessage(repaired);
}

Status TraceWriter::WriteMessage(const google::protobuf::MessageLite& message) {
  if (!file_) return Status::Error(path_ + ": write after Close()");
  const size_t before = buffer_.size();
  AppendDelimited(message, &buffer_);
  bytes_written_ += buffer_.size() - before;
  return buffer_.size() >= kFlushBytes ? Flush() : Status::Ok();
}

Status TraceWriter::Flush() {
  if (!buffer_.empty() &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size()) {
    return Status::Error(path_ + ": write failed: " + std::strerror(errno));
  }
  buffer_.clear();
  return Status::Ok();
}

Status TraceWriter::Close() {
  if (!file_) return Status::Ok();
  Status s = Flush();
  std::FILE* f = file_.release();
  if (std::fclose(f) != 0 && s.ok()) {
    s = Status::Error(path_ + ": close failed: " + std::strerror(errno));
  }
  return s;
}

Status WriteTraceFile(const std::string& path, const std::vector<ChakraProtoMsg::Node>& nodes,
                      const std::string& version) {
  StatusOr<TraceWriter> writer = TraceWriter::Open(path, version);
  if (!writer.ok()) return writer.status();
  for (const auto& node : nodes) {
    Status s = writer->Write(node);
    if (!s.ok()) return s;
  }
  return writer->Close();
}

Status WriteRankFiles(const std::string& prefix,
                      const std::vector<std::vector<ChakraProtoMsg::Node>>& ranks,
                      const std::string& version) {
  Status all;
  for (size_t r = 0; r < ranks.size(); ++r) {
    all.Merge(WriteTraceFile(prefix + "." + std::to_string(r) + ".et", ranks[r], version));
  }
  return all;
}

ChakraProtoMsg::Node MakeNode(uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type,
                              std::initializer_list<uint64_t> deps) {
  ChakraProtoMsg::Node node;
  node.set_id(id);
  node.set_name(name);
  node.set_type(type);
  AddDataDeps(&node, deps);
  return node;
}

ChakraProtoMsg::Node MakeCompNode(uint64_t id, const std::string& name, uint64_t duration_us,
                                  std::initializer_list<uint64_t> deps) {
  ChakraProtoMsg::Node node = MakeNode(id, name, ChakraProtoMsg::COMP_NODE, deps);
  node.set_duration_micros(duration_us);
  SetBoolAttr(&node, "is_cpu_op", false);
  return node;
}

ChakraProtoMsg::Node MakeCollNode(uint64_t id, const std::string& name,
                                  ChakraProtoMsg::CollectiveCommType comm_type, uint64_t comm_size,
                                  std::initializer_list<uint64_t> deps) {
  ChakraProtoMsg::Node node = MakeNode(id, name, ChakraProtoMsg::COMM_COLL_NODE, deps);
  SetBoolAttr(&node, "is_cpu_op", false);
  SetIntAttr(&node, "comm_type", static_cast<int64_t>(comm_type));
  SetIntAttr(&node, "comm_size", static_cast<int64_t>(comm_size));
  return node;
}

namespace {
ChakraProtoMsg::Node MakePointToPoint(uint64_t id, ChakraProtoMsg::NodeType type,
                                      const char* peer_attr, int32_t peer, uint64_t size,
                                      int32_t tag, std::initializer_list<uint64_t> deps) {
  ChakraProtoMsg::Node node =
      MakeNode(id, type == ChakraProtoMsg::COMM_SEND_NODE ? "send" : "recv", type, deps);
  SetBoolAttr(&node, "is_cpu_op", false);
  SetIntAttr(&node, "comm_size", static_cast<int64_t>(size));
  SetIntAttr(&node, peer_attr, peer, IntEncoding::kInt32);
  SetIntAttr(&node, "comm_tag", tag, IntEncoding::kInt32);
  return node;
}
}  // namespace

ChakraProtoMsg::Node MakeSendNode(uint64_t id, int32_t peer, uint64_t size, int32_t tag,
                                  std::initializer_list<uint64_t> deps) {
  return MakePointToPoint(id, ChakraProtoMsg::COMM_SEND_NODE, "comm_dst", peer, size, tag, deps);
}

ChakraProtoMsg::Node MakeRecvNode(uint64_t id, int32_t peer, uint64_t size, int32_t tag,
                                  std::initializer_list<uint64_t> deps) {
  return MakePointToPoint(id, ChakraProtoMsg::COMM_RECV_NODE, "comm_src", peer, size, tag, deps);
}

ChakraProtoMsg::Node MakeMetadataNode(uint64_t id, const std::string& name,
                                      const std::string& inputs_values) {
  ChakraProtoMsg::Node node = MakeNode(id, name, ChakraProtoMsg::METADATA_NODE);
  node.mutable_inputs()->set_values(inputs_values);
  return node;
}

void AddDataDeps(ChakraProtoMsg::Node* node, std::initializer_list<uint64_t> ids) {
  for (uint64_t id : ids) node->add_data_deps(id);
}

void AddCtrlDeps(ChakraProtoMsg::Node* node, std::initializer_list<uint64_t> ids) {
  for (uint64_t id : ids) node->add_ctrl_deps(id);
}

const char* IntEncodingName(IntEncoding encoding) {
  switch (encoding) {
    case IntEncoding::kInt32:
      return "int32_val";
    case IntEncoding::kInt64:
      return "int64_val";
    case IntEncoding::kUint32:
      return "uint32_val";
    case IntEncoding::kUint64:
      return "uint64_val";
    case IntEncoding::kSint32:
      return "sint32_val";
    case IntEncoding::kSint64:
      return "sint64_val";
    case IntEncoding::kFixed32:
      return "fixed32_val";
    case IntEncoding::kFixed64:
      return "fixed64_val";
    case IntEncoding::kSfixed32:
      return "sfixed32_val";
    case IntEncoding::kSfixed64:
      return "sfixed64_val";
  }
  return "unknown";
}

ChakraProtoMsg::AttributeProto* AddAttr(ChakraProtoMsg::Node* node, const std::string& name) {
  ChakraProtoMsg::AttributeProto* attr = node->add_attr();
  attr->set_name(name);
  return attr;
}

void SetIntAttr(ChakraProtoMsg::Node* node, const std::string& name, int64_t value,
                IntEncoding encoding) {
  ChakraProtoMsg::AttributeProto* a = AddAttr(node, name);
  switch (encoding) {
    case IntEncoding::kInt32:
      a->set_int32_val(static_cast<int32_t>(value));
      break;
    case IntEncoding::kInt64:
      a->set_int64_val(value);
      break;
    case IntEncoding::kUint32:
      a->set_uint32_val(static_cast<uint32_t>(value));
      break;
    case IntEncoding::kUint64:
      a->set_uint64_val(static_cast<uint64_t>(value));
      break;
    case IntEncoding::kSint32:
      a->set_sint32_val(static_cast<int32_t>(value));
      break;
    case IntEncoding::kSint64:
      a->set_sint64_val(value);
      break;
    case IntEncoding::kFixed32:
      a->set_fixed32_val(static_cast<uint32_t>(value));
      break;
    case IntEncoding::kFixed64:
      a->set_fixed64_val(static_cast<uint64_t>(value));
      break;
    case IntEncoding::kSfixed32:
      a->set_sfixed32_val(static_cast<int32_t>(value));
      break;
    case IntEncoding::kSfixed64:
      a->set_sfixed64_val(value);
      break;
  }
}

void SetUint64Attr(ChakraProtoMsg::Node* node, const std::string& name, uint64_t value) {
  AddAttr(node, name)->set_uint64_val(value);
}

void SetBoolAttr(ChakraProtoMsg::Node* node, const std::string& name, bool value) {
  AddAttr(node, name)->set_bool_val(value);
}

void SetDoubleAttr(ChakraProtoMsg::Node* node, const std::string& name, double value) {
  AddAttr(node, name)->set_double_val(value);
}

void SetFloatAttr(ChakraProtoMsg::Node* node, const std::string& name, float value) {
  AddAttr(node, name)->set_float_val(value);
}

void SetStringAttr(ChakraProtoMsg::Node* node, const std::string& name, const std::string& value) {
  AddAttr(node, name)->set_string_val(value);
}

void SetBytesAttr(ChakraProtoMsg::Node* node, const std::string& name, const std::string& value) {
  AddAttr(node, name)->set_bytes_val(value);
}

void SetBoolListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                     const std::vector<bool>& values) {
  auto* list = AddAttr(node, name)->mutable_bool_list();
  for (bool v : values) list->add_values(v);
}

void SetInt64ListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                      const std::vector<int64_t>& values) {
  auto* list = AddAttr(node, name)->mutable_int64_list();
  for (int64_t v : values) list->add_values(v);
}

void SetDoubleListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                       const std::vector<double>& values) {
  auto* list = AddAttr(node, name)->mutable_double_list();
  for (double v : values) list->add_values(v);
}

void SetStringListAttr(ChakraProtoMsg::Node* node, const std::string& name,
                       const std::vector<std::string>& values) {
  auto* list = AddAttr(node, name)->mutable_string_list();
  for (const auto& v : values) list->add_values(v);
}

}  // namespace et
}  // namespace orrery

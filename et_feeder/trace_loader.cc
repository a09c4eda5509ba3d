// TraceLoader's reading of a trace file: its bytes (mapped or read), the length-prefixed
// messages, the metadata, each node and the attributes the simulator reads.
#include "et_feeder/trace_loader.h"

#include <fcntl.h>
#include <google/protobuf/stubs/logging.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <utility>

#include "et_feeder/proto/et_def.pb.h"
#include "et_feeder/wire_check.h"

namespace orrery {
namespace et {

using ChakraProtoMsg::AttributeProto;
using trace_internal::AttrKey;
using trace_internal::kDanglingSampleSize;
using trace_internal::kMaxCycleIdsShown;
using trace_internal::kMaxReportedProblems;
using trace_internal::kNone;

namespace trace_internal {

// Protobuf prints a line of its own for some malformed input (a string field with invalid
// UTF-8) before the parse fails. The loader reports every failure itself, with the file and
// the byte, so protobuf's lines below FATAL are dropped: one message per bad file.
void QuietProtobuf() {
  static const bool installed = [] {
    google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* file, int line,
                                       const std::string& message) {
      if (level >= google::protobuf::LOGLEVEL_FATAL) {
        std::fprintf(stderr, "[libprotobuf FATAL %s:%d] %s\n", file, line, message.c_str());
      }
    });
    return true;
  }();
  (void)installed;
}

}  // namespace trace_internal

namespace {

// The bytes of a file: large files are mapped (nothing is copied), small ones read. Mapping a
// thousand small rank files costs more than reading them: each munmap in a multi-threaded
// loader is a TLB shoot-down on every core.
class FileBytes {
 public:
  FileBytes() = default;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
    if (mapped_ != nullptr) munmap(mapped_, size_);
  }

  Status Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return Status::Error(path + ": cannot open trace file: " + std::strerror(errno));
    }
    struct stat st;
    Status status;
    if (fstat(fd, &st) != 0) {
      status = Status::Error(path + ": cannot stat trace file: " + std::strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
      status = Status::Error(path + ": is a directory, not a trace file");
    } else if (S_ISREG(st.st_mode) && st.st_size >= kMapAtLeast) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        mapped_ = p;
        data_ = static_cast<const char*>(p);
        madvise(p, size_, MADV_SEQUENTIAL);
      } else {
        status = ReadAll(fd, path);
      }
    } else {
      if (S_ISREG(st.st_mode)) buffer_.reserve(static_cast<size_t>(st.st_size));
      status = ReadAll(fd, path);
    }
    close(fd);
    return status;
  }

  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Status ReadAll(int fd, const std::string& path) {
    char chunk[1 << 16];
    for (;;) {
      const ssize_t n = read(fd, chunk, sizeof(chunk));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::Error(path + ": cannot read trace file: " + std::strerror(errno));
      }
      if (n == 0) break;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    data_ = buffer_.data();
    size_ = buffer_.size();
    return Status::Ok();
  }

  static constexpr off_t kMapAtLeast = off_t{4} << 20;

  void* mapped_ = nullptr;
  const char* data_ = nullptr;
  size_t size_ = 0;
  std::string buffer_;
};

enum class VarintResult { kOk, kEnd, kTruncated, kMalformed };

// Reads a varint32 length prefix at *pos (the framing Chakra writes with WriteVarint32).
VarintResult ReadVarint32(const char* data, size_t size, size_t* pos, uint32_t* value) {
  if (*pos == size) return VarintResult::kEnd;
  uint64_t v = 0;
  for (int i = 0; i < 5; ++i) {
    if (*pos + i >= size) return VarintResult::kTruncated;
    const uint8_t byte = static_cast<uint8_t>(data[*pos + i]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (v > std::numeric_limits<uint32_t>::max()) return VarintResult::kMalformed;
      *pos += i + 1;
      *value = static_cast<uint32_t>(v);
      return VarintResult::kOk;
    }
  }
  return VarintResult::kMalformed;
}

AttrKey KeyOf(const std::string& name) {
  if (name.size() < 6) return AttrKey::kOther;
  const std::string_view n(name);
  switch (n[0]) {
    case 'c':
      if (n == "comm_type") return AttrKey::kCommType;
      if (n == "comm_size") return AttrKey::kCommSize;
      if (n == "comm_src") return AttrKey::kCommSrc;
      if (n == "comm_dst") return AttrKey::kCommDst;
      if (n == "comm_tag") return AttrKey::kCommTag;
      if (n == "comm_priority") return AttrKey::kCommPriority;
      return AttrKey::kOther;
    case 'i':
      if (n == "is_cpu_op") return AttrKey::kIsCpuOp;
      if (n == "involved_dim") return AttrKey::kInvolvedDim;
      if (n == "inputs") return AttrKey::kInputs;
      return AttrKey::kOther;
    case 'o':
      return n == "outputs" ? AttrKey::kOutputs : AttrKey::kOther;
    case 'n':
      return n == "num_ops" ? AttrKey::kNumOps : AttrKey::kOther;
    case 't':
      return n == "tensor_size" ? AttrKey::kTensorSize : AttrKey::kOther;
    case 'p':
      return n == "pg_name" ? AttrKey::kPgName : AttrKey::kOther;
    default:
      return AttrKey::kOther;
  }
}

// An attribute's value as protobuf's text format, e.g. "int64_val: 1048576" (long lists cut).
std::string AttributeValueText(const AttributeProto& attr) {
  AttributeProto value = attr;
  value.clear_name();
  value.clear_doc_string();
  std::string text = value.ShortDebugString();
  if (text.empty()) return "no value";
  constexpr size_t kMaxChars = 80;
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + " ...";
  return text;
}

// Name of the oneof member an attribute carries, e.g. "double_val".
std::string ValueCaseName(const AttributeProto& attr) {
  if (attr.value_case() == AttributeProto::VALUE_NOT_SET) return "no value";
  const auto* field = AttributeProto::descriptor()->FindFieldByNumber(attr.value_case());
  return field != nullptr ? field->name() : "field " + std::to_string(attr.value_case());
}

constexpr const char* kIntegerTypes =
    "an integer: int32_val, int64_val, uint32_val, uint64_val, sint32_val, sint64_val, "
    "fixed32_val, fixed64_val, sfixed32_val, sfixed64_val (or bool_val)";

// An integer attribute value, whatever its protobuf encoding.
struct IntValue {
  bool is_signed;
  int64_t s;
  uint64_t u;
};

bool ReadInteger(const AttributeProto& attr, IntValue* out) {
  switch (attr.value_case()) {
    case AttributeProto::kInt32Val:
      *out = {true, attr.int32_val(), 0};
      return true;
    case AttributeProto::kInt64Val:
      *out = {true, attr.int64_val(), 0};
      return true;
    case AttributeProto::kSint32Val:
      *out = {true, attr.sint32_val(), 0};
      return true;
    case AttributeProto::kSint64Val:
      *out = {true, attr.sint64_val(), 0};
      return true;
    case AttributeProto::kSfixed32Val:
      *out = {true, attr.sfixed32_val(), 0};
      return true;
    case AttributeProto::kSfixed64Val:
      *out = {true, attr.sfixed64_val(), 0};
      return true;
    case AttributeProto::kUint32Val:
      *out = {false, 0, attr.uint32_val()};
      return true;
    case AttributeProto::kUint64Val:
      *out = {false, 0, attr.uint64_val()};
      return true;
    case AttributeProto::kFixed32Val:
      *out = {false, 0, attr.fixed32_val()};
      return true;
    case AttributeProto::kFixed64Val:
      *out = {false, 0, attr.fixed64_val()};
      return true;
    // feeder_v3 treats bool as an integer type too (static_cast of true is 1).
    case AttributeProto::kBoolVal:
      *out = {false, 0, attr.bool_val() ? 1u : 0u};
      return true;
    default:
      return false;
  }
}

std::string IntText(const IntValue& v) {
  return v.is_signed ? std::to_string(v.s) : std::to_string(v.u);
}

}  // namespace

TraceLoader::TraceLoader(const std::string& path, const LoadOptions& options) : options_(options) {
  trace_.path_ = path;
}

StatusOr<Trace> TraceLoader::Run() {
  FileBytes file;
  Status s = file.Open(trace_.path_);
  if (!s.ok()) return s;
  data_ = file.data();
  size_ = file.size();
  if (size_ == 0) return Fail("empty file (a Chakra trace starts with a GlobalMetadata message)");
  if (size_ >= 2 && static_cast<unsigned char>(data_[0]) == 0x1f &&
      static_cast<unsigned char>(data_[1]) == 0x8b) {
    return Fail(
        "gzip-compressed (it starts with gzip's bytes 1f 8b); traces are read uncompressed, "
        "as Chakra's feeder reads them: gunzip it first (gunzip -k, then drop the .gz suffix)");
  }
  s = ReadMetadata();
  if (!s.ok()) return s;
  s = ReadNodes();
  if (!s.ok()) return s;
  s = SortById();
  if (!s.ok()) return s;
  s = BuildEdges();
  if (!s.ok()) return s;
  s = CheckAcyclic();
  if (!s.ok()) {
    cyclic_ = true;
    return s;
  }
  DropImpliedDependencies();
  for (uint32_t i = 0; i < trace_.size(); ++i) {
    if (trace_.parents(i).size() > kMaxParentsPerNode) {
      return Fail("node " + std::to_string(trace_.id(i)) + " depends on " +
                  std::to_string(trace_.parents(i).size()) +
                  " nodes, none implied by another; at most " + std::to_string(kMaxParentsPerNode) +
                  " per node are supported");
    }
  }
  return std::move(trace_);
}

Status TraceLoader::NextMessage(bool* end, size_t* begin, uint32_t* len) {
  const size_t at = pos_;
  const VarintResult r = ReadVarint32(data_, size_, &pos_, len);
  *end = r == VarintResult::kEnd;
  if (r == VarintResult::kTruncated) {
    return Fail("truncated: the length prefix at byte " + std::to_string(at) +
                " is cut off by the end of the file (" + std::to_string(size_) + " bytes)");
  }
  if (r == VarintResult::kMalformed) {
    return Fail("garbage at byte " + std::to_string(at) +
                ": not a varint32 length prefix (is this a Chakra .et file?)");
  }
  if (r == VarintResult::kOk && *len > size_ - pos_) {
    return Fail("truncated: the message at byte " + std::to_string(at) + " declares " +
                std::to_string(*len) + " bytes but the file ends after " +
                std::to_string(size_ - pos_) + " (at byte " + std::to_string(size_) + ")");
  }
  *begin = pos_;
  if (r == VarintResult::kOk) pos_ += *len;
  return Status::Ok();
}

Status TraceLoader::ReadMetadata() {
  bool end = false;
  size_t begin = 0;
  uint32_t len = 0;
  Status s = NextMessage(&end, &begin, &len);
  if (!s.ok()) return s;
  ChakraProtoMsg::GlobalMetadata meta;
  const bool parsed = meta.ParseFromArray(data_ + begin, static_cast<int>(len));
  // A Node written where the GlobalMetadata belongs either fails to parse (Node.name lands on
  // GlobalMetadata.attr) or parses with Node.id / Node.type as unknown varint fields 1 / 3
  // (GlobalMetadata has a string at 1 and nothing at 3).
  bool node_like = false;
  if (parsed) {
    const auto& unknown = meta.GetReflection()->GetUnknownFields(meta);
    for (int k = 0; k < unknown.field_count(); ++k) {
      const auto& f = unknown.field(k);
      node_like |= (f.number() == 1 || f.number() == 3) &&
                   f.type() == google::protobuf::UnknownField::TYPE_VARINT;
    }
  } else {
    ChakraProtoMsg::Node node;
    node_like = node.ParseFromArray(data_ + begin, static_cast<int>(len));
  }
  if (node_like) {
    return Fail(
        "the first message (byte 0) is not a GlobalMetadata but looks like a Node; "
        "Chakra traces start with a GlobalMetadata message");
  }
  if (!parsed) {
    return Fail("garbage: the message at byte 0 (" + std::to_string(len) +
                " bytes) is not a valid GlobalMetadata" +
                Why(begin, len, ChakraProtoMsg::GlobalMetadata::descriptor()));
  }
  trace_.version_ = meta.version();
  return Status::Ok();
}

std::string TraceLoader::Why(size_t begin, uint32_t len,
                             const google::protobuf::Descriptor* type) const {
  const std::string why =
      DescribeWireProblem(reinterpret_cast<const uint8_t*>(data_) + begin, len, begin, type);
  return why.empty() ? "" : ": " + why;
}

void TraceLoader::AddProblem(const std::string& problem) {
  ++problem_count_;
  if (problems_.problems().size() < kMaxReportedProblems) problems_.Add(problem);
}

std::string TraceLoader::Where(uint64_t id, size_t offset) const {
  return trace_.path_ + ": node " + std::to_string(id) + " (message at byte " +
         std::to_string(offset) + ")";
}

void TraceLoader::TypeProblem(const std::string& where, const AttributeProto& attr,
                              const char* accepted) {
  AddProblem(where + ": attribute '" + attr.name() + "' has type " + ValueCaseName(attr) +
             "; expected " + accepted);
}

Status TraceLoader::ReadNodes() {
  ChakraProtoMsg::Node node;  // reused: protobuf keeps its buffers across ParseFromArray
  bool sorted = true;
  dep_begin_.push_back(0);
  for (;;) {
    bool end = false;
    size_t begin = 0;
    uint32_t len = 0;
    const size_t at = pos_;
    Status s = NextMessage(&end, &begin, &len);
    if (!s.ok()) return s;
    if (end) break;
    if (!node.ParseFromArray(data_ + begin, static_cast<int>(len))) {
      return Fail("garbage: the message at byte " + std::to_string(at) + " (" +
                  std::to_string(len) + " bytes) is not a valid Chakra Node" +
                  Why(begin, len, ChakraProtoMsg::Node::descriptor()));
    }
    if (trace_.nodes_.size() >= kNone - 1) return Fail("more than 2^32 - 2 nodes");
    if (!trace_.nodes_.empty() && node.id() <= trace_.nodes_.back().id) sorted = false;
    AddNode(node, at);
  }
  if (!problems_.ok()) {
    if (problem_count_ > problems_.problems().size()) {
      problems_.Add(trace_.path_ + ": ... and " +
                    std::to_string(problem_count_ - problems_.problems().size()) +
                    " more attribute problems");
    }
    return problems_;
  }
  if (trace_.names_.size() > std::numeric_limits<uint32_t>::max() ||
      trace_.side_chars_.size() > std::numeric_limits<uint32_t>::max()) {
    return Fail("node names or strings exceed 4 GiB");
  }
  sorted_ = sorted;
  // Growth slack would otherwise stay for the trace's lifetime.
  trace_.nodes_.shrink_to_fit();
  trace_.names_.shrink_to_fit();
  trace_.values_.shrink_to_fit();
  trace_.side_chars_.shrink_to_fit();
  trace_.pg_names_.shrink_to_fit();
  trace_.metadata_inputs_.shrink_to_fit();
  trace_.tensor_inputs_.shrink_to_fit();
  trace_.tensor_outputs_.shrink_to_fit();
  trace_.involved_dims_.shrink_to_fit();
  trace_.involved_bits_.shrink_to_fit();
  return Status::Ok();
}

void TraceLoader::AddNode(const ChakraProtoMsg::Node& node, size_t offset) {
  const uint32_t file_index = static_cast<uint32_t>(trace_.nodes_.size());
  Trace::NodeRecord rec{};
  rec.id = node.id();
  rec.duration_micros = node.duration_micros();
  rec.start_time_micros = node.start_time_micros();
  rec.name_offset = static_cast<uint32_t>(trace_.names_.size());
  rec.name_size = static_cast<uint32_t>(node.name().size());
  trace_.names_.insert(trace_.names_.end(), node.name().begin(), node.name().end());
  const int type = static_cast<int>(node.type());
  if (type < 0 || type > static_cast<int>(NodeType::kCommColl)) {
    AddProblem(Where(node.id(), offset) + ": type is " + std::to_string(type) +
               "; expected 0..7 (INVALID_NODE, METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, "
               "COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)");
  }
  rec.type = static_cast<uint8_t>(type);

  CheckDuplicateAttributes(node, offset);
  uint64_t slot_values[Trace::kNumSlots] = {};
  for (const AttributeProto& attr : node.attr()) {
    const AttrKey key = KeyOf(attr.name());
    if (key == AttrKey::kOther) continue;
    ReadAttribute(key, attr, node.id(), offset, file_index, &rec, slot_values);
  }
  rec.value_offset = static_cast<uint32_t>(trace_.values_.size());
  for (int slot = 0; slot < Trace::kNumSlots; ++slot) {
    if (rec.mask & (1u << slot)) trace_.values_.push_back(slot_values[slot]);
  }
  if (rec.type == static_cast<uint8_t>(NodeType::kMetadata)) {
    rec.mask |= Trace::kHasMetadataInputs;
    AddSideString(&trace_.metadata_inputs_, file_index, node.inputs().values());
  }
  trace_.nodes_.push_back(rec);
  offsets_.push_back(offset);

  // data_deps ∪ ctrl_deps (or data_deps only), deduplicated per node.
  const size_t first = dep_ids_.size();
  dep_ids_.insert(dep_ids_.end(), node.data_deps().begin(), node.data_deps().end());
  if (options_.dependencies == Dependencies::kDataAndCtrl) {
    dep_ids_.insert(dep_ids_.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
  }
  std::sort(dep_ids_.begin() + first, dep_ids_.end());
  dep_ids_.erase(std::unique(dep_ids_.begin() + first, dep_ids_.end()), dep_ids_.end());
  dep_begin_.push_back(dep_ids_.size());
}

void TraceLoader::CheckDuplicateAttributes(const ChakraProtoMsg::Node& node, size_t offset) {
  const auto& attrs = node.attr();
  const int k = attrs.size();
  if (k < 2) return;
  by_name_.resize(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) by_name_[static_cast<size_t>(i)] = i;
  // Stable: of equal names, the earlier attribute comes first.
  std::stable_sort(by_name_.begin(), by_name_.end(),
                   [&](int a, int b) { return attrs[a].name() < attrs[b].name(); });
  for (size_t i = 1; i < by_name_.size(); ++i) {
    const AttributeProto& first = attrs[by_name_[i - 1]];
    const AttributeProto& second = attrs[by_name_[i]];
    if (first.name() != second.name()) continue;
    if (i >= 2 && attrs[by_name_[i - 2]].name() == first.name()) continue;  // said once
    AddProblem(Where(node.id(), offset) + ": attribute '" + first.name() +
               "' is given more than once (" + AttributeValueText(first) + ", then " +
               AttributeValueText(second) +
               "); expected each attribute once (ASTRA-sim's feeder would silently take the "
               "first)");
  }
}

void TraceLoader::AddSideString(std::vector<Trace::SideEntry>* table, uint32_t node,
                                const std::string& s) {
  table->push_back(
      {node, static_cast<uint32_t>(trace_.side_chars_.size()), static_cast<uint32_t>(s.size())});
  trace_.side_chars_.insert(trace_.side_chars_.end(), s.begin(), s.end());
}

void TraceLoader::ReadAttribute(AttrKey key, const AttributeProto& attr, uint64_t id, size_t offset,
                                uint32_t file_index, Trace::NodeRecord* rec,
                                uint64_t* slot_values) {
  switch (key) {
    case AttrKey::kIsCpuOp: {
      if (rec->mask & Trace::kHasCpuOp) return;
      bool value = false;
      IntValue v;
      if (attr.value_case() == AttributeProto::kBoolVal) {
        value = attr.bool_val();
      } else if (ReadInteger(attr, &v)) {
        if (!(v.is_signed ? (v.s == 0 || v.s == 1) : v.u <= 1)) {
          AddProblem(Where(id, offset) + ": attribute 'is_cpu_op' is " + IntText(v) + " (" +
                     ValueCaseName(attr) + "); expected a bool (bool_val, or an integer 0 or 1)");
          return;
        }
        value = v.is_signed ? v.s == 1 : v.u == 1;
      } else {
        TypeProblem(Where(id, offset), attr, "bool_val (or an integer 0 or 1)");
        return;
      }
      rec->mask |= Trace::kHasCpuOp;
      if (value) rec->mask |= Trace::kCpuOpValue;
      return;
    }
    case AttrKey::kNumOps:
      ReadUnsigned(Trace::kNumOps, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kTensorSize:
      ReadUnsigned(Trace::kTensorSize, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommSize:
      ReadUnsigned(Trace::kCommSize, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommSrc:
      ReadSigned(Trace::kCommSrc, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommDst:
      ReadSigned(Trace::kCommDst, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommTag:
      ReadSigned(Trace::kCommTag, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommPriority:
      ReadSigned(Trace::kCommPriority, attr, id, offset, rec, slot_values);
      return;
    case AttrKey::kCommType: {
      if (rec->mask & Trace::kHasCommType) return;
      IntValue v;
      if (!ReadInteger(attr, &v)) {
        TypeProblem(Where(id, offset), attr, kIntegerTypes);
        return;
      }
      const bool in_range = v.is_signed ? (v.s >= 0 && v.s <= 9) : v.u <= 9;
      if (!in_range) {
        AddProblem(Where(id, offset) + ": attribute 'comm_type' is " + IntText(v) + "; expected " +
                   kCommTypeValues);
        return;
      }
      rec->mask |= Trace::kHasCommType;
      rec->comm_type = static_cast<uint8_t>(v.is_signed ? v.s : static_cast<int64_t>(v.u));
      return;
    }
    case AttrKey::kPgName:
      if (rec->mask & Trace::kHasPgName) return;
      if (attr.value_case() != AttributeProto::kStringVal) {
        TypeProblem(Where(id, offset), attr, "string_val");
        return;
      }
      rec->mask |= Trace::kHasPgName;
      AddSideString(&trace_.pg_names_, file_index, attr.string_val());
      return;
    case AttrKey::kInvolvedDim: {
      if (rec->mask & Trace::kHasInvolvedDim) return;
      if (attr.value_case() != AttributeProto::kBoolList) {
        TypeProblem(Where(id, offset), attr, "bool_list");
        return;
      }
      rec->mask |= Trace::kHasInvolvedDim;
      const auto& values = attr.bool_list().values();
      trace_.involved_dims_.push_back({file_index,
                                       static_cast<uint32_t>(trace_.involved_bits_.size()),
                                       static_cast<uint32_t>(values.size())});
      for (bool b : values) trace_.involved_bits_.push_back(b ? 1 : 0);
      return;
    }
    case AttrKey::kInputs:
    case AttrKey::kOutputs: {
      const bool in = key == AttrKey::kInputs;
      const uint16_t bit = in ? Trace::kHasTensorInputs : Trace::kHasTensorOutputs;
      if (rec->mask & bit) return;
      if (attr.value_case() != AttributeProto::kStringList) {
        rec->mask |= Trace::kTensorListNotStringList;
        return;
      }
      rec->mask |= bit;
      auto* table = in ? &trace_.tensor_inputs_ : &trace_.tensor_outputs_;
      const uint32_t start = static_cast<uint32_t>(trace_.side_chars_.size());
      for (const std::string& v : attr.string_list().values()) {
        trace_.side_chars_.insert(trace_.side_chars_.end(), v.begin(), v.end());
        trace_.side_chars_.push_back('\0');
      }
      table->push_back(
          {file_index, start, static_cast<uint32_t>(trace_.side_chars_.size() - start)});
      return;
    }
    case AttrKey::kOther:
      return;
  }
}

void TraceLoader::ReadUnsigned(Trace::Slot slot, const AttributeProto& attr, uint64_t id,
                               size_t offset, Trace::NodeRecord* rec, uint64_t* slot_values) {
  if (rec->mask & (1u << slot)) return;
  IntValue v;
  if (!ReadInteger(attr, &v)) {
    TypeProblem(Where(id, offset), attr, kIntegerTypes);
    return;
  }
  if (v.is_signed && v.s < 0) {
    AddProblem(Where(id, offset) + ": attribute '" + attr.name() + "' is " + IntText(v) + " (" +
               ValueCaseName(attr) + "); expected a value >= 0");
    return;
  }
  rec->mask |= static_cast<uint16_t>(1u << slot);
  slot_values[slot] = v.is_signed ? static_cast<uint64_t>(v.s) : v.u;
}

void TraceLoader::ReadSigned(Trace::Slot slot, const AttributeProto& attr, uint64_t id,
                             size_t offset, Trace::NodeRecord* rec, uint64_t* slot_values) {
  if (rec->mask & (1u << slot)) return;
  IntValue v;
  if (!ReadInteger(attr, &v)) {
    TypeProblem(Where(id, offset), attr, kIntegerTypes);
    return;
  }
  if (!v.is_signed && v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    AddProblem(Where(id, offset) + ": attribute '" + attr.name() + "' is " + IntText(v) + " (" +
               ValueCaseName(attr) + "); expected a value <= 9223372036854775807");
    return;
  }
  rec->mask |= static_cast<uint16_t>(1u << slot);
  slot_values[slot] = v.is_signed ? static_cast<uint64_t>(v.s) : v.u;
}

}  // namespace et
}  // namespace orrery

#include "et_feeder/trace.h"

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

namespace {

using ChakraProtoMsg::AttributeProto;

constexpr size_t kMaxReportedProblems = 20;
constexpr size_t kDanglingSampleSize = 16;
constexpr size_t kMaxCycleIdsShown = 32;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

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

// The attributes the simulator reads.
enum class AttrKey {
  kOther,
  kIsCpuOp,
  kNumOps,
  kTensorSize,
  kCommType,
  kCommSize,
  kCommSrc,
  kCommDst,
  kCommTag,
  kCommPriority,
  kPgName,
  kInvolvedDim,
  kInputs,
  kOutputs,
};

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

}  // namespace

// Builds a Trace from a file: parses, sorts by id, resolves dependencies, checks for cycles.
class TraceLoader {
 public:
  TraceLoader(const std::string& path, const LoadOptions& options) : options_(options) {
    trace_.path_ = path;
  }

  StatusOr<Trace> Run() {
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
                    " nodes, none implied by another; at most " +
                    std::to_string(kMaxParentsPerNode) + " per node are supported");
      }
    }
    return std::move(trace_);
  }

  bool cyclic() const { return cyclic_; }
  const Trace& partial() const { return trace_; }

 private:
  Status Fail(const std::string& what) const { return Status::Error(trace_.path_ + ": " + what); }

  // Reads the length prefix at pos_; on success [*begin, *begin + *len) is the message.
  Status NextMessage(bool* end, size_t* begin, uint32_t* len) {
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

  Status ReadMetadata() {
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

  // What breaks the message at [begin, begin + len), as ": <problem>", or "" if not found.
  std::string Why(size_t begin, uint32_t len, const google::protobuf::Descriptor* type) const {
    const std::string why =
        DescribeWireProblem(reinterpret_cast<const uint8_t*>(data_) + begin, len, begin, type);
    return why.empty() ? "" : ": " + why;
  }

  void AddProblem(const std::string& problem) {
    ++problem_count_;
    if (problems_.problems().size() < kMaxReportedProblems) problems_.Add(problem);
  }

  std::string Where(uint64_t id, size_t offset) const {
    return trace_.path_ + ": node " + std::to_string(id) + " (message at byte " +
           std::to_string(offset) + ")";
  }

  void TypeProblem(const std::string& where, const AttributeProto& attr, const char* accepted) {
    AddProblem(where + ": attribute '" + attr.name() + "' has type " + ValueCaseName(attr) +
               "; expected " + accepted);
  }

  Status ReadNodes() {
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

  void AddNode(const ChakraProtoMsg::Node& node, size_t offset) {
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

  // An attribute name given twice on one node (comm_size twice, say) is ambiguous: feeder_v3
  // takes the first, silently, whatever the second says. Refused, naming both values.
  void CheckDuplicateAttributes(const ChakraProtoMsg::Node& node, size_t offset) {
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

  void AddSideString(std::vector<Trace::SideEntry>* table, uint32_t node, const std::string& s) {
    table->push_back(
        {node, static_cast<uint32_t>(trace_.side_chars_.size()), static_cast<uint32_t>(s.size())});
    trace_.side_chars_.insert(trace_.side_chars_.end(), s.begin(), s.end());
  }

  // Converts one attribute the simulator reads. A name given twice is refused
  // (CheckDuplicateAttributes); the guards below keep the first, so that a refused node is
  // stored consistently until the load fails.
  void ReadAttribute(AttrKey key, const AttributeProto& attr, uint64_t id, size_t offset,
                     uint32_t file_index, Trace::NodeRecord* rec, uint64_t* slot_values) {
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
          AddProblem(Where(id, offset) + ": attribute 'comm_type' is " + IntText(v) +
                     "; expected " + kCommTypeValues);
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

  void ReadUnsigned(Trace::Slot slot, const AttributeProto& attr, uint64_t id, size_t offset,
                    Trace::NodeRecord* rec, uint64_t* slot_values) {
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

  void ReadSigned(Trace::Slot slot, const AttributeProto& attr, uint64_t id, size_t offset,
                  Trace::NodeRecord* rec, uint64_t* slot_values) {
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

  // Puts nodes in ascending id order and rejects duplicate ids.
  Status SortById() {
    const uint32_t n = trace_.size();
    perm_.resize(n);
    std::iota(perm_.begin(), perm_.end(), 0u);
    if (sorted_) return Status::Ok();
    auto& nodes = trace_.nodes_;
    std::stable_sort(perm_.begin(), perm_.end(),
                     [&](uint32_t a, uint32_t b) { return nodes[a].id < nodes[b].id; });
    Status dups;
    size_t dup_count = 0;
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t a = perm_[i - 1], b = perm_[i];
      if (nodes[a].id != nodes[b].id) continue;
      if (++dup_count <= kMaxReportedProblems) {
        dups.Add(trace_.path_ + ": duplicate node id " + std::to_string(nodes[a].id) +
                 ": messages at byte " + std::to_string(offsets_[a]) + " and byte " +
                 std::to_string(offsets_[b]));
      }
    }
    if (dup_count > kMaxReportedProblems) {
      dups.Add(trace_.path_ + ": ... and " + std::to_string(dup_count - kMaxReportedProblems) +
               " more duplicate node ids");
    }
    if (!dups.ok()) return dups;

    std::vector<Trace::NodeRecord> sorted_nodes(n);
    std::vector<uint32_t> new_index(n);
    for (uint32_t i = 0; i < n; ++i) {
      sorted_nodes[i] = nodes[perm_[i]];
      new_index[perm_[i]] = i;
    }
    nodes.swap(sorted_nodes);
    for (auto* table : {&trace_.pg_names_, &trace_.metadata_inputs_, &trace_.involved_dims_,
                        &trace_.tensor_inputs_, &trace_.tensor_outputs_}) {
      for (auto& e : *table) e.node = new_index[e.node];
      std::sort(
          table->begin(), table->end(),
          [](const Trace::SideEntry& a, const Trace::SideEntry& b) { return a.node < b.node; });
    }
    return Status::Ok();
  }

  // Parent CSR (ids mapped to indexes, dangling ones counted) and the child CSR derived from it.
  Status BuildEdges() {
    const uint32_t n = trace_.size();
    const auto& nodes = trace_.nodes_;
    // Ids to indexes: a direct table over the id range when it is at most 8 ids per node
    // (real traces number their nodes with small gaps), else binary search.
    const uint64_t first_id = n > 0 ? nodes.front().id : 0;
    // The ids' range less one: ids 0 and 2^64 - 1 span all of uint64_t, one more than it holds.
    const uint64_t range = n > 0 ? nodes.back().id - first_id : 0;
    const uint64_t limit = 8 * static_cast<uint64_t>(n) + 1024;
    const uint64_t span = range < limit ? range + 1 : limit + 1;
    std::vector<uint32_t> index_of;
    if (n > 0 && range < limit) {
      index_of.assign(static_cast<size_t>(span), kNone);
      for (uint32_t i = 0; i < n; ++i) index_of[nodes[i].id - first_id] = i;
    }
    auto lookup = [&](uint64_t id) -> uint32_t {
      if (!index_of.empty()) {
        return (id >= first_id && id - first_id < span) ? index_of[id - first_id] : kNone;
      }
      const std::optional<uint32_t> i = trace_.Find(id);
      return i ? *i : kNone;
    };

    trace_.parent_offsets_.resize(static_cast<size_t>(n) + 1);
    trace_.parent_offsets_[0] = 0;
    trace_.parent_edges_.reserve(dep_ids_.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t old = perm_[i];
      // dep ids are sorted, and index order is id order, so the parent indexes come out sorted.
      for (size_t k = dep_begin_[old]; k < dep_begin_[old + 1]; ++k) {
        const uint32_t p = lookup(dep_ids_[k]);
        if (p == kNone) {
          ++trace_.dangling_count_;
          if (trace_.dangling_sample_.size() < kDanglingSampleSize) {
            trace_.dangling_sample_.push_back({nodes[i].id, dep_ids_[k]});
          }
          continue;
        }
        trace_.parent_edges_.push_back(p);
      }
      if (trace_.parent_edges_.size() > std::numeric_limits<uint32_t>::max()) {
        return Fail("more than 2^32 - 1 dependencies");
      }
      trace_.parent_offsets_[i + 1] = static_cast<uint32_t>(trace_.parent_edges_.size());
    }
    std::vector<uint64_t>().swap(dep_ids_);
    std::vector<size_t>().swap(dep_begin_);
    trace_.parent_edges_.shrink_to_fit();

    if (options_.strict && trace_.dangling_count_ > 0) {
      std::string list;
      for (const auto& d : trace_.dangling_sample_) {
        if (list.size() > 300) break;
        list += (list.empty() ? "" : ", ") + std::string("node ") + std::to_string(d.node_id) +
                " -> " + std::to_string(d.missing_id);
      }
      return Fail(std::to_string(trace_.dangling_count_) +
                  " dependencies name node ids that are not in the file (strict mode), e.g. " +
                  list);
    }

    BuildChildren();
    return Status::Ok();
  }

  // The child CSR from the parent CSR: count, prefix-sum, fill in ascending child order.
  void BuildChildren() {
    const uint32_t n = trace_.size();
    trace_.child_offsets_.assign(static_cast<size_t>(n) + 1, 0);
    for (uint32_t p : trace_.parent_edges_) ++trace_.child_offsets_[p + 1];
    for (uint32_t i = 0; i < n; ++i) trace_.child_offsets_[i + 1] += trace_.child_offsets_[i];
    trace_.child_edges_.resize(trace_.parent_edges_.size());
    std::vector<uint32_t> fill(trace_.child_offsets_.begin(), trace_.child_offsets_.end() - 1);
    for (uint32_t c = 0; c < n; ++c) {
      for (uint32_t p : trace_.parents(c)) trace_.child_edges_[fill[p]++] = c;
    }
    trace_.child_edges_.shrink_to_fit();
  }

  // Kahn's algorithm; if some nodes are never freed, walks parents from one of them to a cycle.
  Status CheckAcyclic() {
    const uint32_t n = trace_.size();
    std::vector<uint32_t> indegree(n);
    std::vector<uint32_t> queue;
    queue.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      indegree[i] = static_cast<uint32_t>(trace_.parents(i).size());
      if (indegree[i] == 0) queue.push_back(i);
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      for (uint32_t c : trace_.children(queue[head])) {
        if (--indegree[c] == 0) queue.push_back(c);
      }
    }
    if (queue.size() == n) {
      topological_order_ = std::move(queue);
      return Status::Ok();
    }

    // Every node left has indegree > 0, i.e. a parent that is also left: following such parents
    // must revisit a node, closing a cycle.
    uint32_t v = 0;
    while (indegree[v] == 0) ++v;
    std::vector<uint32_t> position(n, kNone);
    std::vector<uint32_t> path;
    while (position[v] == kNone) {
      position[v] = static_cast<uint32_t>(path.size());
      path.push_back(v);
      for (uint32_t p : trace_.parents(v)) {
        if (indegree[p] > 0) {
          v = p;
          break;
        }
      }
    }
    std::string ids;
    const size_t cycle_len = path.size() - position[v];
    for (size_t k = position[v]; k < path.size(); ++k) {
      if (k - position[v] == kMaxCycleIdsShown) {
        ids += " -> ...";
        break;
      }
      ids += (ids.empty() ? "" : " -> ") + std::to_string(trace_.id(path[k]));
    }
    ids += " -> " + std::to_string(trace_.id(v));
    return Fail("dependency cycle of " + std::to_string(cycle_len) + " node(s): " + ids +
                " (each waits for the next); " + std::to_string(n - queue.size()) +
                " node(s) can never run" +
                (options_.dependencies == Dependencies::kDataAndCtrl
                     ? " (dependencies = data_deps ∪ ctrl_deps as in ASTRA-sim's feeder_v3; "
                       "MLCommons' legacy feeder follows data_deps only)"
                     : ""));
  }

  // Removes every dependency p -> v that another dependency of v implies (p is also an ancestor
  // of another parent q of v: v cannot be issued before q is done, nor q before p), so that
  // finishing a node touches only the children it can free. Which nodes are issuable at any
  // moment, and the order in which a finish frees them, are unchanged; real PyTorch traces
  // repeat each ordering many times (3,664 nodes with 181,878 dependencies, 3,784 of them not
  // implied).
  //
  // Ancestor sets are bitsets over a window of topological positions: node v at position P keeps
  // those of its ancestors at positions [B, B + 2W), B = (P / W - 1) * W, W = kWindow, so the
  // nodes it needs (its parents at or after B) are among the last 2W and their windows line up
  // on whole words. Exact when the trace has at most W nodes; beyond that a parent more than W
  // to 2W positions back is kept whether implied or not (harmless: it is done anyway by then).
  void DropImpliedDependencies() {
    static constexpr int64_t kWindow = 4096;
    const uint32_t n = trace_.size();
    if (n == 0 || trace_.parent_edges_.empty()) return;
    const int64_t w = std::min<int64_t>(kWindow, (static_cast<int64_t>(n) + 63) / 64 * 64);
    const size_t words = static_cast<size_t>(2 * w / 64);
    const size_t ring = static_cast<size_t>(2 * w);
    std::vector<uint64_t> sets(std::min<size_t>(ring, n) * words);  // slot p % ring
    std::vector<uint32_t> pos(n);
    for (uint32_t k = 0; k < n; ++k) pos[topological_order_[k]] = k;
    auto base_of = [w](int64_t p) { return (p / w - 1) * w; };

    std::vector<uint8_t> keep(trace_.parent_edges_.size(), 0);
    std::vector<uint32_t> by_pos;  // edge indexes of one node's parents, latest first
    for (int64_t p = 0; p < static_cast<int64_t>(n); ++p) {
      const uint32_t v = topological_order_[static_cast<size_t>(p)];
      const int64_t base = base_of(p);
      uint64_t* set = &sets[static_cast<size_t>(p) % ring * words];
      std::fill(set, set + words, 0);
      by_pos.clear();
      for (uint32_t e = trace_.parent_offsets_[v]; e < trace_.parent_offsets_[v + 1]; ++e) {
        by_pos.push_back(e);
      }
      std::sort(by_pos.begin(), by_pos.end(), [&](uint32_t a, uint32_t b) {
        return pos[trace_.parent_edges_[a]] > pos[trace_.parent_edges_[b]];
      });
      for (uint32_t e : by_pos) {
        const int64_t q = pos[trace_.parent_edges_[e]];
        if (q < base) {  // out of the window: kept
          keep[e] = 1;
          continue;
        }
        const size_t bit = static_cast<size_t>(q - base);
        if (set[bit / 64] >> (bit % 64) & 1) continue;  // an ancestor of a later parent
        keep[e] = 1;
        set[bit / 64] |= uint64_t{1} << (bit % 64);
        const uint64_t* from = &sets[static_cast<size_t>(q) % ring * words];
        const size_t shift = static_cast<size_t>((base - base_of(q)) / 64);
        for (size_t k = 0; k + shift < words; ++k) set[k] |= from[k + shift];
      }
    }

    size_t out = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t begin = trace_.parent_offsets_[i];
      const uint32_t end = trace_.parent_offsets_[i + 1];
      trace_.parent_offsets_[i] = static_cast<uint32_t>(out);
      for (uint32_t e = begin; e < end; ++e) {
        if (keep[e]) trace_.parent_edges_[out++] = trace_.parent_edges_[e];
      }
    }
    trace_.parent_offsets_[n] = static_cast<uint32_t>(out);
    trace_.implied_count_ = trace_.parent_edges_.size() - out;
    trace_.parent_edges_.resize(out);
    trace_.parent_edges_.shrink_to_fit();
    BuildChildren();
  }

  LoadOptions options_;
  bool cyclic_ = false;
  std::vector<uint32_t> topological_order_;
  Trace trace_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  bool sorted_ = true;
  Status problems_;
  size_t problem_count_ = 0;
  // Per node in file order (temporary).
  std::vector<size_t> offsets_;
  std::vector<uint64_t> dep_ids_;
  std::vector<size_t> dep_begin_;
  std::vector<int> by_name_;  // CheckDuplicateAttributes' scratch: a node's attributes by name
  // perm_[sorted index] = file index.
  std::vector<uint32_t> perm_;
};

Trace Trace::Empty(std::string path) {
  Trace t;
  t.path_ = std::move(path);
  t.parent_offsets_.assign(1, 0);
  t.child_offsets_.assign(1, 0);
  return t;
}

StatusOr<Trace> Trace::Load(const std::string& path, const LoadOptions& options) {
  QuietProtobuf();
  // A device (/dev/zero) would be read for ever (a directory is named below); a pipe cannot be
  // read twice, as a trace whose ctrl_deps close a cycle is (the retry without them).
  std::error_code ec;
  if (const std::string why = NotARegularFile(path);
      !why.empty() && !std::filesystem::is_directory(path, ec)) {
    return Status::Error(why);
  }
  if (std::filesystem::is_fifo(path, ec)) {
    return Status::Error(path +
                         ": is a pipe; a trace may be read twice (without its ctrl_deps "
                         "when they close a cycle), so give a file");
  }
  if (options.dependencies != Dependencies::kAuto) {
    TraceLoader loader(path, options);
    return loader.Run();
  }
  LoadOptions both = options;
  both.dependencies = Dependencies::kDataAndCtrl;
  TraceLoader loader(path, both);
  StatusOr<Trace> t = loader.Run();
  if (t.ok() || !loader.cyclic()) return t;
  LoadOptions data_only = options;
  data_only.dependencies = Dependencies::kDataOnly;
  TraceLoader retry(path, data_only);
  StatusOr<Trace> d = retry.Run();
  if (!d.ok()) return retry.cyclic() ? std::move(d) : std::move(t);
  d->ctrl_deps_ignored_ = t.status().message();
  // The ids the ignored ctrl_deps named are still missing from the file: keep reporting them.
  d->dangling_count_ = loader.partial().dangling_count_;
  d->dangling_sample_ = loader.partial().dangling_sample_;
  return d;
}

std::optional<uint32_t> Trace::Find(uint64_t id) const {
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), id,
                             [](const NodeRecord& r, uint64_t v) { return r.id < v; });
  if (it == nodes_.end() || it->id != id) return std::nullopt;
  return static_cast<uint32_t>(it - nodes_.begin());
}

std::optional<uint64_t> Trace::Unsigned(uint32_t i, Slot slot) const {
  const NodeRecord& r = nodes_[i];
  const uint32_t bit = 1u << slot;
  if (!(r.mask & bit)) return std::nullopt;
  // Present slots are stored in slot order: the value's position is the number of present
  // slots below it.
  const uint32_t below = static_cast<uint32_t>(__builtin_popcount(r.mask & (bit - 1)));
  return values_[r.value_offset + below];
}

std::optional<int64_t> Trace::Signed(uint32_t i, Slot slot) const {
  const std::optional<uint64_t> v = Unsigned(i, slot);
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<bool> Trace::is_cpu_op(uint32_t i) const {
  const uint16_t m = nodes_[i].mask;
  if (!(m & kHasCpuOp)) return std::nullopt;
  return (m & kCpuOpValue) != 0;
}

std::optional<CollectiveType> Trace::comm_type(uint32_t i) const {
  if (!(nodes_[i].mask & kHasCommType)) return std::nullopt;
  return static_cast<CollectiveType>(nodes_[i].comm_type);
}

const Trace::SideEntry* Trace::FindSide(const std::vector<SideEntry>& table, uint32_t node) {
  auto it = std::lower_bound(table.begin(), table.end(), node,
                             [](const SideEntry& e, uint32_t v) { return e.node < v; });
  if (it == table.end() || it->node != node) return nullptr;
  return &*it;
}

std::optional<std::string_view> Trace::pg_name(uint32_t i) const {
  if (!(nodes_[i].mask & kHasPgName)) return std::nullopt;
  const SideEntry* e = FindSide(pg_names_, i);
  return std::string_view(side_chars_.data() + e->offset, e->size);
}

std::optional<std::string_view> Trace::metadata_inputs(uint32_t i) const {
  if (!(nodes_[i].mask & kHasMetadataInputs)) return std::nullopt;
  const SideEntry* e = FindSide(metadata_inputs_, i);
  return std::string_view(side_chars_.data() + e->offset, e->size);
}

std::optional<std::vector<std::string_view>> Trace::StringList(
    uint32_t i, uint16_t bit, const std::vector<SideEntry>& table) const {
  if (!(nodes_[i].mask & bit)) return std::nullopt;
  const SideEntry* e = FindSide(table, i);
  std::vector<std::string_view> out;
  const char* p = side_chars_.data() + e->offset;
  const char* end = p + e->size;
  while (p < end) {
    const std::string_view v(p);
    out.push_back(v);
    p += v.size() + 1;
  }
  return out;
}

std::optional<std::vector<bool>> Trace::involved_dim(uint32_t i) const {
  if (!(nodes_[i].mask & kHasInvolvedDim)) return std::nullopt;
  const SideEntry* e = FindSide(involved_dims_, i);
  std::vector<bool> out(e->size);
  for (uint32_t k = 0; k < e->size; ++k) out[k] = involved_bits_[e->offset + k] != 0;
  return out;
}

size_t Trace::MemoryBytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return sizeof(Trace) + path_.capacity() + version_.capacity() + bytes(nodes_) + bytes(names_) +
         bytes(values_) + bytes(parent_offsets_) + bytes(parent_edges_) + bytes(child_offsets_) +
         bytes(child_edges_) + bytes(side_chars_) + bytes(pg_names_) + bytes(metadata_inputs_) +
         bytes(involved_dims_) + bytes(involved_bits_) + bytes(tensor_inputs_) +
         bytes(tensor_outputs_);
}

const char* NodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kInvalid:
      return "INVALID_NODE";
    case NodeType::kMetadata:
      return "METADATA_NODE";
    case NodeType::kMemLoad:
      return "MEM_LOAD_NODE";
    case NodeType::kMemStore:
      return "MEM_STORE_NODE";
    case NodeType::kComp:
      return "COMP_NODE";
    case NodeType::kCommSend:
      return "COMM_SEND_NODE";
    case NodeType::kCommRecv:
      return "COMM_RECV_NODE";
    case NodeType::kCommColl:
      return "COMM_COLL_NODE";
  }
  return "UNKNOWN_NODE_TYPE";
}

const char* const kCommTypeValues =
    "0..9 (ALL_REDUCE, REDUCE, ALL_GATHER, GATHER, SCATTER, BROADCAST, ALL_TO_ALL, "
    "REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER)";

const char* CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce:
      return "ALL_REDUCE";
    case CollectiveType::kReduce:
      return "REDUCE";
    case CollectiveType::kAllGather:
      return "ALL_GATHER";
    case CollectiveType::kGather:
      return "GATHER";
    case CollectiveType::kScatter:
      return "SCATTER";
    case CollectiveType::kBroadcast:
      return "BROADCAST";
    case CollectiveType::kAllToAll:
      return "ALL_TO_ALL";
    case CollectiveType::kReduceScatter:
      return "REDUCE_SCATTER";
    case CollectiveType::kReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case CollectiveType::kBarrier:
      return "BARRIER";
  }
  return "UNKNOWN_COLLECTIVE";
}

std::string RankTracePath(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

}  // namespace et
}  // namespace orrery

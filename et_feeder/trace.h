// One rank's Chakra execution trace (`<prefix>.<rank>.et`), loaded into compact immutable arrays.
//
//   StatusOr<et::Trace> t = et::Trace::Load(et::RankTracePath("workload/ar", 3));
//   if (!t.ok()) return t.status();            // names the file, byte offset / node id
//   for (uint32_t i = 0; i < t->size(); ++i) {  // index order == ascending node id
//     if (t->type(i) == et::NodeType::kCommColl) Use(t->comm_size(i).value_or(0));
//     for (uint32_t p : t->parents(i)) ...      // node indexes, data_deps ∪ ctrl_deps
//   }
//
// Protobuf objects are parsed one node at a time and dropped; only the values the simulator
// reads are kept (see et_feeder/README.md for the layout and the per-node cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace et {

// Mirrors ChakraProtoMsg::NodeType (same numeric values).
enum class NodeType : uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};

// Mirrors ChakraProtoMsg::CollectiveCommType (same numeric values).
enum class CollectiveType : uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

// Chakra's spelling, e.g. "COMM_COLL_NODE", "ALL_REDUCE".
const char* NodeTypeName(NodeType type);
const char* CollectiveTypeName(CollectiveType type);
// The valid comm_type values, for messages: "0..9 (ALL_REDUCE, REDUCE, ..., BARRIER)".
extern const char* const kCommTypeValues;

// "<prefix>.<rank>.et", the file rank `rank` reads.
std::string RankTracePath(const std::string& prefix, int rank);

// Which Node fields make a node wait for another.
enum class Dependencies : uint8_t {
  kDataAndCtrl,  // data_deps ∪ ctrl_deps: ASTRA-sim 2.0's feeder_v3
  kDataOnly,     // data_deps only: MLCommons' legacy feeder (ctrl_deps ignored)
  // data_deps ∪ ctrl_deps when that graph is acyclic (the default); when only ctrl_deps close a
  // cycle (PyTorch traces link each operator and its kernel both ways), data_deps only, and
  // `ctrl_deps_ignored()` says why. A cycle among data_deps is an error either way.
  kAuto,
};

struct LoadOptions {
  // Dependencies naming ids absent from the file are an error instead of "already satisfied".
  bool strict = false;
  Dependencies dependencies = Dependencies::kAuto;
};

// The most dependencies one node may keep after implied ones are dropped (the feeder counts a
// node's unfinished parents in 24 bits); a trace with more is refused, naming the node.
constexpr uint32_t kMaxParentsPerNode = (uint32_t{1} << 24) - 1;

// A dependency naming an id that is not in the file.
struct DanglingDependency {
  uint64_t node_id;
  uint64_t missing_id;
};

// A read-only view of a run of node indexes (a CSR row).
class IndexRange {
 public:
  IndexRange(const uint32_t* begin, const uint32_t* end) : begin_(begin), end_(end) {}
  const uint32_t* begin() const { return begin_; }
  const uint32_t* end() const { return end_; }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  bool empty() const { return begin_ == end_; }
  uint32_t operator[](size_t i) const { return begin_[i]; }

 private:
  const uint32_t* begin_;
  const uint32_t* end_;
};

class Trace {
 public:
  static StatusOr<Trace> Load(const std::string& path, const LoadOptions& options = {});
  // A trace of no nodes (an idle NPU's); `path` names it in messages.
  static Trace Empty(std::string path);

  // Move-only: a trace can hold hundreds of megabytes.
  Trace(Trace&&) = default;
  Trace& operator=(Trace&&) = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  const std::string& path() const { return path_; }
  // GlobalMetadata.version, e.g. "0.0.4".
  const std::string& version() const { return version_; }

  // Number of nodes. Node indexes are 0..size()-1 in ascending id order.
  uint32_t size() const { return static_cast<uint32_t>(nodes_.size()); }
  // Index of the node with this id, if present (binary search).
  std::optional<uint32_t> Find(uint64_t id) const;

  uint64_t id(uint32_t i) const { return nodes_[i].id; }
  std::string_view name(uint32_t i) const {
    return std::string_view(names_.data() + nodes_[i].name_offset, nodes_[i].name_size);
  }
  NodeType type(uint32_t i) const { return static_cast<NodeType>(nodes_[i].type); }
  uint64_t duration_micros(uint32_t i) const { return nodes_[i].duration_micros; }
  uint64_t start_time_micros(uint32_t i) const { return nodes_[i].start_time_micros; }

  // Attributes (absent -> nullopt). Integer attributes accept every protobuf integer encoding.
  std::optional<bool> is_cpu_op(uint32_t i) const;
  std::optional<uint64_t> num_ops(uint32_t i) const { return Unsigned(i, kNumOps); }
  std::optional<uint64_t> tensor_size(uint32_t i) const { return Unsigned(i, kTensorSize); }
  std::optional<CollectiveType> comm_type(uint32_t i) const;
  std::optional<uint64_t> comm_size(uint32_t i) const { return Unsigned(i, kCommSize); }
  std::optional<int64_t> comm_src(uint32_t i) const { return Signed(i, kCommSrc); }
  std::optional<int64_t> comm_dst(uint32_t i) const { return Signed(i, kCommDst); }
  std::optional<int64_t> comm_tag(uint32_t i) const { return Signed(i, kCommTag); }
  std::optional<int64_t> comm_priority(uint32_t i) const { return Signed(i, kCommPriority); }
  std::optional<std::string_view> pg_name(uint32_t i) const;
  std::optional<std::vector<bool>> involved_dim(uint32_t i) const;
  // Node.inputs.values of a METADATA node (engaged for every METADATA node, nullopt otherwise).
  std::optional<std::string_view> metadata_inputs(uint32_t i) const;
  // The `inputs` / `outputs` attributes (string_list [name, size, name, size, ...]) that the
  // local memory tracker reads; nullopt when absent. Values as written, not yet checked.
  std::optional<std::vector<std::string_view>> tensor_inputs(uint32_t i) const {
    return StringList(i, kHasTensorInputs, tensor_inputs_);
  }
  std::optional<std::vector<std::string_view>> tensor_outputs(uint32_t i) const {
    return StringList(i, kHasTensorOutputs, tensor_outputs_);
  }
  // True when an `inputs` or `outputs` attribute has another type than string_list.
  bool tensor_list_has_wrong_type(uint32_t i) const {
    return (nodes_[i].mask & kTensorListNotStringList) != 0;
  }

  // The dependencies that order node i: data_deps ∪ ctrl_deps present in the file (data_deps
  // only with Dependencies::kDataOnly), deduplicated, ascending index, without those another
  // one implies: when 30 depends on 10 and 20, and 20 on 10, 30's parents are {20}. Node i may be
  // issued exactly when these are done, as with the file's full list.
  IndexRange parents(uint32_t i) const {
    return IndexRange(parent_edges_.data() + parent_offsets_[i],
                      parent_edges_.data() + parent_offsets_[i + 1]);
  }
  // Nodes that list node i as a parent (ascending index).
  IndexRange children(uint32_t i) const {
    return IndexRange(child_edges_.data() + child_offsets_[i],
                      child_edges_.data() + child_offsets_[i + 1]);
  }
  size_t edge_count() const { return parent_edges_.size(); }
  // Dependencies of the file dropped from parents() because others imply them.
  uint64_t implied_dependency_count() const { return implied_count_; }

  // Dependencies naming ids not in the file: distinct (node, missing id) pairs. They count as
  // satisfied (real PyTorch traces have many).
  uint64_t dangling_dependency_count() const { return dangling_count_; }
  // The first few of them, lowest node id first.
  const std::vector<DanglingDependency>& dangling_dependency_sample() const {
    return dangling_sample_;
  }

  // Non-empty when Dependencies::kAuto fell back to data_deps only: the cycle that
  // data_deps ∪ ctrl_deps forms.
  const std::string& ctrl_deps_ignored() const { return ctrl_deps_ignored_; }

  // Heap bytes held by this trace (all arrays, by capacity) plus the object itself.
  size_t MemoryBytes() const;

  // Attribute slots, in the order their values are stored (exposed for the loader).
  enum Slot : uint8_t {
    kNumOps = 0,
    kTensorSize,
    kCommSize,
    kCommSrc,
    kCommDst,
    kCommTag,
    kCommPriority,
    kNumSlots,
  };

  // The per-node record (40 bytes). Attribute values live in `values_`: the node's present
  // slots, in slot order, starting at value_offset; `mask` says which are present.
  struct NodeRecord {
    uint64_t id;
    uint64_t duration_micros;
    uint64_t start_time_micros;
    uint32_t name_offset;
    uint32_t name_size;
    uint32_t value_offset;
    uint16_t mask;
    uint8_t type;
    uint8_t comm_type;
  };

  // Bits of NodeRecord::mask beyond the kNumSlots value slots.
  static constexpr uint16_t kHasCpuOp = 1u << 7;
  static constexpr uint16_t kCpuOpValue = 1u << 8;
  static constexpr uint16_t kHasCommType = 1u << 9;
  static constexpr uint16_t kHasPgName = 1u << 10;
  static constexpr uint16_t kHasInvolvedDim = 1u << 11;
  static constexpr uint16_t kHasMetadataInputs = 1u << 12;
  static constexpr uint16_t kHasTensorInputs = 1u << 13;
  static constexpr uint16_t kHasTensorOutputs = 1u << 14;
  // An `inputs` / `outputs` attribute that is not a string_list (kept out of the loader's
  // errors: only the local memory tracker reads them, and says so).
  static constexpr uint16_t kTensorListNotStringList = 1u << 15;

  // A rarely present value of one node, kept outside the record.
  struct SideEntry {
    uint32_t node;
    uint32_t offset;
    uint32_t size;
  };

 private:
  friend class TraceLoader;
  Trace() = default;

  std::optional<uint64_t> Unsigned(uint32_t i, Slot slot) const;
  std::optional<int64_t> Signed(uint32_t i, Slot slot) const;
  static const SideEntry* FindSide(const std::vector<SideEntry>& table, uint32_t node);
  std::optional<std::vector<std::string_view>> StringList(
      uint32_t i, uint16_t bit, const std::vector<SideEntry>& table) const;

  std::string path_;
  std::string version_;
  std::vector<NodeRecord> nodes_;
  std::vector<char> names_;
  std::vector<uint64_t> values_;
  std::vector<uint32_t> parent_offsets_;  // size() + 1
  std::vector<uint32_t> parent_edges_;
  std::vector<uint32_t> child_offsets_;  // size() + 1
  std::vector<uint32_t> child_edges_;
  // Side tables, sorted by node index.
  std::vector<char> side_chars_;
  std::vector<SideEntry> pg_names_;
  std::vector<SideEntry> metadata_inputs_;
  // Each value followed by a '\0' in side_chars_.
  std::vector<SideEntry> tensor_inputs_;
  std::vector<SideEntry> tensor_outputs_;
  std::vector<SideEntry> involved_dims_;  // offset/size into involved_bits_
  std::vector<uint8_t> involved_bits_;
  uint64_t dangling_count_ = 0;
  uint64_t implied_count_ = 0;
  std::vector<DanglingDependency> dangling_sample_;
  std::string ctrl_deps_ignored_;
};

}  // namespace et
}  // namespace orrery

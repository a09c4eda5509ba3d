// Reading a Chakra trace file into a Trace (Trace::Load): TraceLoader parses the file's messages
// (trace_loader.cc), then sorts the nodes by id, resolves their dependencies, checks for cycles
// and drops implied dependencies (trace_graph.cc). Internal to //et_feeder:trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/proto/et_def.pb.h"
#include "et_feeder/trace.h"

namespace orrery {
namespace et {
namespace trace_internal {

inline constexpr size_t kMaxReportedProblems = 20;
inline constexpr size_t kDanglingSampleSize = 16;
inline constexpr size_t kMaxCycleIdsShown = 32;
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

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

// Protobuf prints a line of its own for some malformed input (a string field with invalid
// UTF-8) before the parse fails. The loader reports every failure itself, with the file and
// the byte, so protobuf's lines below FATAL are dropped: one message per bad file.
void QuietProtobuf();

}  // namespace trace_internal

// Builds a Trace from a file: parses, sorts by id, resolves dependencies, checks for cycles.
class TraceLoader {
 public:
  TraceLoader(const std::string& path, const LoadOptions& options);

  StatusOr<Trace> Run();

  bool cyclic() const { return cyclic_; }
  const Trace& partial() const { return trace_; }

 private:
  Status Fail(const std::string& what) const { return Status::Error(trace_.path_ + ": " + what); }

  // Reads the length prefix at pos_; on success [*begin, *begin + *len) is the message.
  Status NextMessage(bool* end, size_t* begin, uint32_t* len);

  Status ReadMetadata();

  // What breaks the message at [begin, begin + len), as ": <problem>", or "" if not found.
  std::string Why(size_t begin, uint32_t len, const google::protobuf::Descriptor* type) const;

  void AddProblem(const std::string& problem);

  std::string Where(uint64_t id, size_t offset) const;

  void TypeProblem(const std::string& where, const ChakraProtoMsg::AttributeProto& attr,
                   const char* accepted);

  Status ReadNodes();

  void AddNode(const ChakraProtoMsg::Node& node, size_t offset);

  // An attribute name given twice on one node (comm_size twice, say) is ambiguous: feeder_v3
  // takes the first, silently, whatever the second says. Refused, naming both values.
  void CheckDuplicateAttributes(const ChakraProtoMsg::Node& node, size_t offset);

  void AddSideString(std::vector<Trace::SideEntry>* table, uint32_t node, const std::string& s);

  // Converts one attribute the simulator reads. A name given twice is refused
  // (CheckDuplicateAttributes); the guards below keep the first, so that a refused node is
  // stored consistently until the load fails.
  void ReadAttribute(trace_internal::AttrKey key, const ChakraProtoMsg::AttributeProto& attr,
                     uint64_t id, size_t offset, uint32_t file_index, Trace::NodeRecord* rec,
                     uint64_t* slot_values);

  void ReadUnsigned(Trace::Slot slot, const ChakraProtoMsg::AttributeProto& attr, uint64_t id,
                    size_t offset, Trace::NodeRecord* rec, uint64_t* slot_values);

  void ReadSigned(Trace::Slot slot, const ChakraProtoMsg::AttributeProto& attr, uint64_t id,
                  size_t offset, Trace::NodeRecord* rec, uint64_t* slot_values);

  // Puts nodes in ascending id order and rejects duplicate ids.
  Status SortById();

  // Parent CSR (ids mapped to indexes, dangling ones counted) and the child CSR derived from it.
  Status BuildEdges();

  // The child CSR from the parent CSR: count, prefix-sum, fill in ascending child order.
  void BuildChildren();

  // Kahn's algorithm; if some nodes are never freed, walks parents from one of them to a cycle.
  Status CheckAcyclic();

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
  void DropImpliedDependencies();

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

}  // namespace et
}  // namespace orrery

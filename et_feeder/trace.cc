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
#include "et_feeder/trace_loader.h"
#include "et_feeder/wire_check.h"

namespace orrery {
namespace et {

using trace_internal::QuietProtobuf;

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

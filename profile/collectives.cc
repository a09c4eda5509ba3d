#include "profile/collectives.h"

#include <algorithm>
#include <cctype>

namespace orrery {
namespace profile {

bool CollectiveOfName(const std::string& name, CollectiveSpec::Kind* kind,
                      et::CollectiveType* type) {
  std::string n;
  for (char c : name) {
    if (c == '_' || c == '-' || c == ':' || c == ' ') continue;
    n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  using T = et::CollectiveType;
  struct Pattern {
    const char* text;
    CollectiveSpec::Kind kind;
    T type;
  };
  // Longer names first: "reducescatter" before "reduce", "allgather" before "gather".
  static const Pattern kPatterns[] = {
      {"allreduce", CollectiveSpec::kCollective, T::kAllReduce},
      {"reducescatter", CollectiveSpec::kCollective, T::kReduceScatter},
      {"allgather", CollectiveSpec::kCollective, T::kAllGather},
      {"alltoall", CollectiveSpec::kCollective, T::kAllToAll},
      {"broadcast", CollectiveSpec::kCollective, T::kBroadcast},
      {"barrier", CollectiveSpec::kCollective, T::kBarrier},
      {"reduce", CollectiveSpec::kCollective, T::kReduce},
      {"gather", CollectiveSpec::kCollective, T::kGather},
      {"scatter", CollectiveSpec::kCollective, T::kScatter},
      {"send", CollectiveSpec::kSend, T::kAllReduce},
      {"recv", CollectiveSpec::kRecv, T::kAllReduce},
  };
  // "SendRecv" kernels carry all-to-alls and point-to-point alike: no type from the name.
  if (n.find("sendrecv") != std::string::npos) return false;
  for (const Pattern& p : kPatterns) {
    if (n.find(p.text) != std::string::npos) {
      *kind = p.kind;
      *type = p.type;
      return true;
    }
  }
  return false;
}

CpuOpStacks::CpuOpStacks(const KinetoTrace& t) {
  for (const CpuOp& op : t.cpu) threads_[op.tid].ops.push_back(&op);
  // Each op's enclosing op on its thread: t.cpu is by start, the longer first, so a sweep with
  // a stack of open ops finds it.
  for (auto& [tid, thread] : threads_) {
    std::vector<size_t> open;
    thread.parent.assign(thread.ops.size(), kNoParent);
    for (size_t i = 0; i < thread.ops.size(); ++i) {
      while (!open.empty() && thread.ops[open.back()]->end_ns <= thread.ops[i]->start_ns) {
        open.pop_back();
      }
      if (!open.empty()) thread.parent[i] = open.back();
      open.push_back(i);
    }
  }
}

std::vector<const CpuOp*> CpuOpStacks::Stack(int64_t tid, int64_t ns) const {
  std::vector<const CpuOp*> stack;
  const auto it = threads_.find(tid);
  if (it == threads_.end()) return stack;
  const Thread& thread = it->second;
  const auto end = std::upper_bound(thread.ops.begin(), thread.ops.end(), ns,
                                    [](int64_t v, const CpuOp* op) { return v < op->start_ns; });
  if (end == thread.ops.begin()) return stack;
  // The last op begun by `ns` and its enclosing ops: those still running at `ns` hold it.
  for (size_t i = static_cast<size_t>(end - thread.ops.begin()) - 1; i != kNoParent;
       i = thread.parent[i]) {
    if (thread.ops[i]->end_ns >= ns) stack.push_back(thread.ops[i]);
  }
  return stack;
}

CollectiveFinder::CollectiveFinder(const KinetoTrace& t) : t_(t), stacks_(t) {
  for (size_t i = 0; i < t.runtime.size(); ++i) {
    if (t.runtime[i].correlation >= 0) runtime_of_.emplace(t.runtime[i].correlation, i);
  }
}

namespace {

std::optional<uint64_t> Bytes(int64_t elems, const std::string& dtype) {
  const std::optional<int> b = DtypeBytes(dtype);
  if (elems < 0 || !b) return std::nullopt;
  return static_cast<uint64_t>(elems) * static_cast<uint64_t>(*b);
}

// The first tensor input of an operator recorded with "Input Dims" / "Input type".
std::optional<uint64_t> FirstTensorBytes(const CommArgs& c) {
  for (size_t i = 0; i < c.input_elems.size() && i < c.input_types.size(); ++i) {
    if (c.input_elems[i] < 0) continue;
    return Bytes(c.input_elems[i], c.input_types[i]);
  }
  return std::nullopt;
}

std::vector<int> AlignedBlock(int rank, int size) {
  std::vector<int> g;
  const int first = rank / size * size;
  for (int r = first; r < first + size; ++r) g.push_back(r);
  return g;
}

}  // namespace

StatusOr<CollectiveSpec> CollectiveFinder::Find(size_t gpu_index, int rank, int world) const {
  const GpuOp& k = t_.gpu[gpu_index];
  const std::string& kernel = t_.names[k.name];
  CollectiveSpec spec;
  bool typed = false;
  std::optional<uint64_t> bytes;
  const CommArgs* args = k.comm >= 0 ? &t_.comms[static_cast<size_t>(k.comm)] : nullptr;
  if (args != nullptr && !args->collective.empty()) {
    typed = CollectiveOfName(args->collective, &spec.kind, &spec.type);
    bytes = Bytes(args->in_nelems, args->dtype);
    spec.source = "kernel arguments";
  }
  int64_t group_size = args != nullptr ? args->group_size : -1;
  const CommArgs* ranks_from = args != nullptr && args->has_ranks ? args : nullptr;
  int64_t gather_ratio = -1;
  const auto launch = runtime_of_.find(k.correlation);
  if (launch != runtime_of_.end()) {
    const RuntimeCall& call = t_.runtime[launch->second];
    for (const CpuOp* op : stacks_.Stack(call.tid, call.start_ns)) {
      const std::string& name = t_.names[op->name];
      const CommArgs* c = op->comm >= 0 ? &t_.comms[static_cast<size_t>(op->comm)] : nullptr;
      if (c != nullptr && !c->collective.empty() && c->collective != "wait") {
        if (!typed) {
          typed = CollectiveOfName(c->collective, &spec.kind, &spec.type);
          spec.source = name;
        }
        if (!bytes) bytes = Bytes(c->in_nelems, c->dtype);
        if (group_size < 0) group_size = c->group_size;
        if (ranks_from == nullptr && c->has_ranks) ranks_from = c;
      }
      const bool comm_op = name.rfind("nccl:", 0) == 0 || name.rfind("c10d::", 0) == 0;
      if (!comm_op) continue;
      if (!typed && CollectiveOfName(name, &spec.kind, &spec.type)) {
        typed = true;
        spec.source = name;
      }
      if (!bytes && c != nullptr && name.rfind("nccl:", 0) == 0) {
        bytes = FirstTensorBytes(*c);
        if (bytes) spec.source = name + " inputs";
      }
      // c10d::_allgather_base_(output, input): the group is output / input ranks.
      if (c != nullptr && name.find("allgather") != std::string::npos &&
          c->input_elems.size() >= 2 && c->input_elems[0] > 0 && c->input_elems[1] > 0 &&
          c->input_elems[0] % c->input_elems[1] == 0) {
        gather_ratio = c->input_elems[0] / c->input_elems[1];
      }
    }
  }
  if (!typed) typed = CollectiveOfName(kernel, &spec.kind, &spec.type);
  if (!typed || !bytes) {
    return Status::Error("NCCL kernel '" + kernel.substr(0, 80) + "' at " +
                         std::to_string(k.start_ns / 1000) + " us (correlation " +
                         std::to_string(k.correlation) + "): its " +
                         (!typed ? "collective type" : "size") +
                         " is not recorded, neither in the kernel's arguments nor in the "
                         "record_param_comms / nccl:* operator that launched it (profile with "
                         "record_shapes=True, or a PyTorch that records collective arguments)");
  }
  if (spec.source.empty()) spec.source = "kernel name";
  spec.bytes = *bytes;
  if (ranks_from != nullptr) {
    spec.group = ranks_from->ranks;
    std::sort(spec.group.begin(), spec.group.end());
    bool world_group = static_cast<int>(spec.group.size()) == world;
    for (size_t i = 0; world_group && i < spec.group.size(); ++i) {
      world_group = spec.group[i] == static_cast<int>(i);
    }
    if (world_group) spec.group.clear();
  } else {
    int64_t size = group_size;
    if (size < 0 && spec.type == et::CollectiveType::kAllGather) size = gather_ratio;
    if (size > 0 && size < world && world % size == 0) {
      spec.group = AlignedBlock(rank, static_cast<int>(size));
      spec.group_note =
          "its group's ranks are not recorded: its size taken from its shape, its "
          "ranks as the aligned block holding this rank";
    }
  }
  return spec;
}

}  // namespace profile
}  // namespace orrery

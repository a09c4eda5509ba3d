#include "runner/symmetry.h"

#include <functional>

namespace orrery {

namespace {

// How `f` (a permutation of the NPUs) moves coordinates, when it moves those of one dimension
// only, each by a function of that coordinate alone: the dimension and that function's cycles.
// nullopt when f moves several dimensions, or one dimension's coordinate depending on others.
struct DimensionMap {
  int dim = -1;
  std::vector<std::vector<int>> cycles;
};
std::optional<DimensionMap> SingleDimensionMap(const Topology& t,
                                               const std::function<int(int)>& f) {
  const int n = t.num_npus();
  std::vector<int> stride(t.dims.size());
  for (size_t d = 0, s = 1; d < t.dims.size(); s *= t.dims[d].npus, ++d) stride[d] = s;
  auto coord = [&](int npu, size_t d) { return (npu / stride[d]) % t.dims[d].npus; };
  int moved = -1;
  std::vector<int> to;
  for (int x = 0; x < n; ++x) {
    const int y = f(x);
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const int cx = coord(x, d), cy = coord(y, d);
      if (moved < 0 && cx != cy) {
        moved = static_cast<int>(d);
        to.assign(t.dims[d].npus, -1);
      }
      if (static_cast<int>(d) != moved) {
        if (cx != cy) return std::nullopt;
        continue;
      }
      if (to[cx] >= 0 && to[cx] != cy) return std::nullopt;
      to[cx] = cy;
    }
  }
  if (moved < 0) return std::nullopt;
  DimensionMap out;
  out.dim = moved;
  std::vector<bool> done(to.size(), false);
  for (size_t v = 0; v < to.size(); ++v) {
    if (done[v]) continue;
    std::vector<int> cycle;
    for (int c = static_cast<int>(v); !done[c]; c = to[c]) {
      if (c < 0) return std::nullopt;
      done[c] = true;
      cycle.push_back(c);
    }
    if (!out.cycles.empty() && cycle.size() != out.cycles.front().size()) return std::nullopt;
    out.cycles.push_back(std::move(cycle));
  }
  return out;
}

// Copies of one trace: the shift from copy c to copy c + k, for the least k that moves one
// dimension's coordinates alone (reps are then copies 0 .. k - 1).
std::optional<DimensionMap> CopyShift(const Topology& t, const Placement& p) {
  const int copies = p.copies();
  for (int k = 1; k < copies; ++k) {
    if (copies % k != 0) continue;
    std::optional<DimensionMap> map = SingleDimensionMap(
        t, [&](int npu) { return p.Npu((p.Copy(npu) + k) % copies, p.Rank(npu)); });
    if (map) return map;
  }
  return std::nullopt;
}

// A trace every NPU runs with nothing that names an NPU or a group: world collectives, compute,
// memory; no sends or receives, no pg_name, no METADATA groups.
bool NamesNoNpu(const et::Trace& t) {
  for (uint32_t i = 0; i < t.size(); ++i) {
    switch (t.type(i)) {
      case et::NodeType::kCommSend:
      case et::NodeType::kCommRecv:
      case et::NodeType::kMetadata:
        return false;
      case et::NodeType::kCommColl: {
        const std::optional<std::string_view> pg = t.pg_name(i);
        if (pg && !pg->empty() && *pg != "0") return false;
        break;
      }
      default:
        break;
    }
  }
  return true;
}

}  // namespace

std::optional<NpuSymmetry> ChooseSymmetry(const RunOptions& o, const Machine& m,
                                          const TraceSet& traces, std::string* why_not) {
  why_not->clear();
  const Topology& t = m.topology;
  const Placement* p = traces.placement.get();
  NpuSymmetry symmetry(t);
  if (p != nullptr && !p->jobs() && p->copies() > 1) {
    std::optional<DimensionMap> shift = CopyShift(t, *p);
    if (!shift) {
      *why_not = "the copies do not lie along one network dimension";
      return std::nullopt;
    }
    if (!symmetry.AddGenerator(shift->dim, shift->cycles).ok()) return std::nullopt;
  } else if (p == nullptr) {
    const et::Trace* first = traces.npu_trace.front();
    for (const et::Trace* trace : traces.npu_trace) {
      if (trace != first) return std::nullopt;  // NPUs run different files: nothing to share
    }
    if (!NamesNoNpu(*first)) {
      *why_not = "the one trace every NPU runs names NPUs or groups (sends, pg_name)";
      return std::nullopt;
    }
    for (size_t d = 0; d < t.dims.size(); ++d) {
      if (t.dims[d].type == BlockType::kMesh) continue;
      std::vector<int> rotation(static_cast<size_t>(t.dims[d].npus));
      for (size_t v = 0; v < rotation.size(); ++v) rotation[v] = static_cast<int>(v);
      if (!symmetry.AddGenerator(static_cast<int>(d), {rotation}).ok()) return std::nullopt;
    }
  } else {
    return std::nullopt;  // jobs
  }
  if (symmetry.trivial()) return std::nullopt;
  if (o.record) {
    *why_not = "timelines and reports show every NPU's own records";
  } else if (o.backend == Backend::kPacket || t.graph != nullptr) {
    *why_not = "only the analytical backends on a network of dimensions map links onto links";
  } else if (m.memory.type == MemoryType::kPerNodeMemoryExpansion ||
             m.memory.type == MemoryType::kMemoryPool) {
    *why_not = "the remote memory is shared among NPUs";
  } else if (!m.system.all_reduce_implementation_custom.empty() ||
             !m.system.reduce_scatter_implementation_custom.empty() ||
             !m.system.all_gather_implementation_custom.empty() ||
             !m.system.all_to_all_implementation_custom.empty() ||
             !m.system.per_node_custom_implementation.empty()) {
    *why_not = "custom collectives name NPUs";
  } else if (m.system.track_local_mem) {
    *why_not = "track-local-mem writes every NPU's own file";
  } else if (m.system.trace_enabled) {
    *why_not = "trace-enabled logs every NPU's own nodes";
  }
  if (!why_not->empty()) return std::nullopt;
  for (int npu = 0; npu < t.num_npus(); ++npu) {
    if (m.npu_scales[npu] != m.npu_scales[symmetry.Rep(npu)]) {
      *why_not = "--npu-compute-scale gives NPU " + std::to_string(npu) +
                 " another compute scale than NPU " + std::to_string(symmetry.Rep(npu));
      return std::nullopt;
    }
  }
  return symmetry;
}

}  // namespace orrery

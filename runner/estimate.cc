#include "runner/estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>

namespace orrery {
namespace {

uint64_t SatAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t SatMul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
uint64_t SatMulDouble(uint64_t a, double f) {
  const double v = static_cast<double>(a) * f;
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

// One phase of a chunk: the collective it runs over `npus` NPUs, and how many hops a message
// crosses (a switch's two links).
struct Phase {
  et::CollectiveType type;
  int npus;
  int hops;
};

// Messages one NPU sends in a phase: a ring's steps (an all-reduce is a reduce-scatter and an
// all-gather, 2 (p - 1)); the other algorithms send about as many.
uint64_t MessagesOf(const Phase& p) {
  const uint64_t steps = static_cast<uint64_t>(std::max(p.npus - 1, 0));
  return p.type == et::CollectiveType::kAllReduce ? 2 * steps : steps;
}

// The phases of a collective over every NPU (no group): one per network dimension of more than
// one NPU that it involves; localBWAware all-reduce: reduce-scatters up, all-reduce on the last,
// all-gathers back.
std::vector<Phase> WorldPhases(const CostInputs& in, et::CollectiveType type,
                               const std::optional<std::vector<bool>>& involved) {
  std::vector<Phase> dims;
  for (size_t d = 0; d < in.topology->dims.size(); ++d) {
    const Dimension& dim = in.topology->dims[d];
    if (dim.npus <= 1 || (involved && (d >= involved->size() || !(*involved)[d]))) continue;
    dims.push_back(Phase{type, dim.npus, dim.type == BlockType::kSwitch ? 2 : 1});
  }
  if (type != et::CollectiveType::kAllReduce || !in.params->local_bw_aware || dims.size() < 2) {
    return dims;
  }
  std::vector<Phase> phases;
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    phases.push_back({et::CollectiveType::kReduceScatter, dims[k].npus, dims[k].hops});
  }
  phases.push_back(dims.back());
  for (size_t k = dims.size() - 1; k-- > 0;) {
    phases.push_back({et::CollectiveType::kAllGather, dims[k].npus, dims[k].hops});
  }
  return phases;
}

// One NPU's share of the run.
struct NpuCost {
  uint64_t nodes = 0, collectives = 0, chunks = 0, messages = 0, packets = 0;
  uint64_t peak_chunk_bytes = 0;  // the comm_slots largest collectives' chunk streams at once
  uint64_t largest_chunks = 0;
  std::string largest;
};

uint64_t PacketsPerMessage(const CostInputs& in, uint64_t bytes) {
  const uint64_t mtu = std::max<uint64_t>(in.net != nullptr ? in.net->mtu : 4096, 1);
  return std::max<uint64_t>(1, (bytes + mtu - 1) / mtu);
}

NpuCost CostOfNpu(const CostInputs& in, int npu) {
  const et::Trace& t = *in.npu_trace[static_cast<size_t>(npu)];
  const SystemParams& sp = *in.params;
  const int n = static_cast<int>(in.npu_trace.size());
  const bool packet = in.backend == Backend::kPacket;
  NpuCost c;
  c.nodes = t.size();
  std::vector<uint64_t> in_flight;  // chunk-stream bytes of the largest collectives
  for (uint32_t i = 0; i < t.size(); ++i) {
    const et::NodeType type = t.type(i);
    if (in.replay_only || t.is_cpu_op(i).value_or(false)) continue;
    const uint64_t size = SatMulDouble(t.comm_size(i).value_or(0), sp.comm_scale);
    // Past 2^53 bytes the system layer refuses the node itself, with a better message.
    if (size > (uint64_t{1} << 53)) continue;
    if (type == et::NodeType::kCommSend) {
      ++c.messages;
      if (packet) c.packets = SatAdd(c.packets, PacketsPerMessage(in, size));
      continue;
    }
    if (type != et::NodeType::kCommColl || !t.comm_type(i)) continue;
    const et::CollectiveType ct = *t.comm_type(i);
    ++c.collectives;
    std::vector<Phase> phases;
    const std::optional<std::string_view> pg = t.pg_name(i);
    if (pg && !pg->empty() && *pg != "0") {
      const int members = in.group_size ? in.group_size(npu, *pg) : 0;
      phases.push_back(Phase{ct, members > 0 ? members : n, 1});
    } else {
      phases = WorldPhases(in, ct, t.involved_dim(i));
    }
    if (phases.empty()) continue;
    const uint64_t chunks =
        ChunkCount(size, static_cast<uint64_t>(std::max(sp.preferred_dataset_splits, 1)),
                   sp.whole_chunks, static_cast<uint64_t>(n), ct);
    uint64_t messages = 0, packets = 0;
    const uint64_t chunk_bytes = chunks > 0 ? std::max<uint64_t>(size / chunks, 1) : 0;
    for (const Phase& p : phases) {
      const uint64_t m = MessagesOf(p);
      messages = SatAdd(messages, m);
      if (packet) {
        const uint64_t per = PacketsPerMessage(in, chunk_bytes / std::max(p.npus, 1));
        packets = SatAdd(packets, SatMul(SatMul(m, per), static_cast<uint64_t>(p.hops)));
      }
    }
    c.chunks = SatAdd(c.chunks, chunks);
    c.messages = SatAdd(c.messages, SatMul(chunks, messages));
    c.packets = SatAdd(c.packets, SatMul(chunks, packets));
    in_flight.push_back(SatMul(chunks, kBytesPerChunk + kBytesPerChunkPhase * phases.size()));
    if (chunks > c.largest_chunks) {
      c.largest_chunks = chunks;
      c.largest = "node " + std::to_string(t.id(i)) + " '" + std::string(t.name(i)) + "' of " +
                  t.path() + ": " + et::CollectiveTypeName(ct) + " of " + std::to_string(size) +
                  " B in " + std::to_string(chunks) + " chunks (preferred-dataset-splits " +
                  std::to_string(sp.preferred_dataset_splits) +
                  (in.system_config.empty() ? "" : " in " + in.system_config) + ") on " +
                  std::to_string(phases.size() == 1 ? phases[0].npus : n) + " NPUs";
    }
  }
  const size_t slots = static_cast<size_t>(std::max(in.comm_slots, 1));
  if (in_flight.size() > slots) {
    std::nth_element(in_flight.begin(), in_flight.begin() + static_cast<long>(slots),
                     in_flight.end(), std::greater<uint64_t>());
    in_flight.resize(slots);
  }
  for (uint64_t b : in_flight) c.peak_chunk_bytes = SatAdd(c.peak_chunk_bytes, b);
  return c;
}

}  // namespace

uint64_t ChunkCount(uint64_t size, uint64_t splits, bool whole_chunks, uint64_t machine_npus,
                    et::CollectiveType type) {
  splits = std::max<uint64_t>(splits, 1);
  if (whole_chunks && size % splits != 0) size = SatAdd(size, splits - size % splits);
  uint64_t chunk = std::max<uint64_t>(size / splits, 1);
  if (type != et::CollectiveType::kAllGather && machine_npus > chunk) {
    chunk = machine_npus;
    size = SatMul(splits, chunk);
  }
  return size == 0 ? 0 : (size - 1) / chunk + 1;
}

RunCost EstimateRunCost(const CostInputs& in) {
  RunCost cost;
  cost.npus = static_cast<int>(in.npu_trace.size());
  // NPUs that run one trace cost alike: computed once, for the first of them.
  std::map<const et::Trace*, NpuCost> by_trace;
  uint64_t peak = 0;
  for (int r = 0; r < cost.npus; ++r) {
    auto it = by_trace.find(in.npu_trace[static_cast<size_t>(r)]);
    if (it == by_trace.end()) {
      it = by_trace.emplace(in.npu_trace[static_cast<size_t>(r)], CostOfNpu(in, r)).first;
    }
    const NpuCost& c = it->second;
    cost.nodes = SatAdd(cost.nodes, c.nodes);
    cost.collectives = SatAdd(cost.collectives, c.collectives);
    cost.chunks = SatAdd(cost.chunks, c.chunks);
    cost.messages = SatAdd(cost.messages, c.messages);
    cost.packets = SatAdd(cost.packets, c.packets);
    peak = SatAdd(peak, c.peak_chunk_bytes);
    if (c.largest_chunks > cost.largest_chunks) {
      cost.largest_chunks = c.largest_chunks;
      cost.largest = c.largest;
    }
  }
  const double per_message = in.backend == Backend::kPacket ? 1.0 : kEventsPerMessage;
  const double events = 2.0 * static_cast<double>(cost.nodes) +
                        per_message * static_cast<double>(cost.messages) +
                        kEventsPerPacketHop * static_cast<double>(cost.packets);
  cost.events = events >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(events);
  cost.wall_seconds = kSecondsPerRun + events / kEventsPerSecond;
  cost.memory_bytes = SatAdd(SatAdd(in.loaded_bytes, peak),
                             SatAdd(SatMul(static_cast<uint64_t>(cost.npus), kBytesPerNpu),
                                    SatMul(cost.nodes, kBytesPerNode)));
  return cost;
}

uint64_t AvailableMemoryBytes() {
  uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemAvailable:") {
      available = kb * 1024;
      break;
    }
  }
  if (available == 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = static_cast<uint64_t>(pages) * page;
  }
  // A container's or job's limit (cgroup v2, then v1) when it is lower.
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(path);
    uint64_t limit = 0;
    if (f >> limit && limit > 0 && (available == 0 || limit < available)) available = limit;
  }
  return available;
}

uint64_t DefaultMemoryBudget() {
  constexpr uint64_t kCeiling = uint64_t{4} << 30;
  const uint64_t available = AvailableMemoryBytes();
  return available == 0 ? kCeiling : std::min(available, kCeiling);
}

std::string HumanBytes(uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1e12) {
    std::snprintf(buf, sizeof buf, "%.3g TB", b / 1e12);
  } else if (b >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.3g GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g MB", b / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g KB", b / 1e3);
  }
  return buf;
}

std::string HumanSeconds(double s) {
  char buf[32];
  if (s >= 86400 * 365) {
    std::snprintf(buf, sizeof buf, "%.3g years", s / (86400 * 365));
  } else if (s >= 86400) {
    std::snprintf(buf, sizeof buf, "%.3g days", s / 86400);
  } else if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%.3g min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.2g s", s);
  }
  return buf;
}

int64_t ParseByteCount(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0)) return -1;
  std::string unit(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  double scale = 1;
  if (unit == "K" || unit == "k") {
    scale = 1024.0;
  } else if (unit == "M" || unit == "m") {
    scale = 1024.0 * 1024;
  } else if (unit == "G" || unit == "g") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T" || unit == "t") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!unit.empty()) {
    return -1;
  }
  const double bytes = v * scale;
  return bytes >= 9.2e18 ? -1 : static_cast<int64_t>(bytes);
}

Status SetMaxMemory(const std::string& text, const std::string& command, RunBudget* budget) {
  const int64_t bytes = ParseByteCount(text);
  if (bytes <= 0) {
    return Status::Error(command + "--max-memory is '" + text +
                         "'; expected a size in bytes, or with K, M, G or T (binary units), "
                         "e.g. 16G");
  }
  budget->max_memory = static_cast<uint64_t>(bytes);
  return Status::Ok();
}

std::string DescribeRunCost(const RunCost& c) {
  char line[256];
  std::string out = "estimate: " + std::to_string(c.npus) + " NPUs, " + std::to_string(c.nodes) +
                    " nodes, " + std::to_string(c.collectives) + " collectives in " +
                    std::to_string(c.chunks) + " chunks\n";
  std::snprintf(line, sizeof line, "estimate: %llu messages%s, %.3g events\n",
                static_cast<unsigned long long>(c.messages),
                c.packets > 0 ? (", " + std::to_string(c.packets) + " packet hops").c_str() : "",
                static_cast<double>(c.events));
  out += line;
  out += "estimate: about " + HumanBytes(c.memory_bytes) + " of memory and " +
         HumanSeconds(c.wall_seconds) + " of wall time (at " +
         std::to_string(static_cast<int>(kEventsPerSecond / 1e6)) + " M events/s)\n";
  if (!c.largest.empty()) out += "estimate: most chunks: " + c.largest + "\n";
  return out;
}

Status CheckRunBudget(const RunCost& c, const RunBudget& b) {
  const uint64_t max_memory = b.max_memory > 0 ? b.max_memory : DefaultMemoryBudget();
  const bool memory = c.memory_bytes > max_memory;
  const bool slow = !b.force && c.wall_seconds > b.max_wall_seconds;
  if (!memory && !slow) return Status::Ok();
  std::string what = "this run would need about ";
  if (memory) {
    what +=
        HumanBytes(c.memory_bytes) + " of memory (the budget is " + HumanBytes(max_memory) +
        (b.max_memory > 0 ? ", --max-memory" : ": the machine's available memory, at most 4 GiB") +
        ")";
  }
  if (slow) {
    what += std::string(memory ? " and " : "") + HumanSeconds(c.wall_seconds) +
            " of wall time (more than " + HumanSeconds(b.max_wall_seconds) + ")";
  }
  what += ": " + std::to_string(c.chunks) + " chunks, " + std::to_string(c.messages) + " messages" +
          (c.packets > 0 ? ", " + std::to_string(c.packets) + " packet hops" : "") + " on " +
          std::to_string(c.npus) + " NPUs";
  if (!c.largest.empty()) what += "; the most chunks: " + c.largest;
  std::string flags;
  if (memory) {
    // Rounded up to whole GiB, with room for the estimate's error.
    const uint64_t gib = (c.memory_bytes + c.memory_bytes / 4 + (uint64_t{1} << 30) - 1) >> 30;
    flags = "--max-memory " + std::to_string(gib) + "G";
  }
  if (slow) flags += std::string(flags.empty() ? "" : " and ") + "--force";
  return Status::Error(what + ". Give " + flags +
                       " to run it anyway (fewer preferred-dataset-splits, a smaller "
                       "--comm-scale or the analytical backends make it smaller); --dry-run "
                       "prints the estimate");
}

}  // namespace orrery

#include "workload/memory_tracker.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>

#include "common/json.h"

namespace orrery {
namespace {

constexpr int64_t kImplicitWriteNs = 10;  // ASTRA-sim's synthetic write of a tensor read first

struct Io {
  std::string name;
  uint64_t size;
};

// [name, size, name, size, ...] -> pairs; errors name the node, the attribute and the value.
Status ParseIo(const std::vector<std::string_view>& values, const char* attr,
               const std::string& node, std::vector<Io>* out) {
  const std::string where = node + ": attribute '" + attr + "'";
  if (values.size() % 2 != 0) {
    return Status::Error(where + " has " + std::to_string(values.size()) +
                         " values; expected pairs [name, size in bytes, name, size, ...]");
  }
  for (size_t i = 0; i < values.size(); i += 2) {
    const std::string_view s = values[i + 1];
    // At most 2^50 bytes (1 PiB) a tensor: the sum of millions of them stays exact.
    constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 50;
    uint64_t size = 0;
    bool ok = !s.empty() && s.size() <= 16;
    for (char c : s) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) size = size * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || size > kMaxTensorBytes) {
      return Status::Error(where + ": tensor '" + std::string(values[i]) + "' has size '" +
                           std::string(s) +
                           "'; expected a whole number of bytes, at most 2^50 (1 PiB)");
    }
    out->push_back({std::string(values[i]), size});
  }
  return Status::Ok();
}

}  // namespace

Status LocalMemoryTracker::Record(uint64_t node_id, std::string_view node_name, Time start,
                                  Time end,
                                  const std::optional<std::vector<std::string_view>>& inputs,
                                  const std::optional<std::vector<std::string_view>>& outputs) {
  if (!inputs && !outputs) return Status::Ok();
  const std::string label = "NPU " + std::to_string(npu_) + " node " + std::to_string(node_id) +
                            " '" + std::string(node_name) + "'";
  std::vector<Io> reads, writes;
  if (inputs) {
    Status s = ParseIo(*inputs, "inputs", label, &reads);
    if (!s.ok()) return s;
  }
  if (outputs) {
    Status s = ParseIo(*outputs, "outputs", label, &writes);
    if (!s.ok()) return s;
  }
  node_names_.emplace(node_id, std::string(node_name));
  // Reads first, then writes (a node reading a tensor nobody wrote yet makes it exist at 0).
  for (const Io& r : reads) {
    auto it = tensors_.find(r.name);
    if (it == tensors_.end()) {
      Tensor t;
      t.size = r.size;
      t.write = Access{Time::Zero(), Time::FromNs(kImplicitWriteNs), 0, true};
      it = tensors_.emplace(r.name, std::move(t)).first;
    }
    it->second.reads.push_back(Access{start, end, node_id});
  }
  for (const Io& w : writes) {
    auto it = tensors_.find(w.name);
    if (it != tensors_.end()) {
      const Access& first = it->second.write;
      return Status::Error(
          label + ": writes tensor '" + w.name + "' again (first " +
          (first.implicit ? std::string("read before any write, so taken to exist from time 0")
                          : "written by node " + std::to_string(first.node_id)) +
          "); each tensor may be written once (ASTRA-sim stops on an assertion there)");
    }
    Tensor t;
    t.size = w.size;
    t.write = Access{start, end, node_id};
    tensors_.emplace(w.name, std::move(t));
  }
  return Status::Ok();
}

std::map<Time, uint64_t> LocalMemoryTracker::Timeline() const {
  // Allocation at the start of the write, release at the end of the last read; changes at one
  // time are applied together.
  // Exact: at most 2^50 bytes a tensor, so 2^13 of them fit in int64 and any number in 128 bits.
  std::map<Time, __int128> delta;
  for (const auto& [name, t] : tensors_) {
    delta[t.write.start] += t.size;
    if (!t.reads.empty()) {
      Time last = t.reads.front().end;
      for (const Access& r : t.reads) last = std::max(last, r.end);
      delta[last] -= t.size;
    }
  }
  std::map<Time, uint64_t> usage;
  __int128 held = 0;
  for (const auto& [at, d] : delta) {
    held += d;
    usage.emplace(at, held <= 0 ? 0 : held > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(held));
  }
  return usage;
}

uint64_t LocalMemoryTracker::PeakBytes() const {
  uint64_t peak = 0;
  for (const auto& [at, bytes] : Timeline()) peak = std::max(peak, bytes);
  return peak;
}

Time LocalMemoryTracker::PeakTime() const {
  uint64_t peak = 0;
  Time when;
  for (const auto& [at, bytes] : Timeline()) {
    if (bytes > peak) {
      peak = bytes;
      when = at;
    }
  }
  return when;
}

Status LocalMemoryTracker::WriteChromeTrace(const std::string& path) const {
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  char buf[256];
  auto event = [&](std::string_view name, const char* cat, const char* ph, Time ts, int64_t pid,
                   int64_t tid, uint64_t size, const Access* by) {
    if (!first) out += ",\n";
    first = false;
    out += "{\"name\": ";
    AppendJsonString(&out, name);
    std::snprintf(buf, sizeof buf,
                  ", \"cat\": \"%s\", \"ph\": \"%s\", \"ts\": %.3f, \"pid\": %" PRId64
                  ", \"tid\": %" PRId64 ", \"args\": {\"size\": %" PRIu64,
                  cat, ph, ts.Us(), pid, tid, size);
    out += buf;
    if (by != nullptr) {
      auto it = by->implicit ? node_names_.end() : node_names_.find(by->node_id);
      out += ", \"node_id\": ";
      out += by->implicit ? std::string("null") : std::to_string(by->node_id);
      out += ", \"node_name\": ";
      AppendJsonString(&out, it == node_names_.end() ? "UNDEFINED" : it->second);
    }
    out += "}}";
  };
  int64_t tid = 0;
  for (const auto& [name, t] : tensors_) {
    event(name, "tensorWrite", "B", t.write.start, npu_, tid, t.size, &t.write);
    event(name, "tensorWrite", "E", t.write.end, npu_, tid, t.size, &t.write);
    Time last = t.write.end;
    for (const Access& r : t.reads) {
      event(name, "tensorRead", "B", r.start, npu_, tid, t.size, &r);
      event(name, "tensorRead", "E", r.end, npu_, tid, t.size, &r);
      last = std::max(last, r.end);
    }
    event(name, "tensorLifetime", "B", t.write.start, npu_ + 1000000, tid, t.size, nullptr);
    if (!t.reads.empty()) {
      event(name, "tensorLifetime", "E", last, npu_ + 1000000, tid, t.size, nullptr);
    }
    ++tid;
  }
  for (const auto& [at, bytes] : Timeline()) {
    if (!first) out += ",\n";
    first = false;
    std::snprintf(buf, sizeof buf,
                  "{\"name\": \"GPU Memory Usage (MB)\", \"ph\": \"C\", \"ts\": %.3f, \"pid\": "
                  "%d, \"args\": {\"MB\": %.6f, \"bytes\": %" PRIu64 "}}",
                  at.Us(), npu_ + 2000000, static_cast<double>(bytes) / (1 << 20), bytes);
    out += buf;
  }
  out += "\n]}\n";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return Status::Error("local-mem-trace-filename: cannot create " + path);
  }
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (std::fclose(f) != 0 || !ok) {
    return Status::Error("local-mem-trace-filename: writing " + path + " failed");
  }
  return Status::Ok();
}

std::string FormatMemory(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  return buf;
}

}  // namespace orrery

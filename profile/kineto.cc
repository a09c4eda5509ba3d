#include "profile/kineto.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <tuple>
#include <utility>

#include "profile/input_file.h"
#include "profile/json_reader.h"

namespace orrery {
namespace profile {

uint32_t NameTable::Intern(std::string_view s) {
  const auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  names_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(names_.size() - 1);
  ids_.emplace(std::string_view(names_.back()), id);
  return id;
}

std::optional<int> DtypeBytes(std::string_view dtype) {
  std::string d;
  for (char c : dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d.rfind("c10::", 0) == 0) d = d.substr(5);
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  static const std::pair<const char*, int> kSizes[] = {
      {"float", 4},          {"float32", 4},       {"int", 4},         {"int32", 4},
      {"double", 8},         {"float64", 8},       {"long", 8},        {"int64", 8},
      {"long int", 8},       {"half", 2},          {"float16", 2},     {"bfloat16", 2},
      {"short", 2},          {"int16", 2},         {"byte", 1},        {"uint8", 1},
      {"char", 1},           {"int8", 1},          {"signed char", 1}, {"unsigned char", 1},
      {"bool", 1},           {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"complexfloat", 8},
      {"complexdouble", 16}, {"uint16", 2},        {"uint32", 4},      {"uint64", 8},
  };
  for (const auto& [name, bytes] : kSizes) {
    if (d == name) return bytes;
  }
  return std::nullopt;
}

namespace {

// The event kinds this reader keeps, from `cat`.
enum class Cat : uint8_t {
  kUnknown,
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,
  kSync,
  kCpuOp,
  kAnnotation,
  kOrreryNode,  // an Orrery timeline's node slice
  kOrreryPath,  // an Orrery timeline's critical-path segment
  kOther,       // known, not kept (flows, gpu_user_annotation, Trace, chunk, ...)
};

Cat CatOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return Cat::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Cat::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Cat::kMemset;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") return Cat::kRuntime;
  if (cat == "cuda_sync") return Cat::kSync;
  if (cat == "cpu_op" || cat == "Operator") return Cat::kCpuOp;
  if (cat == "user_annotation") return Cat::kAnnotation;
  if (cat == "GPU compute" || cat == "CPU" || cat == "communication" || cat == "remote memory" ||
      cat == "receives" || cat == "collective") {
    return Cat::kOrreryNode;
  }
  if (cat == "critical path") return Cat::kOrreryPath;
  return Cat::kOther;
}

RuntimeKind RuntimeKindOf(std::string_view name) {
  if (name.find("Launch") != std::string_view::npos || name.rfind("cudaMemcpy", 0) == 0 ||
      name.rfind("cudaMemset", 0) == 0 || name.rfind("cuMemcpy", 0) == 0 ||
      name.rfind("cuMemset", 0) == 0) {
    // A blocking cudaMemcpy both launches and synchronises; its GPU op orders it.
    return RuntimeKind::kLaunch;
  }
  if (name.rfind("cudaEventRecord", 0) == 0 || name.rfind("cuEventRecord", 0) == 0) {
    return RuntimeKind::kEventRecord;
  }
  if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent") return RuntimeKind::kStreamWait;
  if (name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" ||
      name == "cudaEventSynchronize" || name == "cuCtxSynchronize" ||
      name == "cuStreamSynchronize" || name == "cuEventSynchronize") {
    return RuntimeKind::kSync;
  }
  return RuntimeKind::kOther;
}

SyncEvent::Kind SyncKindOf(std::string_view kind) {
  if (kind == "Stream Wait Event") return SyncEvent::kStreamWaitEvent;
  if (kind == "Stream Sync") return SyncEvent::kStreamSync;
  if (kind == "Context Sync") return SyncEvent::kContextSync;
  if (kind == "Event Sync") return SyncEvent::kEventSync;
  return SyncEvent::kOther;
}

// Integers in a string such as "[0, 1, 2]" (Process Group Ranks).
bool ParseIntList(std::string_view s, std::vector<int>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '-' || (c >= '0' && c <= '9')) {
      int v = 0;
      const auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (r.ec != std::errc()) return false;
      out->push_back(v);
      i = static_cast<size_t>(r.ptr - s.data());
    } else if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '(' || c == ')') {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// The fields of one event's `args` this reader keeps.
struct Args {
  int64_t external_id = -1;
  int64_t correlation = -1;
  int64_t stream = -1;
  int64_t device = -1;
  int64_t bytes = -1;
  int64_t rf_id = -1;
  int64_t wait_on_stream = -1;
  int64_t wait_on_record = -1;
  int64_t node_id = -1;
  int64_t npu = -1;
  std::string_view sync_kind;
  std::string_view node_type;
  std::string_view path_kind;
  bool has_comm = false;
  CommArgs comm;
};

class Loader {
 public:
  Loader(std::string_view text, const std::string& path) : r_(text, path) { t_.path = path; }
  StatusOr<KinetoTrace> Run();

 private:
  bool ReadTopLevelObject();
  bool ReadEvents();
  bool ReadEvent();
  bool ReadArgs(Cat cat, Args* a);
  bool ReadCommArg(std::string_view key, Args* a);
  bool ReadInputDims(std::vector<int64_t>* out);
  bool ReadStringList(std::vector<std::string>* out);
  bool ReadDistributedInfo();
  bool ReadDeviceProperties();
  bool ReadId(int64_t* v);  // a number, or a string holding one; -1 otherwise
  bool ReadStringView(std::string_view* s, std::string* storage);
  // Whether a kernel name contains "nccl" in any case, once per distinct name.
  bool IsNcclName(uint32_t id, std::string_view name);
  void Store(Cat cat, std::string_view name, std::string_view cat_text, int64_t pid, int64_t tid,
             int64_t ts, int64_t dur, Args& a);
  void Finish();

  JsonReader r_;
  KinetoTrace t_;
  bool saw_events_ = false;
  bool first_ts_set_ = false;
  std::vector<std::string_view> top_keys_;
  std::string scratch_;
  std::vector<int8_t> nccl_of_name_;  // -1 unknown, 0 no, 1 yes
};

bool Loader::IsNcclName(uint32_t id, std::string_view name) {
  if (id >= nccl_of_name_.size()) nccl_of_name_.resize(id + 1, -1);
  if (nccl_of_name_[id] < 0) {
    bool found = false;
    for (size_t i = 0; i + 4 <= name.size() && !found; ++i) {
      found = (name[i] | 0x20) == 'n' && (name[i + 1] | 0x20) == 'c' &&
              (name[i + 2] | 0x20) == 'c' && (name[i + 3] | 0x20) == 'l';
    }
    nccl_of_name_[id] = found ? 1 : 0;
  }
  return nccl_of_name_[id] == 1;
}

bool Loader::ReadStringView(std::string_view* s, std::string* storage) {
  bool escaped = false;
  const size_t at = r_.offset();
  if (!r_.ReadRawString(s, &escaped)) return false;
  if (escaped) {
    if (!JsonReader::Unescape(*s, storage)) {
      return r_.FailAt(at, "a string holds an invalid escape sequence");
    }
    *s = *storage;
  }
  return true;
}

bool Loader::ReadId(int64_t* v) {
  *v = -1;
  switch (r_.Peek()) {
    case JsonReader::Type::kNumber: {
      std::string_view text;
      if (!r_.ReadNumberText(&text)) return false;
      int64_t x = 0;
      const auto res = std::from_chars(text.data(), text.data() + text.size(), x);
      if (res.ec == std::errc() && res.ptr == text.data() + text.size()) {
        *v = x;
        return true;
      }
      double d = 0;  // a fraction or an exponent
      std::from_chars(text.data(), text.data() + text.size(), d);
      if (d >= -9.2e18 && d <= 9.2e18) *v = static_cast<int64_t>(d);
      return true;
    }
    case JsonReader::Type::kString: {
      std::string_view s;
      bool escaped = false;
      if (!r_.ReadRawString(&s, &escaped)) return false;
      int64_t x = 0;
      const auto res = std::from_chars(s.data(), s.data() + s.size(), x);
      if (res.ec == std::errc() && res.ptr == s.data() + s.size()) *v = x;
      return true;
    }
    default:
      return r_.Skip();
  }
}

bool Loader::ReadInputDims(std::vector<int64_t>* out) {
  out->clear();
  if (r_.Peek() != JsonReader::Type::kArray) return r_.Skip();
  if (!r_.EnterArray()) return false;
  while (r_.NextElement()) {
    if (r_.Peek() != JsonReader::Type::kArray) {
      out->push_back(-1);
      if (!r_.Skip()) return false;
      continue;
    }
    if (!r_.EnterArray()) return false;
    int64_t product = 1;
    bool any = false, nested = false;
    while (r_.NextElement()) {
      if (r_.Peek() != JsonReader::Type::kNumber) {
        nested = true;
        if (!r_.Skip()) return false;
        continue;
      }
      int64_t d = 0;
      if (!r_.ReadInt64(&d)) return false;
      product *= d;
      any = true;
    }
    out->push_back(any && !nested ? product : -1);
  }
  return r_.ok();
}

bool Loader::ReadStringList(std::vector<std::string>* out) {
  out->clear();
  if (r_.Peek() != JsonReader::Type::kArray) return r_.Skip();
  if (!r_.EnterArray()) return false;
  while (r_.NextElement()) {
    if (r_.Peek() != JsonReader::Type::kString) {
      out->emplace_back();
      if (!r_.Skip()) return false;
      continue;
    }
    std::string s;
    if (!r_.ReadString(&s)) return false;
    out->push_back(std::move(s));
  }
  return r_.ok();
}

// One of the collective arguments PyTorch records; false (and the value consumed) when `key`
// is none of them.
bool Loader::ReadCommArg(std::string_view key, Args* a) {
  CommArgs& c = a->comm;
  const auto text = [&](std::string* out) {
    if (r_.Peek() != JsonReader::Type::kString) return r_.Skip();
    return r_.ReadString(out);
  };
  const auto number = [&](int64_t* out) { return ReadId(out); };
  if (key == "Collective name") {
    a->has_comm = true;
    return text(&c.collective);
  }
  if (key == "In msg nelems") return number(&c.in_nelems);
  if (key == "Out msg nelems") return number(&c.out_nelems);
  if (key == "dtype") return text(&c.dtype);
  if (key == "Group size") return number(&c.group_size);
  if (key == "Process Group Name") return text(&c.pg_name);
  if (key == "Process Group Description") return text(&c.pg_desc);
  if (key == "Process Group Ranks") {
    std::string s;
    if (!text(&s)) return false;
    c.has_ranks = ParseIntList(s, &c.ranks) && !c.ranks.empty();
    return true;
  }
  if (key == "Input Dims") return ReadInputDims(&c.input_elems);
  if (key == "Input type") return ReadStringList(&c.input_types);
  return r_.Skip();
}

bool Loader::ReadArgs(Cat cat, Args* a) {
  if (r_.Peek() != JsonReader::Type::kObject) return r_.Skip();
  if (!r_.EnterObject()) return false;
  std::string_view key;
  while (r_.NextKey(&key)) {
    bool ok = true;
    if (key == "External id") {
      ok = ReadId(&a->external_id);
    } else if (key == "correlation") {
      ok = ReadId(&a->correlation);
    } else if (key == "stream") {
      ok = ReadId(&a->stream);
    } else if (key == "device") {
      ok = ReadId(&a->device);
    } else if (key == "bytes") {
      ok = cat == Cat::kOrreryNode ? r_.Skip() : ReadId(&a->bytes);
    } else if (key == "Record function id") {
      ok = ReadId(&a->rf_id);
    } else if (cat == Cat::kSync && key == "cuda_sync_kind") {
      ok = ReadStringView(&a->sync_kind, &scratch_);
    } else if (cat == Cat::kSync && key == "wait_on_stream") {
      ok = ReadId(&a->wait_on_stream);
    } else if (cat == Cat::kSync && key == "wait_on_cuda_event_record_corr_id") {
      ok = ReadId(&a->wait_on_record);
    } else if ((cat == Cat::kOrreryNode || cat == Cat::kOrreryPath) && key == "node_id") {
      ok = ReadId(&a->node_id);
    } else if (cat == Cat::kOrreryNode && key == "type") {
      ok = ReadStringView(&a->node_type, &scratch_);
    } else if ((cat == Cat::kOrreryNode || cat == Cat::kOrreryPath) && key == "npu") {
      ok = ReadId(&a->npu);
    } else if (cat == Cat::kOrreryPath && key == "kind") {
      ok = ReadStringView(&a->path_kind, &scratch_);
    } else if (cat == Cat::kKernel || cat == Cat::kCpuOp || cat == Cat::kAnnotation) {
      ok = ReadCommArg(key, a);
    } else {
      ok = r_.Skip();
    }
    if (!ok) return false;
  }
  return r_.ok();
}

bool Loader::ReadEvent() {
  const size_t at = r_.offset();
  if (r_.Peek() != JsonReader::Type::kObject) {
    return r_.Fail("an element of 'traceEvents' is not an object (a trace event)");
  }
  if (!r_.EnterObject()) return false;
  std::string_view key, ph, name, cat_text;
  std::string name_storage, cat_storage;
  int64_t pid = -1, tid = -1, ts = 0, dur = 0;
  bool has_ts = false;
  Cat cat = Cat::kUnknown;
  Args a;
  size_t args_at = std::string_view::npos;  // args seen before cat: read again afterwards
  while (r_.NextKey(&key)) {
    bool ok = true;
    if (key == "ph") {
      ok = ReadStringView(&ph, &scratch_);
    } else if (key == "cat") {
      ok = ReadStringView(&cat_text, &cat_storage);
      cat = CatOf(cat_text);
    } else if (key == "name") {
      ok =
          r_.Peek() == JsonReader::Type::kString ? ReadStringView(&name, &name_storage) : r_.Skip();
    } else if (key == "pid") {
      ok = ReadId(&pid);
    } else if (key == "tid") {
      ok = ReadId(&tid);
    } else if (key == "ts") {
      ok = r_.Peek() == JsonReader::Type::kNumber ? r_.ReadMicrosAsNanos(&ts) : r_.Skip();
      has_ts = ok && r_.ok();
    } else if (key == "dur") {
      ok = r_.Peek() == JsonReader::Type::kNumber ? r_.ReadMicrosAsNanos(&dur) : r_.Skip();
    } else if (key == "args") {
      if (cat == Cat::kUnknown) {
        args_at = r_.offset();
        ok = r_.Skip();
      } else if (cat == Cat::kOther) {
        ok = r_.Skip();
      } else {
        ok = ReadArgs(cat, &a);
      }
    } else {
      ok = r_.Skip();
    }
    if (!ok) return false;
  }
  if (!r_.ok()) return false;
  ++t_.events;
  if (has_ts && (!first_ts_set_ || ts < t_.first_ns)) {
    t_.first_ns = ts;
    first_ts_set_ = true;
  }
  if (ph != "X" || cat == Cat::kOther || cat == Cat::kUnknown) return true;
  if (!has_ts)
    return r_.FailAt(
        at, "a complete event ('ph': 'X') of cat '" + std::string(cat_text) + "' has no 'ts'");
  if (dur < 0) {
    return r_.FailAt(at, "event '" + std::string(name) + "' has a negative 'dur' (" +
                             std::to_string(dur) + " ns); expected a duration >= 0");
  }
  if (args_at != std::string_view::npos) {
    // Rare: `args` came before `cat`. Read it again now that the kind is known.
    const JsonReader saved = r_;
    r_.Reposition(args_at);
    if (!ReadArgs(cat, &a)) return false;
    r_ = saved;
  }
  Store(cat, name, cat_text, pid, tid, ts, dur, a);
  return true;
}

void Loader::Store(Cat cat, std::string_view name, std::string_view cat_text, int64_t pid,
                   int64_t tid, int64_t ts, int64_t dur, Args& a) {
  (void)pid;
  const int64_t end = ts + dur;
  int32_t comm = -1;
  if (a.has_comm || !a.comm.input_elems.empty()) {
    t_.comms.push_back(std::move(a.comm));
    comm = static_cast<int32_t>(t_.comms.size() - 1);
  }
  switch (cat) {
    case Cat::kKernel:
    case Cat::kMemcpy:
    case Cat::kMemset: {
      GpuOp op;
      op.start_ns = ts;
      op.end_ns = end;
      op.correlation = a.correlation;
      op.external_id = a.external_id;
      op.stream = a.stream >= 0 ? a.stream : tid;
      op.device = a.device >= 0 ? a.device : pid;
      op.bytes = a.bytes;
      op.name = t_.names.Intern(name);
      op.kind = cat == Cat::kKernel ? GpuKind::kKernel
                                    : (cat == Cat::kMemcpy ? GpuKind::kMemcpy : GpuKind::kMemset);
      op.comm = comm;
      if (cat == Cat::kKernel) op.nccl = IsNcclName(op.name, name);
      t_.gpu.push_back(op);
      break;
    }
    case Cat::kRuntime: {
      RuntimeCall c;
      c.start_ns = ts;
      c.end_ns = end;
      c.correlation = a.correlation;
      c.external_id = a.external_id;
      c.tid = tid;
      c.name = t_.names.Intern(name);
      c.kind = RuntimeKindOf(name);
      t_.runtime.push_back(c);
      break;
    }
    case Cat::kSync: {
      SyncEvent s;
      s.start_ns = ts;
      s.end_ns = end;
      s.stream = a.stream >= 0 ? a.stream : tid;
      s.correlation = a.correlation;
      s.wait_on_stream = a.wait_on_stream;
      s.wait_on_record_correlation = a.wait_on_record;
      s.kind = SyncKindOf(a.sync_kind.empty() ? name : a.sync_kind);
      t_.syncs.push_back(s);
      break;
    }
    case Cat::kCpuOp:
    case Cat::kAnnotation: {
      CpuOp op;
      op.start_ns = ts;
      op.end_ns = end;
      op.tid = tid;
      op.external_id = a.external_id;
      op.rf_id = a.rf_id;
      op.name = t_.names.Intern(name);
      op.comm = comm;
      op.annotation = cat == Cat::kAnnotation;
      t_.cpu.push_back(op);
      break;
    }
    case Cat::kOrreryNode:
    case Cat::kOrreryPath: {
      t_.orrery_timeline = true;
      SimSlice s;
      s.start_ns = ts;
      s.end_ns = end;
      // A node slice names its NPU in its args (Orrery's timelines since their pids start from 1);
      // earlier timelines had the NPU as the pid.
      s.npu = static_cast<int>(cat == Cat::kOrreryPath || a.npu >= 0 ? a.npu : pid);
      s.name = t_.names.Intern(name);
      s.node_id = a.node_id;
      if (cat == Cat::kOrreryPath) {
        s.category = t_.names.Intern(a.path_kind);
        t_.sim_path.push_back(s);
      } else {
        s.category = t_.names.Intern(cat_text);
        s.node_type = t_.names.Intern(a.node_type);
        t_.sim.push_back(s);
        t_.sim_npus = std::max(t_.sim_npus, s.npu + 1);
      }
      break;
    }
    default:
      break;
  }
}

bool Loader::ReadEvents() {
  saw_events_ = true;
  if (r_.Peek() != JsonReader::Type::kArray) {
    return r_.Fail("'traceEvents' is not an array of events");
  }
  if (!r_.EnterArray()) return false;
  while (r_.NextElement()) {
    if (!ReadEvent()) return false;
  }
  return r_.ok();
}

bool Loader::ReadDistributedInfo() {
  if (r_.Peek() != JsonReader::Type::kObject) return r_.Skip();
  if (!r_.EnterObject()) return false;
  std::string_view key;
  while (r_.NextKey(&key)) {
    bool ok = true;
    int64_t v = -1;
    if (key == "rank") {
      ok = ReadId(&v);
      if (ok && v >= 0 && v < (int64_t{1} << 30)) t_.rank = static_cast<int>(v);
    } else if (key == "world_size") {
      ok = ReadId(&v);
      if (ok && v > 0 && v < (int64_t{1} << 30)) t_.world_size = static_cast<int>(v);
    } else if (key == "backend" && r_.Peek() == JsonReader::Type::kString) {
      ok = r_.ReadString(&t_.backend);
    } else if (key == "nccl_version" && r_.Peek() == JsonReader::Type::kString) {
      ok = r_.ReadString(&t_.nccl_version);
    } else if (key == "pg_config" && r_.Peek() == JsonReader::Type::kArray) {
      ok = r_.EnterArray();
      while (ok && r_.NextElement()) {
        ProcessGroupInfo g;
        if (r_.Peek() != JsonReader::Type::kObject) {
          ok = r_.Skip();
          continue;
        }
        ok = r_.EnterObject();
        std::string_view k;
        while (ok && r_.NextKey(&k)) {
          if (k == "pg_name" && r_.Peek() == JsonReader::Type::kString) {
            ok = r_.ReadString(&g.name);
          } else if (k == "pg_desc" && r_.Peek() == JsonReader::Type::kString) {
            ok = r_.ReadString(&g.desc);
          } else if (k == "pg_size") {
            ok = ReadId(&g.size);
          } else if (k == "ranks" && r_.Peek() == JsonReader::Type::kArray) {
            ok = r_.EnterArray();
            while (ok && r_.NextElement()) {
              int64_t x = -1;
              ok = ReadId(&x);
              g.ranks.push_back(static_cast<int>(x));
            }
          } else {
            ok = r_.Skip();
          }
        }
        t_.process_groups.push_back(std::move(g));
      }
    } else {
      ok = r_.Skip();
    }
    if (!ok) return false;
  }
  return r_.ok();
}

bool Loader::ReadDeviceProperties() {
  if (r_.Peek() != JsonReader::Type::kArray) return r_.Skip();
  if (!r_.EnterArray()) return false;
  while (r_.NextElement()) {
    if (r_.Peek() != JsonReader::Type::kObject || !t_.device_name.empty()) {
      if (!r_.Skip()) return false;
      continue;
    }
    if (!r_.EnterObject()) return false;
    std::string_view key;
    while (r_.NextKey(&key)) {
      const bool ok = key == "name" && r_.Peek() == JsonReader::Type::kString
                          ? r_.ReadString(&t_.device_name)
                          : r_.Skip();
      if (!ok) return false;
    }
  }
  return r_.ok();
}

bool Loader::ReadTopLevelObject() {
  if (!r_.EnterObject()) return false;
  std::string_view key;
  while (r_.NextKey(&key)) {
    top_keys_.push_back(key);
    bool ok = true;
    if (key == "traceEvents") {
      ok = ReadEvents();
    } else if (key == "distributedInfo") {
      ok = ReadDistributedInfo();
    } else if (key == "deviceProperties") {
      ok = ReadDeviceProperties();
    } else if (key == "trace_id" && r_.Peek() == JsonReader::Type::kString) {
      ok = r_.ReadString(&t_.trace_id);
    } else {
      ok = r_.Skip();
    }
    if (!ok) return false;
  }
  return r_.ok();
}

void Loader::Finish() {
  std::stable_sort(t_.gpu.begin(), t_.gpu.end(), [](const GpuOp& a, const GpuOp& b) {
    return std::tie(a.start_ns, a.stream, a.end_ns) < std::tie(b.start_ns, b.stream, b.end_ns);
  });
  std::stable_sort(
      t_.runtime.begin(), t_.runtime.end(),
      [](const RuntimeCall& a, const RuntimeCall& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(t_.syncs.begin(), t_.syncs.end(),
                   [](const SyncEvent& a, const SyncEvent& b) { return a.start_ns < b.start_ns; });
  // Parents before children: by start, then the longer first.
  std::stable_sort(t_.cpu.begin(), t_.cpu.end(), [](const CpuOp& a, const CpuOp& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  std::stable_sort(t_.sim.begin(), t_.sim.end(), [](const SimSlice& a, const SimSlice& b) {
    return std::tie(a.npu, a.start_ns, a.end_ns) < std::tie(b.npu, b.start_ns, b.end_ns);
  });
}

StatusOr<KinetoTrace> Loader::Run() {
  const JsonReader::Type top = r_.Peek();
  if (top == JsonReader::Type::kEnd) {
    return Status::Error(t_.path +
                         ": empty file; expected a PyTorch profile (Chrome-trace JSON "
                         "with 'traceEvents')");
  }
  if (top == JsonReader::Type::kArray) {
    // The Trace Event Format's array form: the events alone.
    if (!ReadEvents()) return r_.status();
  } else if (top == JsonReader::Type::kObject) {
    if (!ReadTopLevelObject()) return r_.status();
  } else {
    r_.Fail(
        "the file is not a JSON object or array; expected a PyTorch profile (Chrome-trace "
        "JSON with 'traceEvents')");
    return r_.status();
  }
  if (!r_.AtEnd()) {
    r_.Fail("text follows the end of the JSON document");
    return r_.status();
  }
  if (!saw_events_) {
    std::string keys;
    bool execution_trace = false;
    for (size_t i = 0; i < top_keys_.size() && i < 8; ++i) {
      keys += (i ? ", " : "") + std::string(top_keys_[i]);
      execution_trace |= top_keys_[i] == "nodes" || top_keys_[i] == "schema";
    }
    std::string message = t_.path + ": JSON, but not a trace: it has no 'traceEvents' (its keys: " +
                          (keys.empty() ? std::string("none") : keys) + ")";
    if (execution_trace) {
      message += "; it looks like a PyTorch execution trace: give it with --et";
    } else {
      message += "; expected a PyTorch profile (torch.profiler's Chrome-trace JSON)";
    }
    return Status::Error(message);
  }
  Finish();
  return std::move(t_);
}

}  // namespace

StatusOr<KinetoTrace> ParseKinetoTrace(std::string_view text, const std::string& path) {
  Loader loader(text, path);
  return loader.Run();
}

StatusOr<KinetoTrace> LoadKinetoTrace(const std::string& path) {
  StatusOr<std::string> text = ReadProfileFile(path);
  if (!text.ok()) return text.status();
  return ParseKinetoTrace(*text, path);
}

}  // namespace profile
}  // namespace orrery

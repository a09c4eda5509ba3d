#include "nccl/nccl_model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "config/schema.h"

namespace orrery {

const char kNcclAlgorithms[] = "ring, tree, nvls, nvlstree";
const char kNcclProtocols[] = "LL, LL128, Simple";

bool IsNcclAlgorithm(const std::string& s) {
  return s == "ring" || s == "tree" || s == "nvls" || s == "nvlstree";
}

namespace {

bool IsProtocol(const std::string& s) { return s == "LL" || s == "LL128" || s == "Simple"; }

std::string At(const std::string& path, const YAML::Node& n) {
  return path + ":" + std::to_string(n.Mark().line + 1);
}

// A map key's name into *name; a key YAML allows but a name cannot be (a list, a map) or one
// given twice in the same map (`seen`) is an error.
bool KeyName(const std::string& path, const YAML::Node& key, std::set<std::string>* seen,
             std::string* name, std::vector<std::string>* errors) {
  if (!key.IsScalar()) {
    errors->push_back(At(path, key) + ": a key is " +
                      (key.IsSequence() ? "a list"
                       : key.IsMap()    ? "a map"
                                        : "empty") +
                      "; expected a name");
    return false;
  }
  if (IsMergeKey(key)) {
    errors->push_back(MergeKeyProblem(At(path, key)));
    return false;
  }
  *name = key.Scalar();
  if (!seen->insert(*name).second) {
    errors->push_back(At(path, key) + ": key '" + *name + "' appears more than once");
    return false;
  }
  return true;
}

// A scalar number that `valid` accepts, into `out`; else an error naming what is expected.
bool ReadNumber(const YAML::Node& n, const std::string& where, bool (*valid)(double),
                const char* expected, double* out, std::vector<std::string>* errors) {
  double v = 0;
  // A quoted or !!str scalar is text, as in the other config files.
  const bool text = n.IsScalar() && (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str");
  bool ok = n.IsScalar() && !text;
  if (ok) {
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      ok = false;
    }
  }
  if (!ok || !std::isfinite(v) || !valid(v)) {
    errors->push_back(where + ": bad value '" + (n.IsScalar() ? n.Scalar() : "") + "'; expected " +
                      expected +
                      (n.Tag() == "!" ? ", written without quotes"
                       : text         ? ", written without !!str"
                                      : ""));
    return false;
  }
  *out = v;
  return true;
}

// Reads {latency-us, efficiency[, protocols][, chunk-overhead-kib, channels][, step-latency-us,
// network-step-latency-us]} into the pointers (null: the keys are not valid here; `steps`, a
// protocol's, takes the step latencies); problems go to `errors`.
void ReadEntry(const std::string& path, const std::string& what, const YAML::Node& n,
               double* latency_us, double* efficiency, std::vector<std::string>* protocols,
               NcclChunking* chunking, NcclProtocol* steps, std::vector<std::string>* errors) {
  if (!n.IsMap()) {
    errors->push_back(At(path, n) + ": " + what +
                      ": expected a map with latency-us and efficiency");
    return;
  }
  std::set<std::string> seen;
  for (const auto& kv : n) {
    std::string key;
    if (!KeyName(path, kv.first, &seen, &key, errors)) continue;
    const std::string where = At(path, kv.first) + ": " + what + " key '" + key + "'";
    if (key == "latency-us") {
      ReadNumber(
          kv.second, where, [](double v) { return v >= 0 && v < 1e9; }, "microseconds in [0, 1e9)",
          latency_us, errors);
    } else if (key == "efficiency") {
      ReadNumber(
          kv.second, where, [](double v) { return v > 0 && v <= 1; }, "a share in (0, 1]",
          efficiency, errors);
    } else if ((key == "step-latency-us" || key == "network-step-latency-us") && steps != nullptr) {
      ReadNumber(
          kv.second, where, [](double v) { return v >= 0 && v < 1e6; }, "microseconds in [0, 1e6)",
          key == "step-latency-us" ? &steps->step_latency_us : &steps->network_step_latency_us,
          errors);
    } else if (key == "chunk-overhead-kib" && chunking != nullptr) {
      chunking->modelled = ReadNumber(
          kv.second, where, [](double v) { return v >= 0 && v < 1e6; }, "KiB in [0, 1e6)",
          &chunking->overhead_kib, errors);
    } else if (key == "channels" && chunking != nullptr) {
      double channels = 0;
      if (ReadNumber(
              kv.second, where,
              [](double v) { return v >= 1 && v <= 64 && v == static_cast<int>(v); },
              "a whole number of channels, 1 to 64", &channels, errors)) {
        chunking->channels = static_cast<int>(channels);
      }
    } else if (key == "protocols" && protocols != nullptr) {
      if (!kv.second.IsSequence()) {
        errors->push_back(where + ": expected a list of " + kNcclProtocols);
        continue;
      }
      for (const YAML::Node& p : kv.second) {
        const std::string name = p.IsScalar() ? p.Scalar() : "";
        if (!IsProtocol(name)) {
          errors->push_back(At(path, p) + ": " + what + " protocol '" + name +
                            "' is unknown; valid: " + kNcclProtocols);
        } else {
          protocols->push_back(name);
        }
      }
    } else {
      errors->push_back(where + " is unknown; valid: latency-us, efficiency" +
                        (protocols != nullptr ? ", protocols" : "") +
                        (chunking != nullptr ? ", chunk-overhead-kib, channels" : "") +
                        (steps != nullptr ? ", step-latency-us, network-step-latency-us" : ""));
    }
  }
}

std::string Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace

StatusOr<NcclModel> LoadNcclModel(const std::string& path) {
  // One document: a second one (after '---') would be silently dropped by YAML::LoadFile.
  StatusOr<YAML::Node> document = ReadYamlDocument(path);
  if (!document.ok()) return document.status();
  const YAML::Node root = *document;
  NcclModel m;
  m.path = path;
  std::vector<std::string> errors;
  if (!root.IsMap()) return Status::Error(path + ": expected a map with algorithms and protocols");
  std::set<std::string> seen_sections;
  for (const auto& kv : root) {
    std::string key;
    if (!KeyName(path, kv.first, &seen_sections, &key, &errors)) continue;
    if (key != "algorithms" && key != "protocols") {
      errors.push_back(At(path, kv.first) + ": key '" + key +
                       "' is unknown; valid: algorithms, protocols");
      continue;
    }
    if (!kv.second.IsMap()) {
      errors.push_back(At(path, kv.second) + ": '" + key + "' must map names (" +
                       (key == "algorithms" ? kNcclAlgorithms : kNcclProtocols) +
                       ") to their latency-us and efficiency");
      continue;
    }
    std::set<std::string> seen;
    for (const auto& e : kv.second) {
      std::string name;
      if (!KeyName(path, e.first, &seen, &name, &errors)) continue;
      if (key == "algorithms") {
        if (!IsNcclAlgorithm(name)) {
          errors.push_back(At(path, e.first) + ": algorithm '" + name +
                           "' is unknown; valid: " + kNcclAlgorithms);
          continue;
        }
        NcclAlgorithm a;
        a.name = name;
        ReadEntry(path, "algorithm " + name, e.second, &a.latency_us, &a.efficiency, &a.protocols,
                  name == "nvls" || name == "nvlstree" ? &a.chunking : nullptr, nullptr, &errors);
        m.algorithms.push_back(a);
      } else {
        if (!IsProtocol(name)) {
          errors.push_back(At(path, e.first) + ": protocol '" + name +
                           "' is unknown; valid: " + kNcclProtocols);
          continue;
        }
        NcclProtocol p;
        p.name = name;
        ReadEntry(path, "protocol " + name, e.second, &p.latency_us, &p.efficiency, nullptr,
                  nullptr, &p, &errors);
        m.protocols.push_back(p);
      }
    }
  }
  if (m.algorithms.empty()) errors.push_back(path + ": no algorithms (" + kNcclAlgorithms + ")");
  if (m.protocols.empty()) errors.push_back(path + ": no protocols (" + kNcclProtocols + ")");
  for (const NcclAlgorithm& a : m.algorithms) {
    for (const std::string& p : a.protocols) {
      bool found = false;
      for (const NcclProtocol& q : m.protocols) found = found || q.name == p;
      if (!found) {
        errors.push_back(path + ": algorithm " + a.name + " runs protocol " + p +
                         ", which 'protocols' does not define");
      }
    }
  }
  if (!errors.empty()) {
    Status problems;
    for (std::string& e : errors) problems.Add(std::move(e));
    return problems.Capped(kMaxProblemsPerFile, path);
  }
  return m;
}

std::string FormatNcclModel(const NcclModel& m, const std::string& comment) {
  std::string out = comment;
  if (!out.empty() && out.back() != '\n') out += '\n';  // the comment's last line ends here
  out += "algorithms:\n";
  for (const NcclAlgorithm& a : m.algorithms) {
    out += "  " + a.name + ": {latency-us: " + Num(a.latency_us) +
           ", efficiency: " + Num(a.efficiency);
    if (!a.protocols.empty()) {
      out += ", protocols: [";
      for (size_t i = 0; i < a.protocols.size(); ++i) {
        out += (i ? ", " : "") + a.protocols[i];
      }
      out += "]";
    }
    if (a.chunking.modelled) {
      out += ", chunk-overhead-kib: " + Num(a.chunking.overhead_kib) +
             ", channels: " + std::to_string(a.chunking.channels);
    }
    out += "}\n";
  }
  out += "protocols:\n";
  for (const NcclProtocol& p : m.protocols) {
    out += "  " + p.name + ": {latency-us: " + Num(p.latency_us) +
           ", efficiency: " + Num(p.efficiency);
    if (p.step_latency_us > 0) out += ", step-latency-us: " + Num(p.step_latency_us);
    if (p.network_step_latency_us > 0) {
      out += ", network-step-latency-us: " + Num(p.network_step_latency_us);
    }
    out += "}\n";
  }
  return out;
}

namespace {

// The names of `all` that `spec` (NCCL_ALGO's or NCCL_PROTO's syntax: "Ring", "ring,tree",
// "^nvls" for all but) keeps, each as `all` spells it; names are matched without case. A name
// outside `all` is an error, unless it is one of `unmodelled` (NCCL's, which Orrery does not
// model) in an exclusion, which excludes nothing here.
StatusOr<std::set<std::string>> Selection(const std::string& spec, const char* what,
                                          const std::vector<std::string>& all,
                                          const std::vector<std::string>& unmodelled,
                                          const char* valid) {
  const bool exclude = !spec.empty() && spec[0] == '^';
  std::set<std::string> named;
  std::stringstream ss(exclude ? spec.substr(1) : spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = Trim(item);
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const std::string& a) { return Lower(a) == Lower(item); });
    if (it != all.end()) {
      named.insert(*it);
      continue;
    }
    const bool nccls =
        std::find(unmodelled.begin(), unmodelled.end(), Lower(item)) != unmodelled.end();
    if (exclude && nccls) continue;
    std::vector<std::string> lower;
    for (const std::string& a : all) lower.push_back(Lower(a));
    std::string guess = nccls ? "" : DidYouMean(Lower(item), lower);
    for (size_t i = 0; i < all.size(); ++i) {
      if (!guess.empty() && lower[i] == guess) guess = all[i];  // as NCCL spells it
    }
    return Status::Error(std::string(what) + " '" + spec + "': '" + item + "' is " +
                         (item.empty() ? "an empty name"
                          : nccls      ? "one of NCCL's that Orrery does not model"
                                       : "unknown") +
                         (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                         "; valid: " + valid + " (a comma list, or ^ before it for all but)");
  }
  if (!exclude) return named;
  std::set<std::string> kept;
  for (const std::string& a : all) {
    if (named.count(a) == 0) kept.insert(a);
  }
  return kept;
}

}  // namespace

StatusOr<std::set<std::string>> NcclAlgorithmsIn(const std::string& spec) {
  return Selection(spec.empty() ? "^" : spec, "NCCL_ALGO", {"ring", "tree", "nvls", "nvlstree"},
                   {"collnet", "collnetdirect", "collnetchain", "pat"}, kNcclAlgorithms);
}

StatusOr<std::set<std::string>> NcclProtocolsIn(const std::string& spec) {
  return Selection(spec.empty() ? "^" : spec, "NCCL_PROTO", {"LL", "LL128", "Simple"}, {},
                   kNcclProtocols);
}

StatusOr<std::vector<NcclChoice>> Choices(const NcclModel& m, const std::string& algorithm,
                                          const std::string& protocol) {
  StatusOr<std::set<std::string>> algorithms = NcclAlgorithmsIn(algorithm);
  if (!algorithms.ok()) return algorithms.status();
  StatusOr<std::set<std::string>> protocols = NcclProtocolsIn(protocol);
  if (!protocols.ok()) return protocols.status();
  std::vector<NcclChoice> out;
  std::string listed;
  std::vector<std::string> names;
  for (const NcclAlgorithm& a : m.algorithms) {
    listed += (listed.empty() ? "" : ", ") + a.name;
    names.push_back(a.name);
    if (algorithms->count(a.name) == 0) continue;
    for (const NcclProtocol& p : m.protocols) {
      bool allowed = a.protocols.empty();
      for (const std::string& q : a.protocols) allowed = allowed || q == p.name;
      if (!allowed || protocols->count(p.name) == 0) continue;
      out.push_back({a.name, p.name, a.latency_us + p.latency_us, a.efficiency, p.efficiency,
                     p.step_latency_us, a.chunking, p.network_step_latency_us});
    }
  }
  if (out.empty()) {
    const std::string guess = DidYouMean(algorithm, names);
    if (!protocol.empty()) {
      return Status::Error(m.path + ": no algorithm of this machine's NCCL (" + listed + ")" +
                           (algorithm.empty() ? "" : " in NCCL_ALGO '" + algorithm + "'") +
                           " runs a protocol of NCCL_PROTO '" + protocol + "'");
    }
    return Status::Error(m.path + ": algorithm '" + algorithm +
                         "' is not one this machine's NCCL runs; its algorithms: " + listed +
                         (guess.empty() ? "" : " (did you mean '" + guess + "'?)"));
  }
  return out;
}

uint64_t NvlsChunkBytes(uint64_t bytes, int channels, int heads, int nodes) {
  const uint64_t ops =
      static_cast<uint64_t>(std::max(channels, 1)) * static_cast<uint64_t>(std::max(heads, 1));
  uint64_t chunk = 128 << 10;
  // Below `times` x ops x chunk bytes, a chunk larger than `to` becomes `to`.
  auto shrink_below = [&](uint64_t times, uint64_t to) {
    if (bytes < times * ops * chunk && chunk > to) chunk = to;
  };
  if (nodes <= 1) {
    shrink_below(64, 64 << 10);
    shrink_below(8, 32 << 10);
    shrink_below(2, 16 << 10);
  } else {
    if (nodes >= 4) chunk = 64 << 10;
    shrink_below(4, 64 << 10);
    shrink_below(1, 32 << 10);
  }
  return chunk;
}

double EfficiencyAt(const NcclChoice& c, const NcclCall& call) {
  double d = c.algorithm_efficiency;  // the algorithm's own share, both ways at once
  if (c.chunking.modelled && c.chunking.overhead_kib > 0) {
    const double chunk = static_cast<double>(
        NvlsChunkBytes(call.bytes, c.chunking.channels, call.heads, call.nodes));
    d *= chunk / (chunk + c.chunking.overhead_kib * 1024);
  }
  if (c.algorithm == "nvls" && call.kind == NcclKind::kSplit && call.nodes == 1 && call.heads > 1) {
    const double n = call.heads;  // one way: D up (or down), D/n back
    d = std::min(1.0, 2 * d * n / (n + 1));
  }
  return c.protocol_efficiency * d;
}

int RingStepsInNode(const NcclCall& call) {
  const int per_pass = call.nodes * (call.heads - 1);
  switch (call.kind) {
    case NcclKind::kAllReduce:
      return 2 * per_pass;
    case NcclKind::kSplit:
      return per_pass;
    case NcclKind::kOther:
      break;
  }
  return 0;
}

std::string NcclDoesNotRun(const std::string& algorithm, const NcclCall& call) {
  if (algorithm != "ring" && call.flat_ring) {
    return "this communicator group runs as one flat ring over its members (the system "
           "config's group-collectives is flat, or the group is not a sub-grid of the network; "
           "see system/README.md, \"Communicator groups\"), so only ring applies";
  }
  if (algorithm == "tree" && call.nodes == 1) {
    return "inside one node NCCL's tree is a chain, which Orrery does not model";
  }
  if (algorithm == "nvlstree" && call.nodes == 1) {
    return "NCCL's NVLS-tree runs across nodes only (within one node NCCL runs NVLS, nvls)";
  }
  if (algorithm == "nvls" && call.nodes > 1) {
    return "NCCL's NVLS runs within one node only (across nodes NCCL runs NVLS-tree, nvlstree, "
           "for all-reduce; NVLS itself would need CollNet)";
  }
  if (algorithm == "ring" || call.kind == NcclKind::kAllReduce) return "";
  if (algorithm == "tree") return "NCCL's tree runs all-reduce only";
  if (algorithm == "nvlstree") return "NCCL's NVLS-tree runs all-reduce only";
  if (algorithm == "nvls" && call.kind != NcclKind::kSplit) {
    return "NCCL's NVLS runs all-reduce, reduce-scatter and all-gather only";
  }
  return "";
}

int StepsAcrossNodes(const std::string& algorithm, const NcclCall& call) {
  if (call.nodes <= 1) return 0;
  if (algorithm == "ring") {
    switch (call.kind) {
      case NcclKind::kAllReduce:
        return 2 * (call.nodes - 1);
      case NcclKind::kSplit:
        return call.nodes - 1;
      case NcclKind::kOther:
        break;
    }
    return 0;
  }
  if ((algorithm == "tree" || algorithm == "nvlstree") && call.kind == NcclKind::kAllReduce) {
    int log2 = 0;
    while ((2 << log2) <= call.nodes) ++log2;
    return 2 * log2;
  }
  return 0;
}

double LatencyAt(const NcclChoice& c, const NcclCall& call) {
  const double across = StepsAcrossNodes(c.algorithm, call) * c.network_step_latency_us;
  if (c.algorithm != "ring") return c.latency_us + across;
  return c.latency_us + RingStepsInNode(call) * c.step_latency_us + across;
}

StatusOr<std::map<std::string, std::vector<std::string>>> NcclImplementations(
    const std::string& name, int dims) {
  if (!IsNcclAlgorithm(name)) {
    return Status::Error("algorithm '" + name + "' is unknown; valid: auto, " + kNcclAlgorithms);
  }
  if (name == "tree" && dims < 2) {
    return Status::Error(
        "algorithm 'tree' needs a node dimension (inside one node NCCL's tree is a chain, "
        "which Orrery does not model); use ring or nvls on a single node");
  }
  if (name == "nvlstree" && dims < 2) {
    return Status::Error(
        "algorithm 'nvlstree' (NCCL's NVLS-tree) needs a node dimension; use nvls on a single "
        "node");
  }
  if (name == "ring" && dims > 1) {
    // One flat ring over all GPUs per channel, leaving each node through a different NIC.
    const std::vector<std::string> flat = {"channelRing"};
    return std::map<std::string, std::vector<std::string>>{
        {"all-reduce-implementation", flat},
        {"reduce-scatter-implementation", flat},
        {"all-gather-implementation", flat},
        {"all-to-all-implementation",
         std::vector<std::string>(static_cast<size_t>(dims), "direct")}};
  }
  std::vector<std::string> reduce(static_cast<size_t>(dims), "ring");
  if (name == "nvls" || name == "nvlstree") reduce[0] = "nvls";
  if (name == "tree" || name == "nvlstree") reduce.back() = "doubleBinaryTree";
  std::vector<std::string> split = reduce;  // reduce-scatter / all-gather: no tree
  if (dims > 1) split.back() = "ring";
  return std::map<std::string, std::vector<std::string>>{
      {"all-reduce-implementation", reduce},
      {"reduce-scatter-implementation", split},
      {"all-gather-implementation", split},
      {"all-to-all-implementation", std::vector<std::string>(static_cast<size_t>(dims), "direct")}};
}

}  // namespace orrery

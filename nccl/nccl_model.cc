#include "nccl/nccl_model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
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

// " (did you mean 'x'?)" for a name close to one of `valid` (same letters in another case
// first), or "".
std::string Hint(const std::string& name, const std::vector<std::string>& valid) {
  std::string guess;
  for (const std::string& v : valid) {
    if (guess.empty() && Lower(v) == Lower(name)) guess = v;
  }
  if (guess.empty()) guess = DidYouMean(name, valid);
  return guess.empty() ? "" : " (did you mean '" + guess + "'?)";
}

// nccl.yaml's keys, each declared once: the loader checks them and nccl/README.md lists them
// (NcclModelKeys, NcclAlgorithmKeys, NcclProtocolKeys).

// The top level: two maps of names to entries, read below; the schema names and documents them.
struct NcclTop {
  std::string algorithms, protocols;
};

std::vector<KeySpec> MakeTopKeys() {
  Schema<NcclTop> s;
  s.String("algorithms", &NcclTop::algorithms)
      .Default("required")
      .AllowedText(std::string("a map: name (") + kNcclAlgorithms + ") -> an algorithm's keys")
      .Help("the algorithms NCCL's tuner chooses between on this machine, with their costs");
  s.String("protocols", &NcclTop::protocols)
      .Default("required")
      .AllowedText(std::string("a map: name (") + kNcclProtocols + ") -> a protocol's keys")
      .Help("the protocols the algorithms run with, with their costs");
  return s.keys();
}

const std::vector<KeySpec>& TopKeys() {
  static const std::vector<KeySpec> keys = MakeTopKeys();
  return keys;
}

// One entry of 'algorithms' or 'protocols', as written.
struct NcclEntry {
  double latency_us = 0;
  double efficiency = 1;
  std::vector<std::string> protocols;        // algorithms
  std::optional<double> chunk_overhead_kib;  // nvls, nvlstree
  int channels = NcclChunking().channels;    // nvls, nvlstree
  double step_latency_us = 0;                // protocols
  double network_step_latency_us = 0;        // protocols
};

enum class EntryKind { kAlgorithm, kNvlsAlgorithm, kProtocol };

// The keys of an entry of kind `kind`: every kind's are declared here once, each under the
// kinds it belongs to.
Schema<NcclEntry> MakeEntrySchema(EntryKind kind) {
  using E = NcclEntry;
  const bool protocol = kind == EntryKind::kProtocol;
  Schema<E> s;
  s.Number("latency-us", &E::latency_us)
      .Unit("us")
      .Min(0)
      .Below(1e9)
      .Help(std::string("the ") + (protocol ? "protocol's" : "algorithm's") +
            " share of a collective's launch floor; a choice's floor is its algorithm's plus its "
            "protocol's");
  s.Number("efficiency", &E::efficiency)
      .Greater(0)
      .Max(1)
      .Help(
          "the share of line rate it achieves; a choice achieves its algorithm's times its "
          "protocol's");
  if (protocol) {
    s.Number("step-latency-us", &E::step_latency_us)
        .Unit("us")
        .Min(0)
        .Below(1e6)
        .Help(
            "what each of a ring's steps inside a node waits beyond LL's handshake, which the "
            "simulated hop already carries");
    s.Number("network-step-latency-us", &E::network_step_latency_us)
        .Unit("us")
        .Min(0)
        .Below(1e6)
        .Help(
            "what each step across the network (a ring's, a tree's, NVLS-tree's) waits beyond "
            "what the simulated crossing carries");
    return s;
  }
  s.StringList("protocols", &E::protocols)
      .Allowed({"LL", "LL128", "Simple"})
      .Default("all")
      .Help("the protocols it runs with, each defined under 'protocols'; absent: all of them");
  if (kind == EntryKind::kNvlsAlgorithm) {
    s.OptionalNumber("chunk-overhead-kib", &E::chunk_overhead_kib)
        .Unit("KiB")
        .Min(0)
        .Below(1e6)
        .Help(
            "nvls and nvlstree only: what each chunk of NCCL's NVLS schedule costs, as the "
            "bytes the link would move meanwhile; absent: chunks are not modelled");
    s.Integer("channels", &E::channels)
        .Min(1)
        .Max(64)
        .Help(
            "nvls and nvlstree only, with chunk-overhead-kib: NCCL's NVLS channels "
            "(NCCL_NVLS_NCHANNELS; 16 on Hopper), which set the chunk size");
  }
  return s;
}

const Schema<NcclEntry>& EntrySchema(EntryKind kind) {
  static const Schema<NcclEntry> schemas[] = {MakeEntrySchema(EntryKind::kAlgorithm),
                                              MakeEntrySchema(EntryKind::kNvlsAlgorithm),
                                              MakeEntrySchema(EntryKind::kProtocol)};
  return schemas[static_cast<int>(kind)];
}

bool Declares(EntryKind kind, const std::string& key) {
  for (const KeySpec& k : EntrySchema(kind).keys()) {
    if (k.name == key) return true;
  }
  return false;
}

// Why key `key`, declared for another kind of entry, is not one of `kind`'s ("" when it is
// not declared for any).
std::string Misplaced(EntryKind kind, const std::string& key) {
  if (Declares(EntryKind::kProtocol, key)) return "a protocol's key, not an algorithm's";
  if (kind == EntryKind::kProtocol && Declares(EntryKind::kNvlsAlgorithm, key)) {
    return "an algorithm's key, not a protocol's";
  }
  if (Declares(EntryKind::kNvlsAlgorithm, key)) return "a key of nvls and nvlstree only";
  return "";
}

// Reads entry `n` of kind `kind` ("algorithm ring", "protocol LL": `what`) against its schema;
// problems go to `errors`, each naming `what`.
NcclEntry ReadEntry(const std::string& path, const std::string& what, EntryKind kind,
                    const YAML::Node& n, std::vector<std::string>* errors) {
  NcclEntry entry;
  if (!n.IsMap()) {
    errors->push_back(At(path, n) + ": " + what +
                      ": expected a map with latency-us and efficiency");
    return entry;
  }
  const std::vector<KeySpec>& keys = EntrySchema(kind).keys();
  std::vector<std::string> names;
  for (const KeySpec& k : keys) names.push_back(k.name);
  // Another kind's keys are named as such (a schema's suggestion would be a wrong guess).
  YAML::Node kept(YAML::NodeType::Map);
  for (const auto& kv : n) {
    const std::string why = kv.first.IsScalar() && !Declares(kind, kv.first.Scalar())
                                ? Misplaced(kind, kv.first.Scalar())
                                : "";
    if (why.empty()) {
      kept.force_insert(kv.first, kv.second);
    } else {
      errors->push_back(At(path, kv.first) + ": " + what + ": key '" + kv.first.Scalar() + "' is " +
                        why + "; valid here: " + JoinNames(names));
    }
  }
  StatusOr<ConfigFile> file = ConfigFile::FromNode(kept, path);
  if (!file.ok()) return entry;  // a map: cannot fail
  file->SetContext(what);
  const Status s = EntrySchema(kind).Apply(*file, &entry);
  errors->insert(errors->end(), s.problems().begin(), s.problems().end());
  return entry;
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
  return LoadNcclModel(*document, path);
}

namespace {

// The entries of section `section` ("algorithms" or "protocols", value `v`) into *m.
void ReadSection(const std::string& path, const std::string& section, const YAML::Node& v,
                 NcclModel* m, std::vector<std::string>* errors) {
  const bool algorithms = section == "algorithms";
  const std::vector<std::string> valid =
      algorithms ? std::vector<std::string>{"ring", "tree", "nvls", "nvlstree"}
                 : std::vector<std::string>{"LL", "LL128", "Simple"};
  const char* valid_text = algorithms ? kNcclAlgorithms : kNcclProtocols;
  if (!v.IsMap()) {
    errors->push_back(At(path, v) + ": '" + section + "' must map names (" + valid_text +
                      ") to their latency-us and efficiency");
    return;
  }
  std::set<std::string> seen;
  for (const auto& e : v) {
    std::string name;
    if (!KeyName(path, e.first, &seen, &name, errors)) continue;
    const char* kind = algorithms ? "algorithm" : "protocol";
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      errors->push_back(At(path, e.first) + ": " + kind + " '" + name + "' is unknown" +
                        Hint(name, valid) + "; valid: " + valid_text);
      continue;
    }
    const std::string what = std::string(kind) + " " + name;
    if (!algorithms) {
      const NcclEntry entry = ReadEntry(path, what, EntryKind::kProtocol, e.second, errors);
      m->protocols.push_back({name, entry.latency_us, entry.efficiency, entry.step_latency_us,
                              entry.network_step_latency_us});
      continue;
    }
    const bool nvls = name == "nvls" || name == "nvlstree";
    const NcclEntry entry = ReadEntry(
        path, what, nvls ? EntryKind::kNvlsAlgorithm : EntryKind::kAlgorithm, e.second, errors);
    NcclAlgorithm a;
    a.name = name;
    a.latency_us = entry.latency_us;
    a.efficiency = entry.efficiency;
    a.protocols = entry.protocols;
    a.chunking.modelled = entry.chunk_overhead_kib.has_value();
    a.chunking.overhead_kib = entry.chunk_overhead_kib.value_or(0);
    a.chunking.channels = entry.channels;
    m->algorithms.push_back(a);
  }
}

}  // namespace

StatusOr<NcclModel> LoadNcclModel(const YAML::Node& root, const std::string& path) {
  NcclModel m;
  m.path = path;
  std::vector<std::string> errors;
  if (!root.IsMap()) return Status::Error(path + ": expected a map with algorithms and protocols");
  std::vector<std::string> sections;
  for (const KeySpec& k : TopKeys()) sections.push_back(k.name);
  std::set<std::string> seen_sections;
  for (const auto& kv : root) {
    std::string key;
    if (!KeyName(path, kv.first, &seen_sections, &key, &errors)) continue;
    if (std::find(sections.begin(), sections.end(), key) == sections.end()) {
      errors.push_back(At(path, kv.first) + ": key '" + key + "' is unknown" + Hint(key, sections) +
                       "; valid: " + JoinNames(sections));
      continue;
    }
    ReadSection(path, key, kv.second, &m, &errors);
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

StatusOr<YAML::Node> NcclModelWithDefaults(const YAML::Node& root, const std::string& path) {
  StatusOr<NcclModel> valid = LoadNcclModel(root, path);
  if (!valid.ok()) return valid.status();
  YAML::Node out(YAML::NodeType::Map);
  for (const char* section : {"algorithms", "protocols"}) {
    YAML::Node entries(YAML::NodeType::Map);
    for (const auto& e : static_cast<const YAML::Node&>(root)[section]) {
      const std::string name = e.first.Scalar();
      const EntryKind kind = std::string(section) == "protocols"    ? EntryKind::kProtocol
                             : name == "nvls" || name == "nvlstree" ? EntryKind::kNvlsAlgorithm
                                                                    : EntryKind::kAlgorithm;
      StatusOr<ConfigFile> file = ConfigFile::FromNode(e.second, path);
      if (!file.ok()) return file.status();
      NcclEntry entry;
      const Status s = EntrySchema(kind).Apply(*file, &entry);
      if (!s.ok()) return s;
      const bool chunked = entry.chunk_overhead_kib.has_value();
      entries[name] = EntrySchema(kind).WithDefaults(
          *file, entry, [chunked](const std::string& key) { return key != "channels" || chunked; });
    }
    out[section] = entries;
  }
  return out;
}

namespace {

// ASTRA-sim 2.0 has no NCCL model: a collective runs the system config's implementations.
std::vector<KeyDoc> NotInAstraSim(std::vector<KeyDoc> docs) {
  for (KeyDoc& d : docs) {
    d.astra_sim = "no nccl.yaml there: a collective runs the system config's implementations";
  }
  return docs;
}

}  // namespace

std::vector<KeyDoc> NcclModelKeys() {
  std::vector<KeyDoc> docs;
  for (const KeySpec& k : TopKeys()) {
    docs.push_back(k.Doc());
    docs.back().type = "map";
  }
  return NotInAstraSim(docs);
}

std::vector<KeyDoc> NcclAlgorithmKeys() {
  return NotInAstraSim(EntrySchema(EntryKind::kNvlsAlgorithm).Docs());
}

std::vector<KeyDoc> NcclProtocolKeys() {
  return NotInAstraSim(EntrySchema(EntryKind::kProtocol).Docs());
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

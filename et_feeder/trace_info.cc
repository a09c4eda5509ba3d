#include "et_feeder/trace_info.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "common/flags.h"
#include "common/units.h"
#include "config/flag_schema.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery {
namespace et {
namespace {

// "3.185 ms", as the rest of Orrery prints times.
std::string Micros(double us) { return Time::FromNsDouble(us * 1000).ToHuman(); }

// Sizes of one kind of message: how many, their sum, the smallest and largest.
struct Sizes {
  uint64_t count = 0, total = 0, least = UINT64_MAX, most = 0, unsized = 0;
  void Add(std::optional<uint64_t> bytes) {
    ++count;
    if (!bytes) {
      ++unsized;
      return;
    }
    total += *bytes;
    least = std::min(least, *bytes);
    most = std::max(most, *bytes);
  }
  std::string Describe() const {
    std::string s = std::to_string(count) + " (" + std::to_string(total) + " B";
    if (count > unsized && count - unsized > 1) {
      s += least == most ? ", each " + std::to_string(least) + " B"
                         : ", " + std::to_string(least) + " to " + std::to_string(most) + " B";
    }
    if (unsized > 0) s += "; " + std::to_string(unsized) + " without a size";
    return s + ")";
  }
};

std::string List(const std::set<int64_t>& values, size_t most = 8) {
  std::string s;
  size_t n = 0;
  for (int64_t v : values) {
    if (n++ == most) return s + ", ... (" + std::to_string(values.size()) + " in all)";
    s += (s.empty() ? "" : ", ") + std::to_string(v);
  }
  return s;
}

// What a trace holds, node by node.
struct TraceCounts {
  std::map<NodeType, uint64_t> by_type;
  uint64_t gpu = 0, cpu = 0, with_ops = 0;
  double gpu_us = 0, cpu_us = 0;
  std::map<CollectiveType, Sizes> collectives;
  uint64_t untyped_collectives = 0;
  std::map<std::string, uint64_t> groups;
  Sizes sends, receives, loads, stores;
  std::set<int64_t> send_peers, receive_peers;
};

TraceCounts CountNodes(const Trace& t) {
  TraceCounts c;
  for (uint32_t i = 0; i < t.size(); ++i) {
    const NodeType type = t.type(i);
    ++c.by_type[type];
    switch (type) {
      case NodeType::kComp:
        if (t.is_cpu_op(i).value_or(false)) {
          ++c.cpu;
          c.cpu_us += static_cast<double>(t.duration_micros(i));
        } else {
          ++c.gpu;
          c.gpu_us += static_cast<double>(t.duration_micros(i));
        }
        c.with_ops += t.num_ops(i).has_value();
        break;
      case NodeType::kCommColl:
        if (std::optional<CollectiveType> coll = t.comm_type(i)) {
          c.collectives[*coll].Add(t.comm_size(i));
          ++c.groups[std::string(t.pg_name(i).value_or(""))];
        } else {
          ++c.untyped_collectives;
        }
        break;
      case NodeType::kCommSend:
        c.sends.Add(t.comm_size(i));
        if (std::optional<int64_t> p = t.comm_dst(i)) c.send_peers.insert(*p);
        break;
      case NodeType::kCommRecv:
        c.receives.Add(t.comm_size(i));
        if (std::optional<int64_t> p = t.comm_src(i)) c.receive_peers.insert(*p);
        break;
      case NodeType::kMemLoad:
        c.loads.Add(t.tensor_size(i));
        break;
      case NodeType::kMemStore:
        c.stores.Add(t.tensor_size(i));
        break;
      default:
        break;
    }
  }
  return c;
}

// The lines on nodes: their types, compute, collectives, sends and receives, remote memory.
void WriteNodeLines(const Trace& t, const TraceCounts& c, std::ostream& out) {
  out << "  nodes: " << t.size();
  if (!t.version().empty()) out << " (trace version " << t.version() << ")";
  for (const auto& [type, count] : c.by_type) {
    out << "\n    " << NodeTypeName(type) << ": " << count;
    if (type == NodeType::kComp) {
      out << " (" << c.gpu << " GPU, " << c.cpu << " CPU with is_cpu_op)";
    }
  }
  out << "\n  compute (duration_micros): GPU " << Micros(c.gpu_us) << ", CPU " << Micros(c.cpu_us);
  if (c.with_ops > 0) out << "; " << c.with_ops << " with num_ops (for the roofline)";
  if (!c.collectives.empty() || c.untyped_collectives > 0) {
    out << "\n  collectives (comm_type: count (comm_size)):";
    for (const auto& [type, sizes] : c.collectives) {
      out << "\n    " << CollectiveTypeName(type) << ": " << sizes.Describe();
    }
    if (c.untyped_collectives > 0) {
      out << "\n    without comm_type: " << c.untyped_collectives
          << " (host-side operators when is_cpu_op is true; otherwise a run refuses them)";
    }
    out << "\n  groups (pg_name: collectives): ";
    bool first = true;
    for (const auto& [name, count] : c.groups) {
      out << (first ? "" : ", ") << (name.empty() ? "none (every NPU)" : "'" + name + "'") << ": "
          << count;
      first = false;
    }
  }
  if (c.sends.count + c.receives.count > 0) {
    out << "\n  sends: " << c.sends.Describe() << (c.send_peers.empty() ? "" : " to ")
        << List(c.send_peers) << "; receives: " << c.receives.Describe()
        << (c.receive_peers.empty() ? "" : " from ") << List(c.receive_peers);
  }
  if (c.loads.count + c.stores.count > 0) {
    out << "\n  remote memory: loads " << c.loads.Describe() << ", stores " << c.stores.Describe();
  }
}

// The lines on dependencies: kept, implied, dangling, ignored.
void WriteDependencyLines(const Trace& t, std::ostream& out) {
  out << "\n  dependencies: " << t.edge_count() << " kept, " << t.implied_dependency_count()
      << " implied by others (dropped), " << t.dangling_dependency_count()
      << " naming ids not in the file (count as done)";
  if (!t.dangling_dependency_sample().empty()) {
    const DanglingDependency& d = t.dangling_dependency_sample()[0];
    out << ", e.g. node " << d.node_id << " -> " << d.missing_id;
  }
  if (!t.ctrl_deps_ignored().empty()) {
    out << "\n  ctrl_deps ignored (they close a cycle with data_deps): " << t.ctrl_deps_ignored();
  }
}

// The longest chain by compute time (Kahn's order; the loader refused cycles): a bound no
// network can beat, as the slots' serialisation is another (the GPU total on one stream).
// A trace with nodes only.
void WriteLongestChainLine(const Trace& t, std::ostream& out) {
  const uint32_t n = t.size();
  std::vector<uint32_t> waiting(n), order;
  order.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<uint32_t>(t.parents(i).size());
    if (waiting[i] == 0) order.push_back(i);
  }
  std::vector<double> chain_us(n, 0);
  std::vector<uint32_t> chain_nodes(n, 0);
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    double best = 0;
    uint32_t nodes = 0;
    for (uint32_t p : t.parents(i)) {
      if (chain_us[p] > best || (chain_us[p] == best && chain_nodes[p] > nodes)) {
        best = chain_us[p];
        nodes = chain_nodes[p];
      }
    }
    const double own =
        t.type(i) == NodeType::kComp ? static_cast<double>(t.duration_micros(i)) : 0.0;
    chain_us[i] = best + own;
    chain_nodes[i] = nodes + 1;
    for (uint32_t c : t.children(i)) {
      if (--waiting[c] == 0) order.push_back(c);
    }
  }
  uint32_t end = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if (chain_us[i] > chain_us[end]) end = i;
  }
  std::string name(t.name(end));
  if (name.size() > 60) name = name.substr(0, 57) + "...";
  out << "\n  longest dependency chain by compute: " << Micros(chain_us[end]) << " over "
      << chain_nodes[end] << " nodes, ending at node " << t.id(end) << " '" << name
      << "' (a step takes at least this on any network, and at least its GPU compute on one "
         "GPU stream)";
}

}  // namespace

std::string DescribeTrace(const Trace& t) {
  std::ostringstream out;
  WriteNodeLines(t, CountNodes(t), out);
  WriteDependencyLines(t, out);
  if (t.size() > 0) WriteLongestChainLine(t, out);
  out << "\n";
  return out.str();
}

Status WriteTraceJson(const std::string& et_path, const std::string& json_path) {
  std::ifstream in(et_path, std::ios::binary);
  if (!in) return Status::Error(et_path + ": cannot open trace file: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  std::ofstream out(json_path, std::ios::binary);
  if (!out) return Status::Error(json_path + ": cannot write: " + std::strerror(errno));
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(data.data()),
                                                static_cast<int>(data.size()));
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  ChakraProtoMsg::GlobalMetadata metadata;
  ChakraProtoMsg::Node node;
  out << "{\n\"metadata\": ";
  uint64_t k = 0;
  for (; stream.CurrentPosition() < static_cast<int>(data.size()); ++k) {
    uint32_t size = 0;
    if (!stream.ReadVarint32(&size)) return Status::Error(et_path + ": bad length prefix");
    const auto limit = stream.PushLimit(static_cast<int>(size));
    google::protobuf::Message& message =
        k == 0 ? static_cast<google::protobuf::Message&>(metadata) : node;
    message.Clear();
    if (!message.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
      return Status::Error(et_path + ": message " + std::to_string(k) + " does not parse");
    }
    stream.PopLimit(limit);
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
      return Status::Error(et_path + ": message " + std::to_string(k) + " has no JSON form");
    }
    out << (k == 0 ? "" : k == 1 ? ",\n\"nodes\": [\n" : ",\n") << json;
  }
  if (k == 0) out << "{}";
  if (k <= 1) out << ",\n\"nodes\": [";
  out << "]\n}\n";
  out.close();
  if (!out) return Status::Error(json_path + ": write error");
  return Status::Ok();
}

namespace {

// The flags of trace-info, one field each.
struct TraceInfoFlags {
  std::string path;
  std::string json;
};

const FlagSchema<TraceInfoFlags>& TraceInfoFlagSchema() {
  static const FlagSchema<TraceInfoFlags>* schema = [] {
    using F = TraceInfoFlags;
    auto* s = new FlagSchema<F>();
    s->String("path", &F::path)
        .Default("required")
        .Help("the .et file or the trace prefix (or give it as the first argument)");
    s->String("json", &F::json)
        .Help(
            "also write the file's metadata and nodes as one JSON document (one .et file only; "
            "protobuf's JSON mapping, as chakra_jsonizer)");
    return s;
  }();
  return *schema;
}

}  // namespace

std::vector<KeyDoc> TraceInfoFlagDocs() { return TraceInfoFlagSchema().Docs(); }

int TraceInfoMain(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc(
      "orrery trace-info PATH: what a Chakra trace holds (PATH: one rank's .et file, or a trace "
      "prefix: <prefix>.0.et, <prefix>.1.et, ... up to the first missing one)");
  desc.add_options()("help,h", "print this help");
  TraceInfoFlagSchema().AddTo(&desc);
  po::positional_options_description positional;
  positional.add("path", 1);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc, &positional), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: trace-info: %s (see orrery trace-info --help)\n", e.what());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  TraceInfoFlags f;
  if (const Status flags = TraceInfoFlagSchema().Apply(vm, &f); !flags.ok()) {
    std::fprintf(stderr, "error: %s\n", flags.WithContext("trace-info").message().c_str());
    return 1;
  }
  const std::string& path = f.path;
  const std::string& json = f.json;
  if (path.empty()) {
    std::fprintf(stderr, "error: trace-info: give a .et file or a trace prefix\n");
    return 1;
  }
  std::vector<std::string> files;
  if (access(path.c_str(), F_OK) == 0) {
    files.push_back(path);
  } else {
    while (access(RankTracePath(path, static_cast<int>(files.size())).c_str(), F_OK) == 0) {
      files.push_back(RankTracePath(path, static_cast<int>(files.size())));
    }
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "error: trace-info: there is no file %s, nor %s (a trace prefix's first rank)\n",
                 path.c_str(), RankTracePath(path, 0).c_str());
    return 1;
  }
  if (!json.empty() && files.size() != 1) {
    std::fprintf(stderr,
                 "error: trace-info: --json writes one file's nodes; %s is a prefix of %zu files, "
                 "give one of them (e.g. %s)\n",
                 path.c_str(), files.size(), files[0].c_str());
    return 1;
  }
  // Consecutive files with the same description are printed once, as a range.
  std::string previous;
  size_t first = 0;
  auto flush = [&](size_t end) {
    if (previous.empty()) return;
    if (end - first == 1) {
      std::cout << files[first] << ":\n" << previous;
    } else {
      std::cout << files[first] << " .. " << files[end - 1] << " (" << (end - first)
                << " files, each):\n"
                << previous;
    }
  };
  for (size_t f = 0; f < files.size(); ++f) {
    StatusOr<Trace> t = Trace::Load(files[f]);
    if (!t.ok()) {
      flush(f);
      std::fprintf(stderr, "error: %s\n", t.status().message().c_str());
      return 1;
    }
    std::string text = DescribeTrace(*t);
    if (text != previous) {
      flush(f);
      previous = std::move(text);
      first = f;
    }
  }
  flush(files.size());
  if (!json.empty()) {
    Status s = WriteTraceJson(files[0], json);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
    std::cout << "wrote " << json << "\n";
  }
  return 0;
}

}  // namespace et
}  // namespace orrery

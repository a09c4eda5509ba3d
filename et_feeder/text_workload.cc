#include "et_feeder/text_workload.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <utility>

#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

constexpr const char* kParallelisms =
    "MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM <last bottom layer>, "
    "HYBRID_DLRM_ENHANCED <last bottom layer>";
constexpr const char* kCommTypes = "ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or NONE";

// One communication column group of a layer line.
struct Comm {
  std::string type;  // as written: ALLREDUCE, ..., NONE
  uint64_t bytes = 0;
  bool none() const { return type == "NONE"; }
};

struct Layer {
  std::string name;
  int line = 0;
  uint64_t fwd_time = 0, ig_time = 0, wg_time = 0;
  Comm fwd, ig, wg;
};

// What depending on a node of the graph means. nullopt: there is no such node (yet). Otherwise
// the ids to wait for: the node's own, or, for a NONE communication that is no node, the ids it
// would have waited for.
using Ref = std::optional<std::vector<uint64_t>>;

// Reads whitespace-separated lines of the text, keeping their numbers for messages.
struct TextLine {
  int number;
  std::vector<std::string> columns;
};

std::vector<TextLine> SplitLines(const std::string& text) {
  std::vector<TextLine> lines;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    TextLine t{number, {}};
    std::string w;
    while (words >> w) t.columns.push_back(w);
    lines.push_back(std::move(t));
  }
  return lines;
}

// A count or size of the text: a whole number that fits comm_size's int64.
std::optional<uint64_t> ParseCount(const std::string& s) {
  return ParseWholeNumber(s, uint64_t{INT64_MAX});
}

ChakraProtoMsg::CollectiveCommType CommType(const std::string& type) {
  if (type == "ALLGATHER") return ChakraProtoMsg::ALL_GATHER;
  if (type == "REDUCESCATTER") return ChakraProtoMsg::REDUCE_SCATTER;
  if (type == "ALLTOALL") return ChakraProtoMsg::ALL_TO_ALL;
  return ChakraProtoMsg::ALL_REDUCE;  // ALLREDUCE; and NONE as Chakra writes it (compatible)
}

bool KnownCommType(const std::string& type) {
  return type == "ALLREDUCE" || type == "ALLGATHER" || type == "REDUCESCATTER" ||
         type == "ALLTOALL" || type == "NONE";
}

// Builds one NPU's graph in write order, with ids from 0.
class GraphBuilder {
 public:
  GraphBuilder(bool compatible, TextWorkload* out) : compatible_(compatible), out_(out) {}

  Ref Compute(const Layer& layer, const char* phase, uint64_t micros,
              std::initializer_list<const Ref*> parents) {
    Node node =
        MakeNode(next_id_, "COMP_NODE_" + layer.name + "_" + phase, ChakraProtoMsg::COMP_NODE);
    node.set_duration_micros(micros);
    return Emit(std::move(node), parents);
  }

  // The collective named "COMM_COLL_NODE_<name>_<type>", or for NONE, unless compatible, no node.
  Ref Collective(const std::string& name, const Comm& comm,
                 std::initializer_list<const Ref*> parents) {
    if (comm.none() && !compatible_) {
      ++out_->none_left_out;
      return Ids(parents);
    }
    if (comm.none()) ++out_->none_written;
    Node node = MakeNode(next_id_, "COMM_COLL_NODE_" + name + "_" + comm.type,
                         ChakraProtoMsg::COMM_COLL_NODE);
    SetIntAttr(&node, "comm_type", CommType(comm.type));
    SetIntAttr(&node, "comm_size", static_cast<int64_t>(comm.bytes));
    return Emit(std::move(node), parents);
  }

 private:
  // The ids the parents stand for, in order, each once.
  static std::vector<uint64_t> Ids(std::initializer_list<const Ref*> parents) {
    std::vector<uint64_t> ids;
    for (const Ref* p : parents) {
      if (p == nullptr || !p->has_value()) continue;
      for (uint64_t id : **p) {
        bool seen = false;
        for (uint64_t have : ids) seen = seen || have == id;
        if (!seen) ids.push_back(id);
      }
    }
    return ids;
  }

  Ref Emit(Node node, std::initializer_list<const Ref*> parents) {
    for (uint64_t id : Ids(parents)) node.add_data_deps(id);
    out_->nodes.push_back(std::move(node));
    return std::vector<uint64_t>{next_id_++};
  }

  bool compatible_;
  TextWorkload* out_;
  uint64_t next_id_ = 0;
};

// Per-layer nodes the graph refers back to: within a pass, and from one pass to the next.
struct LayerRefs {
  Ref fwd_comp, fwd_comm, ig_comp, ig_comm, wg_comp, wg_comm;
};

// The graphs below are those Chakra's text converter builds for each parallelism (the README
// draws them); `n` layers, passes in order. `const Ref* none = nullptr` marks "no dependency".

void BuildMicro(const std::vector<Layer>& layers, int passes, GraphBuilder* g) {
  for (int p = 0; p < passes; ++p) {
    for (const Layer& l : layers) g->Collective(l.name, l.wg, {});
  }
}

void BuildData(const std::vector<Layer>& layers, int passes, GraphBuilder* g) {
  const size_t n = layers.size();
  std::vector<LayerRefs> r(n);
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      r[i].fwd_comp = g->Compute(layers[i], "FWD", layers[i].fwd_time,
                                 {i > 0 ? &r[i - 1].fwd_comp : nullptr, &r[i].wg_comm});
    }
    for (size_t k = 0; k < n; ++k) {  // backward, last layer first
      const size_t i = n - 1 - k;
      const Ref* after = k == 0 ? &r[n - 1].fwd_comp : &r[i + 1].ig_comp;
      Ref wg = g->Compute(layers[i], "BWD_WG", layers[i].wg_time, {after});
      r[i].wg_comm = g->Collective(layers[i].name, layers[i].wg, {&wg});
      if (i > 0) r[i].ig_comp = g->Compute(layers[i], "BWD_IG", layers[i].ig_time, {&wg});
    }
  }
}

// MODEL, HYBRID_DATA_MODEL and HYBRID_MODEL_DATA: every forward layer ends in its communication;
// backward, each layer's input-gradient step (then its communication, except on the first
// layer) and weight-gradient step; the hybrids also communicate weight gradients.
enum class Hybrid { kModel, kDataModel, kModelData };

void BuildModelOrHybrid(const std::vector<Layer>& layers, int passes, Hybrid kind,
                        GraphBuilder* g) {
  const size_t n = layers.size();
  std::vector<LayerRefs> r(n);
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      const Ref* previous = i > 0 ? &r[i - 1].fwd_comm : nullptr;
      Ref fwd = kind == Hybrid::kModel
                    ? g->Compute(layers[i], "FWD", layers[i].fwd_time, {previous, &r[i].wg_comp})
                    : g->Compute(layers[i], "FWD", layers[i].fwd_time, {&r[i].wg_comm, previous});
      r[i].fwd_comm = g->Collective(layers[i].name, layers[i].fwd, {&fwd});
    }
    for (size_t k = 0; k < n; ++k) {
      const size_t i = n - 1 - k;
      Ref ig = k == 0 ? g->Compute(layers[i], "BWD_IG", layers[i].ig_time, {&r[n - 1].fwd_comm})
                      : g->Compute(layers[i], "BWD_IG", layers[i].ig_time,
                                   {&r[i + 1].wg_comp, &r[i + 1].ig_comm});
      if (i > 0) {
        const std::string name =
            kind == Hybrid::kDataModel ? layers[i].name + "_IG_COMM_" : layers[i].name;
        r[i].ig_comm = g->Collective(name, layers[i].ig, {&ig});
      }
      r[i].wg_comp = g->Compute(layers[i], "BWD_WG", layers[i].wg_time, {&ig});
      if (kind != Hybrid::kModel) {
        r[i].wg_comm = g->Collective(layers[i].name, layers[i].wg, {&r[i].wg_comp});
      }
    }
  }
}

// HYBRID_DLRM: the embedding layer (layer 0) exchanges by all-to-all forward; the layer after
// the last bottom-MLP layer waits for that exchange; backward, the embedding's all-to-all follows
// that layer's input-gradient step and precedes the embedding's weight-gradient step. A layer's
// weight gradients are communicated unless NONE (Chakra writes no node for them either way).
void BuildDlrm(const std::vector<Layer>& layers, int passes, size_t last_bottom, GraphBuilder* g) {
  const size_t n = layers.size();
  std::vector<LayerRefs> r(n);
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      const Ref* updated = r[i].wg_comm ? &r[i].wg_comm : &r[i].wg_comp;
      r[i].fwd_comp = g->Compute(layers[i], "FWD", layers[i].fwd_time,
                                 {updated, i > 0 ? &r[i - 1].fwd_comp : nullptr,
                                  i == last_bottom ? &r[0].fwd_comm : nullptr});
      if (layers[i].fwd.type == "ALLTOALL") {
        r[i].fwd_comm = g->Collective(layers[i].name, layers[i].fwd, {&r[i].fwd_comp});
      }
    }
    for (size_t k = 0; k < n; ++k) {
      const size_t i = n - 1 - k;
      r[i].wg_comp = k == 0
                         ? g->Compute(layers[i], "BWD_WG", layers[i].wg_time, {&r[n - 1].fwd_comp})
                         : g->Compute(layers[i], "BWD_WG", layers[i].wg_time,
                                      {&r[i + 1].ig_comp, &r[i].ig_comm});
      if (!layers[i].wg.none()) {
        r[i].wg_comm = g->Collective(layers[i].name, layers[i].wg, {&r[i].wg_comp});
      }
      if (i > 0) {
        r[i].ig_comp = g->Compute(layers[i], "BWD_IG", layers[i].ig_time, {&r[i].wg_comp});
      }
      if (i == last_bottom + 1) {
        r[0].ig_comm = g->Collective(layers[0].name, layers[0].ig, {&r[i].ig_comp});
      }
    }
  }
}

Status LineError(const std::string& name, int line, const std::string& what) {
  return Status::Error(name + ":" + std::to_string(line) + ": " + what);
}

constexpr const char* kColumnNames[] = {
    "layer name",
    "reserved",
    "forward compute time",
    "forward communication type",
    "forward communication size",
    "input-gradient compute time",
    "input-gradient communication type",
    "input-gradient communication size",
    "weight-gradient compute time",
    "weight-gradient communication type",
    "weight-gradient communication size",
    "update time",
};
constexpr size_t kLayerColumns = sizeof(kColumnNames) / sizeof(kColumnNames[0]);

StatusOr<Layer> ParseLayer(const TextLine& t, const std::string& name) {
  if (t.columns.size() < kLayerColumns) {
    return LineError(name, t.number,
                     "a layer line has " + std::to_string(kLayerColumns) +
                         " columns (name reserved fwd_time fwd_type fwd_size ig_time ig_type "
                         "ig_size wg_time wg_type wg_size update); this one has " +
                         std::to_string(t.columns.size()));
  }
  Status problems;
  Layer layer;
  layer.name = t.columns[0];
  layer.line = t.number;
  auto count = [&](size_t c, uint64_t* out) {
    std::optional<uint64_t> v = ParseCount(t.columns[c]);
    if (v) {
      *out = *v;
      return;
    }
    problems.Merge(LineError(name, t.number,
                             "column " + std::to_string(c + 1) + " (" + kColumnNames[c] +
                                 ") of layer '" + layer.name + "' is '" + t.columns[c] +
                                 "'; expected a whole number from 0 to 2^63-1"));
  };
  auto comm = [&](size_t c, Comm* out) {
    out->type = t.columns[c];
    if (!KnownCommType(out->type)) {
      problems.Merge(LineError(name, t.number,
                               "column " + std::to_string(c + 1) + " (" + kColumnNames[c] +
                                   ") of layer '" + layer.name + "' is '" + out->type +
                                   "'; expected " + kCommTypes));
    }
    count(c + 1, &out->bytes);
  };
  count(2, &layer.fwd_time);
  comm(3, &layer.fwd);
  count(5, &layer.ig_time);
  comm(6, &layer.ig);
  count(8, &layer.wg_time);
  comm(9, &layer.wg);
  if (!problems.ok()) return problems;
  return layer;
}

// A text workload's first two lines: its parallelism (with DLRM's last bottom-MLP layer) and
// its layer count.
struct TextHead {
  std::string parallelism;
  bool dlrm = false;                    // HYBRID_DLRM or HYBRID_DLRM_ENHANCED
  std::optional<uint64_t> last_bottom;  // DLRM's last bottom-MLP layer
  uint64_t layers = 0;
  int parallelism_line = 0, count_line = 0;
};

// The head of the non-empty `lines` (at least one).
StatusOr<TextHead> ParseHead(const std::vector<TextLine>& lines, const std::string& name) {
  TextHead h;
  const TextLine& head = lines[0];
  h.parallelism = head.columns[0];
  h.parallelism_line = head.number;
  const std::string& par = h.parallelism;
  h.dlrm = par == "HYBRID_DLRM" || par == "HYBRID_DLRM_ENHANCED";
  if (!h.dlrm && par != "MICRO" && par != "DATA" && par != "MODEL" && par != "HYBRID_DATA_MODEL" &&
      par != "HYBRID_MODEL_DATA") {
    return LineError(name, head.number,
                     "the parallelism is '" + par + "'; expected " + kParallelisms +
                         " (the types Chakra's text converter reads; ASTRA-sim 1.0's others, "
                         "such as HYBRID_TRANSFORMER, it does not convert either)");
  }
  if (h.dlrm) {
    if (head.columns.size() < 2 || !(h.last_bottom = ParseCount(head.columns[1]))) {
      return LineError(name, head.number,
                       par + " needs the index of the last bottom-MLP layer after it, e.g. '" +
                           par + " 4'; got '" +
                           (head.columns.size() < 2 ? std::string() : head.columns[1]) + "'");
    }
  }
  if (lines.size() < 2) {
    return Status::Error(name + ": no layer count after line " + std::to_string(head.number) +
                         "; expected a line with the number of layers");
  }
  const TextLine& count_line = lines[1];
  h.count_line = count_line.number;
  std::optional<uint64_t> count = ParseCount(count_line.columns[0]);
  if (count_line.columns.size() != 1 || !count || *count < 1 || *count > 1000000) {
    std::string got;
    for (const std::string& c : count_line.columns) got += (got.empty() ? "" : " ") + c;
    return LineError(name, count_line.number,
                     "the number of layers is '" + got +
                         "'; expected one whole number from 1 "
                         "to 1000000");
  }
  h.layers = *count;
  return h;
}

// The layer lines after the head, as many as it says.
StatusOr<std::vector<Layer>> ParseLayers(const std::vector<TextLine>& lines, const TextHead& h,
                                         const std::string& name) {
  Status problems;
  std::vector<Layer> layers;
  for (size_t i = 2; i < lines.size(); ++i) {
    StatusOr<Layer> l = ParseLayer(lines[i], name);
    if (l.ok()) {
      layers.push_back(std::move(*l));
    } else {
      problems.Merge(l.status());
    }
  }
  if (!problems.ok()) return problems.Capped(10, name);
  if (layers.size() != h.layers) {
    return LineError(name, h.count_line,
                     "says " + std::to_string(h.layers) + " layers, but the file has " +
                         std::to_string(layers.size()) + " layer lines");
  }
  return layers;
}

// What a DLRM workload needs of its layers: the last bottom-MLP layer inside them, and
// forward all-to-alls only, layer 0's among them.
Status CheckDlrmLayers(const std::vector<Layer>& layers, const TextHead& h,
                       const std::string& name) {
  const std::string& par = h.parallelism;
  // Layer b's forward pass waits for layer 0's forward all-to-all: b = 0 would wait for its
  // own (Chakra's converter crashes on it), so the bottom MLP starts at layer 1.
  if (*h.last_bottom < 1 || *h.last_bottom + 2 > layers.size()) {
    return LineError(
        name, h.parallelism_line,
        "the last bottom-MLP layer is " + std::to_string(*h.last_bottom) + "; with " +
            std::to_string(layers.size()) + " layers expected " +
            (layers.size() >= 3 ? "1 to " + std::to_string(layers.size() - 2)
                                : std::string("none (at least 3 layers are needed)")) +
            " (layer 0 is the embeddings, whose forward all-to-all that layer waits for, "
            "and a layer must follow it)");
  }
  if (layers[0].fwd.type != "ALLTOALL") {
    return LineError(name, layers[0].line,
                     par + ": the forward communication of layer 0 ('" + layers[0].name +
                         "', the embeddings) is " + layers[0].fwd.type +
                         "; expected ALLTOALL, which the top layers wait for");
  }
  for (const Layer& l : layers) {
    if (!l.fwd.none() && l.fwd.type != "ALLTOALL") {
      return LineError(name, l.line,
                       par + ": the forward communication of layer '" + l.name + "' is " +
                           l.fwd.type +
                           "; this parallelism runs ALLTOALL or NONE forward "
                           "(Chakra's converter drops any other)");
    }
  }
  return Status::Ok();
}

// At most six nodes a layer and pass (three computes, three communications): refuse what
// would take gigabytes and fill a disk by mistake, as generate-llm does.
Status CheckNodeCount(size_t layers, int passes, const std::string& name) {
  const long double most_nodes = 6.0L * static_cast<long double>(layers) * passes;
  if (most_nodes > 5e7L) {
    return Status::Error(name + ": " + std::to_string(layers) + " layers x " +
                         std::to_string(passes) + " passes (--num-passes) could write up to " +
                         std::to_string(static_cast<int64_t>(most_nodes)) +
                         " nodes per NPU; expected at most 50000000: fewer passes");
  }
  return Status::Ok();
}

// The nodes of `passes` passes over `layers` under the head's parallelism.
void BuildGraph(const TextHead& h, const std::vector<Layer>& layers, int passes, GraphBuilder* g) {
  const std::string& par = h.parallelism;
  if (par == "MICRO") {
    BuildMicro(layers, passes, g);
  } else if (par == "DATA") {
    BuildData(layers, passes, g);
  } else if (par == "MODEL") {
    BuildModelOrHybrid(layers, passes, Hybrid::kModel, g);
  } else if (par == "HYBRID_DATA_MODEL") {
    BuildModelOrHybrid(layers, passes, Hybrid::kDataModel, g);
  } else if (par == "HYBRID_MODEL_DATA") {
    BuildModelOrHybrid(layers, passes, Hybrid::kModelData, g);
  } else {
    BuildDlrm(layers, passes, static_cast<size_t>(*h.last_bottom), g);
  }
}

}  // namespace

StatusOr<TextWorkload> ConvertTextWorkloadText(const std::string& text, const std::string& name,
                                               const TextWorkloadOptions& options) {
  if (options.num_passes < 1) {
    return Status::Invalid(name, "the number of passes", std::to_string(options.num_passes),
                           "a whole number >= 1");
  }
  std::vector<TextLine> lines;
  for (TextLine& t : SplitLines(text)) {
    if (!t.columns.empty()) lines.push_back(std::move(t));
  }
  if (lines.empty()) {
    return Status::Error(name +
                         ": empty; an ASTRA-sim 1.0 text workload starts with its "
                         "parallelism (" +
                         kParallelisms + ")");
  }
  StatusOr<TextHead> head = ParseHead(lines, name);
  if (!head.ok()) return head.status();
  StatusOr<std::vector<Layer>> layers = ParseLayers(lines, *head, name);
  if (!layers.ok()) return layers.status();
  if (head->dlrm) {
    if (Status dlrm = CheckDlrmLayers(*layers, *head, name); !dlrm.ok()) return dlrm;
  }
  TextWorkload w;
  w.chakra_compatible = options.chakra_compatible;
  w.parallelism = head->parallelism;
  w.layers = static_cast<int>(layers->size());
  auto* schema = w.metadata.add_attr();
  schema->set_name("schema");
  schema->set_string_val("1.0.2-chakra.1.0.0");
  auto* input = w.metadata.add_attr();
  input->set_name("input_file");
  input->set_string_val(text);
  if (Status fits = CheckNodeCount(layers->size(), options.num_passes, name); !fits.ok()) {
    return fits;
  }
  GraphBuilder g(options.chakra_compatible, &w);
  BuildGraph(*head, *layers, options.num_passes, &g);
  return w;
}

StatusOr<TextWorkload> ConvertTextWorkload(const std::string& path,
                                           const TextWorkloadOptions& options) {
  if (const std::string why = NotARegularFile(path); !why.empty()) return Status::Error(why);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(path + ": cannot read the text workload: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read error");
  return ConvertTextWorkloadText(text.str(), path, options);
}

Status WriteTextWorkload(const TextWorkload& workload, const std::string& prefix, int num_npus) {
  if (num_npus < 1) {
    return Status::Invalid("convert-text", "the number of NPUs", std::to_string(num_npus),
                           "a whole number >= 1");
  }
  const uint64_t per_npu = workload.nodes.size();
  for (int r = 0; r < num_npus; ++r) {
    StatusOr<TraceWriter> writer = TraceWriter::Open(RankTracePath(prefix, r), workload.metadata);
    if (!writer.ok()) return writer.status();
    const uint64_t shift = workload.chakra_compatible ? per_npu * static_cast<uint64_t>(r) : 0;
    for (const Node& node : workload.nodes) {
      Status s;
      if (shift == 0) {
        s = writer->Write(node);
      } else {
        Node moved = node;
        moved.set_id(node.id() + shift);
        for (int d = 0; d < moved.data_deps_size(); ++d) {
          moved.set_data_deps(d, moved.data_deps(d) + shift);
        }
        s = writer->Write(moved);
      }
      if (!s.ok()) return s;
    }
    Status s = writer->Close();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace et
}  // namespace orrery

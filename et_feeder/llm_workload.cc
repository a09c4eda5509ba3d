#include "et_feeder/llm_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "et_feeder/llm_compute.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

struct Preset {
  const char* name;
  const char* what;
  int64_t layers, hidden, heads, kv_heads, ffn_hidden;
  Mlp mlp;
  int64_t vocab, seq_length;
  int64_t experts = 0, top_k = 0;
};

// Published shapes: GPT-3 (Brown et al., 2020, table 2.1; GPT-2's BPE vocabulary), Llama 2
// (Touvron et al., 2023; the released models' config.json), Llama 3 (Meta, 2024; config.json),
// Mixtral 8x7B (Jiang et al., 2024; config.json: 8 experts, 2 per token).
constexpr Preset kPresets[] = {
    {"gpt3-13b", "GPT-3 13B", 40, 5120, 40, 40, 20480, Mlp::kGelu, 50257, 2048},
    {"gpt3-175b", "GPT-3 175B", 96, 12288, 96, 96, 49152, Mlp::kGelu, 50257, 2048},
    {"llama2-7b", "Llama 2 7B", 32, 4096, 32, 32, 11008, Mlp::kSwiglu, 32000, 4096},
    {"llama2-70b", "Llama 2 70B", 80, 8192, 64, 8, 28672, Mlp::kSwiglu, 32000, 4096},
    {"llama3-8b", "Llama 3 8B", 32, 4096, 32, 8, 14336, Mlp::kSwiglu, 128256, 8192},
    {"llama3-70b", "Llama 3 70B", 80, 8192, 64, 8, 28672, Mlp::kSwiglu, 128256, 8192},
    {"mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 32, 8, 14336, Mlp::kSwiglu, 32000, 4096, 8, 2},
};

// Megatron-LM pads the vocabulary so every tensor-parallel shard is a multiple of 128 entries.
constexpr int64_t kVocabMultiple = 128;
// Adam with fp32 master weights and moments, per parameter: FLOPs (two moment updates, two bias
// corrections, the square root, division and update) and bytes (gradient, master weight and the
// two moments read; master weight, moments and the working-precision copy written).
constexpr int64_t kAdamFlopsPerParam = 13;

// "3.96e+17": a count too large to write out.
std::string FormatCount(long double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3Lg", v);
  return buf;
}
constexpr int64_t kAdamStateBytes = 4 * 3 + 4 * 3;  // + gradient read + parameter written
// Vocabulary-parallel cross entropy all-reduces three fp32 values per token (the logits' maximum,
// the target's logit, the sum of exponentials).
constexpr int kCrossEntropyAllReduces = 3;
constexpr int64_t kCrossEntropyBytesPerToken = 4;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The MLP width when none is given: 4h for GELU (GPT), 8h/3 up to a multiple of 256 for SwiGLU
// (Llama).
int64_t DefaultFfnHidden(Mlp mlp, int64_t hidden) {
  return mlp == Mlp::kGelu ? 4 * hidden : CeilDiv(8 * hidden / 3, 256) * 256;
}

// The GEMM X[m×k]·W[k×n]: FLOPs 2mkn, bytes (mk + kn + mn)·e (each operand read once, the result
// written once).
Work Gemm(int64_t m, int64_t k, int64_t n, int64_t e) {
  return {2 * m * k * n, (m * k + k * n + m * n) * e, m, k, n};
}

// One layer's forward work per tensor-parallel rank, per micro-batch. With experts, fc1 and fc2
// are the rank's local experts' (a grouped product over the tokens routed to them, reading every
// local expert's weights) and the router scores the rank's tokens.
struct LayerWork {
  Work qkv, attention, projection, fc1, fc2, router;
};

// Tokens a rank holds outside the tensor-parallel products: the micro-batch's, or 1/tp of them
// with sequence parallelism.
int64_t LocalTokens(const LlmConfig& c) { return RankTokens(c) / (c.sequence_parallel ? c.tp : 1); }

LayerWork LayerWorkOf(const LlmConfig& c, const LlmShape& s) {
  const int64_t tokens = RankTokens(c);
  const int64_t e = c.element_bytes;
  const int64_t qkv_width = s.head_dim * (c.heads + 2 * c.kv_heads) / c.tp;
  LayerWork w;
  w.qkv = Gemm(tokens, c.hidden, qkv_width, e);
  // Q·Kᵀ and the scores times V: 2·b·s²·h each over the rank's heads (with context parallelism
  // the rank's s/cp queries against all s keys); as flash attention, the bytes are Q, K and V
  // read and the context written (no s² matrix in memory).
  w.attention.flops = 4 * tokens * c.seq_length * c.hidden / c.tp;
  w.attention.bytes = tokens * (qkv_width + c.hidden / c.tp) * e;
  w.projection = Gemm(tokens, c.hidden / c.tp, c.hidden, e);
  const int64_t gates = c.mlp == Mlp::kSwiglu ? 2 : 1;
  if (c.experts == 0) {
    w.fc1 = Gemm(tokens, c.hidden, gates * c.ffn_hidden / c.tp, e);
    w.fc2 = Gemm(tokens, c.ffn_hidden / c.tp, c.hidden, e);
    return w;
  }
  // An even share of the routed tokens per expert: the ep ranks of a group send each other
  // top-k copies of their tokens, and the tensor-parallel ranks of an expert gather theirs, so
  // each rank's experts take top-k times its micro-batch's tokens, their widths over tp.
  const int64_t routed = tokens * c.moe_top_k;
  const int64_t f = ExpertFfn(c);
  const int64_t local = c.experts / c.ep;
  w.fc1 = Gemm(routed, c.hidden, gates * f / c.tp, e);
  w.fc1.bytes += (local - 1) * c.hidden * gates * f / c.tp * e;
  w.fc2 = Gemm(routed, f / c.tp, c.hidden, e);
  w.fc2.bytes += (local - 1) * f / c.tp * c.hidden * e;
  w.router = Gemm(LocalTokens(c), c.hidden, c.experts, e);
  return w;
}

Work HeadWorkOf(const LlmConfig& c, const LlmShape& s) {
  return Gemm(RankTokens(c), c.hidden, s.padded_vocab / c.tp, c.element_bytes);
}

// The communicator groups, numbered from 1 in this order: tensor-parallel group of (stage,
// replica); data-parallel group of (stage, tp rank); with experts, the expert-parallel group of
// (stage, tp rank, replica / ep): ep consecutive replicas, Megatron-Core's layout; and the
// expert-data-parallel group of (stage, tp rank, replica mod ep): the dp / ep replicas holding the
// same experts. Only groups of two or more NPUs exist.
int64_t ExpertDp(const LlmConfig& c) { return c.dp / c.ep; }
bool HasTpGroups(const LlmConfig& c) { return c.tp > 1; }
bool HasDpGroups(const LlmConfig& c) { return Replicas(c) > 1; }
bool HasCpGroups(const LlmConfig& c) { return c.cp > 1; }
bool HasEpGroups(const LlmConfig& c) { return c.experts > 0 && c.ep > 1; }
bool HasExpertDpGroups(const LlmConfig& c) { return c.experts > 0 && ExpertDp(c) > 1; }
// The first id of each kind: after every group of the kinds before it.
int64_t FirstDpGroup(const LlmConfig& c) { return 1 + (HasTpGroups(c) ? c.pp * Replicas(c) : 0); }
int64_t FirstEpGroup(const LlmConfig& c) {
  return FirstDpGroup(c) + (HasDpGroups(c) ? c.pp * c.tp : 0);
}
// Context-parallel groups (none with experts): after the data-parallel ones, one per (stage,
// data-parallel replica, tp rank).
int64_t FirstCpGroup(const LlmConfig& c) { return FirstEpGroup(c); }
int64_t CpGroup(const LlmConfig& c, int64_t stage, int64_t tp_rank, int64_t replica) {
  return FirstCpGroup(c) + (stage * c.dp + replica / c.cp) * c.tp + tp_rank;
}
int64_t FirstExpertDpGroup(const LlmConfig& c) {
  return FirstEpGroup(c) + (HasEpGroups(c) ? c.pp * c.tp * ExpertDp(c) : 0);
}
int64_t TpGroup(const LlmConfig& c, int64_t stage, int64_t replica) {
  return 1 + stage * Replicas(c) + replica;
}
int64_t DpGroup(const LlmConfig& c, int64_t stage, int64_t tp_rank) {
  return FirstDpGroup(c) + stage * c.tp + tp_rank;
}
int64_t EpGroup(const LlmConfig& c, int64_t stage, int64_t tp_rank, int64_t replica) {
  return FirstEpGroup(c) + (stage * c.tp + tp_rank) * ExpertDp(c) + replica / c.ep;
}
int64_t ExpertDpGroup(const LlmConfig& c, int64_t stage, int64_t tp_rank, int64_t replica) {
  return FirstExpertDpGroup(c) + (stage * c.tp + tp_rank) * c.ep + replica % c.ep;
}

using Group = LlmGroup;
std::vector<Group> GroupsOf(const LlmConfig& c) {
  std::vector<Group> groups;
  if (c.tp > 1) {
    for (int64_t stage = 0; stage < c.pp; ++stage) {
      for (int64_t replica = 0; replica < Replicas(c); ++replica) {
        Group g{TpGroup(c, stage, replica), {}};
        for (int64_t t = 0; t < c.tp; ++t) {
          g.ranks.push_back((stage * Replicas(c) + replica) * c.tp + t);
        }
        groups.push_back(std::move(g));
      }
    }
  }
  // Groups of data-parallel replicas of one (stage, tp rank): `count` of them, replica r in the
  // i-th when member(r, i); `id` names it by its stage, tp rank and first replica.
  auto replica_groups = [&](int64_t count, auto member, auto id) {
    for (int64_t stage = 0; stage < c.pp; ++stage) {
      for (int64_t t = 0; t < c.tp; ++t) {
        for (int64_t i = 0; i < count; ++i) {
          Group g{0, {}};
          for (int64_t replica = 0; replica < Replicas(c); ++replica) {
            if (member(replica, i)) g.ranks.push_back((stage * Replicas(c) + replica) * c.tp + t);
          }
          g.id = id(stage, t, g.ranks.front() / c.tp % Replicas(c));
          groups.push_back(std::move(g));
        }
      }
    }
  };
  if (HasDpGroups(c)) {
    replica_groups(
        1, [](int64_t, int64_t) { return true; },
        [&](int64_t stage, int64_t t, int64_t) { return DpGroup(c, stage, t); });
  }
  if (HasCpGroups(c)) {  // cp consecutive replicas: one data-parallel replica's sequence
    replica_groups(
        c.dp, [&](int64_t r, int64_t i) { return r / c.cp == i; },
        [&](int64_t stage, int64_t t, int64_t r) { return CpGroup(c, stage, t, r); });
  }
  if (HasEpGroups(c)) {  // ep consecutive replicas
    replica_groups(
        ExpertDp(c), [&](int64_t r, int64_t i) { return r / c.ep == i; },
        [&](int64_t stage, int64_t t, int64_t r) { return EpGroup(c, stage, t, r); });
  }
  if (HasExpertDpGroups(c)) {  // the replicas of one residue mod ep
    replica_groups(
        c.ep, [&](int64_t r, int64_t i) { return r % c.ep == i; },
        [&](int64_t stage, int64_t t, int64_t r) { return ExpertDpGroup(c, stage, t, r); });
  }
  return groups;
}

// The order of a stage's forward (F) and backward (B) passes over the micro-batches, and with
// virtual stages over its model chunks.
struct Pass {
  bool forward;
  int64_t micro_batch;
  int64_t chunk;  // the stage's model chunk: virtual stage chunk·pp + stage
};
std::vector<Pass> ScheduleOf(const LlmConfig& c, int64_t stage) {
  const int64_t m = c.micro_batches;
  std::vector<Pass> order;
  if (c.schedule == PipelineSchedule::kGpipe) {
    for (int64_t i = 0; i < m; ++i) order.push_back({true, i, 0});
    for (int64_t i = 0; i < m; ++i) order.push_back({false, i, 0});
    return order;
  }
  // 1F1B (PipeDream-Flush, Megatron-LM's default): stage k runs its warm-up forward passes,
  // then alternates one forward and one backward, then drains the backward passes. Megatron-LM's
  // interleaved schedule (schedules.py, forward_backward_pipelining_with_interleaving) counts
  // m·v passes each way: the i-th runs micro-batch (i / (pp·v))·pp + i mod pp on chunk
  // (i mod (pp·v)) / pp, backward passes on the chunks in reverse; the warm-up is
  // 2·(pp − k − 1) + (v − 1)·pp of them (all when m = pp). With v = 1 this is plain 1F1B:
  // pp − k − 1 warm-up passes, micro-batches in order.
  const int64_t v = c.virtual_stages;
  const int64_t total = m * v;
  const int64_t group = c.pp * v;
  auto micro_batch = [&](int64_t i) { return v == 1 ? i : (i / group) * c.pp + i % c.pp; };
  auto chunk = [&](int64_t i, bool forward) {
    const int64_t j = (i % group) / c.pp;
    return v == 1 ? 0 : (forward ? j : v - 1 - j);
  };
  int64_t warmup = std::min(c.pp - stage - 1, m);
  if (v > 1) warmup = m == c.pp ? total : std::min(2 * (c.pp - stage - 1) + (v - 1) * c.pp, total);
  for (int64_t i = 0; i < warmup; ++i) order.push_back({true, micro_batch(i), chunk(i, true)});
  for (int64_t i = 0; i < total - warmup; ++i) {
    order.push_back({true, micro_batch(warmup + i), chunk(warmup + i, true)});
    order.push_back({false, micro_batch(i), chunk(i, false)});
  }
  for (int64_t i = total - warmup; i < total; ++i) {
    order.push_back({false, micro_batch(i), chunk(i, false)});
  }
  return order;
}

// Message tags: two per micro-batch and virtual stage boundary.
int32_t ForwardTag(const LlmConfig& c, int64_t micro_batch, int64_t from_virtual_stage) {
  return static_cast<int32_t>((micro_batch * c.pp * c.virtual_stages + from_virtual_stage) * 2);
}
int32_t BackwardTag(const LlmConfig& c, int64_t micro_batch, int64_t to_virtual_stage) {
  return static_cast<int32_t>((micro_batch * c.pp * c.virtual_stages + to_virtual_stage) * 2 + 1);
}

class RankBuilder {
 public:
  RankBuilder(const LlmConfig& c, int64_t rank)
      : c_(c),
        s_(ShapeOf(c)),
        layer_(LayerWorkOf(c, s_)),
        head_(HeadWorkOf(c, s_)),
        rank_(rank),
        tp_rank_(rank % c.tp),
        replica_((rank / c.tp) % Replicas(c)),
        stage_(rank / (c.tp * Replicas(c))) {}

  std::vector<Node> Build() {
    const std::vector<Group> groups = GroupsOf(c_);
    if (!groups.empty() && c_.metadata_node) {
      nodes_.push_back(
          MakeMetadataNode(next_id_++, "process_group:init", ProcessGroupsInputs(groups)));
    }
    GatherParamsAtStart();
    for (const Pass& p : ScheduleOf(c_, stage_)) {
      if (p.forward) {
        Forward(p.micro_batch, p.chunk);
      } else {
        Backward(p.micro_batch, p.chunk);
      }
    }
    FinishStep();
    return std::move(nodes_);
  }

 private:
  // Virtual stage vs = chunk·pp + stage holds layers [vs·n, (vs + 1)·n) of n = layers_per_chunk
  // (with --first/last-stage-layers, the first and last their own count: LlmShape::ChunkLayers);
  // the first holds the embedding, the last the LM head. Its neighbours are on stages
  // (stage ± 1) mod pp (the last stage's chunk j hands on to the first stage's chunk j + 1).
  int64_t VirtualStage(int64_t chunk) const { return chunk * c_.pp + stage_; }
  bool first_virtual_stage(int64_t vs) const { return vs == 0; }
  bool last_virtual_stage(int64_t vs) const { return vs == c_.pp * c_.virtual_stages - 1; }
  bool last_micro_batch(int64_t m) const { return m == c_.micro_batches - 1; }
  // The rank of this one's tensor-parallel rank and replica on the stage of virtual stage vs.
  int64_t Peer(int64_t vs) const { return rank_ + (vs % c_.pp - stage_) * Replicas(c_) * c_.tp; }
  std::string PassName(const char* pass, int64_t m, int64_t chunk) const {
    return pass + std::string("_mb") + std::to_string(m) +
           (c_.virtual_stages > 1 ? "_chunk" + std::to_string(chunk) : "");
  }

  // Makes `node` wait for the previous node of the stream of work and whatever is pending.
  void AfterWork(Node* node) const {
    if (last_ != kNone) AddDataDeps(node, {last_});
    for (uint64_t d : pending_) AddDataDeps(node, {d});
  }
  // A node on the stream of work: after the previous one and whatever is pending (a receive).
  Node& Chained(Node node) {
    AfterWork(&node);
    pending_.clear();
    last_ = node.id();
    // A collective running beside this node (TpBeside) is waited for by the next one.
    if (beside_ != kNone && node.type() == ChakraProtoMsg::COMP_NODE) {
      pending_.push_back(beside_);
      beside_ = kNone;
    }
    nodes_.push_back(std::move(node));
    return nodes_.back();
  }

  // A compute node of `times` w's work; its duration the physical model's `physical` seconds
  // when there is one (LlmConfig::gpu), else the roofline of the work.
  uint64_t Compute(const std::string& name, Work w, int64_t times = 1, double physical = -1) {
    const int64_t flops = w.flops * times, bytes = w.bytes * times;
    const double seconds = c_.gpu && physical >= 0
                               ? physical
                               : std::max(static_cast<double>(flops) / (c_.peak_tflops * 1e12),
                                          static_cast<double>(bytes) / (c_.mem_bw_gbps * 1e9));
    Node n = MakeCompNode(next_id_++, name, static_cast<uint64_t>(std::llround(seconds * 1e6)));
    SetIntAttr(&n, "num_ops", flops);
    SetIntAttr(&n, "tensor_size", bytes);
    return Chained(std::move(n)).id();
  }

  // Physical seconds of a GEMM pass or attention (-1 without a GPU model: the roofline then).
  double Gemm(const Work& w, GemmPass pass, bool fp8_capable = true) const {
    return c_.gpu ? GemmSeconds(c_, w, pass, fp8_capable) : -1;
  }
  double Attn(bool backward, double share = 1) const {
    return c_.gpu ? AttentionSeconds(c_, layer_.attention, backward, share) : -1;
  }
  // Memory-bound work as a node of its own, with a GPU model only (the roofline's traces keep
  // their nodes).
  void MemoryBound(const std::string& name, const Elementwise& e) {
    if (!c_.gpu) return;
    Compute(name, {0, static_cast<int64_t>(e.bytes)}, 1, e.Seconds(*c_.gpu));
  }
  // With --tp-comm-overlap, a tensor-parallel collective runs beside the next compute node (it
  // starts after the node before, and the node after waits for both); without it, in line.
  void TpBeside(Node n) {
    if (!c_.tp_comm_overlap) {
      Chained(std::move(n));
      return;
    }
    AfterWork(&n);
    beside_ = n.id();
    nodes_.push_back(std::move(n));
  }

  // A collective of a communication stream: every collective of a stream waits for the one
  // before it, so the members of every group issue theirs in one order (NCCL's one stream per
  // communicator; with one stream, no two collectives race for one communication slot).
  Node MakeCollective(const std::string& name, ChakraProtoMsg::CollectiveCommType type,
                      int64_t bytes, int64_t group, bool data_parallel) {
    Node n = MakeCollNode(next_id_++, name, type, static_cast<uint64_t>(bytes));
    SetStringAttr(&n, "pg_name", std::to_string(group));
    uint64_t& last = data_parallel && c_.comm_streams == 2 ? last_dp_collective_ : last_collective_;
    if (last != kNone) AddDataDeps(&n, {last});
    last = n.id();
    return n;
  }
  // On the critical stream (tensor parallelism): the next compute waits for it.
  Node TpNode(const std::string& name, ChakraProtoMsg::CollectiveCommType type, int64_t bytes) {
    return MakeCollective(name, type, bytes, TpGroup(c_, stage_, replica_),
                          /*data_parallel=*/false);
  }
  void TpCollective(const std::string& name, ChakraProtoMsg::CollectiveCommType type,
                    int64_t bytes) {
    if (c_.tp > 1) Chained(TpNode(name, type, bytes));
  }
  void TpAllReduce(const std::string& name, int64_t bytes) {
    TpCollective(name + "_allreduce", ChakraProtoMsg::ALL_REDUCE, bytes);
  }
  // Where Megatron-LM all-reduces a row-parallel product's output (or, with sequence
  // parallelism, reduce-scatters it over the sequence) and where a column-parallel product
  // all-gathers its input over the sequence (nothing without sequence parallelism); call only
  // with tp > 1.
  Node ReduceNode(const std::string& name) {
    return c_.sequence_parallel
               ? TpNode(name + "_reducescatter", ChakraProtoMsg::REDUCE_SCATTER,
                        s_.activation_bytes)
               : TpNode(name + "_allreduce", ChakraProtoMsg::ALL_REDUCE, s_.activation_bytes);
  }
  Node GatherNode(const std::string& name) {
    return TpNode(name + "_allgather", ChakraProtoMsg::ALL_GATHER, s_.activation_bytes / c_.tp);
  }
  bool gathers() const { return c_.sequence_parallel && c_.tp > 1; }
  void TpReduce(const std::string& name) {
    if (c_.tp > 1) Chained(ReduceNode(name));
  }
  void TpGather(const std::string& name) {
    if (gathers()) TpBeside(GatherNode(name));
  }
  // A row-parallel product and the reduction of its output: with --tp-comm-overlap the
  // reduce-scatter runs beside it.
  void RowParallel(const std::string& name, const std::string& reduce, Work w, double physical) {
    if (c_.tp > 1 && c_.tp_comm_overlap) {
      TpBeside(ReduceNode(reduce));
      Compute(name, w, 1, physical);
      return;
    }
    Compute(name, w, 1, physical);
    TpReduce(reduce);
  }
  // The experts' all-to-all among the expert-parallel group, on the critical stream.
  void EpAllToAll(const std::string& name) {
    if (c_.ep == 1) return;
    Chained(MakeCollective(name, ChakraProtoMsg::ALL_TO_ALL, s_.dispatch_bytes,
                           EpGroup(c_, stage_, tp_rank_, replica_), /*data_parallel=*/false));
  }

  // The backward pass of a column-parallel product (Megatron-LM's
  // LinearWithGradAccumulationAndAsyncCommunication): the input gradient, then the weight
  // gradient while the input gradient is all-reduced over the tensor-parallel ranks
  // (reduce-scattered over the sequence with sequence parallelism, which first all-gathers the
  // product's input again for the weight gradient, beside the input gradient). The next compute
  // waits for both. Returns the weight gradient's node.
  uint64_t ColumnParallelBackward(const std::string& name, Work w, bool fp8_capable = true) {
    uint64_t gather = kNone;
    if (gathers()) {
      Node n = GatherNode(name + "_input");
      AfterWork(&n);
      gather = n.id();
      nodes_.push_back(std::move(n));
    }
    const uint64_t input_grad =
        Compute(name + "_dgrad", w, 1, Gemm(w, GemmPass::kInputGrad, fp8_capable));
    if (gather != kNone) pending_.push_back(gather);
    const uint64_t weight_grad =
        Compute(name + "_wgrad", w, 1, Gemm(w, GemmPass::kWeightGrad, fp8_capable));
    if (c_.tp > 1) {
      Node n = ReduceNode(name);
      AddDataDeps(&n, {input_grad});
      pending_.push_back(n.id());
      nodes_.push_back(std::move(n));
    }
    return weight_grad;
  }

  // Off the critical stream (data parallelism): after `after`, waited for by the optimizer.
  void DpCollective(const std::string& name, ChakraProtoMsg::CollectiveCommType type, int64_t bytes,
                    int64_t group, uint64_t after) {
    Node n = MakeCollective(name, type, bytes, group, /*data_parallel=*/true);
    AddDataDeps(&n, {after});
    nodes_.push_back(std::move(n));
  }

  // A bucket of gradients ready for data-parallel reduction: over the data-parallel group, or
  // for experts' weights the expert-data-parallel one.
  void ReduceGradients(const std::string& what, int64_t params, uint64_t after,
                       bool experts = false) {
    const int64_t replicas = experts ? ExpertDp(c_) : Replicas(c_);
    const int64_t group = replicas == 1 ? 0
                          : experts     ? ExpertDpGroup(c_, stage_, tp_rank_, replica_)
                                        : DpGroup(c_, stage_, tp_rank_);
    buckets_.push_back({what, params, replicas, group});
    if (replicas == 1) return;
    if (c_.distributed_optimizer) {
      DpCollective("grad_reduce_scatter_" + what, ChakraProtoMsg::REDUCE_SCATTER,
                   params * c_.grad_bytes, group, after);
    } else {
      DpCollective("grad_allreduce_" + what, ChakraProtoMsg::ALL_REDUCE, params * c_.grad_bytes,
                   group, after);
    }
  }

  // Sends what the stream of work produced, once whatever is pending is done too: a backward
  // send carries the input gradient that tensor parallelism's reduction (pending) completes.
  // The pending nodes stay pending for the next node of the stream, as before the send.
  void Send(const std::string& name, int64_t to_virtual_stage, int32_t tag) {
    Node n = MakeSendNode(next_id_++, static_cast<int32_t>(Peer(to_virtual_stage)),
                          static_cast<uint64_t>(s_.hand_off_bytes), tag);
    AfterWork(&n);
    n.set_name(name);
    nodes_.push_back(std::move(n));
  }
  void Receive(const std::string& name, int64_t from_virtual_stage, int32_t tag) {
    Node n = MakeRecvNode(next_id_++, static_cast<int32_t>(Peer(from_virtual_stage)),
                          static_cast<uint64_t>(s_.hand_off_bytes), tag);
    n.set_name(name);
    pending_.push_back(n.id());
    nodes_.push_back(std::move(n));
  }

  // Layers of virtual stage vs: an even share, or the first or last stage's own count.
  int64_t LayersIn(int64_t vs) const { return s_.ChunkLayers(vs); }
  int64_t FirstLayerIn(int64_t vs) const { return s_.ChunkFirstLayer(vs); }

  // Attention, and with context parallelism the ring exchange of keys and values (an all-gather
  // of the rank's K and V over its context-parallel group) beside the rank's own block; the rest
  // waits for it. Backward also returns the key and value gradients to their ranks (a
  // reduce-scatter), which the next product waits for.
  void Attention(const std::string& p, bool backward) {
    const int64_t times = backward ? 2 : 1;
    if (c_.cp == 1) {
      Compute(p + "_attention", layer_.attention, times, Attn(backward));
      return;
    }
    const int64_t kv_bytes =
        RankTokens(c_) * 2 * c_.kv_heads * s_.head_dim / c_.tp * c_.element_bytes;
    const int64_t group = CpGroup(c_, stage_, tp_rank_, replica_);
    Node gather = MakeCollective(p + "_kv_allgather", ChakraProtoMsg::ALL_GATHER, kv_bytes, group,
                                 /*data_parallel=*/false);
    AfterWork(&gather);
    const uint64_t gathered = gather.id();
    nodes_.push_back(std::move(gather));
    Work own = layer_.attention, rest = layer_.attention;
    own.flops /= c_.cp;
    own.bytes /= c_.cp;
    rest.flops -= own.flops;
    rest.bytes -= own.bytes;
    const double share = 1.0 / static_cast<double>(c_.cp);
    const uint64_t first = Compute(p + "_attention_own", own, times, Attn(backward, share));
    pending_.push_back(gathered);
    Compute(p + "_attention_ring", rest, times, Attn(backward, 1 - share));
    if (!backward) return;
    Node reduce = MakeCollective(p + "_dkv_reducescatter", ChakraProtoMsg::REDUCE_SCATTER,
                                 kv_bytes * c_.cp, group, /*data_parallel=*/false);
    AddDataDeps(&reduce, {first});
    pending_.push_back(reduce.id());
    nodes_.push_back(std::move(reduce));
  }

  // With --overlap-param-gather, the step starts by all-gathering every layer's parameters (the
  // distributed optimizer's shards), each layer's first forward waiting for its own.
  void GatherParamsAtStart() {
    if (!(c_.overlap_param_gather && c_.distributed_optimizer && Replicas(c_) > 1)) return;
    const int64_t group = DpGroup(c_, stage_, tp_rank_);
    const int64_t replicas = Replicas(c_);
    auto gather = [&](const std::string& what, int64_t params) {
      Node n = MakeCollective("param_all_gather_" + what, ChakraProtoMsg::ALL_GATHER,
                              CeilDiv(params, replicas) * c_.element_bytes, group,
                              /*data_parallel=*/true);
      if (last_ != kNone) AddDataDeps(&n, {last_});
      const uint64_t id = n.id();
      nodes_.push_back(std::move(n));
      return id;
    };
    for (int64_t chunk = 0; chunk < c_.virtual_stages; ++chunk) {
      const int64_t vs = VirtualStage(chunk);
      if (first_virtual_stage(vs)) gather("embedding", s_.embedding_params);
      for (int64_t l = 0; l < LayersIn(vs); ++l) {
        const int64_t layer = FirstLayerIn(vs) + l;
        param_gathers_[layer] = gather("layer" + std::to_string(layer), s_.layer_params);
      }
      if (last_virtual_stage(vs)) gather("lm_head", s_.head_params);
    }
  }
  void WaitForParams(int64_t layer) {
    const auto g = param_gathers_.find(layer);
    if (g == param_gathers_.end()) return;
    pending_.push_back(g->second);
    param_gathers_.erase(g);
  }

  void LayerForward(const std::string& pass, int64_t m, int64_t layer) {
    const std::string p = pass + "_mb" + std::to_string(m) + "_layer" + std::to_string(layer);
    WaitForParams(layer);
    TpGather(p + "_attention");
    Compute(p + "_qkv", layer_.qkv, 1, Gemm(layer_.qkv, GemmPass::kForward));
    Attention(p, /*backward=*/false);
    RowParallel(p + "_projection", p + "_attention", layer_.projection,
                Gemm(layer_.projection, GemmPass::kForward));
    MemoryBound(p + "_elementwise", LayerElementwise(c_, false));
    if (c_.experts == 0) {
      TpGather(p + "_mlp");
      Compute(p + "_fc1", layer_.fc1, 1, Gemm(layer_.fc1, GemmPass::kForward));
      RowParallel(p + "_fc2", p + "_mlp", layer_.fc2, Gemm(layer_.fc2, GemmPass::kForward));
      return;
    }
    // Megatron-Core's all-to-all token dispatcher: route, send each token to its experts' ranks,
    // gather the expert's tokens over its tensor-parallel ranks, run the experts, and back.
    Compute(p + "_router", layer_.router, 1, Gemm(layer_.router, GemmPass::kForward, false));
    EpAllToAll(p + "_dispatch_alltoall");
    TpCollective(p + "_experts_allgather", ChakraProtoMsg::ALL_GATHER, s_.dispatch_bytes);
    Compute(p + "_experts_fc1", layer_.fc1, 1, Gemm(layer_.fc1, GemmPass::kForward));
    Compute(p + "_experts_fc2", layer_.fc2, 1, Gemm(layer_.fc2, GemmPass::kForward));
    TpCollective(p + "_experts_reducescatter", ChakraProtoMsg::REDUCE_SCATTER,
                 s_.dispatch_bytes * c_.tp);
    EpAllToAll(p + "_combine_alltoall");
  }

  void Forward(int64_t m, int64_t chunk) {
    const std::string p = PassName("fwd", m, chunk);
    const int64_t vs = VirtualStage(chunk);
    if (first_virtual_stage(vs)) {
      TpReduce(p + "_embedding");
    } else {
      Receive(p + "_recv_activations", vs - 1, ForwardTag(c_, m, vs - 1));
    }
    for (int64_t l = 0; l < LayersIn(vs); ++l) LayerForward("fwd", m, FirstLayerIn(vs) + l);
    if (last_virtual_stage(vs)) {
      TpGather(p + "_lm_head");
      Compute(p + "_lm_head", head_, 1, Gemm(head_, GemmPass::kForward, false));
      MemoryBound(p + "_cross_entropy", HeadElementwise(c_, s_.padded_vocab, false));
      for (int i = 0; i < kCrossEntropyAllReduces; ++i) {
        TpAllReduce(p + "_cross_entropy" + std::to_string(i),
                    RankTokens(c_) * kCrossEntropyBytesPerToken);
      }
    } else {
      Send(p + "_send_activations", vs + 1, ForwardTag(c_, m, vs));
    }
  }

  void Backward(int64_t m, int64_t chunk) {
    const std::string p = PassName("bwd", m, chunk);
    const int64_t vs = VirtualStage(chunk);
    const bool reduce = last_micro_batch(m) && c_.grad_sync == GradSync::kPerLayer;
    if (last_virtual_stage(vs)) {
      // Input and weight gradients of each product: each as much work as its forward.
      MemoryBound(p + "_cross_entropy", HeadElementwise(c_, s_.padded_vocab, true));
      const uint64_t head = ColumnParallelBackward(p + "_lm_head", head_, false);
      if (reduce) ReduceGradients("lm_head", s_.head_params, head);
    } else {
      Receive(p + "_recv_gradients", vs + 1, BackwardTag(c_, m, vs));
    }
    for (int64_t l = LayersIn(vs) - 1; l >= 0; --l) {
      const int64_t layer = FirstLayerIn(vs) + l;
      if (c_.recompute) LayerForward("recompute", m, layer);
      const std::string q = "bwd_mb" + std::to_string(m) + "_layer" + std::to_string(layer);
      // Each product's backward: its input and weight gradients, twice its forward work; the
      // collectives of the forward pass in reverse, each as its adjoint (an all-gather's is a
      // reduce-scatter and the other way round, an all-to-all's an all-to-all).
      uint64_t experts_done = kNone;
      if (c_.experts == 0) {
        TpGather(q + "_mlp");
        Compute(q + "_fc2", layer_.fc2, 2, Gemm(layer_.fc2, GemmPass::kBackward));
        ColumnParallelBackward(q + "_fc1", layer_.fc1);
      } else {
        EpAllToAll(q + "_combine_alltoall");
        TpCollective(q + "_experts_allgather", ChakraProtoMsg::ALL_GATHER, s_.dispatch_bytes);
        Compute(q + "_experts_fc2", layer_.fc2, 2, Gemm(layer_.fc2, GemmPass::kBackward));
        experts_done =
            Compute(q + "_experts_fc1", layer_.fc1, 2, Gemm(layer_.fc1, GemmPass::kBackward));
        TpCollective(q + "_experts_reducescatter", ChakraProtoMsg::REDUCE_SCATTER,
                     s_.dispatch_bytes * c_.tp);
        EpAllToAll(q + "_dispatch_alltoall");
        Compute(q + "_router", layer_.router, 2, Gemm(layer_.router, GemmPass::kBackward, false));
      }
      MemoryBound(q + "_elementwise", LayerElementwise(c_, true));
      TpGather(q + "_attention");
      Compute(q + "_projection", layer_.projection, 2,
              Gemm(layer_.projection, GemmPass::kBackward));
      Attention(q, /*backward=*/true);
      const uint64_t qkv = ColumnParallelBackward(q + "_qkv", layer_.qkv);
      if (reduce) {
        ReduceGradients("layer" + std::to_string(layer), s_.layer_params, qkv);
        if (c_.experts > 0) {
          ReduceGradients("layer" + std::to_string(layer) + "_experts", s_.expert_params,
                          experts_done, /*experts=*/true);
        }
      }
    }
    if (!first_virtual_stage(vs)) {
      Send(p + "_send_gradients", vs - 1, BackwardTag(c_, m, vs - 1));
    } else {
      // The embedding's output was reduce-scattered over the sequence: its gradient is gathered.
      TpGather(p + "_embedding");
      if (reduce) ReduceGradients("embedding", s_.embedding_params, last_);
    }
  }

  void FinishStep() {
    if (c_.grad_sync == GradSync::kEnd) {
      ReduceGradients("all", s_.DenseStageParams(stage_), last_);
      if (c_.experts > 0) ReduceGradients("experts", s_.ExpertStageParams(), last_, true);
    }
    for (uint64_t last : {last_collective_, last_dp_collective_}) {
      if (last != kNone) pending_.push_back(last);
    }
    // With the distributed optimizer each replica updates its share of every bucket.
    int64_t own = 0;
    for (const Bucket& b : buckets_) {
      own += c_.distributed_optimizer ? CeilDiv(b.params, b.replicas) : b.params;
    }
    const Work adam{kAdamFlopsPerParam * own,
                    own * (kAdamStateBytes + c_.grad_bytes + c_.element_bytes)};
    Compute("optimizer_step", adam, 1,
            c_.gpu ? c_.gpu->MemorySeconds(static_cast<double>(adam.bytes), 1) : -1);
    if (!c_.distributed_optimizer || c_.overlap_param_gather) return;
    const uint64_t step = last_;
    for (const Bucket& b : buckets_) {
      if (b.replicas == 1) continue;
      DpCollective("param_all_gather_" + b.what, ChakraProtoMsg::ALL_GATHER,
                   CeilDiv(b.params, b.replicas) * c_.element_bytes, b.group, step);
    }
  }

  struct Bucket {
    std::string what;
    int64_t params;
    int64_t replicas;  // the group it is reduced over: its size, and its id (0: none)
    int64_t group;
  };

  const LlmConfig& c_;
  const LlmShape s_;
  const LayerWork layer_;
  const Work head_;
  static constexpr uint64_t kNone = ~uint64_t{0};
  const int64_t rank_, tp_rank_, replica_, stage_;
  std::vector<Node> nodes_;
  uint64_t next_id_ = 0;
  uint64_t last_ = kNone;
  uint64_t last_collective_ = kNone;     // the communication stream (tensor parallelism's)
  uint64_t last_dp_collective_ = kNone;  // data parallelism's, with comm_streams 2
  std::vector<uint64_t> pending_;
  std::vector<Bucket> buckets_;
  uint64_t beside_ = kNone;  // a collective running beside the next compute (TpBeside)
  std::map<int64_t, uint64_t> param_gathers_;  // layer -> its parameters' all-gather
};

std::string Flag(const std::string& name) { return "--" + name; }

}  // namespace

std::string MlpName(Mlp m) { return m == Mlp::kGelu ? "gelu" : "swiglu"; }

int64_t ExpertFfn(const LlmConfig& c) {
  return c.moe_ffn_hidden != 0 ? c.moe_ffn_hidden : c.ffn_hidden;
}

int64_t LlmShape::DenseStageParams(int64_t stage) const {
  return LayersOf(stage) * layer_params + (stage == 0 ? embedding_params : 0) +
         (stage == last_stage ? head_params : 0);
}

int64_t LlmShape::ChunkLayers(int64_t vs) const {
  const int64_t last = (last_stage + 1) * virtual_stages - 1;
  if (vs == 0 && first_stage_layers > 0) return first_stage_layers;
  if (vs == last && last_stage_layers > 0) return last_stage_layers;
  return layers_per_chunk;
}

int64_t LlmShape::ChunkFirstLayer(int64_t vs) const {
  if (vs == 0) return 0;
  return ChunkLayers(0) + (vs - 1) * layers_per_chunk;
}

int64_t LlmShape::LayersOf(int64_t stage) const {
  int64_t layers = 0;
  for (int64_t chunk = 0; chunk < virtual_stages; ++chunk) {
    layers += ChunkLayers(chunk * (last_stage + 1) + stage);
  }
  return layers;
}

std::vector<std::string> LlmPresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.push_back(p.name);
  return names;
}

std::string LlmPresetList() {
  std::ostringstream out;
  for (const Preset& p : kPresets) {
    out << "  " << p.name << ": " << p.what << ", " << p.layers << " layers, hidden " << p.hidden
        << ", " << p.heads << " heads";
    if (p.kv_heads != p.heads) out << " (" << p.kv_heads << " key-value)";
    out << ", ffn " << p.ffn_hidden << " (" << MlpName(p.mlp) << ")";
    if (p.experts > 0) out << " × " << p.experts << " experts (" << p.top_k << " per token)";
    out << ", vocabulary " << p.vocab << ", sequence " << p.seq_length << "\n";
  }
  return out.str();
}

Status ApplyLlmPreset(const std::string& name, LlmConfig* config) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    config->name = p.name;
    config->layers = p.layers;
    config->hidden = p.hidden;
    config->heads = p.heads;
    // What the preset's shape implies (multi-head attention's key-value heads, a default MLP
    // width) is left to follow the shape, so that --heads or --hidden with a preset moves it
    // too; a published value of its own (grouped-query heads, Llama 3's MLP) is kept.
    config->kv_heads = p.kv_heads == p.heads ? 0 : p.kv_heads;
    config->ffn_hidden = p.ffn_hidden == DefaultFfnHidden(p.mlp, p.hidden) ? 0 : p.ffn_hidden;
    config->mlp = p.mlp;
    config->vocab = p.vocab;
    config->seq_length = p.seq_length;
    config->experts = p.experts;
    if (p.experts > 0) config->moe_top_k = p.top_k;
    return Status::Ok();
  }
  std::string valid;
  for (const std::string& n : LlmPresetNames()) valid += (valid.empty() ? "" : ", ") + n;
  const std::string close = DidYouMean(name, LlmPresetNames());
  return Status::Invalid(
      "generate-llm", "--model", name,
      "one of " + valid + (close.empty() ? "" : " (did you mean " + close + "?)"));
}

namespace {

// `v` as printf's %g writes it (1e-300, 989, 1e+12).
std::string ShortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

namespace {

// Context parallelism, FP8 and the overlap flags: what each needs of the rest.
Status CheckParallelFeatures(const LlmConfig& c) {
  Status s;
  auto bad = [&](const std::string& flag, const std::string& value, const std::string& valid) {
    s.Merge(Status::Invalid("generate-llm", "--" + flag, value, valid));
  };
  if (c.seq_length % c.cp != 0) {
    bad("cp", std::to_string(c.cp),
        "a divisor of --seq-length (" + std::to_string(c.seq_length) +
            "): each context-parallel rank holds as many tokens");
  } else if (c.sequence_parallel && (c.seq_length / c.cp) % c.tp != 0) {
    bad("cp", std::to_string(c.cp),
        "a divisor of --seq-length / --tp with --sequence-parallel (each rank's tokens split over "
        "the tensor-parallel ranks)");
  }
  if (c.cp > 1 && c.experts > 0) bad("cp", std::to_string(c.cp), "1 with --experts");
  if (c.fp8 && !c.gpu) {
    bad("fp8", "given", "--fp8 with --gpu-model (FP8 GEMMs run at the GPU model's FP8 rate)");
  } else if (c.fp8 && c.gpu->peak_tflops_fp8 <= 0) {
    bad("fp8", "given", "a GPU model with peak-tflops-fp8 (" + c.gpu->name + " has none)");
  }
  if (c.tp_comm_overlap && !(c.sequence_parallel && c.tp > 1)) {
    bad("tp-comm-overlap", "given",
        "--tp-comm-overlap with --sequence-parallel and --tp > 1 (Megatron-LM overlaps the "
        "sequence-parallel all-gathers and reduce-scatters)");
  }
  if (c.overlap_param_gather && c.cp > 1 && c.comm_streams == 2) {
    bad("overlap-param-gather", "given",
        "no --overlap-param-gather with --cp > 1 on two communication streams (--comm-streams 2, "
        "--overlap-grad-reduce): the step's first parameter all-gathers and the context-parallel "
        "exchanges reach the same NPUs in different orders, which a run on the system layer's "
        "queues cannot finish");
  }
  if (c.overlap_param_gather && !c.distributed_optimizer) {
    bad("overlap-param-gather", "given",
        "--overlap-param-gather with --distributed-optimizer (it gathers the optimizer's shards)");
  }
  return s;
}

// --first-stage-layers / --last-stage-layers: the other (virtual) stages share the rest evenly.
Status CheckUnevenStages(const LlmConfig& c) {
  Status s;
  const int64_t first = c.first_stage_layers, last = c.last_stage_layers;
  const int64_t even = c.pp * c.virtual_stages - (first > 0) - (last > 0);
  const int64_t rest = c.layers - first - last;
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    s.Merge(Status::Invalid("generate-llm", "--" + flag, std::to_string(value), valid));
  };
  if (c.pp < 2) {
    bad(first > 0 ? "first-stage-layers" : "last-stage-layers", first > 0 ? first : last,
        "0 with --pp 1 (one stage holds every layer)");
  } else if (c.experts > 0) {
    bad(first > 0 ? "first-stage-layers" : "last-stage-layers", first > 0 ? first : last,
        "0 with --experts");
  } else if (rest < even || (even == 0 && rest != 0) || (even > 0 && rest % even != 0)) {
    bad(first > 0 ? "first-stage-layers" : "last-stage-layers", first > 0 ? first : last,
        "a count that leaves the other " + std::to_string(even) +
            (c.virtual_stages > 1 ? " virtual" : "") +
            " stages an equal share, at "
            "least one each, of --layers (" +
            std::to_string(c.layers) + ")");
  }
  return s;
}

}  // namespace

Status CheckLlmConfig(LlmConfig* config) {
  LlmConfig& c = *config;
  Status s;
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    s.Merge(Status::Invalid("generate-llm", Flag(flag), std::to_string(value), valid));
  };
  auto in_range = [&](const std::string& flag, int64_t value, int64_t low, int64_t high) {
    if (value < low || value > high) {
      bad(flag, value,
          "a whole number from " + std::to_string(low) + " to " + std::to_string(high));
      return false;
    }
    return true;
  };
  constexpr int64_t kMaxDim = int64_t{1} << 20;
  bool shape_ok = in_range("layers", c.layers, 1, 100000);
  shape_ok &= in_range("hidden", c.hidden, 1, kMaxDim);
  shape_ok &= in_range("heads", c.heads, 1, kMaxDim);
  shape_ok &= in_range("vocab", c.vocab, 1, int64_t{1} << 24);
  shape_ok &= in_range("seq-length", c.seq_length, 1, kMaxDim);
  shape_ok &= in_range("micro-batch-size", c.micro_batch_size, 1, kMaxDim);
  shape_ok &= in_range("element-bytes", c.element_bytes, 1, 8);
  shape_ok &= in_range("grad-bytes", c.grad_bytes, 1, 8);
  shape_ok &= in_range("dp", c.dp, 1, kMaxDim);
  shape_ok &= in_range("tp", c.tp, 1, kMaxDim);
  shape_ok &= in_range("pp", c.pp, 1, kMaxDim);
  shape_ok &= in_range("cp", c.cp, 1, kMaxDim);
  shape_ok &= in_range("first-stage-layers", c.first_stage_layers, 0, 100000);
  shape_ok &= in_range("last-stage-layers", c.last_stage_layers, 0, 100000);
  if (c.kv_heads != 0) shape_ok &= in_range("kv-heads", c.kv_heads, 1, kMaxDim);
  if (c.ffn_hidden != 0) shape_ok &= in_range("ffn-hidden", c.ffn_hidden, 1, int64_t{1} << 24);
  if (c.micro_batches != 0) shape_ok &= in_range("micro-batches", c.micro_batches, 1, 1000000);
  shape_ok &= in_range("comm-streams", c.comm_streams, 1, 2);
  shape_ok &= in_range("virtual-stages", c.virtual_stages, 1, kMaxDim);
  if (c.global_batch_size != 0) {
    shape_ok &= in_range("global-batch-size", c.global_batch_size, 1, int64_t{1} << 40);
  }
  shape_ok &= in_range("experts", c.experts, 0, 1 << 16);
  shape_ok &= in_range("ep", c.ep, 1, kMaxDim);
  if (c.moe_ffn_hidden != 0) {
    shape_ok &= in_range("moe-ffn-hidden", c.moe_ffn_hidden, 1, int64_t{1} << 24);
  }
  if (c.experts > 0) shape_ok &= in_range("moe-top-k", c.moe_top_k, 1, c.experts);
  // Bounded so that every node's duration holds in whole microseconds (a peak of 1e-300 TFLOPS
  // had written durations of 2^63 us).
  if (!(c.peak_tflops >= 1e-3 && c.peak_tflops <= 1e9)) {
    s.Merge(Status::Invalid("generate-llm", "--peak-tflops", ShortNumber(c.peak_tflops),
                            "a number in [0.001, 1e9]"));
    shape_ok = false;
  }
  if (!(c.mem_bw_gbps >= 1e-3 && c.mem_bw_gbps <= 1e9)) {
    s.Merge(Status::Invalid("generate-llm", "--mem-bw-gbps", ShortNumber(c.mem_bw_gbps),
                            "a number in [0.001, 1e9]"));
    shape_ok = false;
  }
  if (!shape_ok) return s;

  if (c.kv_heads == 0) c.kv_heads = c.heads;
  if (c.ffn_hidden == 0) c.ffn_hidden = DefaultFfnHidden(c.mlp, c.hidden);
  if (c.hidden % c.heads != 0) {
    bad("hidden", c.hidden,
        "a multiple of --heads (" + std::to_string(c.heads) + "), each head's width");
  }
  if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0) {
    bad("kv-heads", c.kv_heads,
        "a divisor of --heads (" + std::to_string(c.heads) +
            "): query heads share key-value heads");
  }
  const int64_t npus = c.dp * c.cp * c.tp * c.pp;
  if (npus > kMaxDim) {
    s.Merge(Status::Invalid("generate-llm", "--dp × --cp × --tp × --pp", std::to_string(npus),
                            "at most " + std::to_string(kMaxDim) + " NPUs"));
  }
  if (c.heads % c.tp != 0) {
    bad("tp", c.tp, "a divisor of --heads (" + std::to_string(c.heads) + ")");
  } else if (c.kv_heads % c.tp != 0) {
    bad("tp", c.tp,
        "a divisor of --kv-heads (" + std::to_string(c.kv_heads) +
            "): Megatron-LM splits the key-value heads over the tensor-parallel ranks");
  }
  if (c.ffn_hidden % c.tp != 0) {
    bad("tp", c.tp, "a divisor of --ffn-hidden (" + std::to_string(c.ffn_hidden) + ")");
  }
  if (c.sequence_parallel && c.seq_length % c.tp != 0) {
    bad("seq-length", c.seq_length,
        "a multiple of --tp (" + std::to_string(c.tp) +
            ") with --sequence-parallel: each tensor-parallel rank keeps as many tokens");
  }
  if (c.experts == 0) {
    if (c.ep != 1) bad("ep", c.ep, "1 without --experts (expert parallelism spreads experts)");
    if (c.moe_ffn_hidden != 0) bad("moe-ffn-hidden", c.moe_ffn_hidden, "0 without --experts");
  } else {
    if (c.experts % c.ep != 0) {
      bad("ep", c.ep,
          "a divisor of --experts (" + std::to_string(c.experts) +
              "): every expert-parallel rank holds as many experts");
    }
    if (c.dp % c.ep != 0) {
      bad("ep", c.ep,
          "a divisor of --dp (" + std::to_string(c.dp) +
              "): Megatron-Core spreads the experts over data-parallel replicas");
    }
    if (c.tp > 1 && !c.sequence_parallel) {
      bad("tp", c.tp,
          "1 with --experts unless --sequence-parallel is given (Megatron-Core's MoE with "
          "tensor parallelism needs sequence parallelism)");
    }
    if (ExpertFfn(c) % c.tp != 0) {
      bad("tp", c.tp,
          "a divisor of the experts' width (" + std::to_string(ExpertFfn(c)) +
              ", --moe-ffn-hidden or --ffn-hidden)");
    }
  }
  s.Merge(CheckParallelFeatures(c));
  if (c.first_stage_layers > 0 || c.last_stage_layers > 0) {
    s.Merge(CheckUnevenStages(c));
  } else if (c.layers % c.pp != 0) {
    bad("pp", c.pp,
        "a divisor of --layers (" + std::to_string(c.layers) + "): every stage gets as many");
  } else if (c.layers % (c.pp * c.virtual_stages) != 0) {
    bad("virtual-stages", c.virtual_stages,
        "a divisor of the " + std::to_string(c.layers / c.pp) +
            " layers per stage (--layers / --pp): every model chunk gets as many");
  }
  if (c.virtual_stages > 1 && c.schedule != PipelineSchedule::kOneFOneB) {
    bad("virtual-stages", c.virtual_stages, "1 with --schedule gpipe (interleaving is 1F1B's)");
  }
  if (c.virtual_stages > 1 && c.pp < 2) {
    bad("virtual-stages", c.virtual_stages, "1 with --pp 1 (model chunks are pipeline stages)");
  }
  const int64_t per_step = c.micro_batch_size * c.dp;
  if (c.micro_batches == 0) {
    if (c.global_batch_size != 0) {
      if (c.global_batch_size % per_step != 0) {
        bad("global-batch-size", c.global_batch_size,
            "a multiple of --micro-batch-size × --dp (" + std::to_string(per_step) + ")");
      } else {
        c.micro_batches = c.global_batch_size / per_step;
      }
    } else {
      c.micro_batches = c.pp == 1 ? 1 : 4 * c.pp;
    }
  }
  if (c.micro_batches != 0 && c.global_batch_size == 0)
    c.global_batch_size = c.micro_batches * per_step;
  if (c.micro_batches != 0 && c.global_batch_size != c.micro_batches * per_step) {
    bad("global-batch-size", c.global_batch_size,
        std::to_string(c.micro_batches * per_step) +
            " (--micro-batches × --micro-batch-size × --dp), or leave one of them out");
  }
  if (c.micro_batches > 1000000) {
    bad("global-batch-size", c.global_batch_size,
        "at most 1000000 micro-batches of --micro-batch-size × --dp");
  }
  if (c.virtual_stages > 1 && c.micro_batches % c.pp != 0) {
    bad("micro-batches", c.micro_batches,
        "a multiple of --pp (" + std::to_string(c.pp) +
            ") with --virtual-stages: Megatron-LM's interleaved schedule runs them in groups of "
            "pp");
  }
  if (!s.ok()) return s;
  // Tags are 32-bit: two per micro-batch and virtual stage boundary.
  const int64_t boundaries = c.pp * c.virtual_stages;
  if (c.micro_batches * boundaries > (int64_t{1} << 29)) {
    bad("micro-batches", c.micro_batches,
        "at most " + std::to_string((int64_t{1} << 29) / boundaries) + " with --pp " +
            std::to_string(c.pp) + " and --virtual-stages " + std::to_string(c.virtual_stages) +
            " (message tags are 32-bit)");
  }
  // Every per-node count must fit in an int64 attribute.
  const long double tokens = static_cast<long double>(c.micro_batch_size) * c.seq_length;
  const long double padded =
      static_cast<long double>(CeilDiv(c.vocab, kVocabMultiple * c.tp)) * kVocabMultiple * c.tp;
  const long double biggest =
      4.0L * tokens *
      std::max({static_cast<long double>(c.seq_length) * c.hidden,
                static_cast<long double>(c.hidden) * c.ffn_hidden * 2, c.hidden * padded,
                static_cast<long double>(c.hidden) * ExpertFfn(c) * 2 * c.moe_top_k,
                static_cast<long double>(c.hidden) * (c.heads + 2 * c.kv_heads) * c.hidden});
  if (biggest > 4e18L) {
    s.Merge(Status::Error(
        "generate-llm: one micro-batch's matrix product would take more than 4e18 FLOPs "
        "(--micro-batch-size " +
        std::to_string(c.micro_batch_size) + ", --seq-length " + std::to_string(c.seq_length) +
        ", --hidden " + std::to_string(c.hidden) +
        "); expected a model and batch whose "
        "per-node counts fit in 64 bits"));
  }
  // A stage's weights, counted as ShapeOf counts them but in long double. With --grad-sync end
  // its gradients are reduced in one bucket, a collective the simulator runs only up to 2^53
  // bytes; under that bound its optimizer step's bytes (Adam's state, the gradient and the
  // weight, 30 to 40 per parameter) and FLOPs also fit in int64.
  {
    const long double h = static_cast<long double>(c.hidden);
    const long double mlp = c.mlp == Mlp::kSwiglu ? 3 : 2;
    const long double dense_mlp = c.experts == 0 ? mlp * h * c.ffn_hidden : 0;
    const long double experts = c.experts == 0
                                    ? 0
                                    : static_cast<long double>(c.experts) /
                                          std::max<int64_t>(c.ep, 1) * mlp * h * ExpertFfn(c);
    const long double layer =
        (h * (h / std::max<int64_t>(c.heads, 1)) * (c.heads + 2 * c.kv_heads) + h * h + dense_mlp +
         experts) /
        c.tp;
    const long double stage =
        layer * (static_cast<long double>(c.layers) / c.pp) + 2 * padded / c.tp * h;
    if (stage * c.grad_bytes > 9007199254740992.0L) {
      s.Merge(Status::Error(
          "generate-llm: a pipeline stage's " + FormatCount(stage) + " weights × --grad-bytes " +
          std::to_string(c.grad_bytes) +
          " would make a gradient reduction of more than 2^53 bytes, which no run simulates "
          "(--layers " +
          std::to_string(c.layers) + ", --hidden " + std::to_string(c.hidden) + ", --pp " +
          std::to_string(c.pp) + ", --tp " + std::to_string(c.tp) + "); expected a smaller model"));
    }
  }
  // The files' size: refuse what would fill a disk by mistake.
  const long double nodes_per_rank = LlmNodesPerRank(c);
  if (nodes_per_rank > 5e7L) {
    s.Merge(Status::Error("generate-llm: about " +
                          std::to_string(static_cast<int64_t>(nodes_per_rank)) +
                          " nodes per NPU (--micro-batches " + std::to_string(c.micro_batches) +
                          " × " + std::to_string(c.layers / c.pp) +
                          " layers per stage); expected at most 50000000: fewer micro-batches "
                          "or more pipeline stages"));
  }
  return s;
}

LlmShape ShapeOf(const LlmConfig& c) {
  LlmShape s;
  s.npus = c.dp * c.cp * c.tp * c.pp;
  s.first_stage_layers = c.first_stage_layers;
  s.last_stage_layers = c.pp > 1 ? c.last_stage_layers : 0;
  s.virtual_stages = c.virtual_stages;
  // The (virtual) stages without --first/last-stage-layers share the rest evenly.
  const int64_t even =
      c.pp * c.virtual_stages - (s.first_stage_layers > 0) - (s.last_stage_layers > 0);
  s.layers_per_chunk =
      even > 0 ? (c.layers - s.first_stage_layers - s.last_stage_layers) / even : 0;
  s.layers_per_stage = s.layers_per_chunk * c.virtual_stages;
  s.last_stage = c.pp - 1;
  s.padded_vocab = CeilDiv(c.vocab, kVocabMultiple * c.tp) * kVocabMultiple * c.tp;
  s.head_dim = c.hidden / c.heads;
  const LayerWork w = LayerWorkOf(c, s);
  s.layer_forward_flops = static_cast<double>(w.qkv.flops) + w.attention.flops +
                          w.projection.flops + w.fc1.flops + w.fc2.flops + w.router.flops;
  s.head_forward_flops = static_cast<double>(HeadWorkOf(c, s).flops);
  // Weights only: biases, norms and routers (under 0.1% of a layer) are left out.
  const int64_t mlp_matrices = c.mlp == Mlp::kSwiglu ? 3 : 2;
  s.layer_params =
      c.hidden * s.head_dim * (c.heads + 2 * c.kv_heads) / c.tp + c.hidden * c.hidden / c.tp;
  if (c.experts == 0) {
    s.layer_params += mlp_matrices * c.hidden * c.ffn_hidden / c.tp;
  } else {
    s.expert_params = c.experts / c.ep * mlp_matrices * c.hidden * ExpertFfn(c) / c.tp;
  }
  s.embedding_params = s.padded_vocab / c.tp * c.hidden;
  s.head_params = s.padded_vocab / c.tp * c.hidden;
  s.activation_bytes = RankTokens(c) * c.hidden * c.element_bytes;
  s.hand_off_bytes = c.sequence_parallel ? s.activation_bytes / c.tp : s.activation_bytes;
  if (c.experts > 0) s.dispatch_bytes = LocalTokens(c) * c.moe_top_k * c.hidden * c.element_bytes;
  const double passes = 3.0;  // forward, and a backward pass of twice its work
  s.step_flops = static_cast<double>(Replicas(c)) * c.tp * c.micro_batches *
                 (c.layers * s.layer_forward_flops * (passes + (c.recompute ? 1 : 0)) +
                  s.head_forward_flops * passes);
  return s;
}

long double LlmNodesPerRank(const LlmConfig& c) {
  const long double passes_per_layer = c.recompute ? 3 : 2;
  const long double nodes_per_layer_pass = c.sequence_parallel || c.experts > 0 ? 14 : 8;
  return static_cast<long double>(c.micro_batches) * (c.layers / std::max<int64_t>(c.pp, 1)) *
         nodes_per_layer_pass * passes_per_layer;
}

double PublishedStepFlops(const LlmConfig& c, FlopsConvention convention) {
  const double tokens = static_cast<double>(c.global_batch_size) * c.seq_length;
  const double s = static_cast<double>(c.seq_length), h = static_cast<double>(c.hidden);
  const double layers = static_cast<double>(c.layers), v = static_cast<double>(c.vocab);
  switch (convention) {
    case FlopsConvention::kMegatron:
      return 72 * tokens * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h));
    case FlopsConvention::kMegatronRecompute:
      return 96 * tokens * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h));
    case FlopsConvention::kSixN: {
      const LlmShape shape = ShapeOf(c);
      // ShapeOf counts per tensor-parallel rank; every expert once.
      const double layer = static_cast<double>(shape.layer_params + shape.expert_params * c.ep) *
                           static_cast<double>(c.tp);
      const double embeddings =
          static_cast<double>(shape.embedding_params + shape.head_params) * c.tp;
      return 6 * (layer * layers + embeddings) * tokens;
    }
  }
  return 0;
}

bool ParseFlopsConvention(const std::string& name, FlopsConvention* out) {
  if (name == "megatron") {
    *out = FlopsConvention::kMegatron;
  } else if (name == "megatron-recompute") {
    *out = FlopsConvention::kMegatronRecompute;
  } else if (name == "6n") {
    *out = FlopsConvention::kSixN;
  } else {
    return false;
  }
  return true;
}

std::vector<Node> BuildLlmRank(const LlmConfig& config, int64_t rank) {
  return RankBuilder(config, rank).Build();
}

std::vector<LlmGroup> LlmGroups(const LlmConfig& config) { return GroupsOf(config); }

std::string ProcessGroupsInputs(const std::vector<LlmGroup>& groups) {
  std::ostringstream pgs;
  pgs << "[[";
  for (size_t i = 0; i < groups.size(); ++i) {
    pgs << (i ? ", " : "") << "{\"pg_name\": \"" << groups[i].id << "\", \"ranks\": [";
    for (size_t j = 0; j < groups[i].ranks.size(); ++j) {
      pgs << (j ? ", " : "") << groups[i].ranks[j];
    }
    pgs << "]}";
  }
  pgs << "]]";
  return pgs.str();
}

std::string LlmCommGroupsJson(const LlmConfig& config) {
  std::ostringstream out;
  out << "{";
  const std::vector<Group> groups = GroupsOf(config);
  for (size_t i = 0; i < groups.size(); ++i) {
    out << (i ? ",\n " : "\n ") << "\"" << groups[i].id << "\": [";
    for (size_t j = 0; j < groups[i].ranks.size(); ++j)
      out << (j ? ", " : "") << groups[i].ranks[j];
    out << "]";
  }
  out << (groups.empty() ? "}\n" : "\n}\n");
  return out.str();
}

Status WriteLlmWorkload(const LlmConfig& config, const std::string& prefix, size_t* max_nodes) {
  const LlmShape shape = ShapeOf(config);
  size_t most = 0;
  for (int64_t r = 0; r < shape.npus; ++r) {
    const std::vector<Node> nodes = BuildLlmRank(config, r);
    most = std::max(most, nodes.size());
    Status s = WriteTraceFile(RankTracePath(prefix, static_cast<int>(r)), nodes);
    if (!s.ok()) return s;
  }
  const std::string groups = prefix + ".comm_groups.json";
  std::ofstream out(groups);
  out << LlmCommGroupsJson(config);
  out.close();
  if (!out) return Status::Error(groups + ": cannot write the communicator groups");
  if (max_nodes != nullptr) *max_nodes = most;
  return Status::Ok();
}

}  // namespace et
}  // namespace orrery

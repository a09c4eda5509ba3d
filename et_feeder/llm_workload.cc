#include "et_feeder/llm_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "et_feeder/llm_compute.h"
#include "et_feeder/llm_internal.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;
using llm_internal::CeilDiv;
using llm_internal::kVocabMultiple;

// Adam with fp32 master weights and moments, per parameter: FLOPs (two moment updates, two bias
// corrections, the square root, division and update) and bytes (gradient, master weight and the
// two moments read; master weight, moments and the working-precision copy written).
constexpr int64_t kAdamFlopsPerParam = 13;
constexpr int64_t kAdamStateBytes = 4 * 3 + 4 * 3;  // + gradient read + parameter written
// Vocabulary-parallel cross entropy all-reduces three fp32 values per token (the logits' maximum,
// the target's logit, the sum of exponentials).
constexpr int kCrossEntropyAllReduces = 3;
constexpr int64_t kCrossEntropyBytesPerToken = 4;

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

std::vector<Node> BuildLlmRank(const LlmConfig& config, int64_t rank) {
  return RankBuilder(config, rank).Build();
}

std::vector<LlmGroup> LlmGroups(const LlmConfig& config) { return GroupsOf(config); }

}  // namespace et
}  // namespace orrery

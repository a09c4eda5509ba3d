// Synthetic Chakra traces of one training step of a decoder-only transformer (GPT, Llama), with
// Megatron-LM's data (dp), tensor (tp) and pipeline (pp) parallelism: what architects trace when
// the model or the machine does not exist yet.
//
//   LlmConfig c;
//   Status s = ApplyLlmPreset("gpt3-175b", &c);             // or set the shape by hand
//   c.dp = 8; c.tp = 8; c.pp = 16; c.micro_batches = 64;
//   s = CheckLlmConfig(&c);                                 // every bad value, named
//   std::vector<ChakraProtoMsg::Node> rank5 = BuildLlmRank(c, 5);
//   s = WriteLlmWorkload(c, "/tmp/gpt/gpt");               // gpt.<r>.et for every NPU
//
// Ranks are laid out as Megatron-LM's: r = stage·dp·tp + replica·tp + tp_rank, so a tensor-
// parallel group is tp consecutive NPUs (one node's GPUs, when tp divides them). Each rank's
// trace holds, per micro-batch and layer of its stage, the forward and backward matrix products
// and attention as compute nodes (num_ops, tensor_size for the roofline; duration_micros from a
// roofline of the given peak rate and memory bandwidth), Megatron's tensor-parallel all-reduces
// (two per layer each way; the vocabulary-parallel embedding's and cross entropy's), the pipeline
// stages' activations and gradients as sends and receives in GPipe's or 1F1B's order, the
// data-parallel gradient reduction (per layer as the last micro-batch's backward pass produces
// it, or all at the end; all-reduce, or ZeRO-1's reduce-scatter and parameter all-gather), and
// Adam's step. Optionally sequence parallelism (reduce-scatters and all-gathers over the
// sequence) and a mixture of experts (Megatron-Core's all-to-all token dispatcher over
// expert-parallel replicas). The equations, and what is left out, are in et_feeder/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compute/gpu_model.h"
#include "config/key_doc.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery {
namespace et {

enum class PipelineSchedule { kOneFOneB, kGpipe };
enum class GradSync { kPerLayer, kEnd };
enum class Mlp { kGelu, kSwiglu };
// How attention runs: fused (FlashAttention: no s² matrix in memory, causal blocks skipped) or
// unfused (Megatron-LM before FlashAttention: two batched GEMMs over the whole s² scores and a
// softmax, mask and dropout on them in memory).
enum class Attention { kFlash, kUnfused };

struct LlmConfig {
  // The model.
  std::string name = "custom";
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // 0: = heads (multi-head attention); fewer: grouped-query attention
  int64_t ffn_hidden = 0;  // 0: 4·hidden (gelu), or Llama's 8·hidden/3 up to a multiple of 256
  Mlp mlp = Mlp::kGelu;    // gelu: two matrices; swiglu: gate, up and down
  int64_t vocab = 50257;   // padded as Megatron-LM: to a multiple of 128·tp
  int64_t seq_length = 2048;
  // Mixture of experts (Megatron-Core's MoE with the all-to-all token dispatcher): 0 is a dense
  // MLP; otherwise every layer's MLP is `experts` experts of moe_ffn_hidden (0: ffn_hidden), each
  // token routed to moe_top_k of them (an even share of tokens per expert), the experts spread
  // over `ep` data-parallel replicas (expert parallelism: ep divides dp and the experts).
  int64_t experts = 0;
  int64_t moe_top_k = 2;
  int64_t moe_ffn_hidden = 0;
  int64_t ep = 1;
  // The step.
  int64_t micro_batch_size = 1;
  int64_t micro_batches = 0;  // per pipeline, per step; 0: global_batch_size, or 4·pp (1 if pp = 1)
  int64_t global_batch_size = 0;  // 0: micro_batches · micro_batch_size · dp
  int64_t dp = 1, tp = 1, pp = 1;
  // Context parallelism (Megatron-Core's --context-parallel-size): each sequence is split over cp
  // ranks (cp consecutive ranks after the tensor-parallel ones), which exchange their keys and
  // values around a ring for attention; gradients are reduced over dp × cp ranks.
  int64_t cp = 1;
  // Uneven pipeline stages (Megatron-Core's --decoder-first/last-pipeline-num-layers): 0 = an
  // even share; the stages given none share the rest evenly.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  // Megatron-LM's --sequence-parallel: outside the tensor-parallel products each rank keeps 1/tp
  // of the sequence, so each all-reduce becomes a reduce-scatter and the next product's input an
  // all-gather, and a pipeline hand-off carries 1/tp of the activations.
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  // Model chunks per pipeline stage: more than 1 runs Megatron-LM's interleaved 1F1B, stage k
  // holding virtual stages k, pp + k, 2·pp + k, ... of layers / (pp · virtual_stages) layers each
  // (--num-layers-per-virtual-pipeline-stage), which divides the pipeline's fill and drain by it.
  int64_t virtual_stages = 1;
  bool recompute = false;  // full activation recomputation: each layer's forward again before its
                           // backward (Megatron's --recompute-granularity full)
  GradSync grad_sync = GradSync::kEnd;  // Megatron-LM's default (no --overlap-grad-reduce)
  // Communication streams the trace is written for: 1 orders every collective of a rank in one
  // chain (runs on any number of communication slots); 2 gives the data-parallel reduction its
  // own chain beside the tensor-parallel one (needs communication-slots >= 2, else two ranks can
  // each hold their one slot with a collective the other has not reached).
  int comm_streams = 1;
  bool distributed_optimizer = false;  // ZeRO-1: reduce-scatter gradients, all-gather parameters
  int64_t element_bytes = 2;           // activations and parameters (bf16)
  int64_t grad_bytes = 4;              // gradients as reduced (Megatron-LM reduces bf16's in fp32)
  // A METADATA node (PyTorch's process_group:init) first in each rank's trace, declaring the
  // communicator groups (they are in <output>.comm_groups.json too). ASTRA-sim 2.0 aborts on
  // it (et_feeder/astra_sim_compat.h), so --astra-sim leaves it out.
  bool metadata_node = true;
  // Megatron-LM's --overlap-param-gather (with the distributed optimizer): each layer's
  // parameters are all-gathered at the start of the step, beside the forward passes, each layer's
  // first forward waiting for its own, instead of after the optimizer.
  bool overlap_param_gather = false;
  // Megatron-LM's --tp-comm-overlap (with sequence parallelism): each tensor-parallel all-gather
  // and reduce-scatter runs beside the product it feeds or drains (userbuffers' pipelined
  // chunks), the next node waiting for both.
  bool tp_comm_overlap = false;
  // FP8 GEMMs (Transformer Engine): the layers' products at the GPU model's FP8 rate, with the
  // casts of their inputs and output gradients; attention, the LM head and the optimizer stay
  // BF16. Needs a GPU model.
  bool fp8 = false;
  Attention attention = Attention::kFlash;
  // The roofline that gives duration_micros (runs with roofline-enabled use num_ops instead).
  double peak_tflops = 989.0;   // H100 SXM, dense BF16
  double mem_bw_gbps = 3350.0;  // H100 SXM HBM3, 1e9 B/s
  // The physical compute model (--gpu-model): when set, duration_micros come from it
  // (et_feeder/llm_compute.h) and each layer also runs its memory-bound work (norms, activation,
  // residuals, casts) as compute nodes; without it, the roofline above, as before.
  std::optional<GpuModel> gpu;
};

// "gelu" or "swiglu", as --mlp spells them.
std::string MlpName(Mlp mlp);
// Each expert's MLP width: --moe-ffn-hidden, or --ffn-hidden without it.
int64_t ExpertFfn(const LlmConfig& config);

// The model presets: names, and one line each saying what they are.
std::vector<std::string> LlmPresetNames();
std::string LlmPresetList();  // "gpt3-175b (GPT-3 175B: 96 layers, ...)\n..."
// Sets the model's shape (name, layers, hidden, heads, kv_heads, ffn_hidden, mlp, vocab,
// seq_length, experts, moe_top_k) from a preset; an unknown name is an error listing them.
Status ApplyLlmPreset(const std::string& name, LlmConfig* config);

// Fills the defaults (kv_heads, ffn_hidden, micro_batches / global_batch_size) and checks every
// value; all problems are reported, each naming its flag, value and what would be valid.
Status CheckLlmConfig(LlmConfig* config);

// What the configuration comes to (after CheckLlmConfig).
struct LlmShape {
  int64_t npus = 0;
  int64_t layers_per_stage = 0;    // of the stages without --first/last-stage-layers
  int64_t first_stage_layers = 0;  // the first (virtual) stage's and the last one's
  int64_t last_stage_layers = 0;
  int64_t layers_per_chunk = 0;  // per virtual stage: layers_per_stage / virtual_stages
  int64_t last_stage = 0;
  int64_t virtual_stages = 1;  // model chunks per stage
  int64_t padded_vocab = 0;
  int64_t head_dim = 0;
  // Per tensor-parallel rank, per micro-batch, forward: FLOPs of one layer and of the LM head.
  double layer_forward_flops = 0;
  double head_forward_flops = 0;
  // Parameters per tensor-parallel rank: one layer, the embedding (first stage), the LM head
  // (last stage; untied from the embedding).
  int64_t layer_params = 0;
  int64_t embedding_params = 0;
  int64_t head_params = 0;
  // Parameters per rank of a layer's local experts (0 when dense): experts / ep of them, each
  // sharded over the tensor-parallel ranks. layer_params is the rest of the layer.
  int64_t expert_params = 0;
  int64_t activation_bytes = 0;  // one micro-batch's b·s·h activations
  int64_t hand_off_bytes = 0;    // a pipeline hand-off: activation_bytes, / tp with sequence
                                 // parallelism
  int64_t dispatch_bytes = 0;    // a rank's tokens routed to experts, each all-to-all's size
  // Parameters per rank of a stage: reduced over the data-parallel group (dense) and over the
  // expert-data-parallel group (dp / ep replicas: experts).
  int64_t DenseStageParams(int64_t stage) const;
  int64_t ExpertStageParams() const { return layers_per_stage * expert_params; }
  int64_t StageParams(int64_t stage) const { return DenseStageParams(stage) + ExpertStageParams(); }
  // Layers of a stage (all its chunks), and of virtual stage vs = chunk·pp + stage and its first
  // layer. With --virtual-stages, --first/last-stage-layers are the first and last virtual
  // stage's (as Llama 3 405B's interleaved 16 stages: 126 layers, one fewer on the first and the
  // last of 32 chunks of 4), the other chunks an even share.
  int64_t LayersOf(int64_t stage) const;
  int64_t ChunkLayers(int64_t vs) const;
  int64_t ChunkFirstLayer(int64_t vs) const;
  // FLOPs of one whole step summed over every NPU (for checking against Megatron-LM's formula).
  double step_flops = 0;
};
LlmShape ShapeOf(const LlmConfig& config);

// About how many nodes a rank's trace holds (after CheckLlmConfig): micro-batches × layers per
// stage × nodes per layer and pass (8, or 14 with sequence parallelism or experts) × passes (2,
// 3 with recomputation). CheckLlmConfig refuses past 5e7; generate-llm estimates its files' size
// from it.
long double LlmNodesPerRank(const LlmConfig& config);

// The FLOP-count conventions published throughput tables use, for one whole step of `c` (after
// CheckLlmConfig), B = global batch, s = sequence, L = layers, h = hidden, V = --vocab:
//   kMegatron           72·B·s·L·h²·(1 + s/6h + V/12Lh)   (Narayanan et al. 2021, eq. 3 without
//                                                           recomputation; model FLOPs)
//   kMegatronRecompute  96·B·s·L·h²·(1 + s/6h + V/16Lh)   (the same with full recomputation: a
//                                                           fourth forward pass of the layers)
//   kSixN               6·N·B·s, N = every weight of the model as generated (layers, embedding,
//                       untied LM head at the padded vocabulary)
// A table's TFLOPS per GPU (or MFU × peak) is step FLOPs / (step time × GPUs) under its convention.
enum class FlopsConvention { kMegatron, kMegatronRecompute, kSixN };
double PublishedStepFlops(const LlmConfig& c, FlopsConvention convention);
// "megatron", "megatron-recompute", "6n" (false for anything else).
bool ParseFlopsConvention(const std::string& name, FlopsConvention* out);

// NPU `rank`'s nodes, in issue order; ids from 0. The collectives name their groups (pg_name),
// which a METADATA node (PyTorch's process_group:init) first in the trace declares.
std::vector<ChakraProtoMsg::Node> BuildLlmRank(const LlmConfig& config, int64_t rank);

// One communicator group: its pg_name and its ranks (NPU ids, ascending).
struct LlmGroup {
  int64_t id;
  std::vector<int64_t> ranks;
};
// Every communicator group of the step, numbered from 1: tensor-parallel groups of (stage,
// replica), data-parallel groups of (stage, tp rank), then with experts the expert-parallel and
// expert-data-parallel groups (llm_workload.cc says how they are laid out).
std::vector<LlmGroup> LlmGroups(const LlmConfig& config);
// The METADATA process_group:init node's inputs for `groups`, as PyTorch writes them:
// [[{"pg_name": "1", "ranks": [0, 1]}, ...]].
std::string ProcessGroupsInputs(const std::vector<LlmGroup>& groups);

// The communicator groups, as ASTRA-sim's --comm-group-configuration JSON ({"1": [0, 1], ...}).
std::string LlmCommGroupsJson(const LlmConfig& config);

// Writes "<prefix>.<r>.et" for every NPU and "<prefix>.comm_groups.json"; returns the nodes
// written to the largest file through `max_nodes` when given.
Status WriteLlmWorkload(const LlmConfig& config, const std::string& prefix,
                        size_t* max_nodes = nullptr);

// The configuration generate-llm's flags describe (`args` without the command's name; no
// --output needed), checked as CheckLlmConfig checks it: every problem in the Status.
StatusOr<LlmConfig> LlmConfigFromFlags(const std::vector<std::string>& args);

// `orrery generate-llm ...` (--help lists the flags). Returns the process exit code.
int GenerateLlmMain(int argc, char** argv);
// generate-llm's flags as docs/cli.md lists them (llm_workload_main.cc declares them).
std::vector<KeyDoc> GenerateLlmFlagDocs();

}  // namespace et
}  // namespace orrery

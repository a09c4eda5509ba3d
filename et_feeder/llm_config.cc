// generate-llm's configuration (declared in llm_workload.h): the published model shapes
// (presets), the checks of a configuration with the defaults they fill in, and the published
// FLOPs conventions.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "et_feeder/llm_internal.h"
#include "et_feeder/llm_workload.h"

namespace orrery {
namespace et {
namespace {

using llm_internal::CeilDiv;
using llm_internal::DefaultFfnHidden;
using llm_internal::kVocabMultiple;

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

// The largest width, head count, degree of parallelism and NPU count generate-llm takes.
constexpr int64_t kMaxDim = int64_t{1} << 20;

// "3.96e+17": a count too large to write out.
std::string FormatCount(long double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3Lg", v);
  return buf;
}

std::string Flag(const std::string& name) { return "--" + name; }

// A bad value of `flag`, added to `s`.
void Bad(Status& s, const std::string& flag, int64_t value, const std::string& valid) {
  s.Merge(Status::Invalid("generate-llm", Flag(flag), std::to_string(value), valid));
}

}  // namespace

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

// Every number within its range (false when one is not: the checks after would divide by it).
bool CheckRanges(const LlmConfig& c, Status& s) {
  auto in_range = [&](const std::string& flag, int64_t value, int64_t low, int64_t high) {
    if (value < low || value > high) {
      Bad(s, flag, value,
          "a whole number from " + std::to_string(low) + " to " + std::to_string(high));
      return false;
    }
    return true;
  };
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
  return shape_ok;
}

// The heads, the widths and the experts against the degrees of parallelism that split them.
void CheckDivisors(const LlmConfig& c, Status& s) {
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    Bad(s, flag, value, valid);
  };
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
}

// The layers over the pipeline stages and their model chunks.
void CheckStages(const LlmConfig& c, Status& s) {
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    Bad(s, flag, value, valid);
  };
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
}

// The micro-batches and the global batch: one from the other when left out, and consistent.
void SetMicroBatches(LlmConfig& c, Status& s) {
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    Bad(s, flag, value, valid);
  };
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
}

// What the traces would hold fits: 32-bit tags, 64-bit per-node counts, a gradient reduction the
// simulator runs, files that do not fill a disk.
void CheckSizes(const LlmConfig& c, Status& s) {
  auto bad = [&](const std::string& flag, int64_t value, const std::string& valid) {
    Bad(s, flag, value, valid);
  };
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
}

}  // namespace

Status CheckLlmConfig(LlmConfig* config) {
  LlmConfig& c = *config;
  Status s;
  if (!CheckRanges(c, s)) return s;
  if (c.kv_heads == 0) c.kv_heads = c.heads;
  if (c.ffn_hidden == 0) c.ffn_hidden = DefaultFfnHidden(c.mlp, c.hidden);
  CheckDivisors(c, s);
  s.Merge(CheckParallelFeatures(c));
  CheckStages(c, s);
  SetMicroBatches(c, s);
  if (!s.ok()) return s;
  CheckSizes(c, s);
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

}  // namespace et
}  // namespace orrery

// `orrery generate-llm`: a training step of a transformer as Chakra ET files (et_feeder/README.md,
// "Generated LLM training steps").
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/flags.h"
#include "config/flag_schema.h"
#include "et_feeder/llm_copies.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/manifest.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

std::string Human(double v) {
  char buf[32];
  if (v >= 1e18) {
    std::snprintf(buf, sizeof buf, "%.2f E", v / 1e18);
  } else if (v >= 1e15) {
    std::snprintf(buf, sizeof buf, "%.2f P", v / 1e15);
  } else if (v >= 1e12) {
    std::snprintf(buf, sizeof buf, "%.2f T", v / 1e12);
  } else if (v >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f G", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f M", v / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f ", v);
  }
  return buf;
}

std::string Bytes(int64_t b) {
  char buf[32];
  if (b >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  } else if (b >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= (1 << 10)) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(b) / (1 << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  }
  return buf;
}

// What the command line asks for: a trace, or only the help or the model list.
struct ParsedFlags {
  bool help = false;
  bool list_models = false;
  std::string help_text;
  std::string output;
  bool all_ranks = false;  // --all-ranks: one file per NPU
  bool force = false;      // --force: write files past 4 GiB
};

// The flags of generate-llm, one field each (the defaults are the flags'). The whole-number
// flags are kept as text: their ranges depend on the shape (CheckLlmConfig checks them, and a
// text that is no number is named with that range).
struct LlmFlags {
  std::string output;
  bool all_ranks = false;
  std::string model;
  bool list_models = false;
  bool force = false;
  bool astra_sim = false;
  std::map<std::string, std::string> whole;  // by flag, the whole-number flags given
  std::string mlp;
  std::string schedule = "1f1b";
  std::string recompute = "none";
  std::string grad_sync = "end";
  std::string comm_streams = "1";
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  bool fp8 = false;
  std::string attention = "flash";
  std::string gpu_model;
  double peak_tflops = 989;
  double mem_bw_gbps = 3350;
};

// A whole-number flag: the LlmConfig field it sets and its help.
struct Whole {
  const char* flag;
  int64_t LlmConfig::*field;
  const char* help;
};

const std::vector<Whole>& WholeFlags() {
  static const std::vector<Whole> flags = {
      {"layers", &LlmConfig::layers, "transformer layers"},
      {"hidden", &LlmConfig::hidden, "hidden size h"},
      {"heads", &LlmConfig::heads, "attention heads"},
      {"kv-heads", &LlmConfig::kv_heads,
       "key-value heads (grouped-query attention; default: --heads)"},
      {"ffn-hidden", &LlmConfig::ffn_hidden,
       "MLP width (default 4h for gelu, 8h/3 up to a multiple of 256 for swiglu)"},
      {"vocab", &LlmConfig::vocab, "vocabulary (default 50257; padded to a multiple of 128·tp)"},
      {"seq-length", &LlmConfig::seq_length, "tokens per sequence (default 2048)"},
      {"micro-batch-size", &LlmConfig::micro_batch_size, "sequences per micro-batch (default 1)"},
      {"micro-batches", &LlmConfig::micro_batches,
       "micro-batches per pipeline per step (default: from --global-batch-size, else 4·pp, "
       "1 without a pipeline)"},
      {"global-batch-size", &LlmConfig::global_batch_size,
       "sequences per step = micro-batches × micro-batch-size × dp"},
      {"dp", &LlmConfig::dp, "data-parallel replicas (default 1)"},
      {"tp", &LlmConfig::tp, "tensor-parallel ranks per stage (default 1)"},
      {"pp", &LlmConfig::pp, "pipeline stages (default 1)"},
      {"cp", &LlmConfig::cp,
       "context-parallel ranks (default 1): each sequence split over cp ranks, which exchange "
       "keys and values around a ring for attention (Megatron-Core's --context-parallel-size)"},
      {"first-stage-layers", &LlmConfig::first_stage_layers,
       "layers on the first pipeline stage, or with --virtual-stages its first chunk (default: "
       "an even share; Megatron-Core's --decoder-first-pipeline-num-layers)"},
      {"last-stage-layers", &LlmConfig::last_stage_layers,
       "layers on the last pipeline stage, or its last chunk (default: an even share)"},
      {"virtual-stages", &LlmConfig::virtual_stages,
       "model chunks per pipeline stage (default 1); more runs Megatron-LM's interleaved 1F1B "
       "(--num-layers-per-virtual-pipeline-stage = layers / (pp × this)); micro-batches must be "
       "a multiple of pp"},
      {"experts", &LlmConfig::experts,
       "mixture of experts: experts per layer (default 0, a dense MLP; Megatron-Core's MoE with "
       "the all-to-all token dispatcher)"},
      {"moe-top-k", &LlmConfig::moe_top_k, "experts each token is routed to (default 2)"},
      {"moe-ffn-hidden", &LlmConfig::moe_ffn_hidden,
       "each expert's MLP width (default --ffn-hidden)"},
      {"ep", &LlmConfig::ep,
       "expert-parallel ranks (default 1): the experts spread over ep data-parallel replicas, "
       "which send each other their tokens (all-to-all); ep divides dp and --experts"},
      {"element-bytes", &LlmConfig::element_bytes,
       "bytes per activation and parameter (default 2, bf16)"},
      {"grad-bytes", &LlmConfig::grad_bytes,
       "bytes per gradient as reduced across replicas (default 4: Megatron-LM reduces bf16 "
       "models' gradients in fp32)"},
  };
  return flags;
}

// The flags other than the whole numbers, declared once.
void DeclareOutputFlags(FlagSchema<LlmFlags>& s) {
  using F = LlmFlags;
  s.String("output", &F::output)
      .Help(
          "output prefix: the rank files <output>.<r>.et of one data-parallel copy and "
          "<output>.manifest.yaml (how the copies fill the NPUs; a run reads both), or with "
          "--all-ranks NPU r's file <output>.<r>.et");
  s.Switch("all-ranks", &F::all_ranks)
      .Help(
          "write one file per NPU, NPU r's <output>.<r>.et (what ASTRA-sim reads), instead of "
          "one copy's files and a manifest; the simulated step is the same");
  s.String("model", &F::model)
      .Help(
          "a preset shape (--list-models); the shape flags override its values, and what the "
          "shape implies (GPT's key-value heads, a 4h or 8h/3 MLP) follows them");
  s.Switch("list-models", &F::list_models).Help("list the presets and exit");
  s.Switch("force", &F::force).Help("write the files even when they would come to more than 4 GiB");
  s.Switch("astra-sim", &F::astra_sim)
      .Help(
          "write what ASTRA-sim 2.0 runs: no METADATA node (it aborts on one); the groups are "
          "in <output>.comm_groups.json only, for its --comm-group-configuration");
}

void DeclareStepFlags(FlagSchema<LlmFlags>& s) {
  using F = LlmFlags;
  s.Enum("mlp", &F::mlp, {"gelu", "swiglu"})
      .Default("the model's, else gelu")
      .Help("gelu (GPT: two matrices) or swiglu (Llama: three)");
  s.Enum("schedule", &F::schedule, {"1f1b", "gpipe"})
      .Help(
          "pipeline schedule: 1f1b (PipeDream-Flush, Megatron-LM's) or gpipe (all forward "
          "passes, then all backward)");
  s.Enum("recompute", &F::recompute, {"none", "full"})
      .Help(
          "activation recomputation: none, or full (each layer's forward again before its "
          "backward)");
  s.Enum("grad-sync", &F::grad_sync, {"end", "layer"})
      .Help(
          "data-parallel gradient reduction: end (one after the backward passes, Megatron-LM's "
          "default) or layer (each layer's as the last micro-batch's backward produces it, "
          "overlapping the rest: DDP's buckets, Megatron-LM's --overlap-grad-reduce)");
  s.Enum("comm-streams", &F::comm_streams, {"1", "2"})
      .Help(
          "1: every collective of an NPU in one chain, for any system config; 2: the "
          "data-parallel reduction on a stream of its own, beside the tensor-parallel "
          "all-reduces (run it with communication-slots: 2 or more in the system config)");
  s.Switch("sequence-parallel", &F::sequence_parallel)
      .Help(
          "Megatron-LM's --sequence-parallel: outside the tensor-parallel products each rank "
          "keeps 1/tp of the sequence (reduce-scatters and all-gathers instead of all-reduces; "
          "pipeline hand-offs of 1/tp); needed for --experts with --tp > 1");
  s.Switch("distributed-optimizer", &F::distributed_optimizer)
      .Help(
          "ZeRO-1 (Megatron-LM's --use-distributed-optimizer): reduce-scatter the gradients, "
          "each replica updates its shard, all-gather the parameters");
  s.Switch("overlap-grad-reduce", &F::overlap_grad_reduce)
      .Help(
          "Megatron-LM's --overlap-grad-reduce: --grad-sync layer with --comm-streams 2 (each "
          "layer's gradients reduced on a stream of their own as the last backward produces "
          "them)");
  s.Switch("overlap-param-gather", &F::overlap_param_gather)
      .Help(
          "Megatron-LM's --overlap-param-gather (with --distributed-optimizer): every layer's "
          "parameters all-gathered at the step's start, beside the forward passes, each "
          "layer's first forward waiting for its own");
  s.Switch("tp-comm-overlap", &F::tp_comm_overlap)
      .Help(
          "Megatron-LM's --tp-comm-overlap (with --sequence-parallel): each tensor-parallel "
          "all-gather and reduce-scatter beside the product it feeds or drains");
  s.Switch("fp8", &F::fp8)
      .Help(
          "FP8 GEMMs (Transformer Engine): the layers' products at the GPU model's FP8 rate, "
          "with the casts of their inputs; needs --gpu-model");
  s.Enum("attention", &F::attention, {"flash", "unfused"})
      .Help(
          "with --gpu-model: flash (fused, FlashAttention) or unfused (Megatron-LM before "
          "FlashAttention: batched products over the whole s² scores, softmax and dropout in "
          "memory)");
  s.String("gpu-model", &F::gpu_model)
      .Help(
          "a GPU model (a machine profile's gpu.yaml, compute/README.md): each node's "
          "duration_micros from its GEMM, attention and memory rates, and each layer's "
          "memory-bound work as nodes; without it, the roofline of --peak-tflops and "
          "--mem-bw-gbps");
  // Bounded so that every node's duration holds in whole microseconds (1e-300 had written
  // durations of 2^63 us).
  s.Number("peak-tflops", &F::peak_tflops)
      .Unit("TFLOPS")
      .Min(1e-3)
      .Max(1e9)
      .Help(
          "the roofline giving each compute node's duration_micros: peak rate (default: H100 "
          "SXM dense BF16)");
  s.Number("mem-bw-gbps", &F::mem_bw_gbps)
      .Unit("GB/s")
      .Min(1e-3)
      .Max(1e9)
      .Help("and memory bandwidth (default: H100 SXM)");
}

const FlagSchema<LlmFlags>& LlmFlagSchema() {
  static const FlagSchema<LlmFlags>* schema = [] {
    auto* s = new FlagSchema<LlmFlags>();
    DeclareOutputFlags(*s);
    DeclareStepFlags(*s);
    return s;
  }();
  return *schema;
}

// The whole-number flags in `desc`, each read as text (boost would take "-1" for 2^64 − 1).
void AddWholeFlags(boost::program_options::options_description* desc) {
  for (const Whole& w : WholeFlags()) {
    desc->add_options()(w.flag, boost::program_options::value<std::string>(), w.help);
  }
}

// The settings of the non-whole flags into *c.
void ApplyStepFlags(const LlmFlags& f, LlmConfig* c) {
  if (!f.mlp.empty()) c->mlp = f.mlp == "gelu" ? Mlp::kGelu : Mlp::kSwiglu;
  c->schedule = f.schedule == "gpipe" ? PipelineSchedule::kGpipe : PipelineSchedule::kOneFOneB;
  c->recompute = f.recompute == "full";
  c->grad_sync = f.grad_sync == "layer" ? GradSync::kPerLayer : GradSync::kEnd;
  c->comm_streams = f.comm_streams == "2" ? 2 : 1;
  c->distributed_optimizer = f.distributed_optimizer;
  c->metadata_node = !f.astra_sim;
  c->overlap_param_gather = f.overlap_param_gather;
  c->tp_comm_overlap = f.tp_comm_overlap;
  c->fp8 = f.fp8;
  c->attention = f.attention == "flash" ? Attention::kFlash : Attention::kUnfused;
  c->sequence_parallel = f.sequence_parallel;
  c->peak_tflops = f.peak_tflops;
  c->mem_bw_gbps = f.mem_bw_gbps;
}

// --overlap-grad-reduce sets --grad-sync layer and --comm-streams 2; given otherwise, an error.
Status ApplyOverlapGradReduce(const LlmFlags& f, const std::set<std::string>& given, LlmConfig* c) {
  if (!f.overlap_grad_reduce) return Status::Ok();
  Status s;
  if (given.count("grad-sync") && f.grad_sync != "layer") {
    s.Merge(Status::Invalid("generate-llm", "--grad-sync", f.grad_sync,
                            "layer with --overlap-grad-reduce, or left out"));
  }
  if (given.count("comm-streams") && f.comm_streams != "2") {
    s.Merge(Status::Invalid("generate-llm", "--comm-streams", f.comm_streams,
                            "2 with --overlap-grad-reduce, or left out"));
  }
  c->grad_sync = GradSync::kPerLayer;
  c->comm_streams = 2;
  return s;
}

// The whole-number flags given into *c; those that do not parse into *unparsed (by flag).
void ApplyWholeFlags(const LlmFlags& f, LlmConfig* c,
                     std::map<std::string, std::pair<std::string, int64_t*>>* unparsed) {
  for (const Whole& w : WholeFlags()) {
    const auto given = f.whole.find(w.flag);
    if (given == f.whole.end()) continue;
    const std::optional<uint64_t> v = ParseWholeNumber(given->second, uint64_t{1} << 62);
    // 0 stands for "the default" inside LlmConfig: given on the command line it would be taken
    // silently as that; only --experts means something by 0 (a dense MLP).
    const bool zero_ok = std::string(w.flag) == "experts";
    if (!v || (*v == 0 && !zero_ok)) {
      (*unparsed)[std::string("--") + w.flag] = {given->second, &(c->*w.field)};
    } else {
      c->*w.field = static_cast<int64_t>(*v);
    }
  }
}

// The shape's checks too, so that one run names every problem once: a missing flag only as
// missing, a flag that did not parse with its text and range. With a flag that did not parse,
// only the ranges are checked (it is out of every range then), since a check across flags
// would judge the others against a value that was not given.
void CheckShape(LlmConfig* c, const std::set<std::string>& missing,
                std::map<std::string, std::pair<std::string, int64_t*>> unparsed, Status* s) {
  auto flag_of = [](const std::string& problem) {
    const std::string prefix = "generate-llm: ";
    const size_t is = problem.find(" is '");
    return problem.rfind(prefix, 0) == 0 && is != std::string::npos
               ? problem.substr(prefix.size(), is - prefix.size())
               : std::string();
  };
  for (auto& [flag, u] : unparsed) *u.second = -1;
  const Status checked = CheckLlmConfig(c);
  for (const std::string& problem : checked.problems()) {
    const std::string flag = flag_of(problem);
    const auto u = unparsed.find(flag);
    if (missing.count(flag) != 0) continue;
    if (u == unparsed.end()) {
      s->Add(problem);
      continue;
    }
    const size_t value = problem.find(" is '") + 5;
    s->Add(problem.substr(0, value) + u->second.first + problem.substr(problem.find('\'', value)));
    unparsed.erase(u);
  }
  for (const auto& [flag, u] : unparsed) {
    s->Merge(Status::Invalid("generate-llm", flag, u.first,
                             flag == "--experts" ? "a whole number" : "a whole number from 1"));
  }
}

// The config the flags in `vm` describe into *config; every problem in the Status.
Status ConfigFromFlags(const boost::program_options::variables_map& vm, LlmConfig* config,
                       ParsedFlags* parsed) {
  LlmConfig& c = *config;
  LlmFlags f;
  std::set<std::string> given;
  Status flags = LlmFlagSchema().Apply(vm, &f, &given);
  for (const Whole& w : WholeFlags()) {
    if (vm.count(w.flag)) f.whole[w.flag] = vm[w.flag].as<std::string>();
  }
  parsed->output = f.output;
  parsed->all_ranks = f.all_ranks;
  parsed->force = f.force;
  Status s;
  const Status preset = f.model.empty() ? Status::Ok() : ApplyLlmPreset(f.model, &c);
  s.Merge(preset);
  std::map<std::string, std::pair<std::string, int64_t*>> unparsed;
  ApplyWholeFlags(f, &c, &unparsed);
  std::set<std::string> missing;  // required flags not given
  if (f.model.empty()) {
    for (const char* needed : {"layers", "hidden", "heads"}) {
      if (f.whole.count(needed)) continue;
      missing.insert(std::string("--") + needed);
      s.Add(std::string("generate-llm: --") + needed +
            " is required without --model (presets: orrery generate-llm --list-models)");
    }
  }
  for (const std::string& p : flags.problems()) s.Add("generate-llm: " + p);
  ApplyStepFlags(f, &c);
  s.Merge(ApplyOverlapGradReduce(f, given, &c));
  if (!f.gpu_model.empty()) {
    StatusOr<GpuModel> g = LoadGpuModel(f.gpu_model);
    if (g.ok()) {
      c.gpu = *g;
    } else {
      s.Merge(g.status());
    }
  }
  if (preset.ok()) CheckShape(&c, missing, std::move(unparsed), &s);
  return s;
}

// generate-llm's flags into *config (checked by CheckLlmConfig); every problem in the Status.
Status ParseGenerateLlmFlags(int argc, char** argv, bool need_output, LlmConfig* config,
                             ParsedFlags* parsed) {
  namespace po = boost::program_options;
  po::options_description desc(
      "orrery generate-llm: one training step of a decoder-only transformer (GPT, Llama) with "
      "Megatron-LM's data, tensor and pipeline parallelism, as Chakra ET files "
      "<output>.<r>.et, one per NPU (r = stage·dp·tp + replica·tp + tp rank), and "
      "<output>.comm_groups.json");
  desc.add_options()("help,h", "print this help");
  AddWholeFlags(&desc);
  LlmFlagSchema().AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::Error(std::string("generate-llm: ") + e.what() +
                         " (see orrery generate-llm --help)");
  }
  if (vm.count("help")) {
    std::ostringstream text;
    text << desc << "\n";
    parsed->help = true;
    parsed->help_text = text.str();
    return Status::Ok();
  }
  if (vm.count("list-models")) {
    parsed->list_models = true;
    return Status::Ok();
  }
  if (need_output && (!vm.count("output") || vm["output"].as<std::string>().empty())) {
    return Status::Error("generate-llm: --output PREFIX is required");
  }
  return ConfigFromFlags(vm, config, parsed);
}

}  // namespace

std::vector<KeyDoc> GenerateLlmFlagDocs() {
  std::vector<KeyDoc> docs;
  for (const Whole& w : WholeFlags()) {
    KeyDoc d;
    d.name = w.flag;
    d.type = "int";
    d.allowed = "whole number, range checked with the shape";
    d.meaning = w.help;
    docs.push_back(d);
  }
  for (const KeyDoc& d : LlmFlagSchema().Docs()) docs.push_back(d);
  return docs;
}

StatusOr<LlmConfig> LlmConfigFromFlags(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"generate-llm"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  LlmConfig c;
  ParsedFlags parsed;
  Status s = ParseGenerateLlmFlags(static_cast<int>(argv.size()), argv.data(),
                                   /*need_output=*/false, &c, &parsed);
  if (s.ok() && (parsed.help || parsed.list_models)) {
    s = Status::Error("generate-llm: --help and --list-models make no trace");
  }
  if (!s.ok()) return s;
  return c;
}

namespace {

// What the files come to, before a byte is written: about 100 B per node (91 B measured on
// GPT-shaped ranks), so --layers 100000 on 64 NPUs is 11 GB, which is refused unless forced.
// Without --all-ranks only one data-parallel copy's files are written. "" or the problem.
std::string TooLarge(const LlmConfig& c, const ParsedFlags& parsed) {
  constexpr long double kBytesPerNode = 100;
  constexpr long double kMaxBytes = 4.0L * (1u << 30);
  const long double files =
      parsed.all_ranks ? static_cast<long double>(c.dp) * c.cp * c.tp * c.pp
                       : static_cast<long double>(CopyLayoutOf(c).copies > 1 ? CopyLayoutOf(c).ranks
                                                                             : ShapeOf(c).npus);
  const long double bytes = LlmNodesPerRank(c) * files * kBytesPerNode;
  if (bytes <= kMaxBytes || parsed.force) return "";
  char text[64];
  std::snprintf(text, sizeof text, "%.3Lg GB", bytes / 1e9);
  char line[512];
  std::snprintf(line, sizeof line,
                "generate-llm: would write about %.3Lg nodes per NPU in %.0Lf files, "
                "about %s (--layers %lld, --micro-batches %lld, dp %lld × tp %lld × pp %lld); "
                "more than 4 GiB: give --force to write it anyway, or fewer layers, "
                "micro-batches or NPUs",
                LlmNodesPerRank(c), files, text, static_cast<long long>(c.layers),
                static_cast<long long>(c.micro_batches), static_cast<long long>(c.dp),
                static_cast<long long>(c.tp), static_cast<long long>(c.pp));
  return line;
}

// The step's shape, as the first two lines of the summary.
void PrintShape(const LlmConfig& c, const LlmShape& shape) {
  std::printf("%s: %lld layers, hidden %lld, %lld heads", c.name.c_str(),
              static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.heads));
  if (c.kv_heads != c.heads) std::printf(" (%lld key-value)", static_cast<long long>(c.kv_heads));
  std::printf(", ffn %lld (%s)", static_cast<long long>(c.ffn_hidden), MlpName(c.mlp).c_str());
  if (c.experts > 0) {
    std::printf(" → %lld experts of %lld, %lld per token, over ep %lld",
                static_cast<long long>(c.experts), static_cast<long long>(ExpertFfn(c)),
                static_cast<long long>(c.moe_top_k), static_cast<long long>(c.ep));
  }
  std::printf(", vocabulary %lld (padded %lld), sequence %lld\n", static_cast<long long>(c.vocab),
              static_cast<long long>(shape.padded_vocab), static_cast<long long>(c.seq_length));
  std::printf(
      "  %lld NPUs = dp %lld%s × tp %lld × pp %lld; %s, %lld micro-batches of %lld (global batch "
      "%lld)%s%s\n",
      static_cast<long long>(shape.npus), static_cast<long long>(c.dp),
      c.cp > 1 ? (" × cp " + std::to_string(c.cp)).c_str() : "", static_cast<long long>(c.tp),
      static_cast<long long>(c.pp),
      c.schedule == PipelineSchedule::kGpipe
          ? "GPipe"
          : (c.virtual_stages > 1
                 ? "interleaved 1F1B (" + std::to_string(c.virtual_stages) + " chunks of " +
                       std::to_string(shape.layers_per_chunk) + " layers per stage)"
                 : std::string("1F1B"))
                .c_str(),
      static_cast<long long>(c.micro_batches), static_cast<long long>(c.micro_batch_size),
      static_cast<long long>(c.global_batch_size),
      (std::string(c.recompute ? ", full recomputation" : "") +
       (c.sequence_parallel && c.tp > 1 ? ", sequence parallelism" : ""))
          .c_str(),
      c.distributed_optimizer && c.dp > 1 ? ", distributed optimizer" : "");
}

// The weights, FLOPs, per-micro-batch sizes and the files written.
void PrintSizes(const LlmConfig& c, const LlmShape& shape, const std::string& output,
                int64_t written, size_t nodes) {
  int64_t params = 0;
  // Every expert once: the ep ranks of an expert-parallel group hold them all.
  for (int64_t stage = 0; stage < c.pp; ++stage) {
    params += shape.DenseStageParams(stage) + shape.ExpertStageParams() * c.ep;
  }
  params *= c.tp;
  std::printf("  weights %s (%s per NPU of stage 0)", Human(static_cast<double>(params)).c_str(),
              Human(static_cast<double>(shape.StageParams(0))).c_str());
  std::printf("; model FLOPs per step %sFLOP (%sFLOP per NPU)\n", Human(shape.step_flops).c_str(),
              Human(shape.step_flops / static_cast<double>(shape.npus)).c_str());
  std::printf("  per micro-batch: activations %s", Bytes(shape.activation_bytes).c_str());
  if (c.tp > 1) {
    std::printf(c.sequence_parallel ? " (each tensor-parallel reduce-scatter)"
                                    : " (each tensor-parallel all-reduce)");
  }
  if (c.pp > 1) std::printf(", %s sent between stages", Bytes(shape.hand_off_bytes).c_str());
  if (c.experts > 0 && c.ep > 1) {
    std::printf(", %s per expert all-to-all", Bytes(shape.dispatch_bytes).c_str());
  }
  std::printf("\n  wrote %s.0.et", output.c_str());
  if (written > 1)
    std::printf(" ... %s.%lld.et", output.c_str(), static_cast<long long>(written - 1));
  std::printf(" (up to %zu nodes each) and %s.comm_groups.json", nodes, output.c_str());
  if (written < shape.npus) {
    const LlmCopyLayout l = CopyLayoutOf(c);
    std::printf(
        ",\n  one data-parallel copy of %lld rank%s, and %s: %lld copies fill the %lld NPUs "
        "(--all-ranks writes a file per NPU)",
        static_cast<long long>(l.ranks), l.ranks == 1 ? "" : "s", ManifestPath(output).c_str(),
        static_cast<long long>(l.copies), static_cast<long long>(shape.npus));
  }
  std::printf("\n");
}

}  // namespace

int GenerateLlmMain(int argc, char** argv) {
  LlmConfig c;
  ParsedFlags parsed;
  Status s = ParseGenerateLlmFlags(argc, argv, /*need_output=*/true, &c, &parsed);
  if (s.ok() && parsed.help) {
    std::cout << parsed.help_text;
    return 0;
  }
  if (s.ok() && parsed.list_models) {
    std::cout << LlmPresetList();
    return 0;
  }
  if (!s.ok()) {
    for (const std::string& p : s.problems()) std::fprintf(stderr, "error: %s\n", p.c_str());
    return 1;
  }
  const std::string& output = parsed.output;
  if (const std::string big = TooLarge(c, parsed); !big.empty()) {
    std::fprintf(stderr, "error: %s\n", big.c_str());
    return 1;
  }
  size_t nodes = 0;
  int64_t files = 0;
  s = et::MakeTraceDirectory(output);
  if (s.ok() && parsed.all_ranks) s = WriteLlmAllRanks(c, output, &nodes);
  if (s.ok() && !parsed.all_ranks) s = WriteLlmCopies(c, output, &nodes, &files);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  const LlmShape shape = ShapeOf(c);
  PrintShape(c, shape);
  PrintSizes(c, shape, output, parsed.all_ranks ? shape.npus : files, nodes);
  if (c.comm_streams == 2) {
    std::fprintf(stderr,
                 "note: written for two communication streams: run with communication-slots: 2 "
                 "(or more) in the system config; with one slot, two NPUs can each hold it with a "
                 "collective the other has not reached, and the run stops naming them\n");
  }
  std::fprintf(stderr,
               "note: compute nodes carry num_ops and tensor_size: a system config with "
               "roofline-enabled: 1 times them from its peak-perf and local-mem-bw; their "
               "duration_micros are a roofline of %g TFLOPS and %g GB/s, rounded to whole "
               "microseconds\n",
               c.peak_tflops, c.mem_bw_gbps);
  return 0;
}

}  // namespace et
}  // namespace orrery

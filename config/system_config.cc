#include "config/system_config.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "config/schema.h"

namespace orrery {
namespace {

const char kAlgorithms[] =
    "ring, oneRing, direct, directN, oneDirect, oneDirectN, halvingDoubling, "
    "oneHalvingDoubling, doubleBinaryTree, nvls, channelRing (N >= 1 messages in flight; direct<N> "
    "also works)";

const char kNonZeroIsOn[] = "Any non-zero number means on there; here only 0, 1, true, false.";

// The longest delay a key may give: 1000 s, as for a network link's latency (the simulated
// clock, int64 picoseconds, holds about 106 days).
constexpr double kMaxDelayNs = 1e12;

// How collectives are ordered and chunked.
void AddCollectiveSchedulingKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  s.Enum("scheduling-policy", &C::scheduling_policy, {"LIFO", "FIFO", "EXPLICIT"})
      .Help(
          "Order in which waiting chunks of different collectives start on a queue: LIFO = "
          "newest collective first, FIFO = oldest first, EXPLICIT = by the trace node's "
          "comm_priority.")
      .AstraSim("No default there (the value is uninitialised when absent); here LIFO.");
  s.Enum("collective-optimization", &C::collective_optimization, {"baseline", "localBWAware"})
      .Help(
          "baseline runs the collective on every dimension in turn; localBWAware splits an "
          "all-reduce into reduce-scatter up the dimensions, all-reduce on the last, "
          "all-gather back down.")
      .AstraSim("No default there (uninitialised when absent); here baseline.");
  s.Enum("group-collectives", &C::group_collectives, {"flat", "hierarchical"})
      .Help(
          "How a communicator group smaller than the machine runs all-reduce, reduce-scatter, "
          "all-gather and all-to-all: flat = one ring over its sorted members with a 10 ns "
          "hand-off; hierarchical = when the members form a sub-grid of the network (one "
          "coordinate set per dimension), one phase per dimension they span, like a world "
          "collective; other groups stay flat. See system/README.md.")
      .AstraSim("Not an ASTRA-sim key; ASTRA-sim always runs the flat ring (the default).");
  s.Enum("broadcast-reduce-algorithm", &C::broadcast_reduce_algorithm, {"binomialTree", "ring"})
      .Help(
          "How broadcast and reduce move their data over the ring of members: binomialTree = a "
          "binomial tree at the root, each chunk whole per message; ring = NCCL's ring, a "
          "pipeline of slices (at most 512 KiB, at least four per member) along the ring from "
          "the root (broadcast) or to it (reduce). With nccl-model every broadcast and reduce "
          "runs ring. See system/README.md, 'Collectives beyond ASTRA-sim'.")
      .AstraSim("Not an ASTRA-sim key (ASTRA-sim 2.0 replays broadcast and aborts on reduce).");
  s.Integer("active-chunks-per-dimension", &C::active_chunks_per_dimension)
      .Min(1)
      .Max(1 << 20)
      .Help("Chunks in flight per dimension; per queue: ceil(this / queues per dimension).")
      .AstraSim("0 or negative values are not checked there.");
  s.Integer("preferred-dataset-splits", &C::preferred_dataset_splits)
      .Min(1)
      .Max(1 << 20)
      .Help("Number of chunks a collective is split into (chunk = size / splits).")
      .AstraSim("Default 0 there, which divides by zero; here 1.");
}

// What a message costs at its ends: endpoint delay, reduction, the LogGP shared bus.
void AddEndpointKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  // Whole ns: ASTRA-sim reads it into an int (10.5 runs as 10) and so does the engine here
  // (SystemParams::endpoint_delay_ns); LoadSystemConfig refuses a fraction rather than drop it.
  s.OptionalNumber("endpoint-delay", &C::endpoint_delay_ns)
      .Unit("ns")
      .Min(0)
      .Max(kMaxDelayNs)
      .AllowedText("whole numbers in [0, " + FormatNumber(kMaxDelayNs) + "]")
      .Default("absent (10 ns)")
      .Help(
          "NPU <-> network hand-off delay per message step, in whole ns. Multiplied by "
          "--injection-scale only when written in the file, the product truncated to whole ns "
          "(10 x 1.55 = 15 ns); when absent it is 10 ns, unscaled.")
      .AstraSim(
          "Read as an int there: a fraction is dropped (10.5 runs as 10); here it is an error. "
          "The product with --injection-scale is truncated the same way.");
  s.Integer("local-reduction-delay", &C::local_reduction_delay)
      .Unit("cycles (ns)")
      .Min(0)
      .Max(1000000000)
      .Help(
          "Reduction cost of the shared-bus (LogGP) model: (size/100) * this + 50 ns per "
          "reduced message, one at a time per bus end.");
  s.Bool("model-shared-bus", &C::model_shared_bus)
      .Help(
          "1 = every collective message crosses the NPU's bus to its network interface (and "
          "a memory bus) costed by LogGP (L, o, g, G) instead of endpoint-delay; see "
          "system/README.md, 'Shared bus'.")
      .AstraSim(kNonZeroIsOn);
  s.Number("L", &C::logp_L)
      .Unit("ns")
      .Min(0)
      .Max(kMaxDelayNs)
      .Help("LogGP latency (model-shared-bus only); whole ns, fractions dropped (as ASTRA-sim).");
  s.Number("o", &C::logp_o)
      .Unit("ns")
      .Min(0)
      .Max(kMaxDelayNs)
      .Help("LogGP overhead (model-shared-bus only); whole ns, fractions dropped.");
  s.Number("g", &C::logp_g)
      .Unit("ns")
      .Min(0)
      .Max(kMaxDelayNs)
      .Help("LogGP gap between sends (model-shared-bus only); whole ns, fractions dropped.");
  s.Number("G", &C::logp_G)
      .Unit("ns per byte")
      .Min(0)
      .Max(1e6)
      .Help("LogGP gap per byte (model-shared-bus only).");
}

// How compute nodes are timed (the roofline and GPU model).
void AddComputeKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  s.Number("peak-perf", &C::peak_perf_tflops)
      .Unit("TFLOPS (1e12 FLOP/s)")
      .Min(0)
      .Help("Peak compute rate for the roofline model (roofline-enabled).");
  s.Number("local-mem-bw", &C::local_mem_bw_gbps)
      .Unit("GB/s (1e9 B/s)")
      .Min(0)
      .Help(
          "Local memory bandwidth: roofline bandwidth and the cost of reducing a received "
          "message, 3 * size / local-mem-bw. Must be > 0 when the workload reduces (all-reduce, "
          "reduce-scatter).")
      .AstraSim(
          "Default 0 there makes every reduction take forever; here a reducing collective "
          "with 0 is an error naming it.");
  s.Bool("roofline-enabled", &C::roofline_enabled)
      .Help(
          "1 = compute nodes take time from the roofline (peak-perf, local-mem-bw) instead of "
          "their recorded duration.")
      .AstraSim(kNonZeroIsOn);
  s.String("gpu-model", &C::gpu_model)
      .Help(
          "Path (relative to this file) of a GPU model, gpu.yaml as in configs/machines/ "
          "(compute/README.md). With roofline-enabled, compute nodes are timed at the rates the "
          "GPU reaches instead of peak-perf and local-mem-bw: num_ops / min(BF16 peak x "
          "gemm-efficiency-bf16, memory bandwidth x memory-efficiency x intensity) + "
          "kernel-overhead-us. Requires roofline-enabled: 1.")
      .AstraSim("Not in ASTRA-sim.");
}

// NCCL-like costs of a collective and of point-to-point sends, and the streams that run them.
void AddNcclKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  s.Number("collective-launch-latency", &C::collective_launch_latency_ns)
      .Unit("ns")
      .Min(0)
      .Max(kMaxDelayNs)
      .Help(
          "Fixed time every collective spends before its first message moves (kernel launch, "
          "channel set-up, the protocol's handshakes): NCCL's latency floor. The "
          "communication slot is held meanwhile.")
      .AstraSim("Not in ASTRA-sim (0 there).");
  s.Number("protocol-efficiency", &C::protocol_efficiency)
      .Greater(0)
      .Max(1)
      .Help(
          "Share of the bytes a collective moves that is payload (NCCL's protocols add flags "
          "and headers, and do not reach line rate): every collective moves its size / this. "
          "1 = the network's line rate.")
      .AstraSim("Not in ASTRA-sim (1 there).");
  s.String("nccl-model", &C::nccl_model)
      .Help(
          "Path (relative to this file) of an NCCL model, nccl.yaml as in configs/machines/: every "
          "collective then runs the (algorithm, protocol) that model makes fastest for its type, "
          "size and group, as NCCL's tuner picks, with that choice's algorithms, launch latency "
          "and efficiency in place of the *-implementation lists, collective-launch-latency and "
          "protocol-efficiency.")
      .AstraSim("Not in ASTRA-sim.");
  s.Integer("p2p-chunk-size", &C::p2p_chunk_size)
      .Unit("bytes")
      .Min(0)
      .Max(int64_t{1} << 40)
      .Help(
          "Point-to-point sends (the trace's COMM_SEND nodes) move in pieces of this many bytes "
          "sent back to back, as NCCL moves them in chunks (NCCL_P2P_NET_CHUNKSIZE, 128 KiB by "
          "default; NCCL_P2P_NVL_CHUNKSIZE 512 KiB over NVLink): on the congestion-aware "
          "backend a switch or relay forwards a piece while the next arrives, instead of "
          "storing the whole message (with aware-forwarding: pipelined, the smaller of this and "
          "packet-mtu). 0 = whole messages. Collectives are not affected.")
      .AstraSim("Not an ASTRA-sim key; ASTRA-sim stores and forwards whole messages (0).");
  s.Integer("communication-slots", &C::communication_slots)
      .Min(1)
      .Max(1024)
      .Help(
          "How many collectives, sends and remote-memory accesses an NPU runs at once: its "
          "communication streams (a real GPU runs NCCL kernels of different communicators, e.g. "
          "a data-parallel reduction beside a tensor-parallel all-reduce, on separate streams). "
          "More than 1 lets collectives of different groups overlap (as far as "
          "active-chunks-per-dimension lets a dimension serve their chunks at once); a trace "
          "must then order each group's collectives alike on every member, or the run stops "
          "naming the NPUs that wait for each other.")
      .AstraSim("Not in ASTRA-sim (one slot there).");
}

// What a run replays, logs and records.
void AddRecordingKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  s.Bool("trace-enabled", &C::trace_enabled)
      .Help(
          "1 = log a line per node issued and completed, in ASTRA-sim's words "
          "(issue,sys->id=0, tick=0, node->id=1, node->name=fwd, node->type=4; callback,...), "
          "on the log at info level (--log-file to keep them); single runs only, not sweep "
          "points.")
      .AstraSim(kNonZeroIsOn);
  s.Bool("replay-only", &C::replay_only)
      .Help(
          "1 = every node, communication, memory and invalid nodes included, takes its recorded "
          "duration_micros (0 us runs as 1 ns). As in ASTRA-sim, the exposed communication of "
          "the sys[i] finished line then subtracts every replayed node that is not a CPU op "
          "(ASTRA-sim counts them all as GPU time), so it is negative when replayed "
          "communication overlaps compute (ASTRA-sim's unsigned ticks would wrap around there; "
          "--report's breakdown is the overlap-aware one).")
      .AstraSim(kNonZeroIsOn);
  s.Bool("track-local-mem", &C::track_local_mem)
      .Help(
          "1 = local memory tracker: from the nodes' inputs/outputs attributes (string_list "
          "[name, bytes, ...]) it prints each NPU's peak of held tensors and writes "
          "<local-mem-trace-filename>.<npu>.json (workload/README.md).")
      .AstraSim(
          "Any non-zero number means on there; here only 0, 1, true, false. A node without "
          "the attributes holds nothing here (ASTRA-sim stops).");
  s.String("local-mem-trace-filename", &C::local_mem_trace_filename)
      .Help(
          "Output prefix of the local memory tracker (track-local-mem): one Chrome-trace JSON "
          "per NPU, <prefix>.<npu>.json, relative to the working directory.");
}

// Which algorithm each collective runs, native or custom.
void AddImplementationKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  const struct {
    const char* key;
    std::vector<std::string> C::*field;
    const char* what;
  } kNative[] = {
      {"all-reduce-implementation", &C::all_reduce_implementation, "all-reduce"},
      {"reduce-scatter-implementation", &C::reduce_scatter_implementation, "reduce-scatter"},
      {"all-gather-implementation", &C::all_gather_implementation, "all-gather"},
      {"all-to-all-implementation", &C::all_to_all_implementation, "all-to-all"},
  };
  for (const auto& n : kNative) {
    s.StringList(n.key, n.field)
        .MinLength(1)
        .Check(CheckCollectiveAlgorithmName)
        .AllowedText(kAlgorithms)
        .Help(std::string("Native ") + n.what +
              " algorithm per logical dimension (one entry per dimension, at most the "
              "network's). Needed only when the workload runs this collective.")
        .AstraSim(
            "Names are checked only when that collective runs there; here when the file "
            "is read.");
  }
  const struct {
    const char* key;
    std::vector<std::string> C::*field;
    const char* what;
  } kCustom[] = {
      {"all-reduce-implementation-custom", &C::all_reduce_implementation_custom, "all-reduce"},
      {"reduce-scatter-implementation-custom", &C::reduce_scatter_implementation_custom,
       "reduce-scatter"},
      {"all-gather-implementation-custom", &C::all_gather_implementation_custom, "all-gather"},
      {"all-to-all-implementation-custom", &C::all_to_all_implementation_custom, "all-to-all"},
  };
  for (const auto& n : kCustom) {
    s.StringList(n.key, n.field)
        .ExactLength(1)
        .AllowedText("one Chakra ET prefix")
        .Help(std::string("Custom (MSCCL-style) ") + n.what +
              ": the prefix of the per-rank algorithm traces <prefix>.<rank>.et, used for every " +
              n.what + " instead of the native list.");
  }
  s.String("per-node-custom-implementation", &C::per_node_custom_implementation)
      .Help(
          "Path of a YAML map {<trace node id>: <ET prefix>} choosing a custom algorithm per "
          "collective node; takes precedence over the *-custom keys.");
}

// ASTRA-sim 1.0's scheduling keys, and those accepted for compatibility only.
void AddDimensionSchedulingKeys(Schema<SystemConfig>& s) {
  using C = SystemConfig;
  s.Enum("intra-dimension-scheduling", &C::intra_dimension_scheduling,
         {"FIFO", "smallestFirst", "lessRemainingPhaseFirst"})
      .Help(
          "Which waiting chunk a dimension's queue starts next: FIFO = by scheduling-policy "
          "priority (then arrival); smallestFirst = the smallest phase input first; "
          "lessRemainingPhaseFirst = the chunk with the fewest phases left first (ties: "
          "scheduling-policy). See system/README.md.")
      .AstraSim(
          "Not read by ASTRA-sim 2.0 (a 1.0 key; 2.0 always uses FIFO). 1.0's RG is not "
          "offered.");
  s.Enum("inter-dimension-scheduling", &C::inter_dimension_scheduling,
         {"ascending", "offlineGreedy", "roundRobin"})
      .Help(
          "Order in which each chunk visits the dimensions: ascending = 0, 1, ... (all-gather "
          "reversed); roundRobin = rotated by one per chunk; offlineGreedy = Themis-style, the "
          "least-loaded dimension (estimated serialization time so far) takes the largest "
          "share. See system/README.md.")
      .AstraSim(
          "Not read by ASTRA-sim 2.0 (a 1.0 key; 2.0 always uses ascending). 1.0's "
          "offlineGreedyFlex (chunk resizing) is not offered.");
  s.Bool("boost-mode", &C::boost_mode)
      .Help(
          "Accepted for compatibility with ASTRA-sim example files; has no effect (not read "
          "by ASTRA-sim 2.0 either).")
      .AstraSim("Not read by ASTRA-sim 2.0; here its value is checked, then unused.");
}

// Every key of a system config file, in declaration order (the order help lists them).
Schema<SystemConfig> MakeSystemSchema() {
  Schema<SystemConfig> s;
  AddCollectiveSchedulingKeys(s);
  AddEndpointKeys(s);
  AddComputeKeys(s);
  AddNcclKeys(s);
  AddRecordingKeys(s);
  AddImplementationKeys(s);
  AddDimensionSchedulingKeys(s);
  return s;
}

}  // namespace

std::string SplitCollectiveAlgorithm(const std::string& name, std::string* base, int* window) {
  static const char* const kBases[] = {"ring",
                                       "oneRing",
                                       "direct",
                                       "oneDirect",
                                       "halvingDoubling",
                                       "oneHalvingDoubling",
                                       "doubleBinaryTree",
                                       "nvls",
                                       "channelRing"};
  *base = name;
  *window = -1;
  for (const char* windowed : {"oneDirect", "direct"}) {
    const std::string w = windowed;
    if (name.size() <= w.size() || name.compare(0, w.size(), w) != 0) continue;
    std::string digits = name.substr(w.size());
    if (digits.front() == '<' && digits.back() == '>') digits = digits.substr(1, digits.size() - 2);
    bool all_digits = !digits.empty() && digits.size() <= 9;
    for (char c : digits) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
    if (!all_digits || std::atoi(digits.c_str()) < 1) {
      return w + "N or " + w + "<N> with a whole number N >= 1 (e.g. " + w + "4)";
    }
    *base = w;
    *window = std::atoi(digits.c_str());
    return "";
  }
  if (name.find('<') != std::string::npos) {
    return std::string("one of ") + kAlgorithms + "; a window N is valid only after direct " +
           "or oneDirect";
  }
  std::vector<std::string> valid;
  for (const char* b : kBases) {
    if (name == b) return "";
    valid.push_back(b);
  }
  std::string guess = DidYouMean(name, valid);
  return std::string("one of ") + kAlgorithms +
         (guess.empty() ? "" : " (did you mean '" + guess + "'?)");
}

std::string CheckCollectiveAlgorithmName(const std::string& name) {
  std::string base;
  int window = 0;
  return SplitCollectiveAlgorithm(name, &base, &window);
}

StatusOr<SystemConfig> LoadSystemConfig(const std::string& path) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  return LoadSystemConfig(*file);
}

StatusOr<SystemConfig> LoadSystemConfig(const ConfigFile& config_file) {
  const ConfigFile* file = &config_file;
  const std::string& path = file->path();
  SystemConfig config;
  std::set<std::string> valid;
  Status status = MakeSystemSchema().Apply(*file, &config, &valid);
  if (valid.count("endpoint-delay") &&
      *config.endpoint_delay_ns != std::floor(*config.endpoint_delay_ns)) {
    const YAML::Node v = file->Get("endpoint-delay");
    status.Add(file->Where(v) + ": key 'endpoint-delay' is '" + v.Scalar() +
               "'; expected a whole number of ns in [0, " + FormatNumber(kMaxDelayNs) +
               "] (ASTRA-sim reads it as an int, so " + v.Scalar() + " would run as " +
               FormatNumber(std::floor(*config.endpoint_delay_ns)) + " there)");
  }
  if (!status.ok()) return status.Capped(kMaxProblemsPerFile, path);
  config.path = path;
  return config;
}

std::vector<KeyDoc> SystemConfigKeys() { return MakeSystemSchema().Docs(); }

YAML::Node SystemConfigYaml(const SystemConfig& config) {
  return MakeSystemSchema().ToYaml(config);
}

}  // namespace orrery

// What NCCL does on top of the wire, per machine profile (`nccl.yaml` in the profile directory):
// the algorithms its tuner chooses between, the protocols, and what each costs beyond the
// simulated messages.
//
//   StatusOr<NcclModel> m = LoadNcclModel("configs/machines/hgx-h100/nccl.yaml");
//   for (const NcclChoice& c : Choices(*m, "")) ... c.algorithm, c.protocol, c.latency_us ...
//
// A choice (algorithm a, protocol p) runs algorithm a's messages (NcclImplementations) with
//   collective-launch-latency = a.latency + p.latency     (the per-collective floor; a ring
//                               also pays p.step-latency per step inside a node: LatencyAt)
//   protocol-efficiency       = a.efficiency * p.efficiency  (achieved share of line rate;
//                               for nvls with chunking, times its chunk term, and for a lone
//                               nvls reduce-scatter or all-gather, its one-way rule: EfficiencyAt)
// and NCCL's tuner is taken to pick the fastest choice at every size and scale (validate.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"

namespace orrery {

struct NcclProtocol {
  std::string name;  // LL, LL128, Simple
  double latency_us = 0;
  double efficiency = 1;
  // What each of a ring's steps inside a node waits beyond LL's handshake, which the simulated
  // hop already carries (LatencyAt); a constant of the protocol, not fitted.
  double step_latency_us = 0;
  // What each of a ring's steps across the network waits beyond what the simulated crossing
  // carries (LatencyAt): NCCL's per-step latency of the protocol over the network plus the
  // network plugin's reported latency (tuning.cc: hwLat[NET] + latencyInter, twice for
  // Simple's flush), less the profile network's own latency per crossing. Not fitted.
  double network_step_latency_us = 0;
};

// NCCL's NVLS chunk schedule (enqueue.cc, calcCollChunking), for nvls and nvlstree. NCCL moves an
// NVLS collective in chunks of at most 128 KiB; with `ops` = channels x GPUs per node working at
// once, one node halves the chunk to 64, 32, 16 KiB below 64, 8, 2 x ops x chunk bytes; across
// nodes (NVLS-tree) to 64 and 32 KiB below 4 and 1 x ops x chunk (64 KiB at most from 4 nodes).
// Each chunk costs a fixed overhead, given as the bytes the link would move meanwhile: the achieved
// efficiency is chunk / (chunk + overhead), so small chunks cost more than large ones.
struct NcclChunking {
  bool modelled = false;    // `chunk-overhead-kib` given: calibrate fits it
  double overhead_kib = 0;  // each chunk costs as much as moving this much more
  int channels = 16;        // NCCL's NVLS channels (NCCL_NVLS_NCHANNELS; 16 on Hopper)
};

struct NcclAlgorithm {
  std::string name;  // ring, tree, nvls, nvlstree
  double latency_us = 0;
  double efficiency = 1;
  std::vector<std::string> protocols;  // the ones it runs with; empty = all
  NcclChunking chunking;               // nvls and nvlstree only
};

struct NcclModel {
  std::string path;
  std::vector<NcclAlgorithm> algorithms;
  std::vector<NcclProtocol> protocols;
};

struct NcclChoice {
  std::string algorithm;
  std::string protocol;
  double latency_us = 0;
  double algorithm_efficiency = 1;  // a.efficiency, before chunking
  double protocol_efficiency = 1;   // p.efficiency
  double step_latency_us = 0;       // p.step_latency_us
  NcclChunking chunking;
  double network_step_latency_us = 0;  // p.network_step_latency_us
  // Both shares, before chunking: EfficiencyAt gives a collective's.
  double efficiency() const { return algorithm_efficiency * protocol_efficiency; }
};

// The kinds of collective NCCL's cost terms tell apart.
enum class NcclKind {
  kAllReduce,
  kSplit,  // a reduce-scatter or all-gather: the buffer split between the GPUs
  kOther,  // broadcast, reduce, all-to-all, ...
};

// A collective as NCCL's cost terms see it.
struct NcclCall {
  uint64_t bytes = 0;  // NCCL's count: the whole buffer (a gathered all-gather's output)
  int heads = 1;       // GPUs taking part per node
  int nodes = 1;       // nodes it spans
  NcclKind kind = NcclKind::kAllReduce;
  // The simulator runs it as one flat ring over its members whatever the algorithm (a
  // communicator group under group-collectives: flat, or one that is not a sub-grid).
  bool flat_ring = false;
};

// The steps of NCCL's ring for this collective that stay inside a node (tuning.cc: nsteps -
// nInterSteps): 2·nodes·(heads - 1) for an all-reduce, nodes·(heads - 1) for a reduce-scatter
// or all-gather, 0 for anything else (NCCL's cost model has no such steps for them).
int RingStepsInNode(const NcclCall& call);

// The steps of NCCL's `algorithm` for this collective that cross the network, as its cost model
// counts them (tuning.cc): a ring's nInterSteps, 2·(nodes - 1) for an all-reduce and nodes - 1
// for a reduce-scatter or all-gather; a tree's or NVLS-tree's 2·log2(nodes) (rounded down, as
// log2i) for an all-reduce; 0 for anything else and on one node.
int StepsAcrossNodes(const std::string& algorithm, const NcclCall& call);

// The per-collective floor of choice `c` on that collective, µs: c.latency_us, plus for a ring
// c.step_latency_us per ring step inside a node, plus c.network_step_latency_us per step across
// the network (StepsAcrossNodes). NCCL's own cost model charges every step a per-protocol
// latency (tuning.cc, hwLat; a ring's on NVLink LL 0.47, LL128 1.9, Simple 3.4 µs; over the
// network LL 2.7, LL128 4.0, Simple 14 µs plus the network plugin's reported latency); the
// simulated hop carries LL's inside a node and the network's latency across it, and the two
// keys the rest. Paid once per collective: NCCL pipelines a channel's slices one behind the
// other, so the steps' latencies add up once, along the first slice's way.
double LatencyAt(const NcclChoice& c, const NcclCall& call);

// The chunk NCCL's NVLS schedule takes for a collective of `bytes` (NCCL's count: the whole
// buffer, a gathered all-gather's output) on `nodes` nodes of `heads` GPUs each.
uint64_t NvlsChunkBytes(uint64_t bytes, int channels, int heads, int nodes);

// The share of line rate choice `c` achieves on that collective, in (0, 1]: its efficiency(),
// with the algorithm's share times chunk / (chunk + overhead) when its chunking is modelled.
//
// NVLS's own share d (the algorithm's efficiency, times its chunk term) is what the switch
// sustains with SHARP traffic crossing each GPU's port both ways at once, as in an all-reduce
// (D + D/n up and down): it bounds the two directions together at 2·d·rate. A lone
// reduce-scatter or all-gather on one node loads one direction with D and the other with D/n
// (NVIDIA/nccl #1083, #1506), so its busier direction runs at the protocol's own rate unless
// the two together reach that bound: its share is p·min(1, 2·d·n/(n + 1)).
double EfficiencyAt(const NcclChoice& c, const NcclCall& call);

// Why NCCL would not run `algorithm` for collective `call`, or "" if it would. Tree is NCCL's
// for all-reduce only (NVIDIA/nccl #1413: its trees apply to nothing else), and is costed across
// nodes only: within one node NCCL's tree is a chain, which Orrery does not model (as on a
// machine of one dimension, NcclImplementations); a group inside one node of a larger machine
// would otherwise run "tree" as the ring in its node at tree's constants. NVLS runs all-reduce,
// reduce-scatter and all-gather within one node only (across nodes it needs CollNet); across
// nodes NCCL runs NVLS-tree (nvlstree), all-reduce only, with its own constants. The rest go by
// ring: broadcast and reduce are ring algorithms, all-to-all, gather and scatter NCCL's
// point-to-point sends, costed as ring's. A call the simulator runs as one flat ring
// (NcclCall::flat_ring) takes ring only: any other algorithm would be that ring at its
// constants, under its name. The tuner and calibrate both ask it.
std::string NcclDoesNotRun(const std::string& algorithm, const NcclCall& call);

// Valid names, for messages.
extern const char kNcclAlgorithms[];  // "ring, tree, nvls, nvlstree"
extern const char kNcclProtocols[];   // "LL, LL128, Simple"
// Whether `s` is one of kNcclAlgorithms.
bool IsNcclAlgorithm(const std::string& s);

StatusOr<NcclModel> LoadNcclModel(const std::string& path);
// The same for a document already read (or a section of a printed configuration); `path` names
// it in messages.
StatusOr<NcclModel> LoadNcclModel(const YAML::Node& root, const std::string& path);
// The model `root` gives with every key's effective value: its keys as written, the others with
// their defaults (an entry's latency-us 0 and efficiency 1, a protocol's step latencies 0, an
// nvls entry's channels 16 when it models chunks), names in the file's order. Errors:
// LoadNcclModel's.
StatusOr<YAML::Node> NcclModelWithDefaults(const YAML::Node& root, const std::string& path);
// nccl.yaml's keys as nccl/README.md lists them: the top level's, an algorithm's (nvls's and
// nvlstree's, a superset of ring's and tree's) and a protocol's.
std::vector<KeyDoc> NcclModelKeys();
std::vector<KeyDoc> NcclAlgorithmKeys();
std::vector<KeyDoc> NcclProtocolKeys();
// The model as nccl.yaml text, after `comment` (lines starting with '#').
std::string FormatNcclModel(const NcclModel& m, const std::string& comment);

// Every (algorithm, protocol) the model allows, limited by `algorithm` and `protocol` when they
// are not "": NCCL_ALGO's and NCCL_PROTO's syntax ("ring", "nvls,ring", "^nvls" for all but;
// names without case). An unknown name is an error; so is a limit that leaves no choice.
StatusOr<std::vector<NcclChoice>> Choices(const NcclModel& m, const std::string& algorithm,
                                          const std::string& protocol = "");
// The algorithms of kNcclAlgorithms that NCCL_ALGO's `spec` keeps ("" = all), and the protocols
// of kNcclProtocols that NCCL_PROTO's keeps; or an error naming the name that is not one (NCCL's
// CollNet and PAT, which Orrery does not model, may be excluded: "^collnet").
StatusOr<std::set<std::string>> NcclAlgorithmsIn(const std::string& spec);
StatusOr<std::set<std::string>> NcclProtocolsIn(const std::string& spec);

// The system keys that make the collective engine run NCCL algorithm `name` on a network of
// `dims` dimensions (the last one being the nodes when dims > 1):
//   ring: ring on one node; across nodes NCCL's flat ring, one per channel (channelRing);
//   tree: ring inside the node, doubleBinaryTree across nodes (dims > 1 only);
//   nvls: nvls inside the node (NCCL's NVLS runs within one node: NcclDoesNotRun);
//   nvlstree: nvls inside the node, doubleBinaryTree across nodes (NCCL's NVLS-tree, its own
//             algorithm with its own constants; dims > 1 only).
// All-to-all is direct on every dimension whatever the algorithm: NCCL's all-to-all is
// point-to-point sends to every peer at once, so each GPU's port (and across nodes its own NIC)
// carries its share once; a ring would forward each piece through up to n - 1 GPUs.
// Keys: all-reduce-, reduce-scatter-, all-gather-, all-to-all-implementation.
StatusOr<std::map<std::string, std::vector<std::string>>> NcclImplementations(
    const std::string& name, int dims);

}  // namespace orrery

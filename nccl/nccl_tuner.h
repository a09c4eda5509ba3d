// NCCL's per-call choice of algorithm and protocol, for ordinary runs (system key `nccl-model`)
// and for `orrery validate` alike.
//
//   StatusOr<NcclModel> m = LoadNcclModel("configs/machines/hgx-h100/nccl.yaml");
//   NcclTuner tuner(*m, "", topology, net_params, backend, params, &system_layer);
//   workload_params.tuner = &tuner;   // every collective now runs NCCL's choice
//
// For each distinct collective (type, size, group, involved dimensions, root) the tuner
// simulates it alone, once per (algorithm, protocol) the model allows (nccl/nccl_model.h), on
// a fresh copy of the run's network and system layer, exactly as an executor would run it: the
// choice's launch floor, then the collective with that choice's algorithms moving
// size / efficiency bytes. The fastest choice wins (the first listed on a tie), as NCCL's tuner
// means to pick by its cost model. Choices are probed likeliest first (floor + size at the
// choice's efficiency over the slowest dimension), and a probe stops once it runs past the best
// time found: it could not win, so the choice is the same as probing every one to the end; a choice
// that cannot run there (tree on one node, ...) or that NCCL does not offer for the collective
// (tree for anything but all-reduce, NVLS for a reduce-scatter or all-gather across nodes, anything
// but ring for the rest) is skipped. Choices are cached, so a training trace pays one probe per
// distinct collective; and groups that are copies of each other (the same members, in the same
// order, moved to another node or slot, or along a ring or mesh without wrapping: each copy's
// tensor-parallel group under --replicate-trace) share one probe. On a network of dimensions
// without slow links that is their shape alone, since a collective alone uses only the links
// of the dimensions its group spans and every instance of a dimension is alike; on a graph,
// with slow links, or on the packet backend (whose ECMP hash picks among equal routes by the
// NPU ids) the routes among the members must be alike too (Network::RouteSignature).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "nccl/nccl_model.h"
#include "network/factory.h"
#include "network/network.h"
#include "system/collective_engine.h"
#include "system/system_params.h"
#include "workload/executor.h"

namespace orrery {

// One distinct collective the tuner chose for, in the order first asked.
struct NcclTunedCollective {
  CollectiveType type = CollectiveType::kAllReduce;
  uint64_t size = 0;    // as the trace asks (before efficiency)
  int group = 0;        // 0 = all NPUs
  int group_size = 0;   // NPUs taking part
  std::string choice;   // "nvls/Simple"
  Time predicted;       // the chosen collective alone: launch floor + transfer
  bool shared = false;  // chosen by the probes of a copy of its group elsewhere (ShapeOf)
};

class NcclTuner : public CollectiveTuner {
 public:
  // `algorithm`, `protocol` "" = every algorithm, protocol of the model; else NCCL_ALGO's and
  // NCCL_PROTO's syntax ("ring", "nvls,ring", "^nvls"; nccl/nccl_model.h, Choices). `groups`
  // (the run's system layer) is asked for communicator groups' members, `network` (the run's)
  // for route signatures. Fails when the model offers no choice this network can run (e.g.
  // only tree on one node).
  static StatusOr<std::unique_ptr<NcclTuner>> Make(
      const NcclModel& model, const std::string& algorithm, const std::string& protocol,
      const Topology& topology, const NetworkParams& net_params, Backend backend,
      const SystemParams& params, const SystemLayer* groups, const Network& network);

  StatusOr<CollectiveChoice> Choose(const CollectiveRequest& req) override;
  // The flag that forced the algorithm, as errors name it (default --nccl-algorithm).
  void set_forcing_flag(std::string flag) { forcing_flag_ = std::move(flag); }

  const std::vector<NcclTunedCollective>& tuned() const { return tuned_; }

 private:
  struct Option {
    std::string name;  // "ring/LL"
    std::array<std::vector<AlgorithmSpec>, kNumNativeColl> impl;
    NcclChoice choice;  // for its floor and efficiency on a collective (LatencyAt, EfficiencyAt)
    // Admitted by the forced algorithm list (all of them when none is forced), which limits
    // all-reduce, reduce-scatter and all-gather only, as NCCL_ALGO does.
    bool forced_in = true;
  };
  using Key = std::tuple<int, uint64_t, int, std::vector<bool>, int>;
  // A collective up to where its group sits: (type, size, members, involved dimensions, root)
  // with the members and root moved so that the group's least coordinate in every dimension is
  // 0, and on an explicit graph, with slow links or on the packet backend the class of the
  // routes among the members (RouteClass; -1 otherwise) (ShapeOf).
  using ShapeKey = std::tuple<int, uint64_t, std::vector<int>, std::vector<bool>, int, int>;

  NcclTuner() = default;
  // The option a distinct collective runs, and the efficiency and floor it has there.
  struct Chosen {
    size_t option = 0;  // index into options_
    double efficiency = 1;
    Time latency;  // its floor for this collective (LatencyAt)
  };

  // The collective alone on `members` with option `o` at `efficiency` after floor `latency`:
  // its time; nullopt when it is still running after `limit` (it cannot beat a choice that
  // took `limit`, and simulating the rest would be wasted); or why it cannot run.
  StatusOr<std::optional<Time>> Probe(const CollectiveRequest& req, const std::vector<int>& members,
                                      const Option& o, double efficiency, Time latency,
                                      Time limit) const;
  // Probe with `symmetry` (its representatives only; null: every member); *broken when the
  // symmetry does not hold for this collective (the caller probes in full).
  StatusOr<std::optional<Time>> ProbeWith(const CollectiveRequest& req,
                                          const std::vector<int>& members, const Option& o,
                                          double efficiency, Time latency, Time limit,
                                          const NpuSymmetry* symmetry, bool* broken) const;
  // The fastest choice for the collective on `members`, and its time; or why none runs.
  StatusOr<std::pair<Chosen, Time>> Pick(const CollectiveRequest& req,
                                         const std::vector<int>& members) const;
  // The members of the request's group (all NPUs for group 0), or why there are none.
  StatusOr<std::vector<int>> Members(const CollectiveRequest& req) const;
  // Where the probes of a collective on `members` may be shared with an identical group
  // elsewhere on the network, or nullopt (the whole machine, a group whose routes are not
  // classed, or a root outside the group).
  std::optional<ShapeKey> ShapeOf(const CollectiveRequest& req, const std::vector<int>& members);
  // On a graph, with slow links or on the packet backend: a number shared by exactly the member
  // lists whose routes are alike (Network::RouteSignature), or nullopt for a group too large to
  // compare or routes the network cannot describe.
  std::optional<int> RouteClass(const std::vector<int>& members);
  // The collective as NCCL's cost terms see it (nccl/nccl_model.h), on `members`.
  NcclCall Call(const CollectiveRequest& req, const std::vector<int>& members) const;

  std::string model_path_;
  std::string forcing_flag_ = "--nccl-algorithm";
  Topology topology_;
  NetworkParams net_params_;
  Backend backend_ = Backend::kAnalyticalAware;
  SystemParams params_;
  const SystemLayer* groups_ = nullptr;
  std::vector<std::unique_ptr<Option>> options_;  // stable addresses: requests point into them
  std::map<Key, Chosen> chosen_;
  std::map<ShapeKey, std::pair<Chosen, Time>> by_shape_;        // the choice and its probed time
  const Network* network_ = nullptr;                            // the run's, for RouteSignature
  std::map<std::vector<int>, std::optional<int>> route_class_;  // by member list
  std::map<std::vector<int64_t>, int> route_classes_;           // by RouteSignature
  std::vector<NcclTunedCollective> tuned_;
};

}  // namespace orrery

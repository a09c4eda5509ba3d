#include "nccl/nccl_tuner.h"

#include <algorithm>
#include <set>

#include "common/event_queue.h"
#include "system/algorithm_name.h"

namespace orrery {

namespace {

// Starts the collective on each member after the launch floor, and notes when the last ends:
// what NpuExecutor does for a trace holding just this collective.
class ProbeDriver : public EventTarget, public CollectiveListener {
 public:
  ProbeDriver(SystemLayer& layer, const CollectiveRequest& req) : layer_(layer), req_(req) {}

  void OnEvent(uint64_t npu) override { Start(static_cast<int>(npu)); }
  void Start(int npu) {
    Status s = layer_.npu(npu).StartCollective(req_, this, static_cast<uint64_t>(npu));
    if (!s.ok() && error_.ok()) error_ = s;
  }
  void OnCollectiveDone(uint64_t) override {
    ++done_;
    end_ = layer_.sim().now();
  }

  const Status& error() const { return error_; }
  int done() const { return done_; }
  Time end() const { return end_; }

 private:
  SystemLayer& layer_;
  const CollectiveRequest& req_;
  Status error_;
  int done_ = 0;
  Time end_;
};

int NativeOf(const std::string& key) {
  if (key == "all-reduce-implementation") return kNativeAllReduce;
  if (key == "reduce-scatter-implementation") return kNativeReduceScatter;
  if (key == "all-gather-implementation") return kNativeAllGather;
  return kNativeAllToAll;
}

NcclKind KindOf(CollectiveType type) {
  if (type == CollectiveType::kAllReduce) return NcclKind::kAllReduce;
  if (type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock ||
      type == CollectiveType::kAllGather) {
    return NcclKind::kSplit;
  }
  return NcclKind::kOther;
}

// Groups larger than this are not compared (n (n - 1) routes each); their probes are not shared.
constexpr size_t kMaxRouteClassMembers = 256;

}  // namespace

StatusOr<std::unique_ptr<NcclTuner>> NcclTuner::Make(
    const NcclModel& model, const std::string& algorithm, const std::string& protocol,
    const Topology& topology, const NetworkParams& net_params, Backend backend,
    const SystemParams& params, const SystemLayer* groups, const Network& network) {
  // NCCL_ALGO applies to all-reduce, reduce-scatter and all-gather only: all-to-all, gather and
  // scatter are point-to-point sends, and broadcast and reduce fall back to ring under a forced
  // algorithm (NCCL 2.22). So every algorithm of the model is an option, marked whether the
  // forced list admits it.
  StatusOr<std::vector<NcclChoice>> choices = Choices(model, "", protocol);
  if (!choices.ok()) return choices.status();
  StatusOr<std::vector<NcclChoice>> forced = Choices(model, algorithm, protocol);
  if (!forced.ok()) return forced.status();
  std::unique_ptr<NcclTuner> t(new NcclTuner());
  t->model_path_ = model.path;
  t->topology_ = topology;
  t->net_params_ = net_params;
  t->backend_ = backend;
  t->params_ = params;
  t->groups_ = groups;
  t->network_ = &network;
  std::string failures;
  const int dims = static_cast<int>(topology.dims.size());
  for (const NcclChoice& c : *choices) {
    auto impl = NcclImplementations(c.algorithm, dims);
    if (!impl.ok()) {  // e.g. tree on a single node: NCCL would not offer it either
      failures += "\n  " + c.algorithm + "/" + c.protocol + ": " + impl.status().message();
      continue;
    }
    auto o = std::make_unique<Option>();
    o->name = c.algorithm + "/" + c.protocol;
    o->choice = c;
    o->forced_in = std::any_of(forced->begin(), forced->end(), [&](const NcclChoice& f) {
      return f.algorithm == c.algorithm && f.protocol == c.protocol;
    });
    for (const auto& [key, names] : *impl) {
      for (const std::string& name : names) {
        StatusOr<AlgorithmSpec> a = ParseAlgorithm(name);
        if (!a.ok()) return a.status();
        o->impl[NativeOf(key)].push_back(*a);
      }
    }
    t->options_.push_back(std::move(o));
  }
  if (std::none_of(t->options_.begin(), t->options_.end(),
                   [](const std::unique_ptr<Option>& o) { return o->forced_in; })) {
    return Status::Error(model.path + ": no algorithm of this NCCL model runs on a network of " +
                         std::to_string(dims) + " dimension(s):" + failures);
  }
  return t;
}

StatusOr<std::vector<int>> NcclTuner::Members(const CollectiveRequest& req) const {
  std::vector<int> members;
  if (req.group == 0) {
    for (int i = 0; i < topology_.num_npus(); ++i) members.push_back(i);
    return members;
  }
  const std::vector<int>* m = groups_ ? groups_->GroupMembers(req.group) : nullptr;
  if (m == nullptr) {
    return Status::Error("communicator group " + std::to_string(req.group) + " is not defined");
  }
  return *m;
}

std::optional<int> NcclTuner::RouteClass(const std::vector<int>& members) {
  auto known = route_class_.find(members);
  if (known != route_class_.end()) return known->second;
  std::optional<int> cls;
  // Every ordered pair's route: n (n - 1) routes, compared once per group.
  if (members.size() <= kMaxRouteClassMembers) {
    std::optional<std::vector<int64_t>> signature = network_->RouteSignature(members);
    if (signature) {
      cls = route_classes_.emplace(std::move(*signature), static_cast<int>(route_classes_.size()))
                .first->second;
    }
  }
  route_class_.emplace(members, cls);
  return cls;
}

std::optional<NcclTuner::ShapeKey> NcclTuner::ShapeOf(const CollectiveRequest& req,
                                                      const std::vector<int>& members) {
  if (members.empty()) return std::nullopt;
  // The whole machine has no copy elsewhere.
  if (static_cast<int>(members.size()) == topology_.num_npus()) return std::nullopt;
  // Subtracting the group's least coordinate in each dimension moves every member by the same
  // amount without wrapping around: their order stays, and so does every route among them (a
  // ring routes by the difference of coordinates modulo its size, a mesh by their difference,
  // a switch or a fully connected dimension alike for any two). A copy in another node or slot,
  // or shifted along a ring or mesh, gets the same key.
  std::vector<int> least = topology_.Address(members.front());
  for (int m : members) {
    const std::vector<int> a = topology_.Address(m);
    for (size_t d = 0; d < a.size(); ++d) least[d] = std::min(least[d], a[d]);
  }
  int offset = 0;
  int stride = 1;
  for (size_t d = 0; d < least.size(); ++d) {
    offset += least[d] * stride;
    stride *= topology_.dims[d].npus;
  }
  std::vector<int> moved(members.size());
  for (size_t i = 0; i < members.size(); ++i) moved[i] = members[i] - offset;
  int root = req.root;
  if (root >= 0) {
    if (std::find(members.begin(), members.end(), root) == members.end()) return std::nullopt;
    root -= offset;
  }
  // On a graph two nodes or slots need not be alike (a leaf's uplinks, ECMP's hash), nor with
  // slow links, nor on the packet backend (ECMP's hash picks among a ring's or the dimensions'
  // equal routes): the routes among the members must be alike too.
  int routes = -1;
  if (topology_.graph != nullptr || !topology_.slow_links.names.empty() ||
      backend_ == Backend::kPacket) {
    const std::optional<int> cls = RouteClass(members);
    if (!cls) return std::nullopt;
    routes = *cls;
  }
  return ShapeKey{static_cast<int>(req.type), req.size, std::move(moved),
                  req.involved_dims,          root,     routes};
}

NcclCall NcclTuner::Call(const CollectiveRequest& req, const std::vector<int>& members) const {
  // NCCL counts a collective by its whole buffer (an all-gather's gathered output), on the
  // nodes it spans (the last dimension when there are several) and the GPUs it has in each.
  const int per_node = topology_.NpusPerNode();
  std::set<int> nodes;
  for (int m : members) nodes.insert(m / per_node);
  const int n = static_cast<int>(members.size());
  NcclCall call;
  call.bytes =
      req.type == CollectiveType::kAllGather ? req.size * static_cast<uint64_t>(n) : req.size;
  call.nodes = static_cast<int>(nodes.size());
  call.heads = std::max(1, n / call.nodes);
  call.kind = KindOf(req.type);
  call.flat_ring = req.group != 0 && RunsAsFlatRing(topology_, params_, members);
  return call;
}

StatusOr<std::optional<Time>> NcclTuner::Probe(const CollectiveRequest& request,
                                               const std::vector<int>& members, const Option& o,
                                               double efficiency, Time latency, Time limit) const {
  // With the run's symmetry (runner/symmetry.h), a group it maps onto itself (a data-parallel
  // group spanning the copies, the world) is probed on its representatives alone; a phase that
  // breaks the symmetry probes it again in full.
  const NpuSymmetry* symmetry = groups_ != nullptr ? groups_->symmetry() : nullptr;
  if (symmetry != nullptr && symmetry->ImagesOf(members) != 1) symmetry = nullptr;
  if (symmetry != nullptr) {
    bool broken = false;
    StatusOr<std::optional<Time>> t =
        ProbeWith(request, members, o, efficiency, latency, limit, symmetry, &broken);
    if (!broken) return t;
  }
  return ProbeWith(request, members, o, efficiency, latency, limit, nullptr, nullptr);
}

StatusOr<std::optional<Time>> NcclTuner::ProbeWith(const CollectiveRequest& request,
                                                   const std::vector<int>& members, const Option& o,
                                                   double efficiency, Time latency, Time limit,
                                                   const NpuSymmetry* symmetry,
                                                   bool* broken) const {
  Simulation sim;
  std::unique_ptr<Network> net = MakeNetwork(backend_, sim, topology_, net_params_);
  if (symmetry != nullptr && !net->UseSymmetry(*symmetry)) {
    *broken = true;
    return std::optional<Time>();
  }
  SystemLayer layer(sim, *net, params_);
  layer.SetSymmetry(symmetry);
  if (request.group != 0) {
    Status s = layer.AddGroup(request.group, members);
    if (!s.ok()) return s;
  }
  CollectiveRequest req = request;
  req.impl = &o.impl;
  req.rooted = RootedAlgorithm::kRing;  // NCCL's broadcast and reduce are ring algorithms
  req.size = InflateForEfficiency(req.size, efficiency, params_.preferred_dataset_splits);
  ProbeDriver driver(layer, req);
  int started = 0;
  for (int m : members) {
    if (symmetry != nullptr && !symmetry->IsRep(m)) continue;
    ++started;
    if (latency > Time::Zero()) {
      sim.ScheduleAfter(latency, &driver, static_cast<uint64_t>(m));
    } else {
      driver.Start(m);
    }
  }
  sim.Run(limit);
  if (symmetry != nullptr && layer.broken_symmetry_dim() >= 0) {
    *broken = true;
    return std::optional<Time>();
  }
  if (!driver.error().ok()) return driver.error();
  if (!net->error().ok()) return net->error();
  if (sim.time_overflowed()) {
    return Status::Error(
        "the collective takes longer than simulated time can hold (about 106 "
        "days): its size, a latency or a bandwidth is out of range");
  }
  if (driver.done() != started) {
    if (sim.pending_events() > 0) return std::optional<Time>();  // still running after `limit`
    return Status::Error("the collective did not finish (" + std::to_string(driver.done()) +
                         " of " + std::to_string(started) + " NPUs)");
  }
  return std::optional<Time>(driver.end());
}

StatusOr<std::pair<NcclTuner::Chosen, Time>> NcclTuner::Pick(
    const CollectiveRequest& req, const std::vector<int>& members) const {
  Chosen best{options_.size(), 1, Time::Zero()};
  Time best_time = Time::Infinite();
  std::vector<std::string> failures(options_.size());
  const NcclCall call = Call(req, members);
  // Likeliest fastest first, so that the slower choices' probes stop early: the floor plus
  // the bytes at the choice's efficiency over the slowest dimension (an estimate for the order
  // only; the simulated times decide).
  Bandwidth slowest = topology_.dims.front().bandwidth;
  for (const Dimension& d : topology_.dims) {
    if (d.bandwidth.bytes_per_sec() < slowest.bytes_per_sec()) slowest = d.bandwidth;
  }
  std::vector<std::pair<Time, size_t>> order;
  std::vector<double> efficiency(options_.size());
  std::vector<Time> latency(options_.size());
  const bool algorithm_applies =
      req.type == CollectiveType::kAllReduce || req.type == CollectiveType::kReduceScatter ||
      req.type == CollectiveType::kReduceScatterBlock || req.type == CollectiveType::kAllGather;
  for (size_t i = 0; i < options_.size(); ++i) {
    if (algorithm_applies && !options_[i]->forced_in) continue;  // not a reason: counted below
    const std::string not_run = NcclDoesNotRun(options_[i]->choice.algorithm, call);
    if (!not_run.empty()) {
      failures[i] = not_run;
      continue;
    }
    efficiency[i] = EfficiencyAt(options_[i]->choice, call);
    latency[i] = Time::FromNsDouble(LatencyAt(options_[i]->choice, call) * 1e3);
    order.emplace_back(latency[i] + Bytes(InflateForEfficiency(req.size, efficiency[i],
                                                               params_.preferred_dataset_splits)) /
                                        slowest,
                       i);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [estimate, i] : order) {
    StatusOr<std::optional<Time>> t =
        Probe(req, members, *options_[i], efficiency[i], latency[i], best_time);
    if (!t.ok()) {  // this algorithm cannot run this collective here; NCCL would not pick it
      failures[i] = t.status().message();
      continue;
    }
    if (!t->has_value()) continue;  // slower than the best so far
    const Time time = **t;
    // The fastest wins, the first listed on a tie (whatever order they were probed in).
    if (best.option == options_.size() || time < best_time ||
        (time == best_time && i < best.option)) {
      best = {i, efficiency[i], latency[i]};
      best_time = time;
    }
  }
  if (best.option == options_.size()) {
    // One reason for every one of several choices (a key missing from the system config, say)
    // is the collective's, not the model's: given once, as a run without the model gives it.
    // Choices the forced algorithm left out (no failure recorded) are not reasons; they are
    // counted on one line.
    std::vector<std::string> reasons;
    for (const std::string& f : failures) {
      if (!f.empty()) reasons.push_back(f);
    }
    const size_t forced_out =
        algorithm_applies ? static_cast<size_t>(std::count_if(
                                options_.begin(), options_.end(),
                                [](const std::unique_ptr<Option>& o) { return !o->forced_in; }))
                          : 0;
    if (reasons.size() > 1 &&
        std::all_of(reasons.begin(), reasons.end(),
                    [&](const std::string& f) { return f == reasons.front(); })) {
      return Status::Error(reasons.front());
    }
    std::string why;
    for (size_t i = 0; i < options_.size(); ++i) {
      if (!failures[i].empty()) why += "\n  " + options_[i]->name + ": " + failures[i];
    }
    if (forced_out > 0) {
      why += "\n  (" + std::to_string(forced_out) + " other choice" + (forced_out == 1 ? "" : "s") +
             " left out by the forced algorithm, " + forcing_flag_ + ", as NCCL_ALGO)";
    }
    return Status::Error("no algorithm of the NCCL model " + model_path_ + " runs " +
                         CollectiveTypeName(req.type) + " of " + std::to_string(req.size) +
                         " bytes here:" + why);
  }
  return std::make_pair(best, best_time);
}

StatusOr<CollectiveChoice> NcclTuner::Choose(const CollectiveRequest& req) {
  const Key key{static_cast<int>(req.type), req.size, req.group, req.involved_dims, req.root};
  auto it = chosen_.find(key);
  if (it == chosen_.end()) {
    StatusOr<std::vector<int>> members = Members(req);
    if (!members.ok()) return members.status();
    // A copy of this group elsewhere (same members relative to their node or slot) was probed
    // already: the probes would give the same times.
    const std::optional<ShapeKey> shape = ShapeOf(req, *members);
    auto same = shape ? by_shape_.find(*shape) : by_shape_.end();
    std::pair<Chosen, Time> picked;
    if (same != by_shape_.end()) {
      picked = same->second;
    } else {
      StatusOr<std::pair<Chosen, Time>> p = Pick(req, *members);
      if (!p.ok()) return p.status();
      picked = *p;
      if (shape) by_shape_.emplace(*shape, picked);
    }
    it = chosen_.emplace(key, picked.first).first;
    NcclTunedCollective t;
    t.type = req.type;
    t.size = req.size;
    t.group = req.group;
    t.group_size = static_cast<int>(members->size());
    // NCCL runs all-to-all, gather and scatter as point-to-point sends, whatever algorithm the
    // cost tables were read under: named p2p with the protocol that timed them.
    const bool p2p = req.type == CollectiveType::kAllToAll || req.type == CollectiveType::kGather ||
                     req.type == CollectiveType::kScatter;
    t.choice = p2p ? "p2p/" + options_[picked.first.option]->choice.protocol
                   : options_[picked.first.option]->name;
    t.predicted = picked.second;
    t.shared = same != by_shape_.end();
    tuned_.push_back(t);
  }
  const Option& o = *options_[it->second.option];
  CollectiveChoice c;
  c.impl = &o.impl;
  c.rooted = RootedAlgorithm::kRing;
  c.launch_latency = it->second.latency;
  c.efficiency = it->second.efficiency;
  return c;
}

}  // namespace orrery

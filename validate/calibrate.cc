#include "validate/calibrate.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

#include "config/schema.h"
#include "network/network_config.h"
#include "validate/measurement_cli.h"
#include "validate/nccl_tests.h"
#include "workload/executor.h"

namespace orrery {
namespace {

constexpr double kMinEfficiency = 0.005;  // the grid reaches size / this
constexpr int kGridPerOctave = 4;
constexpr double kPull = 1e-3;
constexpr double kLl128Payload = 120.0 / 128.0;
// LL sends 4 bytes of data with 4 bytes of flag in every 8: it moves at most half the line rate.
constexpr double kLlPayload = 0.5;
// The most packets (grid size / packet-mtu x GPUs) calibrate asks of the packet backend per grid
// size: about a minute or two of simulation each.
constexpr double kMaxPacketCalibration = 1e9;

// T(x) sampled on a log grid, interpolated linearly in log-log (extrapolated from the ends).
struct Curve {
  std::vector<double> log_x, log_t;
  double Eval(double x) const {
    const double lx = std::log(x);
    size_t i = std::upper_bound(log_x.begin(), log_x.end(), lx) - log_x.begin();
    i = std::min(std::max<size_t>(i, 1), log_x.size() - 1);
    const double f = (lx - log_x[i - 1]) / (log_x[i] - log_x[i - 1]);
    return std::exp(log_t[i - 1] + f * (log_t[i] - log_t[i - 1]));
  }
};

struct Group {
  std::vector<std::pair<double, double>> rows;  // (size, log measured time)
  std::map<std::string, Curve> curves;          // per algorithm that runs at this scale
  NcclCall call;                                // heads, nodes, kind; bytes per row
  double floor_us = 0;  // nccl-tests' own time per iteration (NcclMeasurement::harness_floor_us)
  std::set<std::string> protocols;  // those the log's NCCL_PROTO leaves (all without one)
};

// A parameter: a latency (µs, >= 0 through exp) or an efficiency (in (0, max) through a
// logistic; `max` is what the protocol can reach at all: LL's 8-byte lines carry 4 bytes of flag).
struct Param {
  double* value;
  bool latency;
  double max = 1.0;
  std::string name;  // "LL latency-us", for what calibrate says
  double To(double u) const { return latency ? std::exp(u) : max / (1 + std::exp(-u)); }
  double From(double v) const {
    if (latency) return std::log(std::max(v, 0.05));
    v = std::min(std::max(v / max, 1e-4), 0.999);
    return std::log(v / (1 - v));
  }
};

// Sum over rows of |log simulated - log measured|, the simulated time being the fastest choice.
double Objective(const std::vector<Group>& groups, const NcclModel& m) {
  StatusOr<std::vector<NcclChoice>> choices = Choices(m, "");
  double sum = 0;
  for (const Group& g : groups) {
    for (const auto& [size, log_meas] : g.rows) {
      double best = std::numeric_limits<double>::infinity();
      for (const NcclChoice& c : *choices) {
        if (g.protocols.count(c.protocol) == 0) continue;
        auto it = g.curves.find(c.algorithm);
        if (it == g.curves.end()) continue;
        // nccl-tests' size is NCCL's byte count (an all-gather's gathered output).
        NcclCall call = g.call;
        call.bytes = static_cast<uint64_t>(size);
        const double e = EfficiencyAt(c, call);
        // A row of 0 bytes costs what 1 byte does (the grid starts there).
        best = std::min(best, LatencyAt(c, call) + it->second.Eval(std::max(size / e, 1.0)));
      }
      // No row is measured below the harness's own time per iteration (validate.h).
      sum += std::fabs(std::log(std::max(best, g.floor_us)) - log_meas);
    }
  }
  return sum;
}

// Nelder-Mead on f from x0, initial step `step`; deterministic.
std::vector<double> Minimize(const std::function<double(const std::vector<double>&)>& f,
                             std::vector<double> x0, double step, int max_evals) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> s(n + 1, x0);
  for (size_t i = 0; i < n; ++i) s[i + 1][i] += step;
  std::vector<double> fs(n + 1);
  for (size_t i = 0; i <= n; ++i) fs[i] = f(s[i]);
  int evals = static_cast<int>(n + 1);
  while (evals < max_evals) {
    std::vector<size_t> order(n + 1);
    for (size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fs[a] < fs[b]; });
    const size_t best = order[0], worst = order[n], second = order[n - 1];
    if (fs[worst] - fs[best] < 1e-12) break;
    std::vector<double> c(n, 0);
    for (size_t i : order) {
      if (i == worst) continue;
      for (size_t k = 0; k < n; ++k) c[k] += s[i][k] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (size_t k = 0; k < n; ++k) p[k] = c[k] + t * (s[worst][k] - c[k]);
      return p;
    };
    std::vector<double> r = along(-1);
    const double fr = f(r);
    ++evals;
    if (fr < fs[best]) {
      std::vector<double> e = along(-2);
      const double fe = f(e);
      ++evals;
      if (fe < fr) {
        s[worst] = e, fs[worst] = fe;
      } else {
        s[worst] = r, fs[worst] = fr;
      }
    } else if (fr < fs[second]) {
      s[worst] = r, fs[worst] = fr;
    } else {
      std::vector<double> k = along(fr < fs[worst] ? -0.5 : 0.5);
      const double fk = f(k);
      ++evals;
      if (fk < std::min(fr, fs[worst])) {
        s[worst] = k, fs[worst] = fk;
      } else {  // shrink towards the best
        for (size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          for (size_t d = 0; d < n; ++d) s[i][d] = s[best][d] + 0.5 * (s[i][d] - s[best][d]);
          fs[i] = f(s[i]);
          ++evals;
        }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i <= n; ++i) best = fs[i] < fs[best] ? i : best;
  return s[best];
}

Status CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  if (!in) return Status::Error("cannot copy " + from + ": " + std::strerror(errno));
  if (!out) return Status::Error("cannot write " + to + ": " + std::strerror(errno));
  out << in.rdbuf();
  out.close();
  return out ? Status::Ok() : Status::Error(to + ": write failed: " + std::strerror(errno));
}

std::string ProfilePath(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    struct stat st;
    if (stat((dir + "/" + stem + ext).c_str(), &st) == 0) return dir + "/" + stem + ext;
  }
  return "";
}

// --out, checked before the fit: not the profile being fitted (its nccl.yaml, the starting point
// and the record of what it was fitted to, would be replaced with no way back, however the paths
// are spelt), a directory that can be made, and no other profile's file in the way.
Status CheckOutputDir(const CalibrateOptions& o) {
  if (o.out.empty()) return Status::Ok();
  std::error_code e1, e2;
  const std::filesystem::path out = std::filesystem::weakly_canonical(o.out, e1);
  const std::filesystem::path machine = std::filesystem::weakly_canonical(o.machine, e2);
  if (!e1 && !e2 && out == machine) {
    std::string other = o.machine;
    while (other.size() > 1 && other.back() == '/') other.pop_back();
    return Status::Error("--out '" + o.out + "' is the --machine profile itself (" +
                         machine.string() +
                         "): calibrate would overwrite the nccl.yaml it starts from; write the "
                         "fitted profile to another directory, e.g. --out " +
                         other + "-calibrated, and copy its nccl.yaml over once checked");
  }
  // A file where the directory goes, or a directory that cannot be made: said before the fit.
  if (struct stat st; stat(o.out.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    return Status::Error("--out " + o.out + " is a file; give a directory for the fitted profile");
  }
  {
    std::string parent = o.out;
    while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
    const size_t slash = parent.rfind('/');
    parent = slash == std::string::npos ? "." : slash == 0 ? "/" : parent.substr(0, slash);
    if (struct stat st; stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::Error("--out " + o.out + ": its parent directory '" + parent +
                           "' does not exist; create it first");
    }
  }
  // A file of another profile in the way (the user's own, edited) is not overwritten; the
  // same file (a calibration run again into its output) is. Checked before the fit.
  for (const char* stem : {"system", "network", "memory"}) {
    const std::string from = ProfilePath(o.machine, stem);
    if (from.empty()) continue;
    const std::string to = o.out + "/" + from.substr(from.rfind('/') + 1);
    std::ifstream existing(to, std::ios::binary), source(from, std::ios::binary);
    if (!existing) continue;
    std::ostringstream a, b;
    a << existing.rdbuf();
    b << source.rdbuf();
    if (a.str() != b.str()) {
      return Status::Error("--out " + o.out + " already has a " + from.substr(from.rfind('/') + 1) +
                           " that differs from " + from +
                           ", and calibrate would overwrite it; give a new directory, or "
                           "remove that file");
    }
  }
  return Status::Ok();
}

// Every input's measurements (`inputs`: o.measurements, then o.more), each file once.
StatusOr<std::vector<NcclMeasurement>> LoadInputs(const CalibrateOptions& o,
                                                  const std::vector<std::string>& inputs,
                                                  const ProfileSimulator& sim) {
  // The same file twice would count its rows twice, weighting it over the others.
  Status distinct = CheckDistinctInputs(inputs);
  if (!distinct.ok()) return distinct;
  std::vector<NcclMeasurement> ms;
  for (size_t i = 0; i < inputs.size(); ++i) {
    MeasurementOptions one = o;
    one.measurements = inputs[i];
    StatusOr<std::vector<NcclMeasurement>> loaded = sim.Load(one);
    if (!loaded.ok()) return loaded.status();
    ms.insert(ms.end(), loaded->begin(), loaded->end());
  }
  return ms;
}

// The grid reaches the largest row / kMinEfficiency. On the packet backend every packet of it is
// simulated: a log to 8 GiB on 16 GPUs is billions of packets per grid size, hours with no end
// in sight, so such a fit is refused up front with what to do instead.
Status CheckPacketGrid(const CalibrateOptions& o, const std::vector<NcclMeasurement>& ms) {
  if (o.backend != Backend::kPacket) return Status::Ok();
  NetworkParams net;
  StatusOr<Topology> topology = LoadNetworkConfig(ProfilePath(o.machine, "network"), &net);
  if (!topology.ok()) return topology.status();
  for (const NcclMeasurement& m : ms) {
    uint64_t hi = 0;
    for (const NcclRow& r : m.rows) hi = std::max(hi, r.size);
    const double packets = static_cast<double>(hi) / kMinEfficiency /
                           static_cast<double>(std::max<uint64_t>(net.mtu, 1)) * m.gpus;
    if (packets > kMaxPacketCalibration) {
      char figures[160];
      std::snprintf(figures, sizeof figures,
                    "%.3g B (200 times its largest row, %.3g B) on %d GPUs: about %.2g packets "
                    "of %llu B",
                    static_cast<double>(hi) / kMinEfficiency, static_cast<double>(hi), m.gpus,
                    packets, static_cast<unsigned long long>(net.mtu));
      return Status::Error(
          m.source +
          ": calibrate's grid on the packet backend would simulate collectives of up "
          "to " +
          figures + " per grid size, hours of simulation (at most " +
          std::to_string(static_cast<unsigned long long>(kMaxPacketCalibration)) +
          " per grid size); fit on analytical-aware, as the shipped profiles are, and check the "
          "fit with orrery validate --network-backend packet, or fit a log of smaller sizes");
    }
  }
  return Status::Ok();
}

// One (measurement, algorithm) curve's grid of sizes, with the files it runs on.
struct Grid {
  size_t group;
  std::string algorithm, system, network;
  std::vector<uint64_t> sizes;
};

// What the fit works on: a group per measurement, a grid per algorithm that can run it, and
// per measurement why the others cannot.
struct Surrogate {
  std::vector<Group> groups;
  std::vector<Grid> grids;
  std::vector<std::string> failures;
};

// Measurement m's sizes for algorithm `a`, from its smallest row to its largest / kMinEfficiency.
// Grid sizes are whole multiples of a power of two (the smallest row's, at most
// kEfficiencyGrainBytes) and of the profile's splits (of each rank's share for an all-gather,
// which Orrery sizes per rank), as the sizes protocol-efficiency produces
// (InflateForEfficiency): chunks then divide evenly, as they do in the runs being predicted. A
// remainder would be one more whole chunk, on a profile with a lane per chunk a second round.
std::vector<uint64_t> GridSizes(const NcclMeasurement& m, int splits, double lo, double hi) {
  uint64_t grain = 1;
  while (grain * 2 <= static_cast<uint64_t>(lo) && grain < kEfficiencyGrainBytes) grain *= 2;
  const uint64_t ranks = m.collective == "all_gather" ? static_cast<uint64_t>(m.gpus) : 1;
  grain = std::lcm(grain, static_cast<uint64_t>(splits) * ranks);
  std::vector<uint64_t> sizes;
  // From 1 byte at least (a row of size 0 would keep the grid at 0 forever).
  for (double x = std::max(lo, 1.0);; x *= std::exp2(1.0 / kGridPerOctave)) {
    const uint64_t size =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(x / grain))) * grain;
    // Sizes rounded to the grain repeat while it is coarse beside x: each is run once.
    if (!sizes.empty() && size <= sizes.back()) continue;
    sizes.push_back(size);
    // Two sizes at least, to interpolate between.
    if (x > hi / kMinEfficiency && sizes.size() > 1) break;
  }
  return sizes;
}

// Every measurement's group and every (measurement, algorithm) grid, nothing simulated yet.
StatusOr<Surrogate> PlanGrids(const std::vector<NcclMeasurement>& ms, const NcclModel& model,
                              ProfileSimulator* sim) {
  Surrogate s;
  s.failures.resize(ms.size());
  for (size_t mi = 0; mi < ms.size(); ++mi) {
    const NcclMeasurement& m = ms[mi];
    Group g;
    g.floor_us = m.harness_floor_us;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const NcclRow& r : m.rows) {
      g.rows.push_back({static_cast<double>(r.size), std::log(r.time_us)});
      lo = std::min(lo, static_cast<double>(r.size));
      hi = std::max(hi, static_cast<double>(r.size));
    }
    g.call.heads = sim->Heads(m.gpus);
    g.call.nodes = sim->Nodes(m.gpus);
    g.call.kind = m.collective == "all_reduce" ? NcclKind::kAllReduce
                  : m.collective == "all_gather" || m.collective == "reduce_scatter"
                      ? NcclKind::kSplit
                      : NcclKind::kOther;
    StatusOr<std::string> network = sim->Network(m.gpus, m.source, m.nodes);
    if (!network.ok()) return network.status();
    StatusOr<std::set<std::string>> algorithms = NcclAlgorithmsIn(m.algorithm);
    if (!algorithms.ok()) return algorithms.status().WithContext(m.source);
    StatusOr<std::set<std::string>> protocols = NcclProtocolsIn(m.protocol);
    if (!protocols.ok()) return protocols.status().WithContext(m.source);
    g.protocols = *protocols;
    for (const NcclAlgorithm& a : model.algorithms) {
      if (algorithms->count(a.name) == 0) continue;
      const std::string not_run = NcclDoesNotRun(a.name, g.call);  // as the tuner offers them
      if (!not_run.empty()) {
        s.failures[mi] += "\n  " + a.name + ": " + not_run;
        continue;
      }
      StatusOr<std::string> system = sim->System(a.name, 0, 1.0);
      if (!system.ok()) {
        s.failures[mi] += "\n  " + a.name + ": " + system.status().message();
        continue;
      }
      s.grids.push_back(
          {s.groups.size(), a.name, *system, *network, GridSizes(m, sim->splits(), lo, hi)});
    }
    s.groups.push_back(std::move(g));
  }
  return s;
}

// Every grid point's simulation side by side (o.jobs), then the curves in order: the fit is the
// same whatever the number of jobs. An error when a measurement is left with no curve.
Status SimulateGrids(const CalibrateOptions& o, const std::vector<NcclMeasurement>& ms,
                     ProfileSimulator* sim, Surrogate* s) {
  const std::vector<Grid>& grids = s->grids;
  std::vector<std::pair<size_t, size_t>> points;  // (grid, size)
  for (size_t k = 0; k < grids.size(); ++k) {
    for (size_t j = 0; j < grids[k].sizes.size(); ++j) points.push_back({k, j});
  }
  std::vector<StatusOr<double>> times(points.size(), Status::Error("not simulated"));
  std::vector<double> cost;  // the bytes the GPUs move, roughly: largest first
  for (const auto& [k, j] : points) {
    cost.push_back(static_cast<double>(grids[k].sizes[j]) * ms[grids[k].group].gpus);
  }
  const Status ran = ForEachIndex(
      points.size(), o.jobs,
      [&](size_t i) {
        const Grid& grid = grids[points[i].first];
        const NcclMeasurement& m = ms[grid.group];
        times[i] = sim->TimeUs(m.collective, m.gpus, grid.sizes[points[i].second], grid.system,
                               grid.network);
      },
      &cost, o.progress ? std::string("calibrate: sizes of the fit's grid simulated") : "");
  if (!ran.ok()) return ran;
  size_t next = 0;
  for (const Grid& grid : grids) {
    Curve c;
    bool ok = true;
    for (size_t j = 0; j < grid.sizes.size(); ++j, ++next) {
      if (!ok) continue;
      if (!times[next].ok()) {
        // The curve stops at its first size that fails, as the algorithm cannot run there.
        s->failures[grid.group] += "\n  " + grid.algorithm + ": " + times[next].status().message();
        ok = false;
        continue;
      }
      c.log_x.push_back(std::log(static_cast<double>(grid.sizes[j])));
      c.log_t.push_back(std::log(*times[next]));
    }
    if (ok) s->groups[grid.group].curves[grid.algorithm] = c;
  }
  for (size_t mi = 0; mi < ms.size(); ++mi) {
    if (s->groups[mi].curves.empty()) {
      return Status::Error(ms[mi].source + ": no algorithm of " + o.machine + " runs " +
                           ms[mi].collective + " on " + std::to_string(ms[mi].gpus) +
                           " GPUs:" + s->failures[mi]);
    }
  }
  return Status::Ok();
}

// The parameters of `model` the fit moves (they point into it): every protocol's, and every
// algorithm's but ring's, or those `fit` names.
struct FitParams {
  std::vector<Param> params;
  // LL128 moves 120 payload bytes in every 128-byte line, the rest as Simple does: its
  // efficiency is tied to Simple's rather than fitted (when both are there).
  NcclProtocol* simple = nullptr;
  NcclProtocol* ll128 = nullptr;
};

StatusOr<FitParams> FreeParams(const std::vector<std::string>& fit, const std::string& nccl_path,
                               NcclModel* model) {
  FitParams fp;
  for (NcclProtocol& p : model->protocols) {
    if (p.name == "Simple") fp.simple = &p;
    if (p.name == "LL128") fp.ll128 = &p;
  }
  auto free = [&](const std::string& name) {
    if (fit.empty()) return name != "ring";
    return std::find(fit.begin(), fit.end(), name) != fit.end();
  };
  for (const std::string& name : fit) {
    bool known = false;
    std::string defined;
    for (const NcclAlgorithm& a : model->algorithms) {
      known = known || a.name == name;
      defined += (defined.empty() ? "" : ", ") + a.name;
    }
    for (const NcclProtocol& p : model->protocols) {
      known = known || p.name == name;
      defined += ", " + p.name;
    }
    if (!known) {
      return Status::Error("--fit '" + name + "': not an algorithm or protocol of " + nccl_path +
                           "; it defines: " + defined);
    }
  }
  for (NcclProtocol& p : model->protocols) {
    if (!free(p.name)) continue;
    fp.params.push_back({&p.latency_us, true, 1.0, p.name + " latency-us"});
    if (&p != fp.ll128 || fp.simple == nullptr) {
      fp.params.push_back(
          {&p.efficiency, false, p.name == "LL" ? kLlPayload : 1.0, p.name + " efficiency"});
    }
  }
  for (NcclAlgorithm& a : model->algorithms) {
    if (!free(a.name)) continue;
    fp.params.push_back({&a.latency_us, true, 1.0, a.name + " latency-us"});
    fp.params.push_back({&a.efficiency, false, 1.0, a.name + " efficiency"});
    // A chunk overhead in KiB is fitted like a latency (>= 0), where the profile models one.
    if (a.chunking.modelled) {
      fp.params.push_back({&a.chunking.overhead_kib, true, 1.0, a.name + " chunk-overhead-kib"});
    }
  }
  if (fp.params.empty()) return Status::Error("--fit leaves no parameter to fit");
  return fp;
}

// Coordinate scans from `fit` (the fastest-choice minimum has kinks a simplex stalls on), then
// Nelder-Mead from the best point.
std::vector<double> ScanThenSimplex(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> fit) {
  double fv = f(fit);
  for (double step : {1.0, 0.5, 0.25, 0.1, 0.05, 0.02}) {
    for (int sweep = 0; sweep < 3; ++sweep) {
      for (size_t i = 0; i < fit.size(); ++i) {
        const double center = fit[i];
        for (int k = -12; k <= 12; ++k) {
          std::vector<double> t = fit;
          t[i] = center + step * k;
          const double ft = f(t);
          if (ft < fv) fv = ft, fit = t;
        }
      }
    }
  }
  if (!fit.empty()) {
    for (double step : {0.5, 0.1}) fit = Minimize(f, fit, step, 4000);
  }
  return fit;
}

// Fits fp's parameters to `groups`, leaving the fitted values in *model (through fp) and those
// no row depends on as they were; the names of the latter.
std::vector<std::string> FitParameters(const std::vector<Group>& groups, const FitParams& fp,
                                       NcclModel* model) {
  const std::vector<Param>& params = fp.params;
  NcclProtocol* simple = fp.simple;
  NcclProtocol* ll128 = fp.ll128;
  std::vector<double> u0;
  for (const Param& p : params) u0.push_back(p.From(*p.value));
  // LL128's efficiency follows Simple's only where Simple's is a parameter (--fit LL leaves both
  // as the profile has them; dgx-a100's LL128 is not Simple's x 120/128).
  const bool tied = simple != nullptr && ll128 != nullptr &&
                    std::any_of(params.begin(), params.end(),
                                [&](const Param& p) { return p.value == &simple->efficiency; });
  auto set = [&](const std::vector<double>& u) {
    for (size_t i = 0; i < u.size(); ++i) *params[i].value = params[i].To(u[i]);
    if (tied) ll128->efficiency = kLl128Payload * simple->efficiency;
  };
  // A parameter no row depends on (LL's where every row runs Simple) stays as it was: the
  // objective cannot place it, and a simplex would carry it off along the flat direction. It is
  // one whose value anywhere the scans below reach (e^-12 to e^12 times its own; its share for
  // an efficiency) changes no row's time, tested where the others start and again where they
  // end: a protocol that wins rows only once the others moved is fitted after all.
  const double ll128_original = ll128 != nullptr ? ll128->efficiency : 0;
  std::vector<double> originals;
  for (const Param& p : params) originals.push_back(*p.value);
  std::vector<bool> fitted(params.size(), false);
  auto matters = [&](size_t i, const std::vector<double>& at) {
    set(at);
    const double here = Objective(groups, *model);
    for (int d = -12; d <= 12; ++d) {
      if (d == 0) continue;
      std::vector<double> t = at;
      t[i] += d;
      set(t);
      if (Objective(groups, *model) != here) return true;
    }
    return false;
  };
  std::vector<double> u = u0;  // the whole point; the fitted parameters move
  for (size_t i = 0; i < params.size(); ++i) fitted[i] = matters(i, u0);
  std::vector<bool> moved(params.size(), false);  // in a round's fit
  for (int round = 0; round < 4; ++round) {
    std::vector<size_t> seen;
    for (size_t i = 0; i < params.size(); ++i) {
      if (fitted[i]) seen.push_back(i);
      if (fitted[i]) moved[i] = true;
    }
    auto expand = [&](const std::vector<double>& v) {
      std::vector<double> w = u;
      for (size_t k = 0; k < seen.size(); ++k) w[seen[k]] = v[k];
      return w;
    };
    auto f = [&](const std::vector<double>& v) {
      double pull = 0;
      for (size_t k = 0; k < v.size(); ++k) pull += (v[k] - u0[seen[k]]) * (v[k] - u0[seen[k]]);
      set(expand(v));
      return Objective(groups, *model) + kPull * pull;
    };
    std::vector<double> start;
    for (size_t i : seen) start.push_back(u[i]);
    u = expand(ScanThenSimplex(f, start));
    bool more = false;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!fitted[i] && matters(i, u)) fitted[i] = more = true;
    }
    if (!more) break;
  }
  set(u);  // leave the fitted values in `model`, and the kept ones exactly as they were
  std::vector<std::string> kept;
  for (size_t i = 0; i < params.size(); ++i) {
    if (moved[i]) continue;  // (one found to matter only after the last round is kept too)
    *params[i].value = originals[i];
    kept.push_back(params[i].name);
    // LL128's efficiency follows Simple's only where Simple's was fitted.
    if (simple != nullptr && ll128 != nullptr && params[i].value == &simple->efficiency) {
      ll128->efficiency = ll128_original;
    }
  }
  return kept;
}

// The values as nccl.yaml holds them: latencies to 1 ns, efficiencies to 1e-4, chunk overheads
// to 0.01 KiB.
void RoundModel(NcclModel* model) {
  for (NcclProtocol& p : model->protocols) {
    p.latency_us = std::round(p.latency_us * 1e3) / 1e3;
    p.efficiency = std::round(p.efficiency * 1e4) / 1e4;
  }
  for (NcclAlgorithm& a : model->algorithms) {
    a.latency_us = std::round(a.latency_us * 1e3) / 1e3;
    a.efficiency = std::round(a.efficiency * 1e4) / 1e4;
    a.chunking.overhead_kib = std::round(a.chunking.overhead_kib * 1e2) / 1e2;
  }
}

// The fitted profile written to `out`: the machine's system, network and memory files copied,
// nccl.yaml with a comment on what it was fitted to, and (not in a scratch directory) a README
// when there is none. The files written go to *written (as they are written).
Status WriteProfile(const CalibrateOptions& o, const std::vector<std::string>& inputs,
                    const CalibrationResult& result, const std::string& out, bool scratch,
                    std::vector<std::string>* written) {
  for (const char* stem : {"system", "network", "memory"}) {
    const std::string from = ProfilePath(o.machine, stem);
    if (from.empty()) continue;
    const std::string to = out + "/" + from.substr(from.rfind('/') + 1);
    if (to != from) {
      Status s = CopyFile(from, to);
      if (!s.ok()) return s;
    }
    written->push_back(to);
  }
  char rms[64];
  std::snprintf(rms, sizeof rms, "%.4f", result.mean_abs_log_error);
  std::string only;
  for (int g : o.only_gpus) only += (only.empty() ? "" : ",") + std::to_string(g);
  std::string names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == inputs.size() ? " and " : ", ") + inputs[i];
  }
  const std::string kept = JoinNames(result.kept);
  const std::string comment =
      "# Fitted by orrery calibrate from " + o.machine + "/nccl.yaml on " + names +
      (only.empty() ? "" : " (GPUs " + only + ")") + ": mean |log-time error| " + rms + ".\n" +
      (kept.empty() ? ""
                    : "# Kept as they were (no row of the input depends on them): " + kept + ".\n");
  {
    std::ofstream f(out + "/nccl.yaml");
    f << FormatNcclModel(result.model, comment);
    f.close();
    if (!f) return Status::Error(out + "/nccl.yaml: write failed: " + std::strerror(errno));
    written->push_back(out + "/nccl.yaml");
  }
  if (!scratch) {
    struct stat st;
    if (stat((out + "/README.md").c_str(), &st) != 0) {
      std::ofstream(out + "/README.md")
          << "# Calibrated machine profile\n\nsystem, network and memory files copied from `"
          << o.machine << "`; `nccl.yaml` fitted by `orrery calibrate` to " << names
          << (only.empty() ? "" : " (GPU counts " + only + ")")
          << ". Say here what the machine is and which measurements are held out.\n";
    }
  }
  return Status::Ok();
}

// Writes the profile (or a scratch copy) and validates it with full simulations.
Status WriteAndValidate(const CalibrateOptions& o, const std::vector<std::string>& inputs,
                        CalibrationResult* result) {
  std::string out = o.out;
  bool scratch = false;
  if (out.empty()) {
    char tmpl[] = "/tmp/orrery-calibrate.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Error("cannot create a scratch directory");
    out = tmpl;
    scratch = true;
  } else if (mkdir(out.c_str(), 0755) != 0 && errno != EEXIST) {  // (a file there: refused above)
    return Status::Error(out + ": cannot create the profile directory: " + std::strerror(errno));
  }
  std::vector<std::string> written;
  if (Status s = WriteProfile(o, inputs, *result, out, scratch, &written); !s.ok()) return s;
  ValidateOptions v;
  static_cast<MeasurementOptions&>(v) = o;
  v.machine = out;
  StatusOr<std::vector<ValidationReport>> validated = ValidateEach(v, o.more);
  if (scratch) {
    for (const std::string& f : written) std::remove(f.c_str());
    rmdir(out.c_str());
  }
  if (!validated.ok()) return validated.status();
  result->validations = std::move(*validated);
  return Status::Ok();
}

}  // namespace

StatusOr<CalibrationResult> Calibrate(const CalibrateOptions& o) {
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(o.machine, "", o.backend);
  if (!sim.ok()) return sim.status();
  if (sim->nccl() == nullptr) {
    return Status::Error(o.machine +
                         ": no nccl.yaml, so there is nothing to calibrate; start from the "
                         "closest profile in configs/machines/ (each has one)");
  }
  if (Status s = CheckOutputDir(o); !s.ok()) return s;
  NcclModel model = *sim->nccl();
  std::vector<std::string> inputs = {o.measurements};
  inputs.insert(inputs.end(), o.more.begin(), o.more.end());
  StatusOr<std::vector<NcclMeasurement>> ms = LoadInputs(o, inputs, *sim);
  if (!ms.ok()) return ms.status();
  if (Status s = CheckPacketGrid(o, *ms); !s.ok()) return s;
  StatusOr<Surrogate> surrogate = PlanGrids(*ms, model, &*sim);
  if (!surrogate.ok()) return surrogate.status();
  if (Status s = SimulateGrids(o, *ms, &*sim, &*surrogate); !s.ok()) return s;
  StatusOr<FitParams> params = FreeParams(o.fit, sim->nccl()->path, &model);
  if (!params.ok()) return params.status();

  CalibrationResult result;
  result.kept = FitParameters(surrogate->groups, *params, &model);
  size_t rows = 0;
  for (const Group& g : surrogate->groups) rows += g.rows.size();
  result.mean_abs_log_error = Objective(surrogate->groups, model) / static_cast<double>(rows);
  RoundModel(&model);
  result.model = model;
  if (Status s = WriteAndValidate(o, inputs, &result); !s.ok()) return s;
  return result;
}

int CalibrateMain(int argc, char** argv) {
  CalibrateOptions o;
  CalibrateFlags f;
  MeasurementCommandLine cli(MeasurementTool::kCalibrate,
                             "orrery calibrate: fit a machine profile's NCCL latency floors and "
                             "efficiencies (nccl.yaml) to nccl-tests logs and write the fitted "
                             "profile",
                             &o, &o.more);
  CalibrateFlagSchema().AddTo(&cli.options());
  const int done = cli.Parse(argc, argv, [&](const boost::program_options::variables_map& vm) {
    return CalibrateFlagSchema().Apply(vm, &f);
  });
  if (done >= 0) return done;
  o.out = f.out;
  o.fit = f.fit;
  StatusOr<CalibrationResult> r = Calibrate(o);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    return 1;
  }
  std::fputs(FormatNcclModel(r->model, "# fitted nccl.yaml\n").c_str(), stdout);
  if (!r->kept.empty()) {
    std::printf("kept as they were (no row of the input depends on them): %s\n",
                JoinNames(r->kept).c_str());
  }
  std::fputs(FormatValidations(r->validations).c_str(), stdout);
  if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace orrery

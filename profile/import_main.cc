// `orrery import --kineto TRACE [--kineto TRACE ...] [--et ET ...] --output PREFIX`: PyTorch
// profiles as Chakra execution traces, one per rank.
#include "profile/import_main.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/flags.h"
#include "config/flag_schema.h"
#include "profile/et_import.h"
#include "profile/execution_trace.h"
#include "profile/importer.h"
#include "profile/job_check.h"
#include "profile/kineto.h"

namespace orrery {
namespace profile {

namespace po = boost::program_options;

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// The flags of import, one field each.
struct ImportFlags {
  std::vector<std::string> kineto;
  std::vector<std::string> et;
  std::string output;
  std::string groups = "json";
};

const FlagSchema<ImportFlags>& ImportFlagSchema() {
  static const FlagSchema<ImportFlags>* schema = [] {
    using F = ImportFlags;
    auto* s = new FlagSchema<F>();
    s->Repeated("kineto", &F::kineto)
        .Help("a PyTorch profile (Kineto trace, .json or .json.gz); one per rank");
    s->Repeated("et", &F::et)
        .Help(
            "a PyTorch execution trace (.json or .json.gz); one per rank, in the order of "
            "--kineto");
    s->String("output", &F::output)
        .Default("required")
        .Help("output prefix: rank r is written to <prefix>.<r>.et");
    s->Enum("groups", &F::groups, {"json", "metadata"})
        .Help(
            "communicator groups: 'json' writes <prefix>.comm_groups.json (for "
            "--comm-group-configuration; ASTRA-sim 2.0 runs such traces), 'metadata' writes them "
            "into every trace as PyTorch's process_group:init METADATA node (as Chakra's "
            "converter; Orrery reads it, ASTRA-sim 2.0 does not)");
    return s;
  }();
  return *schema;
}

void PrintRank(const RankImport& r) {
  std::string colls;
  for (const auto& [type, n] : r.collectives_by_type) {
    colls += (colls.empty() ? "" : ", ") + std::to_string(n) + " " + type;
  }
  std::printf(
      "rank %d (%s) -> %s: %llu nodes: %llu compute, %llu memory, %llu collectives%s, "
      "%llu host\n",
      r.rank, r.source.c_str(), r.path.c_str(), static_cast<unsigned long long>(r.nodes),
      static_cast<unsigned long long>(r.compute), static_cast<unsigned long long>(r.memory),
      static_cast<unsigned long long>(r.collectives),
      colls.empty() ? "" : (" (" + colls + ")").c_str(), static_cast<unsigned long long>(r.host));
  std::printf(
      "  dependencies: %llu stream order, %llu host launches, %llu stream waits, %llu "
      "inferred waits, %llu synchronisations; GPU work %.3f ms measured, %.3f ms "
      "written\n",
      static_cast<unsigned long long>(r.stream_deps),
      static_cast<unsigned long long>(r.launch_deps), static_cast<unsigned long long>(r.event_deps),
      static_cast<unsigned long long>(r.inferred_deps),
      static_cast<unsigned long long>(r.sync_deps), r.measured_compute_ns / 1e6,
      r.written_compute_us / 1e3);
  if (r.contradicted_waits > 0) {
    std::printf(
        "  %llu wait(s) between streams left out: the profile's times contradict them (the op "
        "waited for had not ended when the waiting op began)\n",
        static_cast<unsigned long long>(r.contradicted_waits));
  }
}

}  // namespace

std::vector<KeyDoc> ImportFlagDocs() { return ImportFlagSchema().Docs(); }

int ImportMain(int argc, char** argv) {
  po::options_description desc("orrery import --kineto TRACE [--et ET] --output PREFIX");
  desc.add_options()("help,h", "print this help");
  ImportFlagSchema().AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string(e.what()) + " (see orrery import --help)");
  }
  if (vm.count("help")) {
    std::cout << "usage: orrery import --kineto TRACE [--kineto TRACE ...] [--et ET ...] "
                 "--output PREFIX\n\n"
                 "PyTorch profiles (torch.profiler's Kineto traces, one per rank, ranks from "
                 "their distributedInfo,\nelse their order) as Chakra execution traces "
                 "<prefix>.<r>.et that orrery and ASTRA-sim run\n(profile/README.md).\n\n"
              << desc << "\n";
    return 0;
  }
  ImportFlags f;
  if (const Status flags = ImportFlagSchema().Apply(vm, &f); !flags.ok()) {
    return Fail(flags.WithContext("import").message());
  }
  const std::vector<std::string>& kineto = f.kineto;
  const std::vector<std::string>& et = f.et;
  const std::string& output = f.output;
  if (output.empty()) return Fail("--output is missing: the prefix of the .et files to write");
  if (kineto.empty() && et.empty()) {
    return Fail("no profile given: --kineto TRACE (one per rank), and optionally --et ET");
  }
  ImportOptions o;
  o.groups =
      f.groups == "metadata" ? ImportOptions::Groups::kMetadata : ImportOptions::Groups::kJson;
  o.output_prefix = output;
  std::vector<KinetoTrace> traces;
  for (const std::string& f : kineto) {
    StatusOr<KinetoTrace> t = LoadKinetoTrace(f);
    if (!t.ok()) return Fail(t.status().message());
    if (t->orrery_timeline) {
      return Fail(f +
                  ": an Orrery timeline, not a PyTorch profile; import profiles recorded by "
                  "torch.profiler");
    }
    traces.push_back(std::move(*t));
  }
  std::vector<const KinetoTrace*> view;
  for (const KinetoTrace& t : traces) view.push_back(&t);
  StatusOr<std::vector<int>> ranks = RanksOf(view);
  if (!ranks.ok()) return Fail(ranks.status().message());
  if (Status s = CheckNoRankMissing(view, *ranks); !s.ok()) return Fail(s.message());
  int world = static_cast<int>(traces.size());
  for (const KinetoTrace& t : traces) {
    if (t.world_size) world = *t.world_size;
  }
  std::vector<ExecutionTrace> ets;
  for (const std::string& f : et) {
    StatusOr<ExecutionTrace> e = LoadExecutionTrace(f);
    if (!e.ok()) return Fail(e.status().message());
    if (traces.empty() && e->world_size > world) world = static_cast<int>(e->world_size);
    ets.push_back(std::move(*e));
  }
  if (!ets.empty() && !traces.empty() && ets.size() != traces.size()) {
    return Fail("--et is given " + std::to_string(ets.size()) + " times and --kineto " +
                std::to_string(traces.size()) +
                " times: give one execution trace per Kineto trace, in the same order (rank by "
                "rank), or execution traces alone");
  }
  std::vector<int> et_ranks(*ranks);
  if (traces.empty()) {
    for (size_t i = 0; i < ets.size(); ++i) et_ranks.push_back(static_cast<int>(i));
    world = std::max(world, static_cast<int>(ets.size()));
  }
  StatusOr<ImportResult> r = ets.empty() ? ImportKinetoTraces(traces, *ranks, world, o)
                                         : ImportExecutionTraces(ets, view, et_ranks, world, o);
  if (!r.ok()) return Fail(r.status().message());
  for (const RankImport& rank : r->ranks) PrintRank(rank);
  for (const std::string& note : r->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  std::string run = "bazel-bin/orrery --workload-configuration=" + output +
                    " --system-configuration=SYSTEM --network-configuration=NETWORK";
  if (!r->comm_groups_path.empty()) {
    std::printf("groups: %zu, written to %s\n", r->groups.size(), r->comm_groups_path.c_str());
    run += " --comm-group-configuration=" + r->comm_groups_path;
  }
  if (static_cast<int>(r->ranks.size()) < world) {
    run += " --replicate-trace";
    std::printf(
        "the profiles are %zu of the job's %d ranks: with --replicate-trace on a network "
        "of %d NPUs they stand for the whole job\n",
        r->ranks.size(), world, world);
  }
  std::printf("run: %s\n", run.c_str());
  return 0;
}

}  // namespace profile
}  // namespace orrery

// gen_workload: writes small Chakra ET workloads, one <prefix>.<rank>.et per NPU.
//
//   gen_workload collective --type all_reduce --size 1048576 --npus 1024 --out /tmp/ar/all_reduce
//   gen_workload dp-step --npus 8 --layers 4 --out examples/dp_step/dp_step
//
// `collective`: one COMM_COLL node per rank, exactly like ASTRA-sim's microbenchmark traces.
// `dp-step`: one data-parallel training step: forward compute per layer, backward compute per
// layer in reverse, each layer's gradient all-reduce issued right after its backward pass (so
// communication overlaps the remaining backward compute), a ring exchange of activations
// between neighbouring NPUs (send/recv), and an optimizer step after every all-reduce.
#include <boost/program_options.hpp>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "common/flags.h"
#include "et_feeder/gen_workload_flags.h"
#include "et_feeder/writer.h"

namespace {

using orrery::FlagSchema;
using orrery::Status;
namespace et = orrery::et;
namespace po = boost::program_options;

int Usage() {
  std::string types;
  for (const std::string& t : et::CollectiveTypeNames()) types += (types.empty() ? "" : "|") + t;
  std::fprintf(stderr,
               "usage: gen_workload collective --type %s --size BYTES --npus N --out PREFIX\n"
               "       gen_workload dp-step --npus N [--layers L] --out PREFIX\n",
               types.c_str());
  return 2;
}

int Fail(const std::string& m) {
  std::fprintf(stderr, "error: %s\n", m.c_str());
  return 1;
}

// Reads `mode`'s flags (argv[2..]) into *f. Returns -1 when they are all there and valid, else
// the exit code: 0 after --help, 1 for a bad flag, 2 (the usage) when --npus or --out is missing.
template <typename F>
int ParseMode(const std::string& mode, const FlagSchema<F>& schema, int argc, char** argv, F* f) {
  po::options_description desc("gen_workload " + mode);
  desc.add_options()("help,h", "print this help");
  schema.AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(orrery::ParseFlags(argc - 1, argv + 1, desc), vm);  // argv[1], the mode, as argv[0]
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail("gen_workload " + mode + ": " + e.what() + " (see gen_workload " + mode +
                " --help)");
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  std::set<std::string> given;
  if (const Status s = schema.Apply(vm, f, &given); !s.ok()) {
    return Fail(s.WithContext("gen_workload " + mode).message());
  }
  if (given.count("npus") == 0 || f->out.empty()) return Usage();
  return -1;
}

int WriteCollective(const et::CollectiveFlags& f) {
  const ChakraProtoMsg::CollectiveCommType type = et::CommType(f);
  const uint64_t size = et::SizeBytes(f);
  for (uint64_t r = 0; r < f.npus; ++r) {
    Status s = et::WriteTraceFile(et::RankTracePath(f.out, static_cast<int>(r)),
                                  {et::MakeCollNode(0, f.type, type, size)});
    if (!s.ok()) return Fail(s.message());
  }
  return 0;
}

int WriteDpStep(const et::DpStepFlags& f) {
  const uint64_t npus = f.npus;
  const int layers = static_cast<int>(f.layers);
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(npus);
  for (int r = 0; r < static_cast<int>(npus); ++r) {
    auto& nodes = ranks[r];
    uint64_t id = 0, prev = 0;
    bool has_prev = false;
    auto chain = [&](ChakraProtoMsg::Node n) {
      if (has_prev) et::AddDataDeps(&n, {prev});
      prev = n.id();
      has_prev = true;
      nodes.push_back(std::move(n));
    };
    // Input batch arrives from the previous NPU in a ring (a data-loader/activation exchange).
    const int n = static_cast<int>(npus);
    const int next = (r + 1) % n, before = (r + n - 1) % n;
    ChakraProtoMsg::Node send = et::MakeSendNode(id++, next, 262144, 1);
    const uint64_t send_id = send.id();
    nodes.push_back(send);
    chain(et::MakeRecvNode(id++, before, 262144, 1));
    for (int l = 0; l < layers; ++l) {
      chain(et::MakeCompNode(id++, "fwd_layer" + std::to_string(l), 40 + 10 * l));
    }
    std::vector<uint64_t> reduces;
    for (int l = layers - 1; l >= 0; --l) {
      chain(et::MakeCompNode(id++, "bwd_layer" + std::to_string(l), 80 + 20 * l));
      ChakraProtoMsg::Node ar =
          et::MakeCollNode(id++, "grad_allreduce_layer" + std::to_string(l),
                           ChakraProtoMsg::ALL_REDUCE, (1u << 20) * (l + 1), {prev});
      reduces.push_back(ar.id());
      nodes.push_back(ar);
    }
    ChakraProtoMsg::Node opt = et::MakeCompNode(id++, "optimizer_step", 30, {prev, send_id});
    for (uint64_t d : reduces) et::AddDataDeps(&opt, {d});
    nodes.push_back(opt);
  }
  Status s = et::WriteRankFiles(f.out, ranks);
  if (!s.ok()) return Fail(s.message());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "collective") {
    et::CollectiveFlags f;
    if (const int code = ParseMode(mode, et::CollectiveFlagSchema(), argc, argv, &f); code >= 0) {
      return code;
    }
    const Status dir = et::MakeTraceDirectory(f.out);
    return dir.ok() ? WriteCollective(f) : Fail(dir.message());
  }
  if (mode == "dp-step") {
    et::DpStepFlags f;
    if (const int code = ParseMode(mode, et::DpStepFlagSchema(), argc, argv, &f); code >= 0) {
      return code;
    }
    const Status dir = et::MakeTraceDirectory(f.out);
    return dir.ok() ? WriteDpStep(f) : Fail(dir.message());
  }
  return Usage();
}

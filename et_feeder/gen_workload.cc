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
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "et_feeder/writer.h"

namespace {

using orrery::Status;
namespace et = orrery::et;

int Usage() {
  std::fprintf(stderr,
               "usage: gen_workload collective --type all_reduce|all_gather|reduce_scatter|"
               "all_to_all --size BYTES --npus N --out PREFIX\n"
               "       gen_workload dp-step --npus N [--layers L] --out PREFIX\n");
  return 2;
}

int Fail(const std::string& m) {
  std::fprintf(stderr, "error: %s\n", m.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) return Usage();
    flags[k.substr(2)] = argv[i + 1];
  }
  auto get = [&](const std::string& k, const std::string& def) {
    auto it = flags.find(k);
    return it == flags.end() ? def : it->second;
  };
  const int npus = std::atoi(get("npus", "0").c_str());
  const std::string out = get("out", "");
  if (npus < 1 || out.empty()) return Usage();
  const Status dir = et::MakeTraceDirectory(out);
  if (!dir.ok()) return Fail(dir.message());

  if (mode == "collective") {
    static const std::map<std::string, ChakraProtoMsg::CollectiveCommType> kTypes = {
        {"all_reduce", ChakraProtoMsg::ALL_REDUCE},
        {"all_gather", ChakraProtoMsg::ALL_GATHER},
        {"reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER},
        {"all_to_all", ChakraProtoMsg::ALL_TO_ALL}};
    auto t = kTypes.find(get("type", "all_reduce"));
    if (t == kTypes.end()) return Fail("unknown --type '" + get("type", "") + "'");
    const uint64_t size = std::strtoull(get("size", "1048576").c_str(), nullptr, 10);
    for (int r = 0; r < npus; ++r) {
      Status s = et::WriteTraceFile(et::RankTracePath(out, r),
                                    {et::MakeCollNode(0, t->first, t->second, size)});
      if (!s.ok()) return Fail(s.message());
    }
    return 0;
  }
  if (mode == "dp-step") {
    const int layers = std::atoi(get("layers", "4").c_str());
    if (layers < 1) return Usage();
    std::vector<std::vector<ChakraProtoMsg::Node>> ranks(npus);
    for (int r = 0; r < npus; ++r) {
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
      const int next = (r + 1) % npus, before = (r + npus - 1) % npus;
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
    Status s = et::WriteRankFiles(out, ranks);
    if (!s.ok()) return Fail(s.message());
    return 0;
  }
  return Usage();
}

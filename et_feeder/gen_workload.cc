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
#include <algorithm>
#include <cerrno>
#include <cstdint>
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

// `text` as a whole number of digits in [lo, hi]; "" when it is one, else why not.
std::string ParseWhole(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi,
                       uint64_t* out) {
  const std::string expected = "; expected a whole number of digits in [" + std::to_string(lo) +
                               ", " + std::to_string(hi) + "]";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 20) {
    return "--" + flag + " is '" + text + "'" + expected;
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) return "--" + flag + " is '" + text + "'" + expected;
  *out = v;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode != "collective" && mode != "dp-step") return Usage();
  const std::vector<std::string> known =
      mode == "collective" ? std::vector<std::string>{"type", "size", "npus", "out"}
                           : std::vector<std::string>{"npus", "layers", "out"};
  std::map<std::string, std::string> flags;
  for (int i = 2; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k.rfind("--", 0) != 0 ||
        std::find(known.begin(), known.end(), k.substr(2)) == known.end()) {
      return Fail("unknown argument '" + k + "' for " + mode);
    }
    if (i + 1 >= argc) return Fail(k + " needs a value");
    if (flags.count(k.substr(2))) return Fail(k + " is given twice");
    flags[k.substr(2)] = argv[i + 1];
  }
  auto get = [&](const std::string& k, const std::string& def) {
    auto it = flags.find(k);
    return it == flags.end() ? def : it->second;
  };
  uint64_t npus = 0;
  if (!flags.count("npus")) return Usage();
  if (std::string why = ParseWhole("npus", get("npus", ""), 1, 1 << 24, &npus); !why.empty()) {
    return Fail(why);
  }
  const std::string out = get("out", "");
  if (out.empty()) return Usage();
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
    uint64_t size = 0;
    if (std::string why = ParseWhole("size", get("size", "1048576"), 0, uint64_t{1} << 53, &size);
        !why.empty()) {
      return Fail(why);
    }
    for (uint64_t r = 0; r < npus; ++r) {
      Status s = et::WriteTraceFile(et::RankTracePath(out, static_cast<int>(r)),
                                    {et::MakeCollNode(0, t->first, t->second, size)});
      if (!s.ok()) return Fail(s.message());
    }
    return 0;
  }
  if (mode == "dp-step") {
    uint64_t layer_count = 0;
    if (std::string why = ParseWhole("layers", get("layers", "4"), 1, 4096, &layer_count);
        !why.empty()) {
      return Fail(why);
    }
    const int layers = static_cast<int>(layer_count);
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
    Status s = et::WriteRankFiles(out, ranks);
    if (!s.ok()) return Fail(s.message());
    return 0;
  }
  return Usage();
}

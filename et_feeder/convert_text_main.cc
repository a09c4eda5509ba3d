// `orrery convert-text`: ASTRA-sim 1.0 text workloads to Chakra ET files (et_feeder/README.md).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/flags.h"
#include "config/flag_schema.h"
#include "et_feeder/text_workload.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

// The flags of convert-text, one field each; the defaults are the flags'.
struct TextFlags {
  std::string input;
  std::string output;
  int num_npus = 0;
  int num_passes = 1;
  bool compatible = false;
  // Chakra's older spellings of the first four.
  std::string input_chakra;
  std::string output_chakra;
  int num_npus_chakra = 0;
  int num_passes_chakra = 0;
};

const FlagSchema<TextFlags>& TextFlagSchema() {
  static const FlagSchema<TextFlags>* schema = [] {
    using F = TextFlags;
    auto* s = new FlagSchema<F>();
    s->String("input", &F::input).Help("the text workload (e.g. DATA, 1 line per layer)");
    s->String("output", &F::output).Help("output prefix: NPU r's file is <output>.<r>.et");
    s->Integer("num-npus", &F::num_npus)
        .Min(1)
        .Max(1 << 20)
        .Default("required")
        .Help(
            "how many files to write; 1 is enough with --replicate-trace, which runs it on "
            "every NPU");
    s->Integer("num-passes", &F::num_passes)
        .Min(1)
        .Max(100000)
        .Help("training passes: pass p+1's forward waits for pass p's weight updates");
    s->Switch("chakra-compatible", &F::compatible)
        .Help(
            "write the nodes Chakra's converter writes (as read from its source): a NONE "
            "communication as its all-reduce of that size, ids numbered on across the NPUs' "
            "files");
    s->String("input_filename", &F::input_chakra)
        .Help("the same as --input (Chakra's older spelling)");
    s->String("output_filename", &F::output_chakra).Help("the same as --output");
    s->Integer("num_npus", &F::num_npus_chakra)
        .Min(1)
        .Max(1 << 20)
        .Default("none")
        .Help("the same as --num-npus");
    s->Integer("num_passes", &F::num_passes_chakra)
        .Min(1)
        .Max(100000)
        .Default("none")
        .Help("the same as --num-passes");
    return s;
  }();
  return *schema;
}

}  // namespace

std::vector<KeyDoc> ConvertTextFlagDocs() { return TextFlagSchema().Docs(); }

int ConvertTextMain(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc(
      "orrery convert-text: an ASTRA-sim 1.0 text workload to Chakra ET files, one "
      "<output>.<r>.et per NPU (as chakra_converter Text)");
  desc.add_options()("help,h", "print this help");
  TextFlagSchema().AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: convert-text: %s (see orrery convert-text --help)\n", e.what());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  // Both spellings of one flag: refused, whatever their values (one would silently win).
  for (const auto& [ours, chakra] : {std::pair<const char*, const char*>{"input", "input_filename"},
                                     {"output", "output_filename"},
                                     {"num-npus", "num_npus"},
                                     {"num-passes", "num_passes"}}) {
    if (vm.count(chakra) && vm.count(ours)) {
      std::fprintf(stderr,
                   "error: convert-text: --%s and --%s are the same flag; give one of them\n", ours,
                   chakra);
      return 1;
    }
  }
  TextFlags f;
  const Status flags = TextFlagSchema().Apply(vm, &f);
  if (!flags.ok()) {
    std::fprintf(stderr, "error: %s\n", flags.WithContext("convert-text").message().c_str());
    return 1;
  }
  if (!f.input_chakra.empty()) f.input = f.input_chakra;
  if (!f.output_chakra.empty()) f.output = f.output_chakra;
  if (f.num_npus_chakra > 0) f.num_npus = f.num_npus_chakra;
  if (f.num_passes_chakra > 0) f.num_passes = f.num_passes_chakra;
  const std::string& input = f.input;
  const std::string& output = f.output;
  if (input.empty() || output.empty() || f.num_npus == 0) {
    std::fprintf(stderr,
                 "error: convert-text: --input FILE, --output PREFIX and --num-npus N are "
                 "required\n");
    return 1;
  }
  TextWorkloadOptions o;
  o.chakra_compatible = f.compatible;
  const std::optional<uint64_t> num_npus = static_cast<uint64_t>(f.num_npus);
  o.num_passes = f.num_passes;
  StatusOr<TextWorkload> w = ConvertTextWorkload(input, o);
  if (!w.ok()) {
    std::fprintf(stderr, "error: %s\n", w.status().message().c_str());
    return 1;
  }
  Status s = et::MakeTraceDirectory(output);
  if (s.ok()) s = WriteTextWorkload(*w, output, static_cast<int>(*num_npus));
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  int collectives = 0;
  for (const auto& node : w->nodes) collectives += node.type() == ChakraProtoMsg::COMM_COLL_NODE;
  std::printf("%s: %s, %d layer%s, %d pass%s: %zu nodes per NPU (%d collective%s) in %s.0.et",
              input.c_str(), w->parallelism.c_str(), w->layers, w->layers == 1 ? "" : "s",
              o.num_passes, o.num_passes == 1 ? "" : "es", w->nodes.size(), collectives,
              collectives == 1 ? "" : "s", output.c_str());
  if (*num_npus > 1) std::printf(" ... %s.%d.et", output.c_str(), static_cast<int>(*num_npus) - 1);
  std::printf("\n");
  if (w->none_left_out > 0) {
    std::fprintf(stderr,
                 "note: %d NONE communication(s) written as no node (what waits for one waits "
                 "for what it would have waited for); Chakra writes each as an all-reduce of its "
                 "size (--chakra-compatible)\n",
                 w->none_left_out);
  }
  if (w->none_written > 0) {
    std::fprintf(stderr,
                 "note: %d NONE communication(s) written as all-reduces of their size, as "
                 "Chakra's converter does (each still costs its algorithm's step latencies)\n",
                 w->none_written);
  }
  return 0;
}

}  // namespace et
}  // namespace orrery

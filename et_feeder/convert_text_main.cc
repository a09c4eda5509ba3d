// `orrery convert-text`: ASTRA-sim 1.0 text workloads to Chakra ET files (et_feeder/README.md).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "common/flags.h"
#include "et_feeder/text_workload.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
int ConvertTextMain(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string input, output, npus, passes = "1";
  std::string input_chakra, output_chakra, npus_chakra, passes_chakra;
  bool compatible = false;
  po::options_description desc(
      "orrery convert-text: an ASTRA-sim 1.0 text workload to Chakra ET files, one "
      "<output>.<r>.et per NPU (as chakra_converter Text)");
  desc.add_options()("help,h", "print this help")(
      "input", po::value(&input), "the text workload (e.g. DATA, 1 line per layer)")(
      "output", po::value(&output), "output prefix: NPU r's file is <output>.<r>.et")(
      "num-npus", po::value(&npus),
      "how many files to write (1 to 1048576); 1 is enough with "
      "--replicate-trace, which runs it on every NPU")(
      "num-passes", po::value(&passes)->default_value("1"),
      "training passes (1 to 100000): pass p+1's forward waits for pass p's weight updates")(
      "chakra-compatible", po::bool_switch(&compatible),
      "write the nodes Chakra's converter writes (as read from its source): a NONE "
      "communication as its all-reduce of that size, ids numbered on across the NPUs' files")(
      "input_filename", po::value(&input_chakra), "the same as --input (Chakra's older spelling)")(
      "output_filename", po::value(&output_chakra), "the same as --output")(
      "num_npus", po::value(&npus_chakra), "the same as --num-npus")(
      "num_passes", po::value(&passes_chakra), "the same as --num-passes");
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
    if (vm.count(chakra) && vm.count(ours) && !vm[ours].defaulted()) {
      std::fprintf(stderr,
                   "error: convert-text: --%s and --%s are the same flag; give one of them\n", ours,
                   chakra);
      return 1;
    }
  }
  if (!input_chakra.empty()) input = input_chakra;
  if (!output_chakra.empty()) output = output_chakra;
  if (!npus_chakra.empty()) npus = npus_chakra;
  if (!passes_chakra.empty()) passes = passes_chakra;
  if (input.empty() || output.empty() || npus.empty()) {
    std::fprintf(stderr,
                 "error: convert-text: --input FILE, --output PREFIX and --num-npus N are "
                 "required\n");
    return 1;
  }
  TextWorkloadOptions o;
  o.chakra_compatible = compatible;
  const std::optional<uint64_t> num_npus = ParseWholeNumber(npus, 1 << 20);
  if (!num_npus || *num_npus < 1) {
    std::fprintf(stderr,
                 "error: convert-text: --num-npus '%s': expected a whole number from 1 "
                 "to 1048576\n",
                 npus.c_str());
    return 1;
  }
  const std::optional<uint64_t> num_passes = ParseWholeNumber(passes, 100000);
  if (!num_passes || *num_passes < 1) {
    std::fprintf(stderr,
                 "error: convert-text: --num-passes '%s': expected a whole number from 1 "
                 "to 100000\n",
                 passes.c_str());
    return 1;
  }
  o.num_passes = static_cast<int>(*num_passes);
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

// ASTRA-sim 1.0 text workloads as Chakra execution traces (what `chakra_converter Text` does).
//
//   TextWorkloadOptions o;
//   o.num_passes = 2;
//   StatusOr<TextWorkload> w = ConvertTextWorkload("Resnet50_DataParallel.txt", o);
//   Status s = WriteTextWorkload(*w, "/tmp/resnet/resnet", /*num_npus=*/64);   // resnet.<r>.et
//
// The text format (ASTRA-sim 1.0): a first line naming the parallelism (MICRO, DATA, MODEL,
// HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, or HYBRID_DLRM / HYBRID_DLRM_ENHANCED followed by the
// index of the last bottom-MLP layer), a second line with the number of layers, then one line
// per layer of at least 12 whitespace-separated columns:
//
//   name reserved fwd_time fwd_type fwd_size ig_time ig_type ig_size wg_time wg_type wg_size update
//
// times are whole numbers (ASTRA-sim 1.0's cycles; Chakra's converter, and so ASTRA-sim 2.0,
// reads them as microseconds, duration_micros), sizes are bytes, types are ALLREDUCE, ALLGATHER,
// REDUCESCATTER, ALLTOALL or NONE; `reserved` and `update` are not used (nor by Chakra).
//
// Each parallelism gives the per-pass graph Chakra's converter builds (et_feeder/README.md,
// "Text workloads", lists the nodes and dependencies of each), repeated num_passes times, pass
// p + 1's forward pass of a layer waiting for pass p's weight-gradient step of that layer. Every
// NPU runs the same graph; collectives have no pg_name (every NPU).
//
// Where Chakra's converter is silently wrong, this one is not, unless asked to be:
//  - A `NONE` communication is no node at all: what would depend on it depends on what it
//    would have depended on. Chakra writes it as an ALL_REDUCE (comm_type 0, an enum accident)
//    of its size, usually 0 B, which still costs each algorithm step's latency.
//  - Any other unknown type, a bad number, a short line, a layer count that differs from the
//    lines, or an unsupported parallelism is an error naming the file, line, column and value.
//  - Every NPU's file is the same (node ids from 0), where Chakra numbers on across the files.
// `chakra_compatible` writes the nodes Chakra's converter writes (read from its source, not
// compared with its files): `NONE` as its all-reduce, ids numbered on across NPUs (the errors
// stay errors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery {
namespace et {

struct TextWorkloadOptions {
  int num_passes = 1;              // >= 1
  bool chakra_compatible = false;  // NONE as Chakra's all-reduce, ids numbered on across NPUs
};

struct TextWorkload {
  std::string parallelism;  // as named in the file, e.g. "DATA"
  int layers = 0;
  bool chakra_compatible = false;
  ChakraProtoMsg::GlobalMetadata metadata;  // schema "1.0.2-chakra.1.0.0", input_file = the text
  std::vector<ChakraProtoMsg::Node> nodes;  // one NPU's graph, ids from 0, in write order
  int none_left_out = 0;                    // NONE communications that are no node (all passes)
  int none_written = 0;  // NONE communications written as Chakra's all-reduce (compatible)
};

// Reads and checks the text file and builds one NPU's nodes. Errors name the file and line.
StatusOr<TextWorkload> ConvertTextWorkload(const std::string& path,
                                           const TextWorkloadOptions& options);
// The same from text in memory; `name` stands for the file in messages.
StatusOr<TextWorkload> ConvertTextWorkloadText(const std::string& text, const std::string& name,
                                               const TextWorkloadOptions& options);

// Writes "<prefix>.<r>.et" for r in [0, num_npus): the nodes as they are, or with
// chakra_compatible every id (and dependency) of NPU r moved on by r × nodes.size(), as
// Chakra's converter numbers them.
Status WriteTextWorkload(const TextWorkload& workload, const std::string& prefix, int num_npus);

// `orrery convert-text --input FILE --output PREFIX --num-npus N [--num-passes P]
// [--chakra-compatible]` (Chakra's `--input_filename`, `--output_filename`, `--num_npus`,
// `--num_passes` spellings too). Returns the process exit code.
int ConvertTextMain(int argc, char** argv);
// convert-text's flags as docs/cli.md lists them (convert_text_main.cc declares them).
std::vector<KeyDoc> ConvertTextFlagDocs();

}  // namespace et
}  // namespace orrery

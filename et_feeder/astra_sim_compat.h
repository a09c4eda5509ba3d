// Whether ASTRA-sim 2.0 runs a Chakra node as Orrery writes it: the node types and attributes its
// workload layer and statistics accept, read from its source (../shared/docs/
// astra-sim-2.0-behaviour.md, section 3.1; astra-sim workload/Workload.cc, Workload::issue, and
// workload/Statistics.cc, Statistics::get_operator_type and extract_comp_comm_overlap):
//   - METADATA_NODE: get_operator_type reaches assert(false) (asserts are live in its release
//     build): the run aborts (a generate-llm trace's process_group:init did);
//   - a CPU operator (is_cpu_op true), a remote-memory node (MEM_LOAD/MEM_STORE) or an
//     INVALID_NODE: extract_comp_comm_overlap throws "Only GPU and COMM types are supported";
//   - a communication node with is_cpu_op true: issue throws "Comm node should not be on CPU";
//   - a collective other than all-reduce, all-to-all, all-gather, reduce-scatter (and broadcast,
//     which it replays): issue throws "Unsupported collective comm type";
//   - a send without comm_dst, a receive without comm_src (feeder_v3 requires them), a
//     collective or a send/receive without comm_size.
// Every trace writer's ASTRA-sim output (generate-llm --astra-sim; gen_workload and
// convert-text always) passes; et_feeder/astra_sim_compat_test.cc checks each.
#pragma once

#include <vector>

#include "common/status.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery {
namespace et {

// Ok when ASTRA-sim 2.0 runs every node; else one problem per node it would not, naming the
// node, what ASTRA-sim does with it and where (file and function).
Status CheckAstraSimRunnable(const std::vector<ChakraProtoMsg::Node>& nodes);

}  // namespace et
}  // namespace orrery

// Custom (MSCCL-style) collective algorithms read from their per-rank Chakra ETs
// ("<prefix>.<rank>.et", as ASTRA-sim's `*-implementation-custom` and
// `per-node-custom-implementation` name them) into the plain schedule the system layer runs
// (system/custom_collective.h).
//
//   StatusOr<std::shared_ptr<const CustomAlgorithm>> a = LoadCustomAlgorithm("algos/ring_ar");
//   layer.custom().SetForType(CollectiveType::kAllReduce, *a);
//
// Each rank's COMM_SEND, COMM_RECV and COMP nodes become its steps, in the file's node order,
// with their dependencies (data and control alike); comm_dst / comm_src are algorithm ranks, a
// COMP node takes duration_micros * 1000 ns (0 -> 1 ns).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "system/custom_collective.h"

namespace orrery {

// Reads "<prefix>.0.et", "<prefix>.1.et", ... up to the first missing file and checks every
// node (type, peers within the ranks, sizes). Errors name the file and node.
StatusOr<std::shared_ptr<const CustomAlgorithm>> LoadCustomAlgorithm(const std::string& prefix);

}  // namespace orrery

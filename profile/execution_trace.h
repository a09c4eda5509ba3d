// A PyTorch execution trace (ExecutionTraceObserver's JSON: `schema`, `pid`, `nodes`), read in
// either layout PyTorch has written: schema 1.0.1 (`parent`, `inputs`/`input_shapes`/
// `input_types` as lists, the node's attributes as keys) and 1.0.2-chakra.0.0.4 onwards
// (`ctrl_deps`, `inputs: {values, shapes, types}`, `attrs: [{name, type, value}]`).
//
//   StatusOr<ExecutionTrace> et = LoadExecutionTrace("rank0_et.json.gz");
//   for (const EtNode& n : et->nodes) ... n.parent, n.rf_id, n.inputs ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace profile {

struct EtTensor {
  int64_t id = -1;  // tensor id
  int64_t bytes = 0;
};

struct EtNode {
  int64_t id = -1;
  std::string name;
  int64_t parent = -1;  // the calling operator (ctrl_deps / parent)
  int64_t rf_id = -1;   // record function id: the Kineto operator's "Record function id"
  int64_t tid = -1;
  std::vector<EtTensor> inputs;  // tensor arguments (lists flattened)
  std::vector<EtTensor> outputs;
  // Collective arguments (record_param_comms' attrs in newer schemas, or its input values).
  std::string collective;
  int64_t in_msg_nelems = -1;
  std::string dtype;
  std::string pg_name;
  // process_group:init: the groups, as the JSON text of its one input.
  std::string groups_json;
};

struct ExecutionTrace {
  std::string path;
  std::string schema;
  int64_t pid = -1;
  // The job's size, when process_group:init names the default group's size (-1 otherwise).
  int64_t world_size = -1;
  std::vector<EtNode> nodes;  // by id
};

StatusOr<ExecutionTrace> LoadExecutionTrace(const std::string& path);

// True for the annotation nodes that root each thread's operators
// ("[pytorch|profiler|execution_trace|thread]", "...|process]", execution_graph alike).
bool IsEtRoot(const std::string& name);

}  // namespace profile
}  // namespace orrery

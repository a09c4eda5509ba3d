#include "et_feeder/astra_sim_compat.h"

#include <string>

namespace orrery {
namespace et {
namespace {

const ChakraProtoMsg::AttributeProto* Attr(const ChakraProtoMsg::Node& n, const char* name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool IsCpuOp(const ChakraProtoMsg::Node& n) {
  const ChakraProtoMsg::AttributeProto* a = Attr(n, "is_cpu_op");
  return a != nullptr && a->value_case() == ChakraProtoMsg::AttributeProto::kBoolVal &&
         a->bool_val();
}

// The problem ASTRA-sim 2.0 has with the node, or "".
std::string ProblemOf(const ChakraProtoMsg::Node& n) {
  const bool cpu = IsCpuOp(n);
  switch (n.type()) {
    case ChakraProtoMsg::METADATA_NODE:
      return "a METADATA_NODE aborts ASTRA-sim 2.0 (workload/Statistics.cc, "
             "Statistics::get_operator_type: assert(false))";
    case ChakraProtoMsg::INVALID_NODE:
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      return std::string(ChakraProtoMsg::NodeType_Name(n.type())) +
             " makes ASTRA-sim 2.0 throw after the run (workload/Statistics.cc, "
             "Statistics::extract_comp_comm_overlap: only GPU and COMM types)";
    case ChakraProtoMsg::COMP_NODE:
      if (cpu) {
        return "a CPU operator (is_cpu_op true) makes ASTRA-sim 2.0 throw after the run "
               "(workload/Statistics.cc, Statistics::extract_comp_comm_overlap)";
      }
      return "";
    case ChakraProtoMsg::COMM_COLL_NODE:
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE:
      break;
    default:
      return "node type " + std::to_string(n.type()) + " is no Chakra node type";
  }
  if (cpu) {
    return "a communication node with is_cpu_op true: ASTRA-sim 2.0 throws \"Comm node should "
           "not be on CPU\" (workload/Workload.cc, Workload::issue)";
  }
  if (Attr(n, "comm_size") == nullptr) return "no comm_size (feeder_v3 requires it)";
  if (n.type() == ChakraProtoMsg::COMM_SEND_NODE && Attr(n, "comm_dst") == nullptr) {
    return "a send without comm_dst (feeder_v3 requires it)";
  }
  if (n.type() == ChakraProtoMsg::COMM_RECV_NODE && Attr(n, "comm_src") == nullptr) {
    return "a receive without comm_src (feeder_v3 requires it)";
  }
  if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    const ChakraProtoMsg::AttributeProto* t = Attr(n, "comm_type");
    if (t == nullptr) return "a collective without comm_type (feeder_v3 requires it)";
    switch (t->int64_val()) {
      case ChakraProtoMsg::ALL_REDUCE:
      case ChakraProtoMsg::ALL_TO_ALL:
      case ChakraProtoMsg::ALL_GATHER:
      case ChakraProtoMsg::REDUCE_SCATTER:
      case ChakraProtoMsg::BROADCAST:
        return "";
      default:
        return "collective " + std::to_string(t->int64_val()) +
               ": ASTRA-sim 2.0 throws \"Unsupported collective comm type\" "
               "(workload/Workload.cc, Workload::issue_comm)";
    }
  }
  return "";
}

}  // namespace

Status CheckAstraSimRunnable(const std::vector<ChakraProtoMsg::Node>& nodes) {
  Status problems;
  for (const ChakraProtoMsg::Node& n : nodes) {
    const std::string p = ProblemOf(n);
    if (!p.empty()) problems.Add("node " + std::to_string(n.id()) + " '" + n.name() + "': " + p);
  }
  return problems;
}

}  // namespace et
}  // namespace orrery

// The flags of gen_workload's two modes, declared once on config/flag_schema.h: gen_workload.cc
// parses them, //:print_flag_tables lists them in docs/cli.md.
//
//   po::options_description desc("gen_workload collective");
//   CollectiveFlagSchema().AddTo(&desc);
//   ... CollectiveFlags f; Status s = CollectiveFlagSchema().Apply(vm, &f);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/flag_schema.h"
#include "config/key_doc.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery::et {

// `gen_workload collective`: one COMM_COLL node per rank.
struct CollectiveFlags {
  std::string type = "all_reduce";
  std::string size = "1048576";  // bytes, checked by the schema to be digits <= 2^53
  uint64_t npus = 0;
  std::string out;
};

// `gen_workload dp-step`: one data-parallel training step.
struct DpStepFlags {
  uint64_t npus = 0;
  uint64_t layers = 4;
  std::string out;
};

const FlagSchema<CollectiveFlags>& CollectiveFlagSchema();
const FlagSchema<DpStepFlags>& DpStepFlagSchema();
std::vector<KeyDoc> CollectiveFlagDocs();
std::vector<KeyDoc> DpStepFlagDocs();

// The collective types `--type` takes, in the order the usage lists them.
const std::vector<std::string>& CollectiveTypeNames();
// The collective `--type` names.
ChakraProtoMsg::CollectiveCommType CommType(const CollectiveFlags& f);
// A size `--size` passed (digits, at most 2^53) as a number.
uint64_t SizeBytes(const CollectiveFlags& f);

}  // namespace orrery::et

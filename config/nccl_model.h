// What NCCL does on top of the wire, per machine profile (`nccl.yaml` in the profile directory):
// the algorithms its tuner chooses between, the protocols, and what each costs beyond the
// simulated messages.
//
//   StatusOr<NcclModel> m = LoadNcclModel("configs/machines/hgx-h100/nccl.yaml");
//   for (const NcclChoice& c : Choices(*m, "")) ... c.algorithm, c.protocol, c.latency_us ...
//
// A choice (algorithm a, protocol p) runs algorithm a's messages (NcclImplementations) with
//   collective-launch-latency = a.latency + p.latency     (the per-collective floor)
//   protocol-efficiency       = a.efficiency * p.efficiency  (achieved share of line rate)
// and NCCL's tuner is taken to pick the fastest choice at every size and scale (validate.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

struct NcclProtocol {
  std::string name;  // LL, LL128, Simple
  double latency_us = 0;
  double efficiency = 1;
};

struct NcclAlgorithm {
  std::string name;  // ring, tree, nvls
  double latency_us = 0;
  double efficiency = 1;
  std::vector<std::string> protocols;  // the ones it runs with; empty = all
};

struct NcclModel {
  std::string path;
  std::vector<NcclAlgorithm> algorithms;
  std::vector<NcclProtocol> protocols;
};

struct NcclChoice {
  std::string algorithm;
  std::string protocol;
  double latency_us = 0;
  double efficiency = 1;
};

// Valid names, for messages.
extern const char kNcclAlgorithms[];  // "ring, tree, nvls"
extern const char kNcclProtocols[];   // "LL, LL128, Simple"

StatusOr<NcclModel> LoadNcclModel(const std::string& path);
// The model as nccl.yaml text, after `comment` (lines starting with '#').
std::string FormatNcclModel(const NcclModel& m, const std::string& comment);

// Every (algorithm, protocol) the model allows; only those of `algorithm` unless it is "".
StatusOr<std::vector<NcclChoice>> Choices(const NcclModel& m, const std::string& algorithm);

// The system keys that make the collective engine run NCCL algorithm `name` on a network of
// `dims` dimensions (the last one being the nodes when dims > 1):
//   ring: ring on one node; across nodes NCCL's flat ring, one per channel (channelRing);
//   tree: ring inside the node, doubleBinaryTree across nodes (dims > 1 only);
//   nvls: nvls inside the node, doubleBinaryTree across nodes (NCCL's NVLS-tree when dims > 1).
// Keys: all-reduce-, reduce-scatter-, all-gather-, all-to-all-implementation.
StatusOr<std::map<std::string, std::vector<std::string>>> NcclImplementations(
    const std::string& name, int dims);

}  // namespace orrery

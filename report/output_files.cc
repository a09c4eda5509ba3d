#include "report/output_files.h"

namespace orrery {
namespace report_internal {

std::vector<NpuPlace> NpuPlaces(const RunResult& r) {
  std::vector<NpuPlace> of;
  if (r.copy_ranks > 0) {
    // Copy c's rank k is NPU (k / I)·I·copies + c·I + k mod I (I = copy_ranks: contiguous).
    const int interleave = r.copy_interleave > 0 ? r.copy_interleave : r.copy_ranks;
    const int copies = r.num_npus() / r.copy_ranks;
    for (int npu = 0; npu < r.num_npus(); ++npu) {
      of.push_back({(npu / interleave) % copies,
                    npu / (interleave * copies) * interleave + npu % interleave});
    }
  } else if (!r.jobs.empty()) {
    of.resize(r.num_npus());
    for (size_t j = 0; j < r.jobs.size(); ++j) {
      for (size_t rank = 0; rank < r.jobs[j].npus.size(); ++rank) {
        of[r.jobs[j].npus[rank]] = {static_cast<int>(j), static_cast<int>(rank)};
      }
    }
  }
  return of;
}

Status NeedsRecording(const RunResult& r) {
  if (static_cast<int>(r.activity.size()) != r.num_npus()) {
    return Status::Error("internal: the run was not recorded (RunOptions::record)");
  }
  return Status::Ok();
}

const char* PathKind(const CriticalPathStep& s) {
  switch (s.type) {
    case et::NodeType::kCommColl:
      if (s.track == Track::kComm) return "collective";
      break;
    case et::NodeType::kCommSend:
      return "send";
    case et::NodeType::kCommRecv:
      return "receive";
    default:
      break;
  }
  return TrackName(s.track);
}

}  // namespace report_internal
}  // namespace orrery

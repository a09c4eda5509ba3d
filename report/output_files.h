// Shared by the run's output writers (outputs.cc: reports; timeline.cc: timelines): buffered
// file writing, where each NPU runs (--jobs, --replicate-trace), and what a critical-path
// segment was doing. Not part of the report API (outputs.h).
#pragma once

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "runner/run.h"

namespace orrery {
namespace report_internal {

// Text written to a file as it is made, about 1 MiB at a time, so that a report of millions
// of rows is not first built whole in memory (GPT-3 175B on 128 NPUs: an 80 MB report).
class FileWriter {
 public:
  explicit FileWriter(const std::string& path) : path_(path), f_(path, std::ios::binary) {}
  bool opened() const { return static_cast<bool>(f_); }
  FileWriter& operator+=(const std::string& text) {
    buffer_ += text;
    if (buffer_.size() >= (1u << 20)) Flush();
    return *this;
  }
  Status Close() {
    Flush();
    f_.close();
    if (!f_) return Status::Error(path_ + ": write failed: " + std::strerror(errno));
    return Status::Ok();
  }

 private:
  void Flush() {
    f_ << buffer_;
    buffer_.clear();
  }
  std::string path_;
  std::ofstream f_;
  std::string buffer_;
};

// Whole ns, as every output prints times.
inline std::string Ns(Time t) { return std::to_string(t.WholeNs()); }

// With --jobs or --replicate-trace: each NPU's job (index into r.jobs) or copy, and its rank
// there; owner -1 for an idle NPU. Empty otherwise.
struct NpuPlace {
  int owner = -1;
  int rank = -1;
};
std::vector<NpuPlace> NpuPlaces(const RunResult& r);

// An error unless the run was recorded (RunOptions::record).
Status NeedsRecording(const RunResult& r);

// What a critical-path segment's node was doing: "collective", "send", "receive" or its track.
const char* PathKind(const CriticalPathStep& s);

}  // namespace report_internal
}  // namespace orrery

#include "et_feeder/manifest.h"

#include <sys/stat.h>

#include <fstream>

#include "config/schema.h"

namespace orrery {
namespace et {

namespace {

// The largest machine a manifest may describe (as a network: runner/jobs_config.h's kMaxNpus).
constexpr int kMaxManifestNpus = 1 << 24;

const Schema<TraceManifest>& ManifestSchema() {
  static const Schema<TraceManifest>* schema = [] {
    auto* s = new Schema<TraceManifest>();
    s->Integer("npus", &TraceManifest::npus)
        .Required()
        .Min(1)
        .Max(kMaxManifestNpus)
        .Help("the job's NPUs: copies times the rank files");
    s->Integer("copies", &TraceManifest::copies)
        .Required()
        .Min(1)
        .Max(kMaxManifestNpus)
        .Help("data-parallel copies of the rank files' program set");
    s->Integer("interleave", &TraceManifest::interleave)
        .Min(0)
        .Max(kMaxManifestNpus)
        .Help(
            "ranks of a copy that sit together: copy c's rank r runs on NPU (r / I)·I·copies + "
            "c·I + r mod I; 0 = the whole copy (copy c on NPUs c·R .. c·R + R - 1)");
    s->String("data-parallel-groups", &TraceManifest::data_parallel_groups)
        .Help("the communicator groups that span every copy, as --dp-groups: world, pg ids");
    return s;
  }();
  return *schema;
}

}  // namespace

std::string ManifestPath(const std::string& prefix) { return prefix + ".manifest.yaml"; }

StatusOr<std::optional<TraceManifest>> LoadTraceManifestOf(const std::string& prefix) {
  const std::string path = ManifestPath(prefix);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::optional<TraceManifest>();
  StatusOr<TraceManifest> m = LoadTraceManifest(path);
  if (!m.ok()) return m.status();
  return std::optional<TraceManifest>(std::move(m).value());
}

StatusOr<TraceManifest> LoadTraceManifest(const std::string& path) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  TraceManifest m;
  Status s = ManifestSchema().Apply(*file, &m);
  if (!s.ok()) return s;
  m.path = path;
  if (m.npus % m.copies != 0) {
    return Status::Error(path + ": 'npus' is " + std::to_string(m.npus) + " and 'copies' " +
                         std::to_string(m.copies) +
                         "; expected npus to be a whole number of copies (each copy runs the "
                         "same number of rank files)");
  }
  const int ranks = m.npus / m.copies;
  if (m.interleave == 0) m.interleave = ranks;
  if (ranks % m.interleave != 0) {
    return Status::Error(path + ": 'interleave' is " + std::to_string(m.interleave) +
                         ", which does not divide the " + std::to_string(ranks) +
                         " ranks of a copy (npus / copies); expected a divisor of " +
                         std::to_string(ranks));
  }
  return m;
}

Status WriteTraceManifest(const std::string& path, const TraceManifest& m,
                          const std::string& comment) {
  std::ofstream out(path);
  std::string text;
  size_t start = 0;
  while (start <= comment.size() && !comment.empty()) {
    const size_t end = comment.find('\n', start);
    text += "# " + comment.substr(start, end == std::string::npos ? end : end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  text += "npus: " + std::to_string(m.npus) + "\n";
  text += "copies: " + std::to_string(m.copies) + "\n";
  text += "interleave: " + std::to_string(m.interleave) + "\n";
  text += "data-parallel-groups: \"" + m.data_parallel_groups + "\"\n";
  out << text;
  out.close();
  if (!out) return Status::Error(path + ": cannot write the trace manifest");
  return Status::Ok();
}

}  // namespace et
}  // namespace orrery

#include "tests/input_key_tables.h"

#include <utility>

#include "config/key_table.h"
#include "nccl/nccl_model.h"
#include "runner/jobs_config.h"
#include "sweep/sweep.h"

namespace orrery {

namespace {

InputKeyTable Table(const std::string& doc, const std::string& title, std::vector<KeyDoc> keys) {
  InputKeyTable t;
  t.doc = doc;
  t.markdown = KeyTableMarkdown(title, keys);
  t.keys = std::move(keys);
  return t;
}

}  // namespace

std::vector<InputKeyTable> InputKeyTables() {
  return {
      Table("docs/workloads.md", "Keys of a job (--jobs)", JobKeys()),
      Table("docs/sweeps.md", "Keys of a sweep spec", SweepSpecKeys()),
      Table("docs/sweeps.md", "Keys of a sweep's base", SweepBaseKeys()),
      Table("nccl/README.md", "Keys of nccl.yaml", NcclModelKeys()),
      Table("nccl/README.md", "Keys of an algorithm (under algorithms)", NcclAlgorithmKeys()),
      Table("nccl/README.md", "Keys of a protocol (under protocols)", NcclProtocolKeys()),
  };
}

}  // namespace orrery

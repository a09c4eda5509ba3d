// The key tables of docs/ for jobs files, sweep specs and nccl.yaml are exactly what their
// loaders' schemas declare (regenerate them with `bazel run -c opt //tests:print_input_keys`).
#include <gtest/gtest.h>

#include <string>

#include "config/test_files.h"
#include "tests/input_key_tables.h"

namespace orrery {
namespace {

std::string Slurp(const std::string& path) { return ReadWholeFile(RunfilePath(path)); }

TEST(InputDocs, KeyTablesMatchTheDeclarations) {
  const std::vector<InputKeyTable> tables = InputKeyTables();
  ASSERT_FALSE(tables.empty());
  for (const InputKeyTable& t : tables) {
    const std::string doc = Slurp(t.doc);
    ASSERT_FALSE(doc.empty()) << "cannot read " << t.doc << " from the runfiles";
    EXPECT_NE(doc.find(t.markdown), std::string::npos)
        << t.doc << "'s key table is out of date: run bazel run -c opt //tests:print_input_keys";
  }
}

// Every declared key has a meaning and a row of its own in its page.
TEST(InputDocs, EveryKeyIsExplained) {
  for (const InputKeyTable& t : InputKeyTables()) {
    ASSERT_FALSE(t.keys.empty()) << t.doc;
    const std::string doc = Slurp(t.doc);
    for (const KeyDoc& k : t.keys) {
      EXPECT_FALSE(k.meaning.empty()) << t.doc << ": key '" << k.name << "' has no help";
      EXPECT_NE(doc.find("| `" + k.name + "` |"), std::string::npos) << t.doc << ": " << k.name;
    }
  }
}

}  // namespace
}  // namespace orrery

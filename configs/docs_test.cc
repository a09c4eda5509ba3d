// configs/README.md documents every key the loaders accept.
#include "config/key_table.h"
#include "config/system_config.h"
#include "config/test_files.h"
#include "gtest/gtest.h"
#include "memory/memory_config.h"
#include "network/network_config.h"

namespace orrery {
namespace {

void ExpectDocumented(const std::vector<KeyDoc>& keys, const std::string& kind) {
  const std::string readme = ReadWholeFile(RunfilePath("configs/README.md"));
  ASSERT_FALSE(readme.empty()) << "cannot read configs/README.md from the runfiles";
  ASSERT_FALSE(keys.empty());
  for (const KeyDoc& k : keys) {
    EXPECT_NE(readme.find("`" + k.name + "`"), std::string::npos)
        << kind << " key '" << k.name << "' is not documented in configs/README.md";
  }
}

// The tables in the README are exactly what the declarations say (regenerate them with
// `bazel run //configs:print_config_keys` after changing a key).
TEST(DocsTest, TablesMatchTheDeclarations) {
  const std::string readme = ReadWholeFile(RunfilePath("configs/README.md"));
  const struct {
    const char* title;
    std::vector<KeyDoc> keys;
  } kTables[] = {
      {"System keys (--system-configuration)", SystemConfigKeys()},
      {"Network keys (--network-configuration)", NetworkConfigKeys()},
      {"Remote-memory keys (--remote-memory-configuration)", MemoryConfigKeys()},
  };
  for (const auto& t : kTables) {
    EXPECT_NE(readme.find(KeyTableMarkdown(t.title, t.keys)), std::string::npos)
        << "configs/README.md's table '" << t.title
        << "' is out of date: run bazel run //configs:print_config_keys";
  }
}

TEST(DocsTest, SystemKeysAreDocumented) { ExpectDocumented(SystemConfigKeys(), "system"); }
TEST(DocsTest, NetworkKeysAreDocumented) { ExpectDocumented(NetworkConfigKeys(), "network"); }
TEST(DocsTest, MemoryKeysAreDocumented) { ExpectDocumented(MemoryConfigKeys(), "memory"); }

}  // namespace
}  // namespace orrery

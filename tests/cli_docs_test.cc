// docs/cli.md's flag tables are exactly what the flags' declarations say (regenerate them with
// `bazel run -c opt //:print_flag_tables` after changing a flag), and every command's flags are
// in them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "flag_tables.h"
#include "runner/run_flags.h"

namespace orrery {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CliDocs, FlagTablesMatchTheDeclarations) {
  const std::string doc = Slurp("docs/cli.md");
  ASSERT_FALSE(doc.empty()) << "cannot read docs/cli.md from the runfiles";
  EXPECT_NE(doc.find(CliFlagTables()), std::string::npos)
      << "docs/cli.md's flag tables are out of date: run bazel run -c opt //:print_flag_tables";
}

TEST(CliDocs, EveryRunFlagHasHelp) {
  const std::string tables = CliFlagTables();
  for (const KeySpec& k : RunFlagSchema().keys()) {
    EXPECT_FALSE(k.help.empty()) << "--" << k.name;
    EXPECT_NE(tables.find("`--" + k.name + "`"), std::string::npos) << "--" << k.name;
  }
}

}  // namespace
}  // namespace orrery

// docs/cli.md's flag tables are exactly what the flags' declarations say (regenerate them with
// `bazel run -c opt //:print_flag_tables` after changing a flag), and every command's flags are
// in them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "et_feeder/gen_workload_flags.h"
#include "flag_tables.h"
#include "runner/run_flags.h"
#include "validate/measurement_cli.h"

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

// validate's, calibrate's and validate --training's flags: each has help and a row in its table,
// and validate and calibrate list the same shared flags (declared once).
TEST(CliDocs, EveryValidateAndCalibrateFlagIsDocumented) {
  const std::string tables = CliFlagTables();
  const std::vector<std::vector<KeyDoc>> commands = {ValidateFlagDocs(), CalibrateFlagDocs(),
                                                     TrainingFlagDocs()};
  for (const std::vector<KeyDoc>& docs : commands) {
    ASSERT_FALSE(docs.empty());
    for (const KeyDoc& d : docs) {
      EXPECT_FALSE(d.meaning.empty()) << "--" << d.name;
      EXPECT_NE(tables.find("| `--" + d.name + "` |"), std::string::npos) << "--" << d.name;
    }
  }
  const auto& shared_v = MeasurementFlagSchema(MeasurementTool::kValidate).keys();
  const auto& shared_c = MeasurementFlagSchema(MeasurementTool::kCalibrate).keys();
  ASSERT_EQ(shared_v.size(), shared_c.size());
  for (size_t i = 0; i < shared_v.size(); ++i) {
    EXPECT_EQ(shared_v[i].name, shared_c[i].name);
    EXPECT_EQ(commands[0][i].name, shared_v[i].name);
    EXPECT_EQ(commands[1][i].name, shared_c[i].name);
  }
}

// gen_workload's two modes: each flag has help and a row in its mode's table.
TEST(CliDocs, EveryGenWorkloadFlagIsDocumented) {
  const std::string tables = CliFlagTables();
  for (const auto& [title, docs] : std::vector<std::pair<std::string, std::vector<KeyDoc>>>{
           {"gen_workload collective", et::CollectiveFlagDocs()},
           {"gen_workload dp-step", et::DpStepFlagDocs()}}) {
    const size_t table = tables.find("### " + title + "\n");
    ASSERT_NE(table, std::string::npos) << title;
    const size_t end = tables.find("### ", table + 4);
    const std::string rows = tables.substr(table, end == std::string::npos ? end : end - table);
    ASSERT_FALSE(docs.empty()) << title;
    for (const KeyDoc& d : docs) {
      EXPECT_FALSE(d.meaning.empty()) << title << " --" << d.name;
      EXPECT_NE(rows.find("| `--" + d.name + "` |"), std::string::npos) << title << " --" << d.name;
    }
  }
}

}  // namespace
}  // namespace orrery

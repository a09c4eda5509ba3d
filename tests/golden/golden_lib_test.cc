// The golden runner itself: cases files parsed with every problem named, stderr normalised as a
// terminal shows it, commands run in their own directory, differences reported and not missed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/golden/golden.h"

namespace orrery::golden {
namespace {

TEST(GoldenCases, ParsesCasesCommandsContinuationsAndDirectives) {
  const std::string text =
      "# a comment\n"
      "case one\n"
      "orrery --a=1 \\\n"
      "   --b 2\n"
      "\n"
      "case two-2\n"
      "  same-as out.csv configs/x.csv\n"
      "  link examples compat/astra-sim/examples\n"
      "  gen_workload x\n"
      "  orrery y\n";
  StatusOr<std::vector<GoldenCase>> cases = ParseCases(text, "t.cases");
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_EQ((*cases)[0].name, "one");
  EXPECT_EQ((*cases)[0].line, 2);
  ASSERT_EQ((*cases)[0].commands.size(), 1u);
  EXPECT_EQ((*cases)[0].commands[0], (std::vector<std::string>{"orrery", "--a=1", "--b", "2"}));
  EXPECT_EQ((*cases)[1].name, "two-2");
  EXPECT_EQ((*cases)[1].line, 6);
  EXPECT_EQ((*cases)[1].commands.size(), 2u);
  EXPECT_EQ((*cases)[1].same_as.at("out.csv"), "configs/x.csv");
  EXPECT_EQ((*cases)[1].links.at("examples"), "compat/astra-sim/examples");
}

TEST(GoldenCases, EveryProblemIsNamedWithItsLine) {
  StatusOr<std::vector<GoldenCase>> cases = ParseCases(
      "orrery x\ncase a/b\ncase ok\ncase ok\norrery y\ncase empty\nsame-as x\n", "t.cases");
  ASSERT_FALSE(cases.ok());
  const std::string m = cases.status().message();
  EXPECT_NE(m.find("t.cases:1: a command before the first 'case NAME' line"), std::string::npos)
      << m;
  EXPECT_NE(m.find("t.cases:2: expected 'case NAME'"), std::string::npos) << m;
  EXPECT_NE(m.find("t.cases:4: case 'ok' is defined twice"), std::string::npos) << m;
  EXPECT_NE(m.find("t.cases:7: expected 'same-as NAME PATH'"), std::string::npos) << m;
  EXPECT_NE(m.find("t.cases:6: case 'empty' runs nothing"), std::string::npos) << m;
  EXPECT_NE(m.find("t.cases:2: case 'a/b' runs nothing"), std::string::npos) << m;
}

TEST(GoldenCases, StderrKeepsWhatATerminalShowsWithoutTheWallTime) {
  EXPECT_EQ(NormaliseStderr("\r  sweep: 1 of 2 points done \r  sweep: 2 of 2 points done \n"
                            "info: 4656 events in 0.023 s of wall time (0.21 M events/s)\n"
                            "warning: something\n"
                            "info: other information stays\n"),
            "  sweep: 2 of 2 points done \nwarning: something\ninfo: other information stays\n");
  EXPECT_EQ(NormaliseStderr(""), "");
}

class GoldenRun : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/golden_run";
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/inputs");
    std::ofstream(root_ + "/inputs/in.txt") << "input\n";
    setup_.tools = {{"sh", "/bin/sh"}};
    setup_.links = {{"inputs", root_ + "/inputs"}};
    setup_.work_dir = root_ + "/work";
  }
  std::string root_;
  RunSetup setup_;
};

TEST_F(GoldenRun, StreamsFilesAndExitStatusAreKept) {
  GoldenCase c{"c",
               1,
               {{"sh", "-c", "cat inputs/in.txt > copy.txt; echo out; echo err >&2; exit 3"},
                {"sh", "-c", "printf partial"}},
               {},
               {}};
  StatusOr<CaseOutputs> got = RunCase(c, setup_);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->size(), 3u);  // stdout, stderr, copy.txt; the link is not an output
  EXPECT_EQ(got->at("copy.txt"), "input\n");
  EXPECT_EQ(got->at("stdout"),
            "$ sh -c cat inputs/in.txt > copy.txt; echo out; echo err >&2; exit 3\nout\n"
            "[exit status 3]\n$ sh -c printf partial\npartial\n\\ no newline at the end\n");
  EXPECT_EQ(got->at("stderr"),
            "$ sh -c cat inputs/in.txt > copy.txt; echo out; echo err >&2; exit 3\nerr\n");

  // Written, then compared: equal; then one byte off, a file more and one less are all named.
  const std::string golden = root_ + "/golden/c";
  ASSERT_TRUE(WriteOutputs(*got, golden).ok());
  EXPECT_EQ(CompareOutputs(*got, golden), "");
  CaseOutputs changed = *got;
  changed["copy.txt"] = "inpuT\n";
  changed["new.txt"] = "x";
  changed.erase("stderr");
  const std::string report = CompareOutputs(changed, golden);
  EXPECT_NE(report.find("-input"), std::string::npos) << report;
  EXPECT_NE(report.find("+inpuT"), std::string::npos) << report;
  EXPECT_NE(report.find("new output: new.txt"), std::string::npos) << report;
  EXPECT_NE(report.find("missing output: stderr"), std::string::npos) << report;
  EXPECT_NE(CompareOutputs(*got, root_ + "/golden/none").find("no golden files"),
            std::string::npos);
}

TEST_F(GoldenRun, BinaryFilesReportTheirFirstDifference) {
  const std::string golden = root_ + "/golden/b";
  ASSERT_TRUE(WriteOutputs({{"stdout", ""}, {"t.et", std::string("ab\0cd", 5)}}, golden).ok());
  const std::string report =
      CompareOutputs({{"stdout", ""}, {"t.et", std::string("ab\0cX!", 6)}}, golden);
  EXPECT_NE(report.find("binary file t.et: expected 5 bytes, got 6; first difference at byte 4"),
            std::string::npos)
      << report;
}

TEST_F(GoldenRun, UnknownToolsBadLinksAndHangsFailTheCase) {
  EXPECT_FALSE(RunCase(GoldenCase{"u", 1, {{"python", "x"}}, {}, {}}, setup_).ok());
  EXPECT_FALSE(
      RunCase(GoldenCase{"l", 1, {{"sh", "-c", "true"}}, {}, {{"x", "elsewhere/y"}}}, setup_).ok());
  setup_.timeout_seconds = 1;
  StatusOr<CaseOutputs> hang =
      RunCase(GoldenCase{"h", 1, {{"sh", "-c", "sleep 30"}}, {}, {}}, setup_);
  ASSERT_FALSE(hang.ok());
  EXPECT_NE(hang.status().message().find("did not finish in 1 s"), std::string::npos);
  StatusOr<CaseOutputs> clash =
      RunCase(GoldenCase{"s", 1, {{"sh", "-c", "echo > stdout"}}, {}, {}}, setup_);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("writes a file named 'stdout'"), std::string::npos);
}

}  // namespace
}  // namespace orrery::golden

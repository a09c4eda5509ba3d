// Golden end-to-end tests: every case of tests/golden/<group>.cases is run as a user runs it, and
// its stdout, stderr (less the wall-time line) and every file it writes must equal the files in
// tests/golden/expected/<group>/<case>/ byte for byte.
//
//   bazel test -c opt //tests/golden:examples_test            # check (one target per group)
//   scripts/update_goldens.sh examples                        # regenerate on purpose
//
// Flags (after gtest's): --group=NAME (which cases file), --update (write the goldens into the
// source tree, $BUILD_WORKSPACE_DIRECTORY, as under `bazel run`, instead of checking them).
#include "tests/golden/golden.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace orrery::golden {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string group;
  bool update = false;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The runfiles tree: Bazel's test environment, `bazel run`'s, or beside the binary.
std::string RunfilesDir(const char* argv0) {
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* d = std::getenv(var);
    if (d != nullptr && *d != '\0') return fs::absolute(d).string();
  }
  return fs::absolute(std::string(argv0) + ".runfiles").string();
}

// Tools and input folders as the cases name them; the shared corpus (../shared beside the
// checkout) is the external repository @orrery_shared.
RunSetup MakeSetup(const std::string& runfiles, const std::string& work_dir) {
  const std::string ws = runfiles + "/orrery";
  const std::string shared = runfiles + "/orrery_shared";
  RunSetup s;
  s.tools = {{"orrery", ws + "/orrery"}, {"gen_workload", ws + "/et_feeder/gen_workload"}};
  s.links = {{"examples", ws + "/examples"},
             {"configs", ws + "/configs"},
             {"validate", ws + "/validate"},
             {"compat", shared + "/compat"},
             {"validation", shared + "/validation"}};
  s.work_dir = work_dir;
  return s;
}

std::string RegenerateHint(const std::string& group) {
  return "If the change is deliberate: scripts/update_goldens.sh " + group +
         ", review `git diff tests/golden`, and say in the commit message which outputs moved "
         "and why (tests/golden/README.md).";
}

// Runs one case and compares it with its goldens, and its `same-as` files with their copies.
void CheckCase(const GoldenCase& c, const RunSetup& setup, const std::string& ws,
               const std::string& group) {
  StatusOr<CaseOutputs> got = RunCase(c, setup);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const std::string dir = ws + "/tests/golden/expected/" + group + "/" + c.name;
  std::string report = CompareOutputs(*got, dir);
  for (const auto& [file, path] : c.same_as) {
    const auto output = got->find(file);
    if (output == got->end() || output->second != Slurp(ws + "/" + path)) {
      report += "  " + path + " is not what this case writes as " + file +
                " (the shipped copy must be the golden)\n";
    }
  }
  if (!report.empty()) {
    ADD_FAILURE() << "golden case '" << c.name << "' (tests/golden/" << group << ".cases:" << c.line
                  << ") differs:\n"
                  << report << RegenerateHint(group);
  }
}

// Golden directories of cases the file no longer has would never be checked again.
void CheckNoStaleGoldens(const std::vector<GoldenCase>& cases, const std::string& ws,
                         const std::string& group) {
  std::set<std::string> names;
  for (const GoldenCase& c : cases) names.insert(c.name);
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator(ws + "/tests/golden/expected/" + group, ec)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(names.count(name) > 0)
        << "tests/golden/expected/" << group << "/" << name
        << " belongs to no case of tests/golden/" << group << ".cases; " << RegenerateHint(group);
  }
  EXPECT_FALSE(ec) << "tests/golden/expected/" << group << ": " << ec.message();
}

// Writes every case's outputs (and its `same-as` copies) into the source tree.
int Update(const std::vector<GoldenCase>& cases, const RunSetup& setup, const std::string& group) {
  const char* src = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (src == nullptr || *src == '\0') {
    std::fprintf(stderr,
                 "--update needs BUILD_WORKSPACE_DIRECTORY: run it through "
                 "scripts/update_goldens.sh (bazel run)\n");
    return 2;
  }
  const std::string root = std::string(src) + "/tests/golden/expected/" + group;
  std::error_code ec;
  fs::remove_all(root, ec);
  int failed = 0;
  for (const GoldenCase& c : cases) {
    StatusOr<CaseOutputs> got = RunCase(c, setup);
    Status s = got.ok() ? WriteOutputs(*got, root + "/" + c.name) : got.status();
    for (const auto& [file, path] : c.same_as) {
      if (!s.ok()) break;
      std::ofstream out(std::string(src) + "/" + path, std::ios::binary | std::ios::trunc);
      out << (*got)[file];
      if (!out.good()) s = Status::Error(path + ": cannot write it");
    }
    std::printf("%-40s %s\n", c.name.c_str(), s.ok() ? "written" : s.message().c_str());
    std::fflush(stdout);
    failed += s.ok() ? 0 : 1;
  }
  return failed == 0 ? 0 : 1;
}

// One registered test: a case, or the check for stale goldens.
class GoldenTest : public ::testing::Test {
 public:
  explicit GoldenTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--group=", 0) == 0)
      o.group = a.substr(8);
    else if (a == "--update")
      o.update = true;
    else
      std::fprintf(stderr, "golden_test: unknown argument '%s'\n", a.c_str());
  }
  return o;
}

}  // namespace
}  // namespace orrery::golden

int main(int argc, char** argv) {
  using namespace orrery::golden;
  ::testing::InitGoogleTest(&argc, argv);
  const Options o = ParseOptions(argc, argv);
  if (o.group.empty()) {
    std::fprintf(stderr, "golden_test: give --group=NAME (a tests/golden/NAME.cases file)\n");
    return 2;
  }
  const std::string runfiles = RunfilesDir(argv[0]);
  const std::string ws = runfiles + "/orrery";
  const std::string file = "tests/golden/" + o.group + ".cases";
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string work = tmp != nullptr ? std::string(tmp) + "/golden" : "";
  if (work.empty()) {
    char templ[] = "/tmp/orrery-golden-XXXXXX";
    const char* made = mkdtemp(templ);
    work = made != nullptr ? made : "/tmp";
  }
  const RunSetup setup = MakeSetup(runfiles, work);
  orrery::StatusOr<std::vector<GoldenCase>> cases = ParseCases(Slurp(ws + "/" + file), file);
  if (cases.ok() && cases->empty())
    cases = orrery::Status::Error(file + ": no cases (is it in the test's data?)");
  if (!cases.ok()) {
    std::fprintf(stderr, "%s\n", cases.status().message().c_str());
    return 2;
  }
  if (o.update) {
    const int rc = Update(*cases, setup, o.group);
    if (tmp == nullptr) fs::remove_all(work);
    return rc;
  }
  const std::string suite = "Golden_" + o.group;
  for (const GoldenCase& c : *cases) {
    ::testing::RegisterTest(suite.c_str(), c.name.c_str(), nullptr, nullptr, file.c_str(), c.line,
                            [c, setup, ws, o]() -> GoldenTest* {
                              return new GoldenTest([=] { CheckCase(c, setup, ws, o.group); });
                            });
  }
  ::testing::RegisterTest(suite.c_str(), "NoStaleGoldens", nullptr, nullptr, file.c_str(), 1,
                          [all = *cases, ws, o]() -> GoldenTest* {
                            return new GoldenTest([=] { CheckNoStaleGoldens(all, ws, o.group); });
                          });
  return RUN_ALL_TESTS();
}

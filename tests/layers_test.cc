// Every source's `#include "pkg/..."` lines keep the layer order of layers.bzl (issue 56): no
// include points up or sideways. The checker itself is tested first on planted examples.
#include "tests/layers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace orrery {
namespace {

namespace fs = std::filesystem;

// A small order in layers.bzl's own syntax: low <- mid_a, mid_b <- high; tests on top.
const char kSmallBzl[] = R"(
LAYERS = [
    ["low"],
    ["mid_a", "mid_b"],
    ["high"],
]
TOP = ["", "tests"]
TEST_HELPERS = [
    "high/recorded.h",
]
)";

LayerOrder SmallOrder() {
  LayerOrder order;
  std::string error;
  EXPECT_TRUE(ParseLayers(kSmallBzl, &order, &error)) << error;
  return order;
}

TEST(LayersCheckerTest, ParsesTheLayersInOrder) {
  const LayerOrder order = SmallOrder();
  ASSERT_EQ(order.layers.size(), 3u);
  EXPECT_EQ(order.rank.at("low"), 0);
  EXPECT_EQ(order.rank.at("mid_a"), 1);
  EXPECT_EQ(order.rank.at("mid_b"), 1);
  EXPECT_EQ(order.rank.at("high"), 2);
  EXPECT_EQ(order.top, (std::set<std::string>{"", "tests"}));
  EXPECT_EQ(order.test_helpers, (std::set<std::string>{"high/recorded.h"}));
}

TEST(LayersCheckerTest, RejectsAMalformedDeclaration) {
  LayerOrder order;
  std::string error;
  EXPECT_FALSE(ParseLayers("LAYERS = [[\"a\"]]\n", &order, &error));
  EXPECT_NE(error.find("TOP"), std::string::npos) << error;
  EXPECT_FALSE(ParseLayers("\nLAYERS = [\n [\"a\"],\n [\"a\"],\n]\nTOP = []\nTEST_HELPERS = []\n",
                           &order, &error));
  EXPECT_NE(error.find("'a' is in LAYERS twice"), std::string::npos) << error;
}

TEST(LayersCheckerTest, DownwardAndOwnIncludesPass) {
  const std::string text =
      "#include \"mid_a/thing.h\"\n"
      "#include <vector>\n"
      "#include \"low/base.h\"\n"
      "#include \"gtest/gtest.h\"\n";  // not a declared package: not checked
  EXPECT_TRUE(CheckIncludes("mid_a/thing.cc", text, SmallOrder()).empty());
}

TEST(LayersCheckerTest, CatchesAPlantedUpwardInclude) {
  const std::string text =
      "#include \"low/base.h\"\n"
      "\n"
      "#include \"high/run.h\"\n";
  const std::vector<IncludeViolation> v = CheckIncludes("low/base.cc", text, SmallOrder());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].file, "low/base.cc");
  EXPECT_EQ(v[0].line, 3);
  EXPECT_EQ(v[0].included, "high/run.h");
  EXPECT_EQ(v[0].message,
            "low/base.cc:3: includes high/run.h: low/ (layer 0: low) may not include high/ "
            "(layer 2: high); up: the included package is in a higher layer (layers.bzl)");
}

TEST(LayersCheckerTest, CatchesASidewaysInclude) {
  const std::vector<IncludeViolation> v =
      CheckIncludes("mid_b/x.h", "  #include \"mid_a/y.h\"\n", SmallOrder());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].line, 1);
  EXPECT_NE(v[0].message.find("mid_b/ (layer 1: mid_a, mid_b) may not include mid_a/ (layer 1"),
            std::string::npos)
      << v[0].message;
  EXPECT_NE(v[0].message.find("sideways"), std::string::npos) << v[0].message;
}

TEST(LayersCheckerTest, OnlyTestSourcesMayIncludeTestHelpers) {
  const std::string text = "#include \"tests/test_case.h\"\n";
  const LayerOrder order = SmallOrder();
  EXPECT_TRUE(CheckIncludes("mid_a/thing_test.cc", text, order).empty());
  EXPECT_TRUE(CheckIncludes("high/recorded.h", text, order).empty());
  const std::vector<IncludeViolation> v = CheckIncludes("high/run.cc", text, order);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("tests/ (above every layer)"), std::string::npos) << v[0].message;
}

TEST(LayersCheckerTest, TopPackagesMayIncludeAnything) {
  const std::string text = "#include \"high/run.h\"\n#include \"low/base.h\"\n";
  EXPECT_TRUE(CheckIncludes("main.cc", text, SmallOrder()).empty());
  EXPECT_TRUE(CheckIncludes("tests/x_test.cc", text, SmallOrder()).empty());
}

TEST(LayersCheckerTest, AnUndeclaredPackageIsAViolation) {
  const std::vector<IncludeViolation> v = CheckIncludes("extra/a.cc", "", SmallOrder());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("package 'extra' is in no layer"), std::string::npos);
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Every C++ source in the runfiles (the packages' `:sources`), workspace-relative.
std::vector<std::string> Sources() {
  std::vector<std::string> paths;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(".")) {
    const std::string path = e.path().lexically_normal().string();
    const std::string ext = e.path().extension().string();
    if ((ext != ".cc" && ext != ".h") || path.rfind("external/", 0) == 0) continue;
    paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(LayersTest, EveryIncludeKeepsTheLayerOrder) {
  LayerOrder order;
  std::string error;
  ASSERT_TRUE(ParseLayers(Slurp("layers.bzl"), &order, &error)) << error;
  const std::vector<std::string> paths = Sources();
  std::set<std::string> read;
  for (const std::string& path : paths) {
    read.insert(PackageOf(path));
    for (const IncludeViolation& v : CheckIncludes(path, Slurp(path), order)) {
      ADD_FAILURE() << v.message;
    }
  }
  // Every package of the order was read (one whose `:sources` fell out of the BUILD would not).
  for (const auto& [package, rank] : order.rank) {
    EXPECT_TRUE(read.count(package)) << package << "/: no source read; add its :sources";
  }
}

}  // namespace
}  // namespace orrery

// The documentation holds together: README.md is one page (at most 200 lines) that links to
// docs/, every package has a README, and every relative link of every Markdown file here points
// at a file or folder that exists and, with a #fragment, at a heading of that file (GitHub's
// anchors: lower case, punctuation dropped, spaces as '-').
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace orrery {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The Markdown files in the runfiles (the test's data: README.md, docs/, each package's README).
std::vector<fs::path> MarkdownFiles() {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(".")) {
    if (e.path().extension() == ".md" &&
        e.path().string().find("/external/") == std::string::npos) {
      files.push_back(e.path().lexically_normal());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Text outside ``` code blocks.
std::string WithoutCodeBlocks(const std::string& text) {
  std::string out;
  bool in_code = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) out += line + "\n";
  }
  return out;
}

// GitHub's anchor of a heading: lower case, characters other than letters, digits, '-', '_'
// and spaces dropped, spaces as '-'.
std::string Anchor(const std::string& heading) {
  std::string a;
  for (unsigned char ch : heading) {
    if (std::isalnum(ch) || ch == '-' || ch == '_')
      a += static_cast<char>(std::tolower(ch));
    else if (ch == ' ')
      a += '-';
    else if (ch >= 0x80)
      a += static_cast<char>(ch);  // UTF-8 letters stay
  }
  return a;
}

std::set<std::string> Anchors(const fs::path& md) {
  std::set<std::string> anchors;
  std::istringstream in(WithoutCodeBlocks(Slurp(md)));
  for (std::string line; std::getline(in, line);) {
    const size_t hashes = line.find_first_not_of('#');
    if (hashes == 0 || hashes == std::string::npos || line[hashes] != ' ') continue;
    anchors.insert(Anchor(line.substr(hashes + 1)));
  }
  return anchors;
}

TEST(Docs, ReadmeIsOnePageThatLinksTheDocs) {
  const std::string readme = Slurp("README.md");
  ASSERT_FALSE(readme.empty()) << "README.md is not in the test's data";
  const long lines = std::count(readme.begin(), readme.end(), '\n');
  EXPECT_LE(lines, 200) << "README.md is one page: what Orrery is, the two commands, one run, the "
                           "package map; the rest belongs in docs/";
  for (const char* doc : {"getting-started", "cli", "workloads", "machines", "packet-backend",
                          "outputs", "sweeps", "validation", "astra-sim-differences", "bad-input",
                          "benchmarks", "architecture", "robustness"}) {
    const std::string link = std::string("(docs/") + doc + ".md)";
    EXPECT_NE(readme.find(link), std::string::npos) << "README.md does not link " << link;
  }
}

TEST(Docs, EveryPackageHasAReadme) {
  // The packages are this test's data (tests/BUILD lists them; a new package adds its README).
  for (const char* package : {"common",
                              "compute",
                              "config",
                              "configs",
                              "et_feeder",
                              "et_feeder/proto",
                              "examples",
                              "fuzz",
                              "memory",
                              "network",
                              "network/analytical_aware",
                              "network/analytical_unaware",
                              "network/packet",
                              "profile",
                              "analyze",
                              "report",
                              "runner",
                              "scripts",
                              "sweep",
                              "system",
                              "tests",
                              "tests/golden",
                              "third_party",
                              "validate",
                              "workload"}) {
    const std::string path = std::string(package) + "/README.md";
    EXPECT_FALSE(Slurp(path).empty()) << path << " is missing or empty";
  }
}

TEST(Docs, EveryRelativeLinkResolves) {
  const std::vector<fs::path> files = MarkdownFiles();
  EXPECT_GE(files.size(), 35u);
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& md : files) {
    const std::string text = WithoutCodeBlocks(Slurp(md));
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) continue;
      ++links;
      const size_t hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const fs::path resolved = path.empty() ? md : (md.parent_path() / path).lexically_normal();
      if (!fs::exists(resolved)) {
        ADD_FAILURE() << md.string() << ": the link (" << target << ") points at "
                      << resolved.string() << ", which does not exist";
        continue;
      }
      if (hash == std::string::npos || resolved.extension() != ".md") continue;
      const std::string anchor = target.substr(hash + 1);
      EXPECT_TRUE(Anchors(resolved).count(anchor) > 0)
          << md.string() << ": the link (" << target << ") names no heading of "
          << resolved.string();
    }
  }
  EXPECT_GT(links, 100);
}

}  // namespace
}  // namespace orrery

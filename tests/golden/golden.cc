#include "tests/golden/golden.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace orrery::golden {
namespace {

namespace fs = std::filesystem;

// Names of the files a case's streams are kept in, beside its own outputs.
constexpr const char* kStdout = "stdout";
constexpr const char* kStderr = "stderr";
// Lines of a file's diff shown before the rest is counted.
constexpr int kDiffLines = 40;

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string Join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return out.good();
}

// Runs argv[0] (a path) in `dir` with its streams in the files `out` and `err`, killed after
// `timeout_seconds` (coreutils' timeout, exit status 124); its exit status, or -1 when it could
// not be started.
int Spawn(const std::vector<std::string>& argv, const std::string& dir, const std::string& out,
          const std::string& err, int timeout_seconds) {
  std::vector<std::string> full = {"timeout", std::to_string(timeout_seconds)};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> args;
  for (std::string& a : full) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0 || chdir(dir.c_str()) != 0) _exit(127);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A stream's text as kept in a golden: its bytes, and a marker when the last line has no
// newline (so that one appearing or going away is seen).
std::string Stream(const std::string& text) {
  if (text.empty() || text.back() == '\n') return text;
  return text + "\n\\ no newline at the end\n";
}

// The regular files at the top of `dir`, directories left out, and symbolic links too unless
// `follow_links` (a golden directory in the runfiles is links to the source tree's files).
std::set<std::string> TopFiles(const std::string& dir, bool follow_links) {
  std::set<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!follow_links && e.is_symlink()) continue;
    if (e.is_regular_file()) names.insert(e.path().filename().string());
  }
  return names;
}

// The first kDiffLines lines of `diff -u` between the files, then how many more there are.
std::string ShortDiff(const std::string& expected_path, const std::string& actual_path,
                      const std::string& name) {
  const std::string cmd = "diff -u --label 'expected/" + name + "' --label 'actual/" + name +
                          "' '" + expected_path + "' '" + actual_path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "  (diff could not be run)\n";
  std::string shown;
  int lines = 0;
  char buf[4096];
  while (fgets(buf, sizeof buf, p) != nullptr) {
    const std::string line(buf);
    if (lines < kDiffLines) shown += "  " + line + (line.back() == '\n' ? "" : "\n");
    if (line.back() == '\n') ++lines;
  }
  pclose(p);
  if (lines > kDiffLines)
    shown += "  ... and " + std::to_string(lines - kDiffLines) + " more lines of diff\n";
  return shown;
}

// What differs between two versions of a file: a short diff of text, the sizes and the first
// differing byte of binary files.
std::string DescribeDifference(const std::string& name, const std::string& expected,
                               const std::string& actual, const std::string& expected_path,
                               const std::string& scratch) {
  const bool binary =
      expected.find('\0') != std::string::npos || actual.find('\0') != std::string::npos;
  if (binary) {
    size_t at = 0;
    while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
    return "  binary file " + name + ": expected " + std::to_string(expected.size()) +
           " bytes, got " + std::to_string(actual.size()) + "; first difference at byte " +
           std::to_string(at) + "\n";
  }
  const std::string actual_path = scratch + "/actual." + name;
  if (!Spit(actual_path, actual))
    return "  " + name + " differs (cannot write " + actual_path + ")\n";
  return ShortDiff(expected_path, actual_path, name);
}

}  // namespace

StatusOr<std::vector<GoldenCase>> ParseCases(const std::string& text, const std::string& file) {
  std::vector<GoldenCase> cases;
  Status problems;
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    const int start = ++number;
    while (!line.empty() && line.back() == '\\') {
      std::string next;
      if (!std::getline(in, next)) break;
      ++number;
      line = line.substr(0, line.size() - 1) + " " + next;
    }
    const std::vector<std::string> words = Words(line);
    if (words.empty() || words[0][0] == '#') continue;
    const std::string where = file + ":" + std::to_string(start);
    if (words[0] == "case") {
      if (words.size() != 2 || !ValidName(words[1])) {
        problems.Add(where + ": expected 'case NAME' (NAME of letters, digits, '_' and '-')");
      } else if (!names.insert(words[1]).second) {
        problems.Add(where + ": case '" + words[1] + "' is defined twice");
      }
      cases.emplace_back();
      cases.back().name = words.size() > 1 ? words[1] : "";
      cases.back().line = start;
    } else if (cases.empty()) {
      problems.Add(where + ": a command before the first 'case NAME' line");
    } else if (words[0] == "same-as" || words[0] == "link") {
      if (words.size() != 3)
        problems.Add(where + ": expected '" + words[0] + " NAME PATH'");
      else
        (words[0] == "link" ? cases.back().links : cases.back().same_as)[words[1]] = words[2];
    } else {
      cases.back().commands.push_back(words);
    }
  }
  for (const GoldenCase& c : cases) {
    if (c.commands.empty()) {
      problems.Add(file + ":" + std::to_string(c.line) + ": case '" + c.name + "' runs nothing");
    }
  }
  if (!problems.ok()) return problems;
  return cases;
}

std::string NormaliseStderr(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const size_t cr = line.rfind('\r');
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (line.rfind("info: ", 0) == 0 && line.find(" s of wall time") != std::string::npos) continue;
    out += line + "\n";
  }
  return out;
}

StatusOr<CaseOutputs> RunCase(const GoldenCase& c, const RunSetup& setup) {
  const std::string dir = setup.work_dir + "/" + c.name;
  const std::string streams = setup.work_dir + "/" + c.name + ".streams";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::remove_all(streams, ec);
  fs::create_directories(dir, ec);
  fs::create_directories(streams, ec);
  if (ec) return Status::Error(dir + ": cannot make the case's directory: " + ec.message());
  std::map<std::string, std::string> links = setup.links;
  for (const auto& [name, path] : c.links) {
    const std::string top = path.substr(0, path.find('/'));
    if (setup.links.count(top) == 0) {
      return Status::Error("case '" + c.name + "': link " + name + " to '" + path +
                           "', which is under none of the inputs' folders");
    }
    links[name] = setup.links.at(top) + path.substr(top.size());
  }
  for (const auto& [name, target] : links) {
    fs::create_directory_symlink(target, dir + "/" + name, ec);
    if (ec) return Status::Error(dir + "/" + name + ": cannot link to " + target);
  }
  CaseOutputs outputs;
  std::string out, err;
  for (const std::vector<std::string>& command : c.commands) {
    const auto tool = setup.tools.find(command[0]);
    if (tool == setup.tools.end()) {
      return Status::Error("case '" + c.name + "': unknown tool '" + command[0] + "'");
    }
    if (access(tool->second.c_str(), X_OK) != 0) {
      return Status::Error("case '" + c.name + "': tool '" + command[0] + "' is not at " +
                           tool->second + " (a data dependency of the test?)");
    }
    std::vector<std::string> argv = command;
    argv[0] = tool->second;
    const int status = Spawn(argv, dir, streams + "/out", streams + "/err", setup.timeout_seconds);
    if (status < 0) return Status::Error("case '" + c.name + "': cannot run " + argv[0]);
    if (status == 124) {
      return Status::Error("case '" + c.name + "': '" + Join(command) + "' did not finish in " +
                           std::to_string(setup.timeout_seconds) + " s");
    }
    out += "$ " + Join(command) + "\n" + Stream(Slurp(streams + "/out"));
    if (status != 0) out += "[exit status " + std::to_string(status) + "]\n";
    const std::string e = NormaliseStderr(Slurp(streams + "/err"));
    if (!e.empty()) err += "$ " + Join(command) + "\n" + e;
  }
  for (const std::string& name : TopFiles(dir, false)) {
    if (name == kStdout || name == kStderr) {
      return Status::Error("case '" + c.name + "' writes a file named '" + name +
                           "', the name its streams are kept under; name the output otherwise");
    }
    outputs[name] = Slurp(dir + "/" + name);
  }
  outputs[kStdout] = out;
  outputs[kStderr] = err;
  return outputs;
}

std::string CompareOutputs(const CaseOutputs& outputs, const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "  no golden files at " + dir + "\n";
  const std::set<std::string> expected = TopFiles(dir, true);
  std::set<std::string> all_files;
  for (const std::string& name : expected) all_files.insert(name);
  for (const auto& [name, text] : outputs) all_files.insert(name);
  // Actual outputs are written here for diff to read.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string scratch = tmp != nullptr ? tmp : fs::temp_directory_path().string();
  std::string report;
  for (const std::string& name : all_files) {
    const auto got = outputs.find(name);
    const bool is_expected = expected.count(name) > 0;
    if (got == outputs.end()) {
      report += "  missing output: " + name + " (the golden has it; the run did not write it)\n";
      continue;
    }
    if (!is_expected) {
      if (name == kStderr && got->second.empty()) continue;
      report += "  new output: " + name + " (the run wrote it; the golden has no such file)\n";
      continue;
    }
    const std::string want = Slurp(dir + "/" + name);
    if (want == got->second) continue;
    report += DescribeDifference(name, want, got->second, dir + "/" + name, scratch);
  }
  return report;
}

Status WriteOutputs(const CaseOutputs& outputs, const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Status::Error(dir + ": cannot make the directory: " + ec.message());
  for (const auto& [name, text] : outputs) {
    if (name == kStderr && text.empty()) continue;
    if (!Spit(dir + "/" + name, text)) return Status::Error(dir + "/" + name + ": cannot write it");
  }
  return Status::Ok();
}

}  // namespace orrery::golden

// Golden end-to-end cases: command lines of the shipped tools and the outputs they must give,
// byte for byte (tests/golden/README.md).
//
//   StatusOr<std::vector<GoldenCase>> cases = ParseCases(ReadWholeFile(path), path);
//   StatusOr<CaseOutputs> got = RunCase((*cases)[0], setup);       // in a fresh directory
//   std::string diff = CompareOutputs(*got, "tests/golden/expected/examples/dp_step_aware");
//
// A cases file holds cases; each starts with `case NAME` and lists the commands it runs, one per
// line (a trailing `\` continues a line; `#` starts a comment line), words split at spaces.
// `same-as FILE PATH` says that the output FILE is also committed at PATH in the tree (a sweep's
// shipped results), so the two cannot drift apart. `link NAME PATH` gives the case's directory
// its own link NAME to PATH (a path under one of the setup's links), for inputs that name files
// relative to the working directory (ASTRA-sim's custom collective example).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery::golden {

struct GoldenCase {
  std::string name;  // letters, digits, '_' and '-': a directory and a test name
  int line = 0;      // where it starts in its cases file
  std::vector<std::vector<std::string>> commands;  // tool name first
  std::map<std::string, std::string> same_as;      // output file -> path in the workspace
  std::map<std::string, std::string> links;        // link name -> path under a setup link
};

// The cases of one cases file; every problem found, with its line.
StatusOr<std::vector<GoldenCase>> ParseCases(const std::string& text, const std::string& file);

// Where a case runs: each command's first word names a tool (`orrery` -> its path), and the
// case's directory gets a symbolic link per entry of `links` (`examples` -> the runfiles'
// examples/) so the commands name their inputs by short relative paths.
struct RunSetup {
  std::map<std::string, std::string> tools;
  std::map<std::string, std::string> links;
  std::string work_dir;       // cases run in work_dir/<name>, made afresh
  int timeout_seconds = 600;  // per command: a hang fails the case instead of the whole test
};

// What a case gave: "stdout" and "stderr" (each command's streams after a `$ command` line, the
// exit status when it is not 0; stderr as a terminal would show it, without the wall-time
// line), and every regular file the commands wrote at the top of the case's directory.
using CaseOutputs = std::map<std::string, std::string>;
StatusOr<CaseOutputs> RunCase(const GoldenCase& c, const RunSetup& setup);

// `err` as a terminal would show it (the text after a line's last '\r', as progress lines
// leave it) without the lines that are not the run's result: `info: N events in T s of wall
// time ...`.
std::string NormaliseStderr(const std::string& err);

// "" when `dir` holds exactly `outputs` (a missing "stderr" file means an empty one), else what
// differs: files missing or extra, and a short diff of each file that differs.
std::string CompareOutputs(const CaseOutputs& outputs, const std::string& dir);

// Replaces `dir` with `outputs` (an empty "stderr" is not written).
Status WriteOutputs(const CaseOutputs& outputs, const std::string& dir);

}  // namespace orrery::golden

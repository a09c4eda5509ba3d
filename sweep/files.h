// The files a sweep reads and writes beside its rows: paths relative to the spec, the output's
// directories, and PREFIX.base, what the rows ran on (--resume compares it).
//
//   const std::string base = BaseFingerprint(spec);          // the spec's base and its files
//   if (Status s = WriteBaseFile(BaseFileOf(csv), base); !s.ok()) return s;
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "sweep/sweep.h"

namespace orrery::sweep_internal {

// `path` relative to `dir` (as it is when `path` is absolute or `dir` empty).
std::string Join(const std::string& dir, const std::string& path);

// The directory part of a file's path ("" for a bare name).
std::string DirOf(const std::string& file);

// The whole of a file, or nullopt when it cannot be opened.
std::optional<std::string> FileText(const std::string& path);

// `path` from the working directory, made absolute.
std::string AbsolutePath(const std::string& path);

// Makes `path` and its parents as `mkdir -p` does.
Status MakeDirs(const std::string& path);

// A sweep output's PREFIX.base, beside its PREFIX.csv.
std::string BaseFileOf(const std::string& csv);

// Writes a sweep's PREFIX.base.
Status WriteBaseFile(const std::string& path, const std::string& text);

// What a sweep's rows were run on besides their parameters: the spec's base (its keys and
// values, the generated collective) and the contents of every file the base or a point's
// parameters name (configs, jobs and comm-group files), with the files those name in turn (a
// system file's nccl-model, a network's custom-file, a jobs file's comm-groups and workloads),
// and every rank file of a trace prefix. Hashed with 64-bit FNV-1a. --resume keeps earlier rows
// only while this is unchanged (PREFIX.base holds the runs' own); any change runs every point
// again.
std::string BaseFingerprint(const SweepSpec& spec);

}  // namespace orrery::sweep_internal

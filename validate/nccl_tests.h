// Reads published collective measurements: nccl-tests logs and the CSV tables of
// ../shared/validation (see its README for the conventions).
//
//   StatusOr<std::vector<NcclMeasurement>> m = LoadNcclMeasurements("h100.log", /*gpus=*/0);
//   for (const NcclRow& r : (*m)[0].rows) ... r.size, r.time_us ...
//
// Logs: any nccl-tests version (with or without the `root` column, `#wrong` or `error`, the
// 2019 layout, older all_gather and broadcast rows without a reduction op, -T's timestamps), its
// columns placed by the table's header line when there is one; launcher prefixes (`0: `,
// `[1,0]<stdout>:`, and any other before a comment's '#' or a row's size, count and type); `N/A`
// fields. Each run in the log (a second `# nccl-tests version`, `# Collective test starting` or
// `# nThread` line, or one after rows) is a measurement of its own; a run without rows is left
// out with a note. The collective comes from the header (`# Collective test starting:
// all_reduce_perf`; a `collective` argument that differs is an error), else the file's name; the
// GPU count from the `Rank` lines (else nThread x nGpus, with a note), the node count from their
// host names when every rank's line is there; the algorithms and protocols NCCL was limited to
// from `NCCL_ALGO=...` / `NCCL_PROTO=...` or NCCL's `... set by environment to ...`, in NCCL's
// syntax, held for later runs until another is given. Ranks in several groups (a split mask) are
// an error. Rows of wrong results (#wrong > 0, `Out of bounds values : N FAILED`) are noted.
// CSVs: a `size_bytes` column and one of
// `time_us`, `algbw_GBps_out_of_place`, `busbw_GBps_out_of_place`, `busbw_GBps_in_place`
// (the first present gives the times: time = size / algbw, algbw = busbw / nccl-tests' factor;
// a `busbw_GBps_in_place` beside another gives in-place times, empty or N/A none); optional
// `nodes` and `gpus` columns split the table into one measurement per GPU count; lines starting
// with `#` are comments (where the table comes from). CRLF line ends, a UTF-8 byte-order mark and
// (CSV) spaces around names and values are read as any. Errors name file:line and the value: a data
// row whose size is not a whole number of bytes from 0 to 2^63 - 1, a time that is not a positive
// number (a log's out-of-place `N/A` takes the in-place time; an in-place `N/A` is "not
// measured"), a GPU or node count that is not a whole number >= 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

struct NcclRow {
  uint64_t size = 0;   // bytes, nccl-tests' `size` (see README for what it counts)
  double time_us = 0;  // out-of-place time, or in-place when that is all there is
  // The in-place time (nccl-tests' second group of columns; a CSV of busbw_GBps_in_place), 0 when
  // not measured (N/A, a row of one group of columns, a CSV of out-of-place figures).
  double in_place_us = 0;
};

struct NcclMeasurement {
  std::string source;      // file (and, for CSVs, which GPU count)
  std::string collective;  // all_reduce, all_gather, reduce_scatter, alltoall, broadcast, ...
  int gpus = 0;
  // Whether the file gives `gpus` (a CSV's gpus column, a log's Rank lines or nGpus), or the
  // caller's count stands in for it.
  bool gpus_from_file = true;
  int nodes = 0;  // 0 = unknown
  // GPUs one nccl-tests thread drives (its header's nGpus, the -g flag); 0 = not stated.
  int gpus_per_thread = 0;
  // Forced by NCCL_ALGO in the log, lower case in NCCL's syntax ("ring", "nvls,ring", "^nvls");
  // "" = NCCL's choice.
  std::string algorithm;
  // Forced by NCCL_PROTO in the log, as written ("Simple", "^LL128"); "" = NCCL's choice.
  std::string protocol;
  // What a reader of a comparison on this measurement should know (rows NCCL computed wrong, a
  // GPU count from the header): validate prints them as notes.
  std::vector<std::string> notes;
  std::vector<NcclRow> rows;
  // Rows of 0 bytes ProfileSimulator::Load left out of `rows` (validate.h); 0 as loaded.
  int empty_rows = 0;
  // nccl-tests' own time per iteration, which no row can go below (ProfileSimulator::Load; 0 =
  // none): with one process driving every GPU (`-g 8`) the host issues each iteration's calls to
  // all of them in turn, about 34 µs on 8 x A100, and the GPUs cannot run ahead of that.
  double harness_floor_us = 0;
};

// A time a measurement can take, in microseconds from 0.001 to 1e9 (kMeasuredTimeRange says
// so in words): a log's time fields, a CSV's times, --harness-floor.
bool ParseMeasuredTime(const std::string& text, double* us);
extern const char* const kMeasuredTimeRange;

// nccl-tests' bus bandwidth factor for `collective` over n ranks.
double NcclBusFactor(const std::string& collective, int n);

// `gpus` is the GPU count of inputs that do not give it: a CSV without a `gpus` column, a log
// without `#  Rank` lines (0 = such an input is an error). A log's count is its highest rank + 1
// (posted logs sometimes keep only some Rank lines); a different nonzero `gpus` is an error.
// `collective` is for inputs that do not name theirs ("" = must be named in the file, or the
// CSV name contains it). `default_gpus` (a profile's NPUs) stands in for `gpus` in a CSV with
// neither a `gpus` nor a `nodes` column; rows on several node counts need their GPU counts.
StatusOr<std::vector<NcclMeasurement>> LoadNcclMeasurements(const std::string& path, int gpus,
                                                            const std::string& collective = "",
                                                            int default_gpus = 0);
// Whether LoadNcclMeasurements reads `path` as a CSV table (by its extension).
bool IsNcclCsv(const std::string& path);

}  // namespace orrery

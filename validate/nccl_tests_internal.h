// The pieces of validate/nccl_tests.h's readers they share: fields and numbers as nccl-tests
// prints them, the collective a text names, the range of a measured time. Internal to
// //validate:nccl_tests (nccl_tests_log.cc reads logs, nccl_tests_csv.cc CSV tables).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "common/status.h"
#include "validate/nccl_tests.h"

namespace orrery::nccl_tests_internal {

// The whitespace-separated fields of a line.
std::vector<std::string> Split(const std::string& line);

// A whole number in digits (no sign, no spaces).
bool ParseUnsigned(const std::string& s, uint64_t* v);

// A row's size: a whole number of bytes that a Chakra comm_size (an int64) can hold.
extern const char* const kSizeRange;
bool ParseSize(const std::string& s, uint64_t* v);

// A decimal number ("41.2", "4e-07", "-1"); not hex, inf or nan, which strtod would also read.
bool ParseDouble(const std::string& s, double* v);

// A count of GPUs or nodes: a whole number >= 1 ("4.5", "8x", "0" are not).
bool ParseCount(const std::string& s, int* v);

// The next line of `f` (its number in `n`), without the '\r' of a CRLF ending and, on the first
// line, without a UTF-8 byte-order mark: files saved on Windows or by spreadsheets read as any.
bool NextLine(std::istream& f, std::string* line, int* n);

// The comma-separated fields of a CSV line, each trimmed ("gpus , size_bytes" reads as
// "gpus", "size_bytes").
std::vector<std::string> CsvFields(const std::string& line);

// The collective `text` names (nccl-tests' name: all_reduce, alltoall, ...), or "" when it names
// none or several (`several` then lists them).
std::string CollectiveIn(const std::string& text, std::string* several = nullptr);

// `v` with three significant digits, for messages.
std::string ShortNumber(double v);

// Whether `t` µs is a time a measured collective can take (kMeasuredTimeRange).
bool TimeInRange(double t);

// An nccl-tests log (`f`, read from `path`) into one measurement per run.
StatusOr<std::vector<NcclMeasurement>> LoadLog(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint);

// A CSV table of measurements into one measurement per GPU count.
StatusOr<std::vector<NcclMeasurement>> LoadCsv(const std::string& path, std::istream& f,
                                               int gpus_hint, const std::string& collective_hint,
                                               int default_gpus);

}  // namespace orrery::nccl_tests_internal

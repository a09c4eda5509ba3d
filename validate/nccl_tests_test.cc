#include "validate/nccl_tests.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/test_data.h"

namespace orrery {
namespace {

std::string Validation(const std::string& file) {
  const std::string dir = SharedDir("validation");  // ../shared/validation
  EXPECT_FALSE(dir.empty()) << SharedDirMissing("validation");
  return dir + "/" + file;
}

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(NcclTests, SingleNodeLog) {
  auto m = LoadNcclMeasurements(Validation("h100-8gpu-nvswitch-all_reduce-default.log"), 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 1u);
  const NcclMeasurement& a = (*m)[0];
  EXPECT_EQ(a.collective, "all_reduce");
  EXPECT_EQ(a.gpus, 8);
  EXPECT_EQ(a.nodes, 1);
  ASSERT_EQ(a.rows.size(), 6u);
  EXPECT_EQ(a.rows[0].size, 134217728u);
  EXPECT_DOUBLE_EQ(a.rows[0].time_us, 613.30);
  EXPECT_DOUBLE_EQ(a.rows[5].time_us, 15870.0);
}

TEST(NcclTests, TwoNodeLogs) {
  for (const char* f :
       {"h100-2x8gpu-ndr-all_reduce-default.log", "h100-2x8gpu-ndr-all_reduce-ring.log"}) {
    auto m = LoadNcclMeasurements(Validation(f), 0);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ((*m)[0].gpus, 16) << f;
    EXPECT_EQ((*m)[0].nodes, 2) << f;
    EXPECT_EQ((*m)[0].rows.size(), 11u) << f;
  }
}

// busbw -> time: algbw = busbw / (2 * 7 / 8); time = size / algbw.
TEST(NcclTests, BusBandwidthCsvNeedsTheGpuCount) {
  EXPECT_FALSE(LoadNcclMeasurements(Validation("azure-h100-8gpu-all_reduce-busbw.csv"), 0).ok());
  auto m = LoadNcclMeasurements(Validation("azure-h100-8gpu-all_reduce-busbw.csv"), 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const NcclRow& r = (*m)[0].rows[0];  // 1024 B at 0.07 GB/s busbw
  EXPECT_EQ(r.size, 1024u);
  EXPECT_NEAR(r.time_us, 1024 / (0.07 / 1.75 * 1e9) * 1e6, 1e-9);
}

TEST(NcclTests, CsvWithNodesSplitsByGpuCount) {
  auto m = LoadNcclMeasurements(Validation("aws-p5-efa-all_reduce.csv"), 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 5u);  // 2, 4, 8, 16, 32 nodes
  EXPECT_EQ((*m)[0].gpus, 16);
  EXPECT_EQ((*m)[0].nodes, 2);
  EXPECT_EQ((*m)[4].gpus, 256);
  // 2 nodes, 32 MiB: algbw 78.57 GB/s out of place.
  EXPECT_NEAR((*m)[0].rows[0].time_us, 33554432 / 78.57e9 * 1e6, 1e-6);
}

// A CSV may say where it comes from: '#' lines before the header and between rows are skipped;
// errors keep the file's own line numbers.
TEST(NcclTests, CsvCommentsAreSkipped) {
  const std::string path = Tmp("commented-all_reduce.csv");
  std::ofstream(path) << "# source: a post\n#   quoted figures\ngpus,size_bytes,time_us\n"
                      << "8,1048576,50\n# a remark\n\n8,2097152,80\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].rows.size(), 2u);
  EXPECT_EQ((*m)[0].rows[1].size, 2097152u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[1].time_us, 80);

  std::ofstream(path) << "# source\ngpus,size_bytes,time_us\n8,1048576,50\n8,x,80\n";
  m = LoadNcclMeasurements(path, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("commented-all_reduce.csv:4: size 'x'"), std::string::npos)
      << m.status().message();
  std::ofstream(path) << "# source\nbytes,time_us\n";
  m = LoadNcclMeasurements(path, 8);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("commented-all_reduce.csv:2: the header is 'bytes,time_us'; "
                                      "expected a 'size_bytes'"),
            std::string::npos)
      << m.status().message();
}

TEST(NcclTests, LauncherPrefixesOldLayoutsAndNotAvailable) {
  const std::string path = Tmp("variants.log");
  std::ofstream(path) << "0: # Collective test starting: all_gather_perf_mpi\n"
                      << "0: #  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\n"
                      << "[1,0]<stdout>:#  Rank  1 Group  0 Pid  12 on hostB device  0 [0x1a] "
                         "H100\n"
                      << "0:      1024   256   float   none   -1   10.5  0.10  0.05  0   10.1  "
                         "0.10  0.05  0\n"
                      << "0:      2048   512   float   none        12.5  0.16  0.08  0   12.0  "
                         "0.17  0.08  0\n"
                      << "0:      4096  1024   float   none   -1    N/A   N/A   N/A  N/A  14.0  "
                         "0.29  0.15  0\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const NcclMeasurement& a = (*m)[0];
  EXPECT_EQ(a.collective, "all_gather");
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.nodes, 2);
  ASSERT_EQ(a.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(a.rows[0].time_us, 10.5);
  EXPECT_DOUBLE_EQ(a.rows[1].time_us, 12.5);  // no root column
  EXPECT_DOUBLE_EQ(a.rows[2].time_us, 14.0);  // N/A out of place: the in-place time
  // Each row's in-place time is kept beside it (validate --in-place).
  EXPECT_DOUBLE_EQ(a.rows[0].in_place_us, 10.1);
  EXPECT_DOUBLE_EQ(a.rows[1].in_place_us, 12.0);
  EXPECT_DOUBLE_EQ(a.rows[2].in_place_us, 14.0);

  const std::string old = Tmp("reduce_scatter_2019.log");
  std::ofstream(old) << "# nThread 1 nGpus 4 minBytes 8 maxBytes 64 step: 2(factor)\n"
                     << "       8      2   float    sum   20.1  0.00  0.00  0e+00   19.9  0.00  "
                        "0.00  0e+00\n";
  m = LoadNcclMeasurements(old, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "reduce_scatter");  // from the file name
  EXPECT_EQ((*m)[0].gpus, 4);                       // from nGpus
  EXPECT_EQ((*m)[0].gpus_per_thread, 4);            // nGpus is the GPUs one thread drives
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 20.1);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].in_place_us, 19.9);
}

// The in-place time: N/A, or a layout of one group of columns, is "not measured" (0); anything
// else must be a time, and is named with its row when it is not. A CSV of in-place bus bandwidth
// gives in-place times, one of out-of-place figures none.
TEST(NcclTests, InPlaceTimes) {
  const std::string path = Tmp("in_place_all_reduce.log");
  std::ofstream(path) << "#  Rank  0 Group  0 Pid 1 on a device 0 [0x07] H100\n"
                      << "  1024  256  float  sum  -1  10.5  0.10  0.05  0  N/A  N/A  N/A  N/A\n"
                      << "  2048  512  float  sum  -1  12.5  0.16  0.08  0\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].rows.size(), 2u);
  EXPECT_EQ((*m)[0].rows[0].in_place_us, 0);
  EXPECT_EQ((*m)[0].rows[1].in_place_us, 0);
  for (const char* bad : {"0", "-3", "fast"}) {
    std::ofstream(path) << "#  Rank  0 Group  0 Pid 1 on a device 0 [0x07] H100\n"
                        << "  1024  256  float  sum  -1  10.5  0.10  0.05  0  " << bad
                        << "  0.10  0.05  0\n";
    m = LoadNcclMeasurements(path, 0);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().message(), path + ":2: size 1024 has in-place time '" + bad +
                                        "'; expected a number of microseconds from 0.001 to 1e9 "
                                        "(or N/A)");
  }
  const std::string in = Tmp("in_place_all_reduce.csv");
  std::ofstream(in) << "size_bytes,busbw_GBps_in_place\n1024,0.07\n";
  m = LoadNcclMeasurements(in, 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].in_place_us, (*m)[0].rows[0].time_us);
  const std::string out = Tmp("out_of_place_all_reduce.csv");
  std::ofstream(out) << "size_bytes,busbw_GBps_out_of_place\n1024,0.07\n";
  m = LoadNcclMeasurements(out, 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].rows[0].in_place_us, 0);
  // Both: the out-of-place column gives the times, the in-place one (empty or N/A: not measured)
  // the in-place times, checked as any value.
  const std::string both = Tmp("both_all_reduce.csv");
  std::ofstream(both) << "size_bytes,busbw_GBps_out_of_place,busbw_GBps_in_place\n"
                      << "1024,0.07,0.14\n2048,0.1,N/A\n4096,0.2,\n";
  m = LoadNcclMeasurements(both, 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].rows.size(), 3u);
  EXPECT_NEAR((*m)[0].rows[0].time_us, 1024 / (0.07 / 1.75 * 1e9) * 1e6, 1e-9);
  EXPECT_NEAR((*m)[0].rows[0].in_place_us, 1024 / (0.14 / 1.75 * 1e9) * 1e6, 1e-9);
  EXPECT_EQ((*m)[0].rows[1].in_place_us, 0);
  EXPECT_EQ((*m)[0].rows[2].in_place_us, 0);
  std::ofstream(both) << "size_bytes,busbw_GBps_out_of_place,busbw_GBps_in_place\n"
                      << "1024,0.07,-1\n";
  m = LoadNcclMeasurements(both, 8);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            both + ":2: size 1024: busbw_GBps_in_place '-1'; expected a positive number");
}

// Older nccl-tests print all_gather and broadcast rows without a reduction op ("size count type
// time ..." and "size count type root time ..."): the time is the field after the type (or the
// root), not the algbw after it. Rows of 0 bytes are loaded as printed (validate leaves them out).
TEST(NcclTests, RowsWithoutAReductionOp) {
  const std::string gather = Tmp("all_gather_old.log");
  std::ofstream(gather)
      << "#   Rank  0 Pid 112372 on sb device  0 [0x00] A100-SXM4-40GB\n"
      << "#   Rank  1 Pid 112372 on sb device  1 [0x00] A100-SXM4-40GB\n"
      << "           0             0   float    34.27    0.00    0.00    N/A    33.57    0.00"
         "    0.00    N/A\n"
      << "     1048576         32768   float    72.95   14.37   12.58    N/A    73.07   14.35"
         "   12.56    N/A\n"
      << "     2097152         65536   float      N/A     N/A     N/A    N/A    75.84   27.65"
         "   24.20    N/A\n";
  auto m = LoadNcclMeasurements(gather, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "all_gather");
  EXPECT_EQ((*m)[0].gpus, 2);
  ASSERT_EQ((*m)[0].rows.size(), 3u);
  EXPECT_EQ((*m)[0].rows[0].size, 0u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 34.27);
  EXPECT_DOUBLE_EQ((*m)[0].rows[1].time_us, 72.95);
  EXPECT_DOUBLE_EQ((*m)[0].rows[2].time_us, 75.84);  // out-of-place N/A: the in-place time
  const std::string broadcast = Tmp("broadcast_old.log");
  std::ofstream(broadcast)
      << "#   Rank  0 Pid 1 on sb device  0 [0x00] A100-SXM4-40GB\n"
      << "     1048576        262144   float       0    76.02   13.79   13.79    N/A    78.43"
         "   13.37   13.37    N/A\n";
  m = LoadNcclMeasurements(broadcast, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 76.02);
  // A bad size in such a row is named, as in a row with an op, not skipped as chatter.
  std::ofstream(broadcast)
      << "#   Rank  0 Pid 1 on sb device  0 [0x00] A100-SXM4-40GB\n"
      << "     1e6        262144   float       0    76.02   13.79   13.79    N/A    78.43"
         "   13.37   13.37    N/A\n";
  m = LoadNcclMeasurements(broadcast, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("broadcast_old.log:2: a data row's size is '1e6'"),
            std::string::npos)
      << m.status().message();
}

TEST(NcclTests, ForcedAlgorithmIsRead) {
  auto ring = LoadNcclMeasurements(Validation("h100-2x8gpu-ndr-all_reduce-ring.log"), 0);
  ASSERT_TRUE(ring.ok()) << ring.status().message();
  EXPECT_EQ((*ring)[0].algorithm, "ring");  // "# NCCL_ALGO=RING"
  auto def = LoadNcclMeasurements(Validation("h100-2x8gpu-ndr-all_reduce-default.log"), 0);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)[0].algorithm, "");  // NCCL's own choice
  // NCCL's INFO line, behind a launcher prefix.
  const std::string path = Tmp("tree.log");
  std::ofstream(path) << "# Collective test starting: all_reduce_perf\n"
                      << "#  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\n"
                      << "0: hostA:11:11 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n"
                      << "      1024   256   float   sum   -1   10.5  0.10  0.05  0\n";
  auto tree = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ((*tree)[0].algorithm, "tree");
  EXPECT_EQ((*tree)[0].rows.size(), 1u);
}

// Posted logs sometimes keep only some Rank lines: the highest rank counts the GPUs. Without
// any, the count must be given (--gpus); a count that contradicts the Rank lines is an error.
TEST(NcclTests, GpuCountFromTheHighestRankOrGiven) {
  const std::string row = "  134217728  4194304  float  sum  -1  377.2  355.81  311.34  0\n";
  const std::string cut = Tmp("cut.log");
  std::ofstream(cut) << "# Collective test starting: reduce_scatter_perf\n"
                     << "#  Rank  7 Group  0 Pid  64380 on node47 device  7 [0xdb] H100\n"
                     << row;
  auto m = LoadNcclMeasurements(cut, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 8);
  EXPECT_TRUE(LoadNcclMeasurements(cut, 8).ok());
  m = LoadNcclMeasurements(cut, 4);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--gpus is 4 but the log's '#  Rank' lines go up to rank 7"),
            std::string::npos)
      << m.status().message();

  const std::string none = Tmp("no_ranks.log");
  std::ofstream(none) << "# Collective test starting: reduce_scatter_perf\n" << row;
  m = LoadNcclMeasurements(none, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no '#  Rank' lines, so the number of GPUs is unknown; give "
                                      "it with --gpus"),
            std::string::npos);
  m = LoadNcclMeasurements(none, 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 8);
}

TEST(NcclTests, UnusableInputsAreNamed) {
  const std::string path = Tmp("mystery.log");
  std::ofstream(path) << "#  Rank  0 Group 0 Pid 1 on h device 0\n 8 2 float sum -1 1.0 0 0 0\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cannot tell which collective"), std::string::npos);
  EXPECT_TRUE(LoadNcclMeasurements(path, 0, "all_reduce").ok());

  std::ofstream(path) << "# Collective test starting: all_reduce_perf\n#  Rank 0 on h\n";
  m = LoadNcclMeasurements(path, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no nccl-tests data rows"), std::string::npos);
  m = LoadNcclMeasurements(Tmp("absent.log"), 0);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), Tmp("absent.log") + ": cannot read: No such file or directory");
  // A directory (a log's folder given by mistake) is named as one, whatever --collective says.
  m = LoadNcclMeasurements(::testing::TempDir(), 0, "all_reduce");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            ::testing::TempDir() +
                ": is a directory; expected an nccl-tests log or a CSV of measurements");
}

TEST(NcclTests, TruncatedRowIsNamed) {
  const std::string path = Tmp("all_reduce_cut.log");
  std::ofstream(path) << "#  Rank  0 Group 0 Pid 1 on h device 0\n"
                         "   134217728  33554432  float  sum  -1  613.30  218.85  382.99  0\n"
                         "   268435456  67108864  float  \n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(
      m.status().message().find("all_reduce_cut.log:3: the row of size 268435456 is cut short"),
      std::string::npos)
      << m.status().message();
}

// A line that is a data row but for its size (a whole-number count, type and redop words, then
// numbers or N/A) is an error naming the line and the size; lines that are not rows at all are
// skipped as before.
TEST(NcclTests, BadSizeInADataRowIsNamed) {
  const std::string head =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\n";
  const std::string row =
      "  1048576  262144  float  sum  -1  50.5  20.76  20.76  0  50.1  "
      "20.93  20.93  0\n";
  const std::string path = Tmp("bad_size-all_reduce.log");
  for (const char* size : {"-1024", "1e6", "1024.5", "12x"}) {
    std::ofstream(path) << head << row << "0:  " << size
                        << "  256  float  sum  -1  10.5  0.10  0.05  0  10.1  0.10  0.05  0\n";
    auto m = LoadNcclMeasurements(path, 0);
    ASSERT_FALSE(m.ok()) << size;
    EXPECT_EQ(m.status().message(), path + ":4: a data row's size is '" + size +
                                        "'; expected a whole number of bytes >= 0");
  }
  // Not rows: NCCL's own lines, a launcher's chatter, the summary. Read as before.
  std::ofstream(path) << head << "NCCL version 2.18.5+cuda12.2\n"
                      << "hostA:11:11 [0] NCCL INFO Channel 00/24 : 0 1 2 3 4 5 6 7\n"
                      << "0: hostA:11:11 [0] NCCL INFO 2 coll channels, 0 nvls channels\n"
                      << "Waiting 5 seconds for the other ranks\n"
                      << "srun: job 42 queued and waiting for resources\n"
                      << "-1 0 unused\n"
                      << row << "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 20.8\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 50.5);

  // CSV: a size is a whole number of bytes >= 0; 0 bytes needs a time, not a bandwidth.
  const std::string csv = Tmp("bad_size-all_reduce.csv");
  std::ofstream(csv) << "gpus,size_bytes,time_us\n8,0,12\n8,-5,80\n";
  m = LoadNcclMeasurements(csv, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            csv + ":3: size '-5' (size_bytes); expected a whole number of bytes >= 0");
  std::ofstream(csv) << "gpus,size_bytes,time_us\n8,0,12\n";
  m = LoadNcclMeasurements(csv, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].rows[0].size, 0u);
  std::ofstream(csv) << "size_bytes,busbw_GBps_in_place\n0,0.01\n";
  m = LoadNcclMeasurements(csv, 8);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(csv + ":2: size 0 with busbw_GBps_in_place gives no time"),
            std::string::npos)
      << m.status().message();
}

// A size is a Chakra comm_size, an int64: one from 2^63 to 2^64 - 1 bytes (a typo, or a
// corrupted row) is named with its line, not turned into a negative comm_size of a generated
// trace whose error names a temporary file.
TEST(NcclTests, SizePastInt64IsNamed) {
  const std::string head =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\n";
  const std::string path = Tmp("huge_size-all_reduce.log");
  for (const char* size : {"9223372036854775808", "18446744073709551615"}) {
    std::ofstream(path) << head << "  " << size
                        << "  256  float  sum  -1  10.5  0.10  0.05  0  10.1  0.10  0.05  0\n";
    auto m = LoadNcclMeasurements(path, 0);
    ASSERT_FALSE(m.ok()) << size;
    EXPECT_EQ(m.status().message(),
              path + ":3: a data row's size is '" + size +
                  "'; expected a whole number of bytes from 0 to 9223372036854775807 (2^63 - 1)");
  }
  std::ofstream(path) << head
                      << "  9223372036854775807  256  float  sum  -1  10.5  0.10  0.05  0  10.1  "
                         "0.10  0.05  0\n";
  EXPECT_TRUE(LoadNcclMeasurements(path, 0).ok());
  const std::string csv = Tmp("huge_size-all_reduce.csv");
  std::ofstream(csv) << "gpus,size_bytes,time_us\n8,18446744073709551615,12\n";
  auto m = LoadNcclMeasurements(csv, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            csv +
                ":2: size '18446744073709551615' (size_bytes); expected a whole number of bytes "
                "from 0 to 9223372036854775807 (2^63 - 1)");
}

// --collective names the collective of an input that does not: a log whose header names another
// one (or a name that is no collective) is an error, not silently read as the header says.
TEST(NcclTests, CollectiveFlagThatContradictsTheLogIsAnError) {
  const std::string path = Tmp("named.log");
  std::ofstream(path) << "# nccl-tests\n# Collective test starting: all_reduce_perf\n"
                      << "#  Rank  0 Group 0 Pid 1 on h device 0\n"
                      << "  1048576  262144  float  sum  -1  50.5  20.76  20.76  0\n";
  EXPECT_TRUE(LoadNcclMeasurements(path, 0, "all_reduce").ok());
  for (const char* flag : {"all_gather", "foo"}) {
    auto m = LoadNcclMeasurements(path, 0, flag);
    ASSERT_FALSE(m.ok()) << flag;
    EXPECT_EQ(m.status().message(),
              path + ":2: the log measured all_reduce ('# Collective test starting: " +
                  "all_reduce_perf') but --collective is '" + flag +
                  "'; leave --collective out, or give all_reduce");
  }
  std::ofstream(path) << "# Collective test starting: alltoall_perf\n"
                      << "#  Rank  0 Group 0 Pid 1 on h device 0\n"
                      << "  1048576  262144  float  none  -1  50.5  20.76  20.76  0\n";
  auto m = LoadNcclMeasurements(path, 0, "all_to_all");  // Chakra's name of nccl-tests' alltoall
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "alltoall");
}

// A numeric out-of-place time must be a possible one (0.001 to 1e9 us): 0, a negative time, 1e-7
// or 1e308 is an error, not replaced by the in-place time. N/A (nccl-tests prints it in some
// runs) still takes the in-place time.
TEST(NcclTests, NonPositiveOutOfPlaceTimeIsAnError) {
  const std::string path = Tmp("times-all_reduce.log");
  auto with_times = [&](const std::string& out, const std::string& in) {
    std::ofstream(path) << "#  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\n"
                        << "  1048576  262144  float  sum  -1  " << out << "  1.0  1.0  0  " << in
                        << "  1.0  1.0  0\n";
    return LoadNcclMeasurements(path, 0);
  };
  for (const char* bad : {"0", "0.00", "-3.5", "abc", "inf", "nan", "1e-7", "1e308"}) {
    auto m = with_times(bad, "50.1");
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().message(), path + ":2: size 1048576 has out-of-place time '" + bad +
                                        "'; expected a number of microseconds from 0.001 to 1e9 "
                                        "(or N/A, to use the in-place time)");
  }
  for (const char* good : {"0.001", "1e9"}) EXPECT_TRUE(with_times(good, "50.1").ok()) << good;
  auto m = with_times("N/A", "50.1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 50.1);
  m = with_times("N/A", "0");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            path +
                ":2: size 1048576 has out-of-place time 'N/A' and in-place time '0'; expected "
                "a number of microseconds from 0.001 to 1e9");
  // In a CSV: a time out of range, or a bandwidth that makes one.
  const std::string csv = Tmp("range-all_reduce.csv");
  std::ofstream(csv) << "size_bytes,time_us\n1048576,1e12\n";
  auto c = LoadNcclMeasurements(csv, 8);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), csv +
                                      ":2: size 1048576: time_us '1e12'; expected a number of "
                                      "microseconds from 0.001 to 1e9");
  std::ofstream(csv) << "size_bytes,busbw_GBps_in_place\n1048576,1e-300\n";
  c = LoadNcclMeasurements(csv, 8);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(csv + ":2: size 1048576: busbw_GBps_in_place '1e-300' "
                                            "gives a time of "),
            std::string::npos)
      << c.status().message();
  m = with_times("N/A", "N/A");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(path + ":2: size 1048576 has no time"), std::string::npos)
      << m.status().message();
}

// GPU and node counts in a CSV are whole numbers >= 1: 4.5 GPUs is an error, not 4.
TEST(NcclTests, CsvGpuAndNodeCountsMustBeWholeNumbers) {
  const std::string csv = Tmp("counts-all_reduce.csv");
  for (const char* gpus : {"4.5", "0", "-8", "8x", ""}) {
    std::ofstream(csv) << "gpus,size_bytes,time_us\n8,1048576,50\n" << gpus << ",2097152,80\n";
    auto m = LoadNcclMeasurements(csv, 0);
    ASSERT_FALSE(m.ok()) << gpus;
    EXPECT_EQ(m.status().message(),
              csv + ":3: gpus '" + gpus + "'; expected a whole number of GPUs >= 1");
  }
  std::ofstream(csv) << "nodes,gpus,size_bytes,time_us\n1.5,16,1048576,50\n";
  auto m = LoadNcclMeasurements(csv, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), csv + ":2: nodes '1.5'; expected a whole number of nodes >= 1");
}

// Files saved on Windows or by a spreadsheet: CRLF line ends, a UTF-8 byte-order mark, spaces
// around the header's names and the values. They read exactly as the plain file.
TEST(NcclTests, CrlfByteOrderMarkAndPaddedNamesAreRead) {
  const std::string plain = Tmp("plain-all_reduce.csv");
  std::ofstream(plain) << "# source\nnodes,gpus,size_bytes,busbw_GBps_out_of_place\n"
                       << "1,8,1048576,50.5\n2,16,1048576,40\n";
  const std::string dos = Tmp("dos-all_reduce.csv");
  std::ofstream(dos, std::ios::binary)
      << "\xEF\xBB\xBFnodes , gpus,  size_bytes\t, busbw_GBps_out_of_place \r\n"
      << "# a remark\r\n\r\n"
      << " 1 , 8 , 1048576 , 50.5 \r\n2,16,1048576,40\r\n";
  auto a = LoadNcclMeasurements(plain, 0);
  auto b = LoadNcclMeasurements(dos, 0);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*b)[i].gpus, (*a)[i].gpus);
    EXPECT_EQ((*b)[i].nodes, (*a)[i].nodes);
    ASSERT_EQ((*b)[i].rows.size(), 1u);
    EXPECT_EQ((*b)[i].rows[0].size, 1048576u);
    EXPECT_DOUBLE_EQ((*b)[i].rows[0].time_us, (*a)[i].rows[0].time_us);
  }
  // The same errors, with the file's own line numbers.
  std::ofstream(dos, std::ios::binary) << "\xEF\xBB\xBF gpus,size_bytes,time_us\r\n8,x,1\r\n";
  b = LoadNcclMeasurements(dos, 0);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            dos + ":2: size 'x' (size_bytes); expected a whole number of bytes >= 0");

  // A log: CRLF, a byte-order mark before its first line, a launcher prefix.
  const std::string log = Tmp("dos.log");
  std::ofstream(log, std::ios::binary)
      << "\xEF\xBB\xBF# Collective test starting: all_gather_perf\r\n"
      << "# NCCL_ALGO=Ring\r\n"
      << "#  Rank  0 Group  0 Pid  11 on hostA device  0 [0x1a] H100\r\n"
      << "#  Rank  1 Group  0 Pid  12 on hostB device  0 [0x1a] H100\r\n"
      << "0:      1024   256   float   none   -1   10.5  0.10  0.05  0   10.1  0.10  0.05  0\r\n"
      << "      2048   512   float   none   -1   12.5  0.16  0.08  0   12.0  0.17  0.08  0\r\n"
      << "# Avg bus bandwidth    : 0.06\r\n";
  auto m = LoadNcclMeasurements(log, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "all_gather");
  EXPECT_EQ((*m)[0].algorithm, "ring");
  EXPECT_EQ((*m)[0].gpus, 2);
  EXPECT_EQ((*m)[0].nodes, 2);
  ASSERT_EQ((*m)[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[1].time_us, 12.5);
}

// The Rank lines of `n` GPUs on hosts of `per_host` ("#  Rank  3 Group  0 Pid 1 on node0 ...").
std::string RankLines(int n, int per_host = 8, int group_size = 0) {
  std::string out;
  for (int r = 0; r < n; ++r) {
    out += "#  Rank " + std::to_string(r) + " Group " +
           std::to_string(group_size > 0 ? r / group_size : 0) + " Pid 1 on node" +
           std::to_string(r / per_host) + " device " + std::to_string(r % per_host) +
           " [0x1a] NVIDIA H100\n";
  }
  return out;
}

constexpr char kTableHeader[] =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time "
    "  algbw   busbw #wrong\n";

// A job script that runs nccl-tests twice writes both runs to one log: each is a measurement of
// its own, with its own GPU count and the NCCL_ALGO NCCL printed as its communicators started.
TEST(NcclTests, EachRunOfALogIsAMeasurementOfItsOwn) {
  const std::string path = Tmp("two_runs_all_reduce.log");
  std::ofstream(path) << "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n"
                      << "# Collective test starting: all_reduce_perf\n"
                      << RankLines(8) << kTableHeader
                      << "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  "
                         "44.86  0\n"
                      << "# Out of bounds values : 0 OK\n"
                      << "NCCL INFO NCCL_ALGO set by environment to Ring\n"
                      << "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n"
                      << "# Collective test starting: all_reduce_perf\n"
                      << RankLines(16) << kTableHeader
                      << "  1048576  262144  float  sum  -1  95.0  11.04  20.70  0  94.0  11.16  "
                         "20.92  0\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].gpus, 8);
  EXPECT_EQ((*m)[0].algorithm, "");
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 41.2);
  EXPECT_EQ((*m)[1].gpus, 16);
  EXPECT_EQ((*m)[1].nodes, 2);
  EXPECT_EQ((*m)[1].algorithm, "ring");
  EXPECT_DOUBLE_EQ((*m)[1].rows[0].time_us, 95.0);
  EXPECT_EQ((*m)[1].source, path + " (the run from line 15)");

  // A last run that stopped before its table is left out, with a note; NCCL_ALGO on a line
  // with a comment after it is read (for that run).
  std::ofstream(path, std::ios::app) << "export NCCL_ALGO=Tree  # the next run\n"
                                     << "# nccl-tests version 2.13.8 nccl-headers=21903\n"
                                     << "# Collective test starting: all_reduce_perf\n"
                                     << RankLines(16);
  m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  ASSERT_EQ((*m)[0].notes.size(), 1u);  // said with the first run
  EXPECT_EQ((*m)[0].notes[0], path +
                                  ": the run from line 36 has no rows (it stopped before its "
                                  "table?) and is left out");
  EXPECT_EQ((*m)[1].algorithm, "ring");  // Tree was the next run's
}

// The table's header line places the columns: a timestamp after the in-place group (nccl-tests
// -T), and a row that does not have the header's fields (cut short, or another line's text in
// it) is named rather than read at the wrong columns.
TEST(NcclTests, TheTableHeaderPlacesTheColumns) {
  const std::string path = Tmp("stamped_all_reduce.log");
  std::ofstream(path) << "# Collective test starting: all_reduce_perf\n"
                      << RankLines(8)
                      << "#       size   count   type  redop  root   time  algbw  busbw #wrong   "
                         "time  algbw  busbw #wrong            timestamp\n"
                      << "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  "
                         "44.86  0  2025-06-01 10:11:12\n";
  auto m = LoadNcclMeasurements(path, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 41.2);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].in_place_us, 40.9);
  // 2019's layout (no root column) cut inside its in-place group: 9 fields of 12.
  const std::string cut = Tmp("cut_all_reduce.log");
  std::ofstream(cut) << "# Collective test starting: all_reduce_perf\n"
                     << RankLines(8)
                     << "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  "
                        "busbw  error\n"
                     << "  4194304  1048576  float  sum  141.4  29.66  51.91  4e-07  141.2\n";
  m = LoadNcclMeasurements(cut, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(cut + ":11: the row of size 4194304 has 9 fields, but the "
                                            "table's header (line 10: size count type redop time "
                                            "algbw busbw error time algbw busbw error) gives 12"),
            std::string::npos)
      << m.status().message();
  // Under the header, a row whose size is garbage is named, not dropped.
  const std::string garbage = Tmp("garbage_all_reduce.log");
  std::ofstream(garbage)
      << "# Collective test starting: all_reduce_perf\n"
      << RankLines(8) << kTableHeader
      << "  abc  def  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  "
         "0\n";
  m = LoadNcclMeasurements(garbage, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(garbage + ":11: a data row's size and count are 'abc' and "
                                                "'def'"),
            std::string::npos)
      << m.status().message();
  // Columns between the groups: the in-place time is where the header puts it.
  const std::string wide = Tmp("wide_all_reduce.log");
  std::ofstream(wide) << "# Collective test starting: all_reduce_perf\n"
                      << RankLines(8)
                      << "#  size  count  type  redop  root  time  algbw  busbw  #wrong  i_min  "
                         "time  algbw  busbw  #wrong\n"
                      << "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  39.1  40.9  "
                         "25.64  44.86  0\n";
  m = LoadNcclMeasurements(wide, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].in_place_us, 40.9);
  EXPECT_TRUE((*m)[0].notes.empty());  // i_min is not a count of wrong elements
}

// A launcher's prefix this reader has no rule for (kubectl's pod name, a timestamp) is skipped
// on comment lines and data rows alike.
TEST(NcclTests, UnknownPrefixesAreSkipped) {
  for (const std::string prefix : {"[pod/nccl-launcher/mpi] ", "2024-05-01T12:00:00.123Z ",
                                   "Wed May  1 12:00:00 2024[1,0]<stdout>:"}) {
    const std::string path = Tmp("prefixed_all_reduce.log");
    std::ofstream f(path);
    f << prefix << "# Collective test starting: all_reduce_perf\n";
    std::stringstream ranks(RankLines(8));
    for (std::string line; std::getline(ranks, line);) f << prefix << line << "\n";
    f << prefix << kTableHeader;
    f << prefix
      << "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  0\n";
    f.close();
    auto m = LoadNcclMeasurements(path, 0);
    ASSERT_TRUE(m.ok()) << prefix << ": " << m.status().message();
    EXPECT_EQ((*m)[0].collective, "all_reduce") << prefix;
    EXPECT_EQ((*m)[0].gpus, 8) << prefix;
    ASSERT_EQ((*m)[0].rows.size(), 1u) << prefix;
    EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 41.2) << prefix;
  }
}

// What a log says about how it ran: NCCL_ALGO and NCCL_PROTO in NCCL's syntax, ranks split into
// groups (an error: each group ran its own collective), no Rank lines (the header's nThread x
// nGpus, with a note), rows of wrong results (a note).
TEST(NcclTests, HowTheRunRanIsRead) {
  const std::string row =
      "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  0\n";
  const std::string forced = Tmp("forced_all_reduce.log");
  std::ofstream(forced) << "# NCCL_ALGO=^NVLS\n# NCCL_PROTO=LL128,Simple\n"
                        << "# Collective test starting: all_reduce_perf\n"
                        << RankLines(8) << row;
  auto m = LoadNcclMeasurements(forced, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].algorithm, "^nvls");
  EXPECT_EQ((*m)[0].protocol, "LL128,Simple");

  const std::string split = Tmp("split_all_reduce.log");
  std::ofstream(split) << "# Collective test starting: all_reduce_perf\n"
                       << RankLines(16, 8, 8) << row;
  m = LoadNcclMeasurements(split, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("its ranks are in 2 groups"), std::string::npos)
      << m.status().message();

  const std::string threads = Tmp("threads_all_reduce.log");
  std::ofstream(threads) << "# Collective test starting: all_reduce_perf\n"
                         << "# nThread 2 nGpus 4 minBytes 1048576 maxBytes 1048576\n"
                         << row;
  m = LoadNcclMeasurements(threads, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 8);
  ASSERT_EQ((*m)[0].notes.size(), 1u);
  EXPECT_NE((*m)[0].notes[0].find("no '#  Rank' lines; 8 GPUs from its header (nThread 2 x "
                                  "nGpus 4, one process)"),
            std::string::npos)
      << (*m)[0].notes[0];

  const std::string wrong = Tmp("wrong_all_reduce.log");
  std::ofstream(wrong) << "# Collective test starting: all_reduce_perf\n"
                       << RankLines(8) << kTableHeader << row
                       << "  2097152  524288  float  sum  -1  47.1  44.52  77.92  1024  46.8  "
                          "44.81  78.42  0\n"
                       << "# Out of bounds values : 1024 FAILED\n";
  m = LoadNcclMeasurements(wrong, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ((*m)[0].notes.size(), 2u);
  EXPECT_NE((*m)[0].notes[0].find("1 row with elements wrong (#wrong > 0, first at line 12)"),
            std::string::npos)
      << (*m)[0].notes[0];
  EXPECT_NE((*m)[0].notes[1].find("'# Out of bounds values : 1024 FAILED'"), std::string::npos);
}

// The collective comes from the file's name, not the directories it is in; a time must be a
// decimal number (strtod would also read 0x29); a CSV may be .CSV and quote its fields.
TEST(NcclTests, NamesTimesAndCsvSpellings) {
  const std::string dir = Tmp("reduce_scatter_study");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/all_gather.csv") << "size_bytes,time_us\n1048576,41.2\n";
  auto m = LoadNcclMeasurements(dir + "/all_gather.csv", 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "all_gather");

  const std::string hex = Tmp("hex_all_reduce.csv");
  std::ofstream(hex) << "size_bytes,time_us\n1048576,0x29\n";
  m = LoadNcclMeasurements(hex, 8);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("time_us '0x29'"), std::string::npos);

  const std::string upper = Tmp("quoted_all_reduce.CSV");
  std::ofstream(upper) << "\"size_bytes\",\"time_us\"\n\"1048576\",\"41.2\"\n";
  m = LoadNcclMeasurements(upper, 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 41.2);
}

// A review's cases: a line of numbers under a header but not of its fields is no row (it once
// read past the line's end); a run that stopped before its table does not lend the next run its
// Rank lines; NCCL_ALGO exported once holds for every run after it; hosts count nodes only when
// every Rank line is there; an old log's relative error is not a count of wrong elements.
TEST(NcclTests, RunsKeepTheirOwnHeadersAndSettings) {
  const std::string row =
      "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  0\n";
  const std::string numbers = Tmp("numbers_all_reduce.log");
  std::ofstream(numbers) << "# Collective test starting: all_reduce_perf\n"
                         << RankLines(8) << kTableHeader << row << "2048 512 3 4 5 36.0 7 8\n";
  auto m = LoadNcclMeasurements(numbers, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].rows.size(), 1u);

  const std::string stopped = Tmp("stopped_all_reduce.log");
  std::ofstream(stopped) << "+ export NCCL_ALGO=Ring\n"
                         << "# Collective test starting: all_reduce_perf\n"
                         << RankLines(16) << "# Collective test starting: all_reduce_perf\n"
                         << RankLines(8) << kTableHeader << row
                         << "# Collective test starting: all_reduce_perf\n"
                         << RankLines(8) << kTableHeader << row;
  m = LoadNcclMeasurements(stopped, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].gpus, 8);  // not the stopped run's 16
  EXPECT_EQ((*m)[0].algorithm, "ring");
  EXPECT_EQ((*m)[1].algorithm, "ring");  // exported once, for both
  ASSERT_EQ((*m)[0].notes.size(), 1u);
  EXPECT_NE((*m)[0].notes[0].find("the run from line 1 has no rows"), std::string::npos)
      << (*m)[0].notes[0];

  const std::string partial = Tmp("partial_all_reduce.log");
  std::ofstream(partial) << "# Collective test starting: all_reduce_perf\n"
                         << "#  Rank 15 Group  0 Pid 1 on node1 device 7 [0x1a] NVIDIA H100\n"
                         << row;
  m = LoadNcclMeasurements(partial, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 16);
  EXPECT_EQ((*m)[0].nodes, 0);  // unknown: one host named, not the two there were

  const std::string old = Tmp("old_error_all_reduce.log");
  std::ofstream(old) << "# Collective test starting: all_reduce_perf\n"
                     << RankLines(8)
                     << "  1048576  262144  float  sum  71.53  14.66  25.65  4e-07  71.43  14.68  "
                        "25.69  4e-07\n";
  m = LoadNcclMeasurements(old, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE((*m)[0].notes.empty()) << (*m)[0].notes[0];
}

// A second hunt's cases: 2019-era times in milliseconds; NCCL_ALGO set for one command or
// printed by NCCL holds for that run only, exported for all; NCCL's per-collective form and
// quotes; several runs whose headers name no collective; rows of one group under a header of
// two; a header wrapped onto two lines; #wrong in %g; hosts by IP address; corrupt counts.
TEST(NcclTests, WhatASecondHuntFound) {
  const std::string row =
      "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  0\n";
  const std::string ms = Tmp("ms_all_reduce.log");
  std::ofstream(ms) << "# Collective test starting: all_reduce_perf\n"
                    << RankLines(8) << "#  bytes  N  type  op  time  algbw  busbw  res\n"
                    << "  1048576  262144  float  sum  0.293  3.58  6.26  0e+00\n";
  auto m = LoadNcclMeasurements(ms, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 293.0);
  ASSERT_EQ((*m)[0].notes.size(), 1u);
  EXPECT_NE((*m)[0].notes[0].find("its times are in milliseconds"), std::string::npos);

  const std::string inline_env = Tmp("inline_all_reduce.log");
  std::ofstream(inline_env) << "+ NCCL_ALGO=Ring mpirun -np 8 ./all_reduce_perf\n"
                            << "# Collective test starting: all_reduce_perf\n"
                            << RankLines(8) << kTableHeader << row
                            << "+ mpirun -np 8 ./all_reduce_perf\n"
                            << "# Collective test starting: all_reduce_perf\n"
                            << RankLines(8) << kTableHeader << row
                            << "+ export NCCL_ALGO=\"allreduce:tree;allgather:ring\"\n"
                            << "# Collective test starting: all_reduce_perf\n"
                            << RankLines(16) << kTableHeader << row
                            << "# Collective test starting: all_reduce_perf\n"
                            << RankLines(16) << kTableHeader << row;
  m = LoadNcclMeasurements(inline_env, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].algorithm, "ring");
  EXPECT_EQ((*m)[1].algorithm, "");      // set for the first command only
  EXPECT_EQ((*m)[2].algorithm, "tree");  // the all-reduce entry of NCCL's per-collective form
  EXPECT_EQ((*m)[3].algorithm, "tree");  // exported: every later run

  const std::string two = Tmp("two_unnamed_all_reduce.log");
  std::ofstream(two) << "# nThread 1 nGpus 1 minBytes 8 maxBytes 64\n"
                     << RankLines(8) << row << "# nThread 1 nGpus 1 minBytes 8 maxBytes 64\n"
                     << RankLines(8) << row;
  m = LoadNcclMeasurements(two, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("names no collective (no '# Collective test starting: "
                                      "<name>_perf' line) and the log holds several runs"),
            std::string::npos)
      << m.status().message();
  m = LoadNcclMeasurements(two, 0, "all_reduce");  // --collective: they all measured one
  ASSERT_TRUE(m.ok()) << m.status().message();

  const std::string shapes = Tmp("shapes_all_reduce.log");
  std::ofstream(shapes) << "# Collective test starting: all_reduce_perf\n"
                        << RankLines(8)
                        << "#       size         count      type   redop    root     time   algbw "
                           "  busbw #wrong\n"
                        << "# time   algbw   busbw #wrong\n"
                        << row << "# Collective test starting: all_reduce_perf\n"
                        << RankLines(8) << kTableHeader
                        << "  1048576  262144  float  sum  -1  40.9  25.64  44.86  1.67772e+07\n";
  m = LoadNcclMeasurements(shapes, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_DOUBLE_EQ((*m)[0].rows[0].time_us, 41.2);  // the wrapped header gave way to shapes
  EXPECT_DOUBLE_EQ((*m)[1].rows[0].time_us, 40.9);  // one group under a header of two
  EXPECT_EQ((*m)[1].rows[0].in_place_us, 0.0);
  ASSERT_EQ((*m)[1].notes.size(), 1u);  // 1.67772e+07 elements wrong
  EXPECT_NE((*m)[1].notes[0].find("elements wrong"), std::string::npos);

  const std::string ip = Tmp("ip_all_reduce.log");
  {
    std::ofstream f(ip);
    f << "# Collective test starting: all_reduce_perf\n";
    for (int r = 0; r < 16; ++r) {
      f << "#  Rank " << r << " Group 0 Pid 1 on 10 device " << r % 8 << " [0x1a] NVIDIA H100\n";
    }
    f << row;
  }
  m = LoadNcclMeasurements(ip, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 16);
  EXPECT_EQ((*m)[0].nodes, 0);  // "10" twice with device 0: not one host

  // mpirun starting nccl-tests built without MPI: every process its own 1-GPU run, rank 0.
  const std::string alone = Tmp("alone_all_reduce.log");
  {
    std::ofstream f(alone);
    for (int p = 0; p < 4; ++p) {
      f << "# nThread 1 nGpus 1 minBytes 8 maxBytes 64\n"
        << "# Collective test starting: all_reduce_perf\n"
        << "#  Rank  0 Group 0 Pid " << p << " on host device " << p << " [0x1a] NVIDIA H100\n"
        << "  1048576  262144  float  sum  -1  10.0  1  1  0  10.0  1  1  0\n";
    }
  }
  m = LoadNcclMeasurements(alone, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("holds 4 runs of one GPU each, every one its own rank 0"),
            std::string::npos)
      << m.status().message();

  const std::string corrupt = Tmp("corrupt_all_reduce.log");
  std::ofstream(corrupt) << "# Collective test starting: all_reduce_perf\n"
                         << "#  Rank -3 Group 0 Pid 1 on a device 0 [0x1a] NVIDIA H100\n"
                         << row;
  m = LoadNcclMeasurements(corrupt, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("rank '-3'; expected a whole number from 0 to 16777215"),
            std::string::npos)
      << m.status().message();
}

// What a third hunt found: each of these had given a wrong row, collective or GPU count silently.
TEST(NcclTests, WhatAThirdHuntFound) {
  const std::string row =
      "  1048576  262144  float  sum  -1  41.2  25.45  44.54  0  40.9  25.64  44.86  0\n";
  const std::string row2 =
      "  2097152  524288  float  sum  -1  61.2  34.27  59.97  0  60.9  34.44  60.26  0\n";
  auto load = [](const std::string& path, const std::string& text, int gpus = 0) {
    std::ofstream(path) << text;
    return LoadNcclMeasurements(path, gpus);
  };
  auto error = [](const StatusOr<std::vector<NcclMeasurement>>& m) {
    return m.ok() ? std::string("(loaded)") : m.status().message();
  };
  // A file named "allreduce" is an all-reduce (its "reduce" had made it a reduce, with reduce's
  // bus factor of 1), in any case or spelling; a name of two collectives is ambiguous.
  const std::string csv = "size_bytes,busbw_GBps_out_of_place\n1048576,44.54\n";
  for (const char* name : {"h100-allreduce.csv", "H100-All-Reduce.csv", "x_all_reduce.csv"}) {
    auto m = load(Tmp(name), csv, 8);
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().message();
    EXPECT_EQ((*m)[0].collective, "all_reduce") << name;
    EXPECT_NEAR((*m)[0].rows[0].time_us, 1048576 / (44.54 / 1.75 * 1e9) * 1e6, 1e-9) << name;
  }
  auto m = load(Tmp("reduce_scatter-then-allgather.csv"), csv, 8);
  EXPECT_NE(error(m).find("the file name names several collectives (all_gather and "
                          "reduce_scatter); name it with --collective"),
            std::string::npos)
      << error(m);
  // A header naming a collective nccl-tests has no test of is an error, not the file name's.
  m = load(Tmp("h100-all_reduce-foo.log"),
           "# Collective test starting: foo_perf\n" + RankLines(8) + kTableHeader + row);
  EXPECT_NE(error(m).find("h100-all_reduce-foo.log:1: '# Collective test starting: foo_perf' "
                          "names no collective nccl-tests measures"),
            std::string::npos)
      << error(m);
  // A data row with a comment after it is the row (it had been dropped as a comment).
  m = load(Tmp("comment_all_reduce.log"), "# Collective test starting: all_reduce_perf\n" +
                                              RankLines(8) + kTableHeader + row +
                                              row2.substr(0, row2.size() - 1) + "  # rerun\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].rows.size(), 2u);
  // Text glued onto the first row under a whole header (both groups of columns) is an error
  // (the header had given way to reading by shape, and the algbw was read as the time).
  const std::string no_root_header =
      "#  size  count  type  redop  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n";
  m = load(Tmp("glued_all_reduce.log"),
           "# Collective test starting: all_reduce_perf\n" + RankLines(8) + no_root_header +
               "  1048576  262144  float  sum  41.2  25.45  44.54  0  40.9  25.64  44.86  0  x\n");
  EXPECT_NE(error(m).find("the row of size 1048576 has 13 fields, but the table's header"),
            std::string::npos)
      << error(m);
  // The GPUs are a whole number of the header's GPUs per process (4 Rank lines under nGpus 8
  // had run on 4 GPUs); --gpus likewise.
  const std::string per8 = "# nThread 1 nGpus 8 minBytes 8 maxBytes 64\n";
  m = load(Tmp("four_all_reduce.log"),
           "# Collective test starting: all_reduce_perf\n" + per8 + RankLines(4) + row);
  EXPECT_NE(error(m).find("4 GPUs (the '#  Rank' lines go up to rank 3), but its header gives "
                          "nThread 1 x nGpus 8 = 8 GPUs per process; expected a multiple of 8"),
            std::string::npos)
      << error(m);
  m = load(Tmp("given_all_reduce.log"),
           "# Collective test starting: all_reduce_perf\n" + per8 + row, 3);
  EXPECT_NE(error(m).find("3 GPUs (--gpus), but its header gives"), std::string::npos) << error(m);
  // Hosts with different numbers of ranks are not a profile's nodes (10 + 6 had run as 2 x 8).
  std::string uneven;
  for (int r = 0; r < 16; ++r) {
    uneven += "#  Rank " + std::to_string(r) + " Group 0 Pid 1 on node" +
              std::to_string(r < 10 ? 0 : 1) + " device " + std::to_string(r < 10 ? r : r - 10) +
              " [0x1a] NVIDIA H100\n";
  }
  m = load(Tmp("uneven_all_reduce.log"),
           "# Collective test starting: all_reduce_perf\n" + uneven + row);
  EXPECT_NE(error(m).find("its ranks are on 2 hosts unevenly (node0: 10, node1: 6)"),
            std::string::npos)
      << error(m);
  // A CSV with nodes and no gpus column is refused (every row had run on one GPU count); the
  // column names are read in any case.
  m = load(Tmp("nodes_all_reduce.csv"), "size_bytes,nodes,time_us\n1048576,2,100\n1048576,4,90\n");
  EXPECT_NE(error(m).find("a 'nodes' column but no 'gpus' column"), std::string::npos) << error(m);
  m = load(Tmp("upper_all_reduce.csv"), "size_bytes,GPUs,Nodes,time_us\n1048576,16,2,100\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].gpus, 16);
  EXPECT_EQ((*m)[0].nodes, 2);
  // An environment line in NCCL's per-collective form is read, not taken for a prefix.
  m = load(Tmp("env_all_reduce.log"),
           "NCCL_ALGO=allreduce:ring\n"
           "# Collective test starting: all_reduce_perf\n" +
               RankLines(8) + kTableHeader + row);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].algorithm, "ring");
  // A UTF-16 log is not text; an empty log has no rows (it had been asked for --collective).
  {
    std::ofstream f(Tmp("utf16.log"), std::ios::binary);
    for (char c : std::string("# Collective test starting: all_reduce_perf\n")) f << c << '\0';
  }
  m = LoadNcclMeasurements(Tmp("utf16.log"), 0);
  EXPECT_NE(error(m).find("utf16.log: is not a text file (it holds NUL bytes: UTF-16, or binary)"),
            std::string::npos)
      << error(m);
  m = load(Tmp("empty.log"), "");
  EXPECT_NE(error(m).find("empty.log: no nccl-tests data rows"), std::string::npos) << error(m);
  // A job script's exit code after the table is not a cut row; --collective names what a header
  // does not; nodes without gpus are fine with --gpus (every row on that count).
  m = load(Tmp("exit_all_reduce.log"), "# Collective test starting: all_reduce_perf\n" +
                                           RankLines(8) + kTableHeader + row + "0\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::ofstream(Tmp("renamed.log"))
      << "# Collective test starting: my_perf\n" + RankLines(8) + kTableHeader + row;
  m = LoadNcclMeasurements(Tmp("renamed.log"), 0, "all_reduce");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].collective, "all_reduce");
  m = load(Tmp("nodes8_all_reduce.csv"), "size_bytes,nodes,time_us\n1048576,1,100\n", 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].nodes, 1);
  // A log cut inside its last row's size or count is named, not shortened by a row.
  for (const char* cut : {"  4194304  1048576\n", "  4194304\n"}) {
    m = load(Tmp("cut_all_reduce.log"), "# Collective test starting: all_reduce_perf\n" +
                                            RankLines(8) + kTableHeader + row + cut);
    EXPECT_NE(error(m).find("cut_all_reduce.log:12: the last line, '"), std::string::npos)
        << error(m);
    EXPECT_NE(error(m).find("is the start of a data row (size, count) with the rest missing; is "
                            "the log truncated?"),
              std::string::npos)
        << error(m);
  }
}

}  // namespace
}  // namespace orrery

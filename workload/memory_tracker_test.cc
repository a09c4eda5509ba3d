// The local memory tracker, with peaks derived by hand from the rules in memory_tracker.h:
// a tensor is held from the start of its write to the end of its last read.
#include "workload/memory_tracker.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace orrery {
namespace {

using List = std::optional<std::vector<std::string_view>>;

Time Ns(int64_t ns) { return Time::FromNs(ns); }

TEST(LocalMemoryTrackerTest, PeakIsTheLargestSumOfHeldTensors) {
  LocalMemoryTracker t(0);
  // a [0, 5000) writes x (1000 B); b [5000, 15000) reads x, w and writes y (3000 B);
  // c [15000, 17000) reads y, w and writes z (500 B). w (2000 B) is read before any write: held
  // from 0. Held: 0: x + w = 3000; 5000: + y = 6000; 15000: - x + z = 5500; 17000: - y - w = 500.
  ASSERT_TRUE(t.Record(1, "a", Ns(0), Ns(5000), std::nullopt, List({"x", "1000"})).ok());
  ASSERT_TRUE(
      t.Record(2, "b", Ns(5000), Ns(15000), List({"x", "1000", "w", "2000"}), List({"y", "3000"}))
          .ok());
  ASSERT_TRUE(
      t.Record(3, "c", Ns(15000), Ns(17000), List({"y", "3000", "w", "2000"}), List({"z", "500"}))
          .ok());
  EXPECT_EQ(t.PeakBytes(), 6000u);
  EXPECT_EQ(t.PeakTime(), Ns(5000));
  EXPECT_EQ(t.tensors(), 4u);
}

TEST(LocalMemoryTrackerTest, AWriteAndALastReadAtTheSameTimeCancel) {
  LocalMemoryTracker t(0);
  // x (100) held [0, 10); y (40) written from 10: at 10 the usage is 40, never 140.
  ASSERT_TRUE(t.Record(1, "p", Ns(0), Ns(5), std::nullopt, List({"x", "100"})).ok());
  ASSERT_TRUE(t.Record(2, "q", Ns(5), Ns(10), List({"x", "100"}), std::nullopt).ok());
  ASSERT_TRUE(t.Record(3, "r", Ns(10), Ns(20), std::nullopt, List({"y", "40"})).ok());
  EXPECT_EQ(t.PeakBytes(), 100u);
}

TEST(LocalMemoryTrackerTest, NodesWithoutAttributesHoldNothing) {
  LocalMemoryTracker t(0);
  ASSERT_TRUE(t.Record(1, "comm", Ns(0), Ns(5), std::nullopt, std::nullopt).ok());
  EXPECT_EQ(t.PeakBytes(), 0u);
}

TEST(LocalMemoryTrackerTest, BadAttributesAreErrorsNamingNodeAndValue) {
  LocalMemoryTracker t(2);
  Status odd = t.Record(7, "gemm", Ns(0), Ns(1), List({"x", "10", "y"}), std::nullopt);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.message().find("NPU 2 node 7 'gemm': attribute 'inputs' has 3 values"),
            std::string::npos)
      << odd.message();
  Status size = t.Record(8, "gemm", Ns(0), Ns(1), std::nullopt, List({"x", "10kB"}));
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.message().find("tensor 'x' has size '10kB'; expected a whole number of bytes"),
            std::string::npos)
      << size.message();
  // Past 2^50 bytes (a 2^63-byte tensor had wrapped negative, and the usage to 0).
  Status huge = t.Record(8, "gemm", Ns(0), Ns(1), std::nullopt, List({"x", "9223372036854775808"}));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("has size '9223372036854775808'; expected a whole number of "
                                "bytes, at most 2^50 (1 PiB)"),
            std::string::npos)
      << huge.message();
  ASSERT_TRUE(t.Record(9, "a", Ns(0), Ns(1), std::nullopt, List({"x", "10"})).ok());
  Status twice = t.Record(10, "b", Ns(1), Ns(2), std::nullopt, List({"x", "10"}));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("writes tensor 'x' again (first written by node 9)"),
            std::string::npos)
      << twice.message();
}

// 2^14 tensors of 2^50 bytes are held at once: 2^64 bytes, past int64, reported saturated.
// And a node id of 2^64 - 1 is a node like any other (it had been taken for "no node").
TEST(LocalMemoryTrackerTest, LargeSumsAndNodeIdsStayExact) {
  LocalMemoryTracker t(0);
  std::vector<std::string> names;
  for (int i = 0; i < (1 << 14); ++i) names.push_back("t" + std::to_string(i));
  for (const std::string& n : names) {
    ASSERT_TRUE(t.Record(1, "a", Ns(0), Ns(1), std::nullopt, List({n, "1125899906842624"})).ok());
  }
  EXPECT_EQ(t.PeakBytes(), UINT64_MAX);
  LocalMemoryTracker u(0);
  ASSERT_TRUE(u.Record(UINT64_MAX, "last", Ns(0), Ns(1), std::nullopt, List({"x", "4096"})).ok());
  const std::string path = ::testing::TempDir() + "/mem_trace_ids.0.json";
  ASSERT_TRUE(u.WriteChromeTrace(path).ok());
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  EXPECT_NE(ss.str().find("\"node_id\": 18446744073709551615, \"node_name\": \"last\""),
            std::string::npos)
      << ss.str();
}

TEST(LocalMemoryTrackerTest, ChromeTraceHasEventsAndTheUsageCounter) {
  LocalMemoryTracker t(1);
  ASSERT_TRUE(t.Record(1, "a", Ns(0), Ns(2000), std::nullopt, List({"act", "2048"})).ok());
  ASSERT_TRUE(t.Record(2, "b", Ns(2000), Ns(3000), List({"act", "2048"}), std::nullopt).ok());
  const std::string path = ::testing::TempDir() + "/mem_trace.1.json";
  ASSERT_TRUE(t.WriteChromeTrace(path).ok());
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  const std::string json = ss.str();
  EXPECT_NE(json.find("\"cat\": \"tensorWrite\", \"ph\": \"B\", \"ts\": 0.000, \"pid\": 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"cat\": \"tensorRead\", \"ph\": \"E\", \"ts\": 3.000"), std::string::npos);
  EXPECT_NE(json.find("\"pid\": 1000001"), std::string::npos);
  // 2048 B = 0.001953125 MB held from 0 to 3 us.
  EXPECT_NE(
      json.find("\"ts\": 0.000, \"pid\": 2000001, \"args\": {\"MB\": 0.001953, \"bytes\": 2048}"),
      std::string::npos)
      << json;
  EXPECT_NE(
      json.find("\"ts\": 3.000, \"pid\": 2000001, \"args\": {\"MB\": 0.000000, \"bytes\": 0}"),
      std::string::npos);
}

TEST(FormatMemoryTest, BinaryUnits) {
  EXPECT_EQ(FormatMemory(512), "512 B");
  EXPECT_EQ(FormatMemory(6000), "5.86 KB");  // 6000 / 1024 = 5.859
  EXPECT_EQ(FormatMemory(3u << 20), "3.00 MB");
  EXPECT_EQ(FormatMemory(uint64_t{5} << 40), "5.00 TB");
}

}  // namespace
}  // namespace orrery

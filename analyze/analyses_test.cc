#include "analyze/analyses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "analyze/compare.h"
#include "analyze/report.h"

namespace orrery {
namespace analyze {
namespace {

RankTimeline Random(std::mt19937& rng, int n) {
  RankTimeline t;
  auto names = std::make_shared<profile::NameTable>();
  for (int i = 0; i < 5; ++i) names->Intern("k" + std::to_string(i));
  t.names = names;
  for (int i = 0; i < n; ++i) {
    Activity a;
    a.start_ns = rng() % 1000;
    a.end_ns = a.start_ns + rng() % 120;
    a.stream = rng() % 3;
    a.category = static_cast<Category>(rng() % 3);
    a.name = rng() % 5;
    if (rng() % 2) {
      a.launch_start_ns = a.start_ns - static_cast<int64_t>(rng() % 200);
      a.launch_end_ns = a.launch_start_ns + static_cast<int64_t>(rng() % 20);
    }
    t.activities.push_back(a);
  }
  std::sort(t.activities.begin(), t.activities.end(), [](const Activity& a, const Activity& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  return t;
}

// A table holding the name every activity made here has by default (id 0), as a timeline has
// every name its activities use. (An empty table was read past its end: ASan found it.)
std::shared_ptr<const profile::NameTable> OneName(const std::string& name) {
  auto names = std::make_shared<profile::NameTable>();
  names->Intern(name);
  return names;
}

// Brute force, nanosecond by nanosecond: what runs at each instant.
struct Truth {
  int64_t span = 0, busy = 0, compute = 0, comm = 0, memory = 0, overlap = 0, exposed = 0,
          memory_only = 0;
};
Truth BruteForce(const RankTimeline& t) {
  Truth x;
  if (t.activities.empty()) return x;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const Activity& a : t.activities) {
    first = std::min(first, a.start_ns);
    last = std::max(last, a.end_ns);
  }
  x.span = last - first;
  for (int64_t ns = first; ns < last; ++ns) {
    bool any = false, c[3] = {false, false, false};
    for (const Activity& a : t.activities) {
      if (a.start_ns <= ns && ns < a.end_ns) {
        any = true;
        c[static_cast<int>(a.category)] = true;
      }
    }
    x.busy += any;
    x.compute += c[0];
    x.comm += c[1];
    x.memory += c[2];
    x.overlap += c[0] && c[1];
    x.exposed += c[1] && !c[0];
    x.memory_only += c[2] && !c[0] && !c[1];
  }
  return x;
}

TEST(Analyses, BreakdownFieldsEqualABruteForceCount) {
  std::mt19937 rng(11);
  for (int run = 0; run < 200; ++run) {
    const RankTimeline t = Random(rng, 1 + run % 40);
    const RankReport r = AnalyzeRank(t, AnalyzeOptions{});
    const Truth x = BruteForce(t);
    ASSERT_EQ(r.span_ns, x.span);
    ASSERT_EQ(r.busy_ns, x.busy);
    ASSERT_EQ(r.idle_ns, x.span - x.busy);
    ASSERT_EQ(r.compute_ns, x.compute);
    ASSERT_EQ(r.communication_ns, x.comm);
    ASSERT_EQ(r.memory_ns, x.memory);
    ASSERT_EQ(r.overlap_ns, x.overlap);
    ASSERT_DOUBLE_EQ(r.comm_overlap_pct, x.comm ? 100.0 * x.overlap / x.comm : 0.0);
    ASSERT_EQ(r.exposed_communication_ns, x.exposed);
    ASSERT_EQ(r.memory_only_ns, x.memory_only);
    // The temporal breakdown's parts add up to the span; idle by cause to the idle time.
    ASSERT_EQ(r.compute_ns + r.exposed_communication_ns + r.memory_only_ns + r.idle_ns, r.span_ns);
    const IdleCauses& i = r.idle_causes;
    ASSERT_EQ(i.host_wait_ns + i.kernel_wait_ns + i.other_ns, r.idle_ns);
    // The derived critical path tiles the span.
    ASSERT_EQ(r.critical_path.total_ns, r.span_ns);
  }
}

TEST(Analyses, IdleCausesFollowHtasRules) {
  RankTimeline t;
  t.names = OneName("kernel");
  auto add = [&](int64_t s, int64_t e, int64_t launch) {
    Activity a;
    a.start_ns = s;
    a.end_ns = e;
    a.stream = 7;
    a.launch_start_ns = launch;
    a.launch_end_ns = launch < 0 ? -1 : launch + 5;
    t.activities.push_back(a);
  };
  add(0, 100, 0);
  add(110, 200, 50);        // gap 10, launched before the gap: kernel wait (< 30 us)
  add(300, 400, 250);       // gap 100, launched after the gap began (250 > 200): host wait
  add(100400, 100500, 10);  // gap 100 us, launched long before: other
  AnalyzeOptions o;
  o.kernel_wait_ns = 30000;
  const RankReport r = AnalyzeRank(t, o);
  EXPECT_EQ(r.idle_causes.kernel_wait_ns, 10);
  EXPECT_EQ(r.idle_causes.host_wait_ns, 100);
  EXPECT_EQ(r.idle_causes.other_ns, 100000);
  // Launch statistics: delays start - launch end = 0-5, 110-55, 300-255, 100400-15.
  ASSERT_TRUE(r.launch.available);
  EXPECT_EQ(r.launch.launches, 4);
  EXPECT_EQ(r.launch.delay_max_ns, 100385);
  EXPECT_EQ(r.launch.delay_outliers, 1);  // over 100 us
  // Critical path: the last op waited for nothing on its stream within 30 us, nor was it
  // launched after the op before it: idle back to that op's end, then each op in turn.
  EXPECT_EQ(r.critical_path.total_ns, r.span_ns);
  EXPECT_EQ(r.critical_path.by_kind_ns.at("compute"), 100 + 90 + 100 + 100);
}

TEST(Analyses, StragglersAndLastToStart) {
  std::vector<RankTimeline> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[r].rank = r;
    ranks[r].names = OneName("op");
    Activity compute;
    compute.start_ns = 0;
    compute.end_ns = r == 2 ? 1200 : 1000;  // rank 2 computes 20% longer
    ranks[r].activities.push_back(compute);
    Activity comm;
    comm.category = Category::kCommunication;
    comm.start_ns = compute.end_ns;
    comm.end_ns = 1300;
    comm.stream = 40;
    ranks[r].activities.push_back(comm);
  }
  const JobReport j = AnalyzeJob(ranks, AnalyzeOptions{});
  ASSERT_EQ(j.stragglers.size(), 1u);
  EXPECT_EQ(j.stragglers[0].rank, 2);
  EXPECT_EQ(j.matched_collectives, 1);
  EXPECT_EQ(j.last_to_start.at(2), 1);
  EXPECT_EQ(j.compute.max_rank, 2);
  EXPECT_EQ(j.compute.median_ns, 1000);
}

TEST(Analyses, TheJsonReportReadsBackForCompare) {
  std::mt19937 rng(5);
  std::vector<RankTimeline> ranks;
  ranks.push_back(Random(rng, 30));
  ranks.push_back(Random(rng, 30));
  ranks[1].rank = 1;
  const JobReport j = AnalyzeJob(ranks, AnalyzeOptions{});
  const std::string path = ::testing::TempDir() + "/report.json";
  ASSERT_TRUE(WriteAnalysisJson(j, AnalyzeOptions{}, path).ok());
  StatusOr<ReportFile> f = ReadAnalysisReport(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(f->ranks[1].values.at("busy_us"), j.ranks[1].busy_ns / 1000.0);
  EXPECT_DOUBLE_EQ(f->ranks[0].values.at("temporal_breakdown.idle_us"),
                   j.ranks[0].idle_ns / 1000.0);
  // A report against itself: every difference is zero.
  const std::string table = CompareReports(*f, *f);
  EXPECT_NE(table.find("busy_us"), std::string::npos);
  EXPECT_EQ(table.find("+1"), std::string::npos);
  EXPECT_EQ(table.find("-0.0"), std::string::npos);
  // Not a report.
  const std::string other = ::testing::TempDir() + "/other.json";
  std::ofstream(other) << "{\"traceEvents\": []}";
  StatusOr<ReportFile> bad = ReadAnalysisReport(other);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a report of orrery analyze"), std::string::npos);
}

}  // namespace
}  // namespace analyze
}  // namespace orrery

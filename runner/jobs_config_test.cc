#include "runner/jobs_config.h"

#include <gtest/gtest.h>

#include <string>

#include "config/test_files.h"

namespace orrery {
namespace {

TEST(JobsFile, ReadsJobsWithDefaultsAndPathsRelativeToTheFile) {
  const std::string path = WriteTestFile("jobs_ok.yaml",
                                         "jobs:\n"
                                         "  - name: llm\n"
                                         "    workload: traces/llm\n"
                                         "    npus: 0-3,8-11\n"
                                         "    comm-groups: llm.json\n"
                                         "  - workload: /abs/dlrm\n"
                                         "    npus: [5, 4]\n"
                                         "  - workload: other\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(path);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  const std::string dir = ::testing::TempDir() + "/";
  EXPECT_EQ((*jobs)[0].name, "llm");
  EXPECT_EQ((*jobs)[0].workload, dir + "traces/llm");
  EXPECT_EQ((*jobs)[0].npus, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ((*jobs)[0].comm_groups, dir + "llm.json");
  EXPECT_EQ((*jobs)[1].name, "job1");
  EXPECT_EQ((*jobs)[1].workload, "/abs/dlrm");
  EXPECT_EQ((*jobs)[1].npus, (std::vector<int>{5, 4}));  // rank r on the r-th listed
  EXPECT_EQ((*jobs)[1].comm_groups, "");
  EXPECT_EQ((*jobs)[2].name, "job2");
  EXPECT_FALSE((*jobs)[2].npus.has_value());
  EXPECT_EQ((*jobs)[2].where, path + ":8");
}

TEST(JobsFile, EveryProblemIsNamedAtOnce) {
  const std::string path = WriteTestFile("jobs_bad.yaml",
                                         "jobs:\n"
                                         "  - name: a\n"
                                         "    workload: x\n"
                                         "    nupus: 0-3\n"
                                         "  - name: a\n"
                                         "    npus: 3-1\n"
                                         "  - workload: y\n"
                                         "    npus: 0,2,0\n"
                                         "  - [1, 2]\n"
                                         "job: 1\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(path);
  ASSERT_FALSE(jobs.ok());
  const std::vector<std::string>& p = jobs.status().problems();
  const std::string all = jobs.status().message();
  ASSERT_EQ(p.size(), 7u) << all;
  EXPECT_EQ(p[0], path +
                      ":10: unknown key 'job' (did you mean 'jobs'?); a jobs file has one "
                      "key, 'jobs': a list of jobs");
  EXPECT_EQ(p[1], path +
                      ":4: job 0: unknown key 'nupus' (did you mean 'npus'?); expected name, "
                      "workload, npus or comm-groups");
  EXPECT_EQ(p[2], path +
                      ":6: job 'a': 'npus' item is '3-1'; expected NPU ids and ranges "
                      "first-last, e.g. 0-7,16-23 or [0, 1, 2, 3] (rank r runs on the r-th)");
  EXPECT_EQ(p[3], path +
                      ":5: job 1 ('a') has no 'workload'; expected a trace prefix "
                      "(<prefix>.<rank>.et), relative to " +
                      path);
  EXPECT_EQ(p[4], path +
                      ":5: job 1: name 'a' is used by an earlier job; expected each job's "
                      "own name");
  EXPECT_EQ(p[5], path +
                      ":8: job 'job2': 'npus' lists NPU 0 twice; expected each NPU once (one "
                      "rank per NPU)");
  EXPECT_EQ(p[6], path +
                      ":9: job 3 is 'a list'; expected a map with a 'workload' and optionally "
                      "'name', 'npus' and 'comm-groups'");
}

TEST(JobsFile, RefusesAFileWithoutJobs) {
  for (const char* text : {"jobs: []\n", "jobs: 3\n", "other: 1\n"}) {
    StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(WriteTestFile("jobs_none.yaml", text));
    ASSERT_FALSE(jobs.ok()) << text;
    EXPECT_NE(jobs.status().message().find("expected a list of jobs, each with a 'workload'"),
              std::string::npos)
        << jobs.status().message();
  }
  // A key given twice would be read once, silently: an error at its line.
  StatusOr<std::vector<JobSpec>> twice = LoadJobsFile(WriteTestFile(
      "jobs_twice.yaml", "jobs:\n  - {workload: a, npus: 0-7, npus: 8-15}\njobs: []\n"));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find(":2: key 'npus' appears more than once"),
            std::string::npos)
      << twice.status().message();
  EXPECT_NE(twice.status().message().find(":3: key 'jobs' appears more than once"),
            std::string::npos)
      << twice.status().message();
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(::testing::TempDir() + "/no_such.yaml");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("no_such.yaml: cannot open the file"), std::string::npos);
}

TEST(NpuList, ReadsIdsAndRangesInOrder) {
  StatusOr<std::vector<int>> l = ParseJobNpus("4-5, 0 ,1", "npus");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(*l, (std::vector<int>{4, 5, 0, 1}));
  for (const char* bad : {"", "a", "1-", "-1", "2-1", "1,,2", "1.5", "1234567890"}) {
    EXPECT_FALSE(ParseJobNpus(bad, "npus").ok()) << bad;
  }
}

}  // namespace
}  // namespace orrery

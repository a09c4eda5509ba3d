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
  // The job's keys are checked by its schema (JobKeys), in the schema's words.
  EXPECT_EQ(p[1], path + ":4: job 'a': unknown key 'nupus' (did you mean 'npus'?)");
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

// A job's keys are on the schema: an empty or non-scalar value names the key, the line and what
// is valid, and 'npus' takes a list of plain values only.
TEST(JobsFile, TheSchemaChecksEachJobsKeys) {
  const std::string path = WriteTestFile("jobs_schema.yaml",
                                         "jobs:\n"
                                         "  - name: ''\n"
                                         "    workload: [a]\n"
                                         "    npus: [[0, 1]]\n"
                                         "    comm-groups: ''\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(path);
  ASSERT_FALSE(jobs.ok());
  const std::vector<std::string>& p = jobs.status().problems();
  ASSERT_EQ(p.size(), 4u) << jobs.status().message();
  // Named by the name it gets when it gives none that is valid.
  EXPECT_EQ(p[0], path + ":2: job 'job0': key 'name' is ''; expected a name");
  EXPECT_EQ(p[1], path + ":3: job 'job0': key 'workload' is a list; expected a string");
  EXPECT_EQ(p[2], path + ":4: job 'job0': key 'npus', item 1, is a list; expected a single value");
  EXPECT_EQ(p[3],
            path + ":5: job 'job0': key 'comm-groups' is ''; expected a comm-group JSON file");
  std::vector<std::string> names;
  for (const KeyDoc& k : JobKeys()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"name", "workload", "npus", "comm-groups"}));
}

// `npus: []` says the list is empty (it had said "'npus' item is empty").
TEST(JobsFile, AnEmptyNpuListIsNamedAsSuch) {
  const std::string path = WriteTestFile("jobs_empty_npus.yaml",
                                         "jobs:\n"
                                         "  - workload: x\n"
                                         "    npus: []\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(path);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().message(),
            path +
                ":3: job 'job0': 'npus' is an empty list; expected NPU ids and ranges "
                "first-last, e.g. 0-7,16-23 or [0, 1, 2, 3] (rank r runs on the r-th), or no "
                "'npus' for the lowest NPUs no job lists");
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
  EXPECT_NE(twice.status().message().find(":2: job 'job0': key 'npus' appears more than once"),
            std::string::npos)
      << twice.status().message();
  EXPECT_NE(twice.status().message().find(":3: key 'jobs' appears more than once"),
            std::string::npos)
      << twice.status().message();
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(::testing::TempDir() + "/no_such.yaml");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("no_such.yaml: cannot open the file"), std::string::npos);
}

// 'npus: 0-999999999' was expanded into a std::set of a billion ids (15 s and 4 GB, or
// std::bad_alloc) before run.cc compared it with the network.
TEST(JobsFile, AHugeNpuRangeIsOneImmediateError) {
  const std::string path = WriteTestFile("jobs_huge.yaml",
                                         "jobs:\n"
                                         "  - name: big\n"
                                         "    workload: t\n"
                                         "    npus: 0-999999999\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(path);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().message(),
            path +
                ":4: job 'big': 'npus' '0-999999999' names NPU 999999999 (in '0-999999999'); "
                "expected NPU ids in [0, 16777215] (a network has at most 16777216 NPUs)");
  jobs = LoadJobsFile(path, 16);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("expected NPU ids in [0, 15] (the network's NPUs)"),
            std::string::npos)
      << jobs.status().message();
  // Ranges within the bound that repeat stop at the first repeat, not after expanding them all.
  StatusOr<std::vector<int>> l = ParseJobNpus("0-16777215,0-16777215,0-16777215", "npus");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(),
            "npus lists NPU 0 twice; expected each NPU once (one rank per NPU)");
  l = ParseJobNpus("2,8-9", "npus", 8);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(),
            "npus '2,8-9' names NPU 9 (in '8-9'); expected NPU ids in [0, 7] (the network's NPUs)");
}

TEST(JobsFile, ASecondDocumentAndMergeKeysAreErrors) {
  const std::string two = WriteTestFile("jobs_two.yaml",
                                        "jobs:\n"
                                        "  - workload: a\n"
                                        "---\n"
                                        "jobs:\n"
                                        "  - workload: b\n");
  StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(two);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find(two + ":4: a second YAML document (a map) starts here"),
            std::string::npos)
      << jobs.status().message();
  const std::string merge = WriteTestFile("jobs_merge.yaml",
                                          "jobs:\n"
                                          "  - &base\n"
                                          "    workload: a\n"
                                          "  - <<: *base\n"
                                          "    name: b\n");
  jobs = LoadJobsFile(merge);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(
      jobs.status().message().find(merge + ":4: job 'b': '<<' is a YAML merge key, which is not "
                                           "supported; expected the keys written out in full"),
      std::string::npos)
      << jobs.status().message();
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

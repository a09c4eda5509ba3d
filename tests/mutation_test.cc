// Corrupted traces: the bundled example's ETs with bytes flipped, overwritten, inserted,
// duplicated or cut off, run on every backend. Each run must end, either with a result or with a
// message that names a file or an NPU; never a crash, a hang (the test's timeout) or a run
// that ends with an NPU unfinished. Mutations come from a fixed seed, so the cases are the same
// on every run, and a sample is run twice to check the outcome repeats bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runner/run.h"

namespace orrery {
namespace {

constexpr int kRanks = 8;
const char kExample[] = "examples/dp_step/";

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string RankFile(const std::string& prefix, int r) {
  return prefix + "." + std::to_string(r) + ".et";
}

enum class Mutation { kFlipBit, kOverwrite, kInsert, kDuplicate, kTruncate, kCount };

// One to five edits of one kind at random places.
std::string Mutate(std::string b, Mutation kind, std::mt19937& rng) {
  auto at = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n)(rng); };
  const int edits = std::uniform_int_distribution<int>(1, 5)(rng);
  for (int e = 0; e < edits && !b.empty(); ++e) {
    switch (kind) {
      case Mutation::kFlipBit:
        b[at(b.size() - 1)] ^= static_cast<char>(1 << at(7));
        break;
      case Mutation::kOverwrite: {
        static const char kValues[] = {'\x00', '\xff', '\x7f', '\x80'};
        b[at(b.size() - 1)] = kValues[at(3)];
        break;
      }
      case Mutation::kInsert: {
        std::string junk(1 + at(7), '\0');
        for (char& c : junk) c = static_cast<char>(at(255));
        b.insert(at(b.size()), junk);
        break;
      }
      case Mutation::kDuplicate: {
        const size_t from = at(b.size() - 1);
        const size_t len = std::min(b.size() - from, 1 + at(39));
        b.insert(from + len, b.substr(from, len));
        break;
      }
      case Mutation::kTruncate:
        b.resize(at(b.size()));
        break;
      case Mutation::kCount:
        break;
    }
  }
  return b;
}

struct Outcome {
  bool ok = false;
  std::string text;  // the error, or every NPU's finish time
};

Outcome Simulate(const std::string& prefix, Backend backend) {
  RunOptions o;
  o.workload = prefix;
  o.system_config = std::string(kExample) + "system.json";
  o.network_config = std::string(kExample) + "network.yml";
  o.memory_config = std::string(kExample) + "memory.json";
  o.backend = backend;
  StatusOr<RunResult> r = RunSimulation(o);
  Outcome out;
  out.ok = r.ok();
  if (!r.ok()) {
    out.text = r.status().message();
    return out;
  }
  std::ostringstream s;
  for (const NpuStats& n : r->npus) s << n.finish.ps() << " ";
  s << "end " << r->end.ps();
  out.text = s.str();
  return out;
}

TEST(Mutation, CorruptedTracesEndInAResultOrANamedError) {
  std::vector<std::string> original(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    original[r] = Slurp(RankFile(std::string(kExample) + "dp_step", r));
    ASSERT_GT(original[r].size(), 100u) << "rank " << r;
  }
  const Outcome clean = Simulate(std::string(kExample) + "dp_step", Backend::kAnalyticalAware);
  ASSERT_TRUE(clean.ok) << clean.text;

  std::mt19937 rng(20261123);
  const std::string prefix = ::testing::TempDir() + "/mutated";
  const Backend backends[] = {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware,
                              Backend::kPacket};
  int errors = 0, results = 0, changed_results = 0, unparsable = 0;
  for (int i = 0; i < 300; ++i) {
    for (int r = 0; r < kRanks; ++r) Spit(RankFile(prefix, r), original[r]);
    const int rank = std::uniform_int_distribution<int>(0, kRanks - 1)(rng);
    const auto kind = static_cast<Mutation>(
        std::uniform_int_distribution<int>(0, static_cast<int>(Mutation::kCount) - 1)(rng));
    const std::string mutated = Mutate(original[rank], kind, rng);
    Spit(RankFile(prefix, rank), mutated);
    const Backend backend = backends[i % 3];
    const std::string what = "mutation " + std::to_string(i) + " (kind " +
                             std::to_string(static_cast<int>(kind)) + ", rank " +
                             std::to_string(rank) + ", " + BackendName(backend) + ")";
    const Outcome o = Simulate(prefix, backend);
    if (o.ok) {
      ++results;
      if (backend == Backend::kAnalyticalAware && o.text != clean.text) ++changed_results;
    } else {
      ++errors;
      EXPECT_FALSE(o.text.empty()) << what;
      // It names the file, or the NPUs (a stuck or overflowing run names each NPU's node).
      const bool names_file = o.text.find("mutated.") != std::string::npos;
      const bool names_npu = o.text.find("NPU ") != std::string::npos;
      EXPECT_TRUE(names_file || names_npu) << what << ": " << o.text;
      // A message protobuf refuses comes with what breaks it (the field and its byte).
      for (const char* type : {"Chakra Node", "GlobalMetadata"}) {
        const std::string refused = std::string("is not a valid ") + type;
        if (o.text.find(refused) == std::string::npos) continue;
        ++unparsable;
        EXPECT_NE(o.text.find(refused + ": "), std::string::npos) << what << ": " << o.text;
      }
    }
    if (i % 10 == 0) {
      const Outcome again = Simulate(prefix, backend);
      EXPECT_EQ(again.ok, o.ok) << what;
      EXPECT_EQ(again.text, o.text) << what;
    }
  }
  std::printf(
      "300 corrupted traces: %d errors (%d messages protobuf refuses), %d results (%d of the "
      "congestion-aware ones differ from the clean run)\n",
      errors, unparsable, results, changed_results);
  // The mutations reach both outcomes: most are refused, some still parse and run.
  EXPECT_GT(errors, 150);
  EXPECT_GT(results, 10);
}

}  // namespace
}  // namespace orrery

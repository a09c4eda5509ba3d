// Corrupted traces: the bundled example's ETs with bytes flipped, overwritten, inserted,
// duplicated or cut off, run on every backend; and well-formed traces with wrong contents: its
// nodes with fields and attributes changed the way a broken converter or a hand edit changes
// them (sizes of 0 or 2^63, unknown node and collective types, dependencies on themselves or on
// nothing, nodes dropped or doubled, sends to NPUs that do not exist, unknown communicator
// groups), on one rank or all of them. Each run must end, either with a result or with a
// message that names a file or an NPU; never a crash, a hang (the test's timeout) or a run
// that ends with an NPU unfinished. Mutations come from a fixed seed, so the cases are the same
// on every run, and a sample is run twice to check the outcome repeats bit for bit.
#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "et_feeder/proto/et_def.pb.h"
#include "et_feeder/writer.h"
#include "runner/run.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

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

std::vector<Node> ReadNodes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::vector<Node> nodes;
  uint32_t len = 0;
  bool metadata = true;
  while (in.ReadVarint32(&len)) {
    const auto limit = in.PushLimit(static_cast<int>(len));
    if (metadata) {
      ChakraProtoMsg::GlobalMetadata meta;
      EXPECT_TRUE(meta.ParseFromCodedStream(&in)) << path;
      metadata = false;
    } else {
      nodes.emplace_back();
      EXPECT_TRUE(nodes.back().ParseFromCodedStream(&in)) << path;
    }
    in.PopLimit(limit);
  }
  return nodes;
}

// Sets attribute `name` of `n` to `value` (an int64_val, as Chakra writes them), adding it if
// the node has none.
void SetInt(Node* n, const std::string& name, int64_t value) {
  for (auto& a : *n->mutable_attr()) {
    if (a.name() == name) {
      a.set_int64_val(value);
      return;
    }
  }
  et::SetIntAttr(n, name, value);
}

class NodeMutator {
 public:
  explicit NodeMutator(uint32_t seed) : rng_(seed) {}

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <typename T>
  T Any(const std::vector<T>& v) {
    return v[static_cast<size_t>(Pick(static_cast<int>(v.size())))];
  }

  // One change to `nodes`; what it did goes to `what`.
  void Mutate(std::vector<Node>* nodes, std::string* what) {
    if (nodes->empty()) return;
    Node& n = (*nodes)[static_cast<size_t>(Pick(static_cast<int>(nodes->size())))];
    const uint64_t other =
        (*nodes)[static_cast<size_t>(Pick(static_cast<int>(nodes->size())))].id();
    const int64_t kMax = std::numeric_limits<int64_t>::max();
    switch (Pick(13)) {
      case 0: {
        const int64_t v = Any<int64_t>({0, 1, 7, int64_t{1} << 40, kMax, -1, -(int64_t{1} << 40)});
        SetInt(&n, "comm_size", v);
        *what += " comm_size=" + std::to_string(v);
        break;
      }
      case 1: {
        const int64_t v = Any<int64_t>({-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 99});
        SetInt(&n, "comm_type", v);
        *what += " comm_type=" + std::to_string(v);
        break;
      }
      case 2: {
        const int v = Any<int>({0, 1, 2, 3, 4, 5, 6, 7, 8, 100});
        n.set_type(static_cast<ChakraProtoMsg::NodeType>(v));
        *what += " type=" + std::to_string(v);
        break;
      }
      case 3: {
        const uint64_t dep = Any<uint64_t>({n.id(), other, 1000000000, 0});
        n.add_data_deps(dep);
        *what += " data_dep=" + std::to_string(dep);
        break;
      }
      case 4: {
        const uint64_t dep = Any<uint64_t>({n.id(), other, 1000000000});
        n.add_ctrl_deps(dep);
        *what += " ctrl_dep=" + std::to_string(dep);
        break;
      }
      case 5: {
        *what += " drop " + std::to_string(n.id());
        nodes->erase(nodes->begin() + (&n - nodes->data()));
        break;
      }
      case 6: {
        *what += " double " + std::to_string(n.id());
        const Node copy = n;  // n lives in the vector push_back may move
        nodes->push_back(copy);
        break;
      }
      case 7: {
        const uint64_t v =
            Any<uint64_t>({0, uint64_t{1} << 40, std::numeric_limits<uint64_t>::max()});
        n.set_duration_micros(v);
        *what += " duration=" + std::to_string(v);
        break;
      }
      case 8: {
        const bool v = Pick(2) == 1;
        et::SetBoolAttr(&n, "is_cpu_op", v);
        *what += std::string(" is_cpu_op=") + (v ? "1" : "0");
        break;
      }
      case 9: {
        const bool send = Pick(2) == 1;
        const int64_t peer = Any<int64_t>({-1, 0, 3, 7, 8, 1000});
        n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
        SetInt(&n, send ? "comm_dst" : "comm_src", peer);
        SetInt(&n, "comm_tag", Any<int64_t>({0, 1, -5}));
        if (Pick(2) == 1) SetInt(&n, "comm_size", 4096);
        *what += std::string(send ? " send to " : " recv from ") + std::to_string(peer);
        break;
      }
      case 10: {
        const std::string g = Any<std::string>({"1", "99", "", "world", "-3"});
        et::SetStringAttr(&n, "pg_name", g);
        *what += " pg_name='" + g + "'";
        break;
      }
      case 11: {
        std::vector<bool> dims(static_cast<size_t>(Pick(4)));
        for (size_t k = 0; k < dims.size(); ++k) dims[k] = Pick(2) == 1;
        et::SetBoolListAttr(&n, "involved_dim", dims);
        *what += " involved_dim of " + std::to_string(dims.size());
        break;
      }
      case 12: {
        n.set_id(other);  // two nodes with one id, or a shuffled order
        *what += " id=" + std::to_string(other);
        break;
      }
    }
  }

 private:
  std::mt19937 rng_;
};

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

TEST(SemanticMutation, WrongContentsEndInAResultOrANamedError) {
  std::vector<std::vector<Node>> original(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    original[r] = ReadNodes(std::string(kExample) + "dp_step." + std::to_string(r) + ".et");
    ASSERT_GT(original[r].size(), 5u) << "rank " << r;
  }
  const std::string prefix = ::testing::TempDir() + "/semantic";
  const Backend backends[] = {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware,
                              Backend::kPacket};
  NodeMutator m(20261124);
  int errors = 0, results = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<std::vector<Node>> ranks = original;
    // Half the cases change one rank; the others change every rank the same way, as a
    // converter would, so collectives still match across NPUs.
    const bool all = m.Pick(2) == 1;
    const int rank = m.Pick(kRanks);
    std::string what = "case " + std::to_string(i) +
                       (all ? " (all ranks)" : " (rank " + std::to_string(rank) + ")");
    const int edits = 1 + m.Pick(3);
    for (int e = 0; e < edits; ++e) {
      if (all) {
        const uint32_t seed = static_cast<uint32_t>(m.Pick(1 << 30));
        std::string once;
        for (int r = 0; r < kRanks; ++r) {
          NodeMutator same(seed);
          std::string w;
          same.Mutate(&ranks[r], &w);
          if (r == 0) once = w;
        }
        what += once;
      } else {
        m.Mutate(&ranks[rank], &what);
      }
    }
    ASSERT_TRUE(et::WriteRankFiles(prefix, ranks).ok());
    const Backend backend = backends[i % 3];
    what += std::string(", ") + BackendName(backend);
    const Outcome o = Simulate(prefix, backend);
    if (o.ok) {
      ++results;
    } else {
      ++errors;
      const bool names_file = o.text.find("semantic.") != std::string::npos;
      const bool names_npu = o.text.find("NPU ") != std::string::npos;
      EXPECT_TRUE(names_file || names_npu) << what << ": " << o.text;
    }
    if (i % 10 == 0) {
      const Outcome again = Simulate(prefix, backend);
      EXPECT_EQ(again.ok, o.ok) << what;
      EXPECT_EQ(again.text, o.text) << what;
    }
  }
  std::printf("300 traces with wrong contents: %d errors, %d results\n", errors, results);
  EXPECT_GT(errors, 100);
  EXPECT_GT(results, 10);
}

}  // namespace
}  // namespace orrery

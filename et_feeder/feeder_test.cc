#include "et_feeder/feeder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

Trace WriteAndLoad(const std::string& name, const std::vector<Node>& nodes,
                   const LoadOptions& options = {}) {
  const std::string path = TempPath(name);
  Status s = WriteTraceFile(path, nodes);
  EXPECT_TRUE(s.ok()) << s.message();
  StatusOr<Trace> t = Trace::Load(path, options);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

std::vector<uint64_t> IssuableIds(const Feeder& f) {
  std::vector<uint64_t> ids;
  for (uint32_t i : f.Issuable()) ids.push_back(f.trace().id(i));
  return ids;
}

void TakeAndFinish(Feeder* f, uint64_t id) {
  const uint32_t i = *f->trace().Find(id);
  f->Take(i);
  f->Finish(i);
}

TEST(FeederTest, DiamondFreesChildOnlyAfterLastParent) {
  // 1 -> {2, 3} -> 4; ids written out of order.
  Node n4 = MakeCompNode(4, "join", 1, {2});
  AddCtrlDeps(&n4, {3});
  const Trace t =
      WriteAndLoad("diamond.0.et", {n4, MakeCompNode(3, "right", 1, {1}),
                                    MakeCompNode(1, "root", 1), MakeCompNode(2, "left", 1, {1})});
  Feeder f(t);
  EXPECT_THAT(IssuableIds(f), ElementsAre(1));
  EXPECT_EQ(f.state(*t.Find(4)), NodeState::kWaiting);

  const uint32_t root = *t.Find(1);
  f.Take(root);
  EXPECT_EQ(f.issuable_count(), 0u);
  EXPECT_EQ(f.state(root), NodeState::kRunning);
  EXPECT_EQ(f.running_count(), 1u);
  f.Finish(root);
  EXPECT_EQ(f.state(root), NodeState::kDone);
  EXPECT_THAT(IssuableIds(f), ElementsAre(2, 3));  // ascending id

  TakeAndFinish(&f, 3);
  EXPECT_THAT(IssuableIds(f), ElementsAre(2));  // 4 still waits for 2 (data dep)
  EXPECT_THAT(f.UnfinishedParents(*t.Find(4)), ElementsAre(*t.Find(2)));
  TakeAndFinish(&f, 2);
  EXPECT_THAT(IssuableIds(f), ElementsAre(4));  // ... and now its ctrl dep 3 is done too
  EXPECT_FALSE(f.AllDone());
  TakeAndFinish(&f, 4);
  EXPECT_TRUE(f.AllDone());
  EXPECT_EQ(f.done_count(), 4u);
  EXPECT_TRUE(f.Unfinished().empty());
}

std::vector<uint64_t> IssuableIds(const Feeder& f, int c) {
  std::vector<uint64_t> ids;
  for (uint32_t i : f.Issuable(c)) ids.push_back(f.trace().id(i));
  return ids;
}

TEST(FeederTest, ClassesKeepTheirOwnIssuableSets) {
  // 1 -> {2, 3, 4}; nodes 1 and 3 of class 0, 2 and 4 of class 1.
  const Trace t =
      WriteAndLoad("classes.0.et", {MakeCompNode(1, "root", 1), MakeCompNode(2, "a", 1, {1}),
                                    MakeCompNode(3, "b", 1, {1}), MakeCompNode(4, "c", 1, {1})});
  Feeder f(t, {0, 1, 0, 1}, 2);
  EXPECT_THAT(IssuableIds(f, 0), ElementsAre(1));
  EXPECT_EQ(f.issuable_count(1), 0u);
  EXPECT_EQ(f.node_class(*t.Find(4)), 1);
  TakeAndFinish(&f, 1);
  EXPECT_THAT(IssuableIds(f, 0), ElementsAre(3));
  EXPECT_THAT(IssuableIds(f, 1), ElementsAre(2, 4));
  EXPECT_EQ(f.issuable_count(), 3u);
  const uint32_t four = *t.Find(4);
  f.Take(four);
  EXPECT_THAT(IssuableIds(f, 1), ElementsAre(2));
  f.PushBack(four);
  EXPECT_THAT(IssuableIds(f, 1), ElementsAre(2, 4));
  EXPECT_THAT(f.DeadlockReport(), HasSubstr("(0 running, 3 issuable)"));
  // Without classes, everything is class 0.
  Feeder plain(t);
  EXPECT_EQ(plain.node_class(four), 0);
  // Feeders sharing one copy of the classes (NPUs running the same rank) keep their own state.
  const auto shared =
      std::make_shared<const std::vector<uint8_t>>(std::vector<uint8_t>{0, 1, 0, 1});
  Feeder first(t, shared, 2);
  Feeder second(t, shared, 2);
  EXPECT_EQ(shared.use_count(), 3);
  TakeAndFinish(&first, 1);
  EXPECT_THAT(IssuableIds(first, 1), ElementsAre(2, 4));
  EXPECT_THAT(IssuableIds(second, 0), ElementsAre(1));
  EXPECT_EQ(second.issuable_count(1), 0u);
  EXPECT_EQ(second.node_class(four), 1);
}

TEST(FeederTest, PushBackReturnsANodeToIssuable) {
  const Trace t = WriteAndLoad("pushback.0.et", {MakeCompNode(7, "a", 1), MakeCompNode(9, "b", 1)});
  Feeder f(t);
  f.Take(0);
  EXPECT_THAT(IssuableIds(f), ElementsAre(9));
  f.PushBack(0);
  EXPECT_THAT(IssuableIds(f), ElementsAre(7, 9));
  EXPECT_EQ(f.state(0), NodeState::kIssuable);
  EXPECT_EQ(f.running_count(), 0u);
}

TEST(FeederTest, DanglingParentsCountAsDone) {
  const Trace t = WriteAndLoad(
      "dangling_feed.0.et", {MakeCompNode(1, "a", 1, {1000}), MakeCompNode(2, "b", 1, {1, 999})});
  Feeder f(t);
  EXPECT_THAT(IssuableIds(f), ElementsAre(1));
  TakeAndFinish(&f, 1);
  EXPECT_THAT(IssuableIds(f), ElementsAre(2));
}

TEST(FeederTest, DeadlockReportNamesWhatEachNodeWaitsFor) {
  // 12 'allreduce' waits for 9 'mm', which is taken and never finishes.
  const Trace t = WriteAndLoad(
      "deadlock.0.et", {MakeCompNode(9, "mm", 1),
                        MakeCollNode(12, "allreduce", ChakraProtoMsg::ALL_REDUCE, 64, {9})});
  Feeder f(t);
  f.Take(*t.Find(9));
  EXPECT_EQ(f.issuable_count(), 0u);
  EXPECT_THAT(f.Unfinished(), ElementsAre(0, 1));
  const std::string r = f.DeadlockReport();
  EXPECT_THAT(r, HasSubstr("2 of 2 nodes unfinished (1 running, 0 issuable)"));
  EXPECT_THAT(r, HasSubstr("node 9 'mm' (COMP_NODE, running)"));
  EXPECT_THAT(r, HasSubstr("node 12 'allreduce' (COMM_COLL_NODE, waiting) waits for node 9 'mm' "
                           "(running)"));
}

TEST(FeederTest, MillionNodeChainLoadsSmallAndFeedsInOrder) {
  // Node k depends on k - 1. Per node: a 40-byte record, two CSR offsets (2 x 4 B), one parent
  // and one child edge (2 x 4 B) = 56 B, plus the name bytes.
  constexpr uint32_t kNodes = 1000000;
  const std::string path = TempPath("chain.0.et");
  {
    StatusOr<TraceWriter> w = TraceWriter::Open(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    Node n = MakeCompNode(0, "op", 1);
    for (uint32_t k = 0; k < kNodes; ++k) {
      n.set_id(k);
      n.clear_data_deps();
      if (k > 0) n.add_data_deps(k - 1);
      ASSERT_TRUE(w->Write(n).ok());
    }
    ASSERT_TRUE(w->Close().ok());
  }
  StatusOr<Trace> loaded = Trace::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Trace& t = *loaded;
  ASSERT_EQ(t.size(), kNodes);
  EXPECT_EQ(t.edge_count(), kNodes - 1u);
  const size_t name_bytes = 2u * kNodes;  // "op"
  const size_t expected = 56u * kNodes + name_bytes;
  EXPECT_LE(t.MemoryBytes(), expected + 1024)
      << "bytes per node: " << t.MemoryBytes() / double(kNodes);
  EXPECT_LE(t.MemoryBytes(), 64u * kNodes + name_bytes);

  Feeder f(t);
  for (uint32_t k = 0; k < kNodes; ++k) {
    ASSERT_EQ(f.issuable_count(), 1u) << "at step " << k;
    const uint32_t i = *f.FirstIssuable();
    ASSERT_EQ(t.id(i), k);
    f.Take(i);
    f.Finish(i);
  }
  EXPECT_TRUE(f.AllDone());
  EXPECT_EQ(f.done_count(), kNodes);
}

TEST(FeederTest, WideTraceIssuesEverythingAtOnceInIdOrder) {
  // 10,000 roots and one sink depending on all of them.
  std::vector<Node> nodes;
  Node sink = MakeCompNode(1000000, "sink", 1);
  for (uint64_t k = 10000; k-- > 0;) {  // written in descending id order
    nodes.push_back(MakeCompNode(k * 3, "root", 1));
    sink.add_ctrl_deps(k * 3);
  }
  nodes.push_back(sink);
  const Trace t = WriteAndLoad("wide.0.et", nodes);
  Feeder f(t);
  ASSERT_EQ(f.issuable_count(), 10000u);
  uint64_t previous = 0;
  bool first = true;
  while (std::optional<uint32_t> next = f.FirstIssuable()) {
    const uint32_t i = *next;
    if (!first) {
      EXPECT_GT(t.id(i), previous);
    }
    first = false;
    previous = t.id(i);
    f.Take(i);
    f.Finish(i);
  }
  EXPECT_EQ(previous, 1000000u);  // the sink came last
  EXPECT_TRUE(f.AllDone());
}

// The per-class queues against a plain ordered set per class, under random takes (from the
// front and from the middle), push-backs and finishes on a random DAG: the same issuable nodes,
// counts and lowest-first order at every step.
TEST(FeederTest, ClassQueuesMatchOrderedSetsUnderAnyOrderOfOperations) {
  constexpr uint64_t kNodes = 300;
  std::mt19937_64 rng(11);
  std::vector<Node> nodes;
  std::vector<uint8_t> classes;
  for (uint64_t id = 0; id < kNodes; ++id) {
    Node n = MakeCompNode(id, "op", 1);
    for (int k = 0; k < 3 && id > 0; ++k) {
      if (rng() % 2) n.add_data_deps(rng() % id);
    }
    nodes.push_back(n);
    classes.push_back(static_cast<uint8_t>(rng() % 3));
  }
  std::shuffle(nodes.begin(), nodes.end(), rng);  // ids written out of order
  const Trace t = WriteAndLoad("queues.0.et", nodes);
  std::vector<uint8_t> by_index(kNodes);
  for (uint32_t i = 0; i < kNodes; ++i) by_index[i] = classes[t.id(i)];
  Feeder f(t, by_index, 3);
  std::vector<std::set<uint32_t>> ready(3);
  std::set<uint32_t> running;
  auto refill = [&] {
    for (auto& r : ready) r.clear();
    for (uint32_t i = 0; i < kNodes; ++i) {
      if (f.state(i) == NodeState::kIssuable) ready[by_index[i]].insert(i);
    }
  };
  refill();
  for (int step = 0; !f.AllDone(); ++step) {
    ASSERT_LT(step, 100000);
    for (int c = 0; c < 3; ++c) {
      ASSERT_EQ(f.Issuable(c), std::vector<uint32_t>(ready[c].begin(), ready[c].end()))
          << "step " << step;
      ASSERT_EQ(f.issuable_count(c), ready[c].size());
      const size_t n = rng() % 5;
      std::vector<uint32_t> first = {999999};  // appended after what is there
      f.FirstIssuable(c, n, &first);
      std::vector<uint32_t> expected = {999999};
      for (auto it = ready[c].begin(); it != ready[c].end() && expected.size() <= n; ++it) {
        expected.push_back(*it);
      }
      ASSERT_EQ(first, expected) << "step " << step << " class " << c;
    }
    const int op = static_cast<int>(rng() % 4);
    const int c = static_cast<int>(rng() % 3);
    if (op <= 1 && !ready[c].empty()) {  // take the lowest, or one from the middle
      auto it = ready[c].begin();
      if (op == 1) std::advance(it, static_cast<long>(rng() % ready[c].size()));
      f.Take(*it);
      running.insert(*it);
      ready[c].erase(it);
    } else if (op == 2 && !running.empty()) {  // push one back
      auto it = std::next(running.begin(), static_cast<long>(rng() % running.size()));
      f.PushBack(*it);
      ready[by_index[*it]].insert(*it);
      running.erase(it);
    } else if (!running.empty()) {  // finish one
      auto it = std::next(running.begin(), static_cast<long>(rng() % running.size()));
      f.Finish(*it);
      running.erase(it);
      refill();
    }
  }
  EXPECT_EQ(f.issuable_count(), 0u);
}

TEST(CompatFeederTest, PytorchModelRunsToCompletionWithDataDepsOnly) {
  const std::string dir = SharedDir("compat");
  ASSERT_FALSE(dir.empty()) << SharedDirMissing("compat");
  const std::string path = dir + "/chakra/pytorch_model.0.et";
  ASSERT_TRUE(std::ifstream(path).good()) << "compat file " << path << " is missing";
  LoadOptions data_only;
  data_only.dependencies = Dependencies::kDataOnly;
  StatusOr<Trace> t = Trace::Load(path, data_only);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Feeder f(*t);
  size_t steps = 0;
  while (std::optional<uint32_t> next = f.FirstIssuable()) {
    const uint32_t i = *next;
    f.Take(i);
    f.Finish(i);
    ++steps;
  }
  EXPECT_EQ(steps, 3664u);
  EXPECT_TRUE(f.AllDone()) << f.DeadlockReport();
}

}  // namespace
}  // namespace et
}  // namespace orrery

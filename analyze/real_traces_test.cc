// Every profile of ../shared/traces: analyze's breakdown against an independent computation
// (the events read by the tree reader, their times converted by this test, the measures swept
// with counters instead of merged), the imported collectives against the NCCL kernels (their
// number and type, the type found by this test's own search of the launching operators), and
// every execution trace imported alone and with its run's Kineto trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analyze/analyses.h"
#include "analyze/timeline.h"
#include "et_feeder/trace.h"
#include "profile/et_import.h"
#include "profile/execution_trace.h"
#include "profile/importer.h"
#include "profile/input_file.h"
#include "profile/json_value.h"
#include "profile/kineto.h"
#include "profile/test_traces.h"

namespace orrery {
namespace profile {
namespace {

// Decimal microseconds to nanoseconds, by this test's own arithmetic on the number's text.
int64_t Ns(const JsonValue& v) {
  const std::string& t = v.text;
  const size_t dot = t.find('.');
  const std::string whole = t.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  const bool up = frac.size() > 3 && frac[3] >= '5';
  frac = (frac + "000").substr(0, 3);
  return std::stoll(whole) * 1000 + std::stoll(frac) + (up ? 1 : 0);
}

struct Event {
  int64_t start, end;
  int category;  // 0 compute, 1 communication, 2 memory
};

std::vector<Event> GpuEvents(const JsonValue& doc) {
  std::vector<Event> out;
  for (const JsonValue& e : doc.Find("traceEvents")->items) {
    const JsonValue* cat = e.Find("cat");
    const JsonValue* ph = e.Find("ph");
    if (cat == nullptr || ph == nullptr || ph->text != "X") continue;
    int category = -1;
    if (cat->text == "kernel") {
      std::string name = e.Find("name")->text;
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      category = name.find("nccl") != std::string::npos ? 1 : 0;
    } else if (cat->text == "gpu_memcpy" || cat->text == "gpu_memset") {
      category = 2;
    }
    if (category < 0) continue;
    const int64_t s = Ns(*e.Find("ts"));
    out.push_back({s, s + Ns(*e.Find("dur")), category});
  }
  return out;
}

// Sweep over every start and end with a counter per category.
struct Truth {
  int64_t span = 0, busy = 0, by[3] = {0, 0, 0}, overlap = 0;
};
Truth Sweep(const std::vector<Event>& events) {
  std::vector<std::pair<int64_t, int>> points;  // (time, +-(category+1))
  for (const Event& e : events) {
    points.push_back({e.start, e.category + 1});
    points.push_back({e.end, -(e.category + 1)});
  }
  std::sort(points.begin(), points.end());
  Truth x;
  int open[3] = {0, 0, 0};
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const int k = std::abs(points[i].second) - 1;
    open[k] += points[i].second > 0 ? 1 : -1;
    const int64_t d = points[i + 1].first - points[i].first;
    if (open[0] + open[1] + open[2] > 0) x.busy += d;
    for (int c = 0; c < 3; ++c) x.by[c] += open[c] > 0 ? d : 0;
    if (open[0] > 0 && open[1] > 0) x.overlap += d;
  }
  x.span = points.back().first - points.front().first;
  return x;
}

std::string Dir() {
  const std::string d = TracesDir();
  EXPECT_FALSE(d.empty()) << kTracesDirHelp;
  return d;
}

TEST(RealTraces, AnalyzeBreakdownEqualsAnIndependentComputation) {
  const std::string dir = Dir();
  ASSERT_FALSE(dir.empty());
  for (const std::string& f : KinetoProfiles()) {
    const std::string path = dir + "/" + f;
    StatusOr<std::string> text = ReadProfileFile(path);
    ASSERT_TRUE(text.ok()) << text.status().message();
    StatusOr<JsonValue> doc = ParseJson(*text, path);
    ASSERT_TRUE(doc.ok()) << doc.status().message();
    const Truth x = Sweep(GpuEvents(*doc));
    StatusOr<KinetoTrace> t = LoadKinetoTrace(path);
    ASSERT_TRUE(t.ok()) << t.status().message();
    std::vector<analyze::RankTimeline> ranks = analyze::TimelinesOf(std::move(*t), 0);
    ASSERT_EQ(ranks.size(), 1u);
    const analyze::RankReport r = analyze::AnalyzeRank(ranks[0], analyze::AnalyzeOptions{});
    SCOPED_TRACE(f);
    EXPECT_EQ(r.span_ns, x.span);
    EXPECT_EQ(r.busy_ns, x.busy);
    EXPECT_EQ(r.idle_ns, x.span - x.busy);
    EXPECT_EQ(r.compute_ns, x.by[0]);
    EXPECT_EQ(r.communication_ns, x.by[1]);
    EXPECT_EQ(r.memory_ns, x.by[2]);
    EXPECT_DOUBLE_EQ(r.comm_overlap_pct, x.by[1] ? 100.0 * x.overlap / x.by[1] : 0.0);
    EXPECT_GT(x.busy, 0);
  }
}

// A kernel's collective type, as this test finds it: its own "Collective name", else the
// innermost nccl:* / c10d::* / record_param_comms operator on its launching thread that holds its
// launch.
std::string TypeOfName(std::string n) {
  n.erase(std::remove_if(n.begin(), n.end(), [](char c) { return c == '_' || c == ':'; }), n.end());
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  for (const auto& [key, type] :
       std::vector<std::pair<std::string, std::string>>{{"allreduce", "ALL_REDUCE"},
                                                        {"allgather", "ALL_GATHER"},
                                                        {"reducescatter", "REDUCE_SCATTER"},
                                                        {"alltoall", "ALL_TO_ALL"},
                                                        {"broadcast", "BROADCAST"}}) {
    if (n.find(key) != std::string::npos) return type;
  }
  return "";
}

std::map<std::string, int> KernelTypes(const JsonValue& doc) {
  std::map<int64_t, const JsonValue*> launch;  // correlation -> runtime event
  std::vector<const JsonValue*> ops;
  for (const JsonValue& e : doc.Find("traceEvents")->items) {
    const JsonValue* cat = e.Find("cat");
    if (cat == nullptr) continue;
    if (cat->text == "cuda_runtime") launch[*e.Find("args")->Find("correlation")->AsInt64()] = &e;
    if (cat->text == "cpu_op" || cat->text == "user_annotation") ops.push_back(&e);
  }
  std::map<std::string, int> types;
  for (const JsonValue& e : doc.Find("traceEvents")->items) {
    const JsonValue* cat = e.Find("cat");
    if (cat == nullptr || cat->text != "kernel") continue;
    std::string name = e.Find("name")->text;
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (name.find("nccl") == std::string::npos) continue;
    std::string type;
    if (const JsonValue* c = e.Find("args")->Find("Collective name"); c != nullptr) {
      type = TypeOfName(c->text);
    } else {
      const JsonValue* call = launch.at(*e.Find("args")->Find("correlation")->AsInt64());
      const int64_t at = Ns(*call->Find("ts"));
      int64_t best_start = INT64_MIN;
      for (const JsonValue* op : ops) {
        const int64_t s = Ns(*op->Find("ts")), end = s + Ns(*op->Find("dur"));
        const std::string& n = op->Find("name")->text;
        const bool comm = n.rfind("nccl:", 0) == 0 || n.rfind("c10d::", 0) == 0;
        if (comm && op->Find("tid")->number == call->Find("tid")->number && s <= at && at <= end &&
            s > best_start && !TypeOfName(n).empty()) {
          best_start = s;
          type = TypeOfName(n);
        }
      }
    }
    ++types[type];
  }
  return types;
}

TEST(RealTraces, ImportedCollectivesAreTheNcclKernelsInNumberAndType) {
  const std::string dir = Dir();
  ASSERT_FALSE(dir.empty());
  int with_collectives = 0;
  for (const std::string& f : KinetoProfiles()) {
    SCOPED_TRACE(f);
    const std::string path = dir + "/" + f;
    StatusOr<std::string> text = ReadProfileFile(path);
    ASSERT_TRUE(text.ok());
    StatusOr<JsonValue> doc = ParseJson(*text, path);
    ASSERT_TRUE(doc.ok());
    const std::map<std::string, int> expected = KernelTypes(*doc);
    StatusOr<KinetoTrace> t = LoadKinetoTrace(path);
    ASSERT_TRUE(t.ok()) << t.status().message();
    const int world = t->world_size.value_or(1);
    const int rank = t->rank.value_or(0);
    std::vector<KinetoTrace> traces;
    traces.push_back(std::move(*t));
    ImportOptions o;
    o.output_prefix = ::testing::TempDir() + "/real/" + std::to_string(&f - &KinetoProfiles()[0]);
    StatusOr<ImportResult> r = ImportKinetoTraces(traces, {rank}, world, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    StatusOr<et::Trace> et = et::Trace::Load(et::RankTracePath(o.output_prefix, 0));
    ASSERT_TRUE(et.ok()) << et.status().message();
    std::map<std::string, int> imported;
    uint64_t gpu = 0;
    for (uint32_t i = 0; i < et->size(); ++i) {
      if (et->type(i) == et::NodeType::kCommColl)
        ++imported[et::CollectiveTypeName(*et->comm_type(i))];
      if (!et->is_cpu_op(i).value_or(false)) ++gpu;
      // Only what ASTRA-sim 2.0's feeder and statistics accept.
      EXPECT_TRUE(et->type(i) == et::NodeType::kComp || et->type(i) == et::NodeType::kCommColl);
    }
    EXPECT_EQ(imported, expected);
    EXPECT_EQ(gpu, traces[0].gpu.size());  // every GPU op is a node
    with_collectives += expected.empty() ? 0 : 1;
  }
  EXPECT_EQ(with_collectives, 3);  // trace_filter's two ranks and nccl_data
}

TEST(RealTraces, ExecutionTracesImportAloneAndWithTheirKinetoTrace) {
  const std::string dir = Dir();
  ASSERT_FALSE(dir.empty());
  for (const auto& [et_file, kineto_file] : ExecutionTraces()) {
    SCOPED_TRACE(et_file);
    StatusOr<ExecutionTrace> et = LoadExecutionTrace(dir + "/" + et_file);
    ASSERT_TRUE(et.ok()) << et.status().message();
    size_t operators = 0, comms = 0;
    for (const EtNode& n : et->nodes) {
      if (!IsEtRoot(n.name) && n.groups_json.empty()) ++operators;
      comms += n.name.rfind("nccl:", 0) == 0 ? 1 : 0;
    }
    std::vector<ExecutionTrace> ets;
    ets.push_back(std::move(*et));
    for (bool with_kineto : {false, true}) {
      if (with_kineto && kineto_file.empty()) continue;
      std::vector<KinetoTrace> k;
      std::vector<const KinetoTrace*> kp;
      if (with_kineto) {
        StatusOr<KinetoTrace> t = LoadKinetoTrace(dir + "/" + kineto_file);
        ASSERT_TRUE(t.ok()) << t.status().message();
        k.push_back(std::move(*t));
        kp.push_back(&k[0]);
      }
      ImportOptions o;
      o.output_prefix =
          ::testing::TempDir() + "/et/" + std::to_string(operators) + (with_kineto ? "k" : "");
      StatusOr<ImportResult> r = ImportExecutionTraces(ets, kp, {0}, 2, o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      StatusOr<et::Trace> out = et::Trace::Load(et::RankTracePath(o.output_prefix, 0));
      ASSERT_TRUE(out.ok()) << out.status().message();
      EXPECT_TRUE(out->ctrl_deps_ignored().empty()) << out->ctrl_deps_ignored();
      uint64_t cpu = 0, coll = 0, gpu = 0;
      for (uint32_t i = 0; i < out->size(); ++i) {
        if (out->type(i) == et::NodeType::kCommColl) ++coll;
        (out->is_cpu_op(i).value_or(false) ? cpu : gpu) += 1;
      }
      if (!with_kineto) {
        // Every operator a node; each nccl:* operator the collective.
        EXPECT_EQ(cpu + coll, operators);
        EXPECT_EQ(coll, comms);
      } else {
        EXPECT_EQ(cpu, operators);
        EXPECT_EQ(gpu, k[0].gpu.size());  // the run's kernels, all launched inside its ops
      }
    }
  }
}

}  // namespace
}  // namespace profile
}  // namespace orrery

#include "analyze/intervals.h"

#include <algorithm>

namespace orrery {
namespace analyze {

std::vector<Interval> UnionOf(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

int64_t Measure(const std::vector<Interval>& disjoint) {
  int64_t total = 0;
  for (const Interval& i : disjoint) total += i.end - i.start;
  return total;
}

int64_t MeasureOfIntersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

}  // namespace analyze
}  // namespace orrery

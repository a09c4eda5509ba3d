// Measures of unions and intersections of time intervals, in integer nanoseconds.
//
//   std::vector<Interval> u = UnionOf({{0, 10}, {5, 20}, {30, 40}});   // {0,20}, {30,40}
//   int64_t m = Measure(u);                                            // 30
//   int64_t both = MeasureOfIntersection(u, UnionOf(other));
#pragma once

#include <cstdint>
#include <vector>

namespace orrery {
namespace analyze {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
};

// Disjoint, sorted intervals covering exactly the given ones (empty intervals dropped).
std::vector<Interval> UnionOf(std::vector<Interval> intervals);
// Total length of disjoint intervals.
int64_t Measure(const std::vector<Interval>& disjoint);
// Length of the intersection of two sets of disjoint, sorted intervals.
int64_t MeasureOfIntersection(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace analyze
}  // namespace orrery

// Which rank each of several profiles is, and whether they are one job's.
//
//   std::vector<const KinetoTrace*> traces = ...;   // in command-line order
//   StatusOr<std::vector<int>> ranks = RanksOf(traces);
//   if (!ranks.ok()) return ranks.status();   // duplicate ranks, different jobs mixed, ...
//   Status s = CheckNoRankMissing(traces, *ranks);   // for import: ranks 0..N-1 exactly
#pragma once

#include <vector>

#include "common/status.h"
#include "profile/kineto.h"

namespace orrery {
namespace profile {

// Each trace's rank: distributedInfo's when every trace has one, else the trace's position.
// Errors: some traces with a rank and some without, a rank given twice, ranks of different
// world sizes or process groups, a rank outside its world, traces recorded hours apart (other
// jobs), an Orrery timeline among profiles.
StatusOr<std::vector<int>> RanksOf(const std::vector<const KinetoTrace*>& traces);

// Several traces must be ranks 0..N-1 of their job, without a gap (a Chakra trace set is
// `<prefix>.0.et` .. `<prefix>.<N-1>.et`); one trace may be any rank.
Status CheckNoRankMissing(const std::vector<const KinetoTrace*>& traces,
                          const std::vector<int>& ranks);

}  // namespace profile
}  // namespace orrery

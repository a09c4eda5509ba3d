#include "common/units.h"

#include <cmath>
#include <cstdio>

namespace orrery {

Time Time::FromNsDouble(double ns) {
  const double ps = ns * 1000.0;
  // 2^63 is exactly representable; anything at or past it (and NaN) saturates.
  constexpr double kLimit = 9223372036854775808.0;
  if (!(ps < kLimit)) return Infinite();
  if (!(ps > -kLimit)) return Saturated(false);
  return Time(static_cast<int64_t>(std::llround(ps)));
}

Time Time::FromNsTruncated(double ns) {
  // The largest whole ns that fits in int64 picoseconds; past it (and NaN) saturates.
  constexpr double kLimitNs = 9223372036854775.0;
  if (!(ns < kLimitNs)) return Infinite();
  if (!(ns > -kLimitNs)) return Saturated(false);
  return FromNs(static_cast<int64_t>(ns));
}

std::string Time::ToHuman() const {
  char buf[64];
  // Whole ns first, as every ns figure prints (a sys[i] line, a report): 720772.6 ns is
  // 720.772 us here too, not 720.773.
  const double ns = static_cast<double>(WholeNs());
  if (ns >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  } else if (ns >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  } else if (ns >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  }
  return buf;
}

Time operator/(Bytes size, Bandwidth bw) {
  return Time::FromNsDouble(static_cast<double>(size.count()) / bw.bytes_per_ns());
}

}  // namespace orrery

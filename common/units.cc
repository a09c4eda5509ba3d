#include "common/units.h"

#include <cmath>
#include <cstdio>

namespace orrery {

Time Time::FromNsDouble(double ns) { return Time(static_cast<int64_t>(std::llround(ns * 1000.0))); }

std::string Time::ToHuman() const {
  char buf[64];
  const double ns = Ns();
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

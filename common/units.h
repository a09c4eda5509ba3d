// Strong types for simulated time and quantities.
//
//   Time t = Time::FromNs(500) + Bytes(1 << 20) / Bandwidth::FromGiBps(50);
//   uint64_t cycles = t.WholeNs();   // ASTRA-sim "cycles" are nanoseconds
//
// Time is an integer number of picoseconds, so event order is exact and runs are bit-for-bit
// deterministic. `Bytes / Bandwidth` is the one way to get a serialization delay.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace orrery {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time FromPs(int64_t ps) { return Time(ps); }
  // Saturates at Infinite() (or its negative) instead of wrapping.
  static constexpr Time FromNs(int64_t ns) { return Time(1000) * ns; }
  // Rounds to the nearest picosecond. Saturates (see Infinite()); NaN is Infinite().
  static Time FromNsDouble(double ns);
  // Whole nanoseconds, truncated toward zero (ASTRA-sim's integer-ns delays). Saturates.
  static Time FromNsTruncated(double ns);
  static constexpr Time Zero() { return Time(0); }
  static constexpr Time Infinite() { return Time(std::numeric_limits<int64_t>::max()); }
  // Arithmetic saturates here: a sum or product past about 106 days of picoseconds is
  // Infinite(), never a wrapped-around negative time. The event queue refuses to schedule it
  // (Simulation::time_overflowed), so an input that large is reported, not silently wrong.
  constexpr bool IsInfinite() const { return ps_ == std::numeric_limits<int64_t>::max(); }

  constexpr int64_t ps() const { return ps_; }
  // Whole nanoseconds, truncated (ASTRA-sim reports integer ns "cycles").
  constexpr int64_t WholeNs() const { return ps_ / 1000; }
  constexpr double Ns() const { return static_cast<double>(ps_) / 1000.0; }
  constexpr double Us() const { return static_cast<double>(ps_) / 1e6; }
  // Truncates to a whole nanosecond.
  constexpr Time TruncatedToNs() const { return Time(ps_ / 1000 * 1000); }

  constexpr Time operator+(Time o) const {
    int64_t r = 0;
    return __builtin_add_overflow(ps_, o.ps_, &r) ? Saturated(o.ps_ > 0) : Time(r);
  }
  constexpr Time operator-(Time o) const {
    int64_t r = 0;
    return __builtin_sub_overflow(ps_, o.ps_, &r) ? Saturated(o.ps_ < 0) : Time(r);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(int64_t k) const {
    int64_t r = 0;
    return __builtin_mul_overflow(ps_, k, &r) ? Saturated((ps_ > 0) == (k > 0)) : Time(r);
  }
  constexpr bool operator<(Time o) const { return ps_ < o.ps_; }
  constexpr bool operator<=(Time o) const { return ps_ <= o.ps_; }
  constexpr bool operator>(Time o) const { return ps_ > o.ps_; }
  constexpr bool operator>=(Time o) const { return ps_ >= o.ps_; }
  constexpr bool operator==(Time o) const { return ps_ == o.ps_; }
  constexpr bool operator!=(Time o) const { return ps_ != o.ps_; }

  // "1.234 ms", "56.7 us", "890 ns": for people, not for parsing.
  std::string ToHuman() const;

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  static constexpr Time Saturated(bool positive) {
    return positive ? Infinite() : Time(-std::numeric_limits<int64_t>::max());
  }
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t n) : n_(n) {}
  constexpr uint64_t count() const { return n_; }
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr bool operator==(Bytes o) const { return n_ == o.n_; }
  constexpr bool operator!=(Bytes o) const { return n_ != o.n_; }
  constexpr bool operator<(Bytes o) const { return n_ < o.n_; }

 private:
  uint64_t n_ = 0;
};

// Bytes per second, as a double (bandwidths in configs are fractional).
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth FromBytesPerSec(double bps) { return Bandwidth(bps); }
  // ASTRA-sim's network YAML: "GB/s" with GB = 2^30 bytes.
  static constexpr Bandwidth FromGiBps(double gib) { return Bandwidth(gib * 1073741824.0); }
  // Decimal GB/s (1e9 bytes/s): ASTRA-sim's local-mem-bw and roofline units.
  static constexpr Bandwidth FromGBps(double gb) { return Bandwidth(gb * 1e9); }
  constexpr double bytes_per_sec() const { return bps_; }
  constexpr double bytes_per_ns() const { return bps_ / 1e9; }

 private:
  constexpr explicit Bandwidth(double bps) : bps_(bps) {}
  double bps_ = 0;
};

// Serialization delay, rounded to the nearest picosecond.
Time operator/(Bytes size, Bandwidth bw);

}  // namespace orrery

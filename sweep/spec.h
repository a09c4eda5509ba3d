// Reading a sweep spec (LoadSweepSpec, sweep.h): the checks its values get, shared with the
// stage that prepares each point's run (sweep/point.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

namespace orrery::sweep_internal {

// The largest generated collective: a Chakra comm_size is an int64, and the system layer runs a
// collective of up to 2^53 bytes.
inline constexpr uint64_t kMaxGeneratedBytes = uint64_t{1} << 53;

// A generated workload's size in bytes, `v` (the base's `size` or a `workload.size` value):
// "" with *bytes set, or what `v` is and what would be valid. An integer in digits (or 0x hex),
// unquoted, 1 .. 2^53. YAML reads 1e6 and 1048576.0 as floats; yaml-cpp's as<uint64_t> reads 010
// as octal; a quoted "1024" is a string, as the config files have it.
std::string SizeProblem(const YAML::Node& v, uint64_t* bytes);

}  // namespace orrery::sweep_internal

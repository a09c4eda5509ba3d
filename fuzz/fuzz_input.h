// For fuzz targets: the fuzzer's bytes as a file a loader reads (every Orrery parser reads
// files, and some go by the name's extension). One file per process and name, rewritten for
// each input.
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     const std::string path = orrery::FuzzInputFile(data, size, "system.json");
//     (void)orrery::LoadSystemConfig(path);   // any Status is fine; a crash is not
//     return 0;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace orrery {

// Writes `data` to <tmp>/orrery-fuzz-<pid>/<name> and returns that path.
std::string FuzzInputFile(const uint8_t* data, size_t size, const std::string& name);

}  // namespace orrery

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

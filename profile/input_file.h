// A profile's bytes, gunzipped when the file is gzip-compressed (`.json.gz`, or any file that
// starts with gzip's magic bytes, whatever its name).
//
//   StatusOr<std::string> text = ReadProfileFile("rank-0.json.gz");
//   if (!text.ok()) return text.status();   // names the file: missing, truncated gzip, ...
//
// Concatenated gzip members (what `cat a.gz b.gz` makes) are read as one stream, as gzip does.
#pragma once

#include <string>

#include "common/status.h"

namespace orrery {
namespace profile {

StatusOr<std::string> ReadProfileFile(const std::string& path);

// `data` inflated (gzip or zlib framing); `path` names the file in messages.
StatusOr<std::string> Gunzip(const std::string& data, const std::string& path);

// True when `data` starts with gzip's magic bytes 1f 8b.
bool IsGzip(const std::string& data);

}  // namespace profile
}  // namespace orrery

#include "profile/input_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace orrery {
namespace profile {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

StatusOr<std::string> ReadWhole(const std::string& path) {
  const std::string not_regular = NotARegularFile(path);
  if (!not_regular.empty()) return Status::Error(path + ": " + not_regular);
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::Error(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(f.get());
    if (size > 0) data.reserve(static_cast<size_t>(size));
    std::rewind(f.get());
  }
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0) data.append(buffer, n);
  if (std::ferror(f.get())) return Status::Error(path + ": read failed: " + std::strerror(errno));
  return data;
}

}  // namespace

bool IsGzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

StatusOr<std::string> Gunzip(const std::string& data, const std::string& path) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  // 15 + 32: a window of 2^15, gzip or zlib header detected.
  if (inflateInit2(&z, 15 + 32) != Z_OK) return Status::Error(path + ": cannot start zlib");
  std::string out;
  // gzip's trailer holds the size modulo 2^32: a good first guess, grown when it is short.
  size_t guess = data.size() * 4;
  if (data.size() >= 4) {
    const auto* tail = reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4);
    const size_t isize = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (size_t{tail[3]} << 24);
    // Trusted only when plausible (JSON profiles compress 5-20:1): a truncated file's last
    // bytes are not its trailer, and the buffer grows when the guess is short.
    if (isize > guess && isize / 64 <= data.size()) guess = isize;
  }
  out.resize(guess + 1);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  size_t produced = 0;
  size_t consumed = 0;
  int rc = Z_OK;
  for (;;) {
    // zlib's counters are 32-bit: feed and drain at most 1 GiB at a time.
    const size_t in_left = data.size() - consumed;
    if (produced == out.size()) out.resize(out.size() * 2);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + consumed));
    z.avail_in = static_cast<uInt>(std::min<size_t>(in_left, size_t{1} << 30));
    z.next_out = reinterpret_cast<Bytef*>(&out[produced]);
    z.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, size_t{1} << 30));
    const uInt in_before = z.avail_in, out_before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    consumed += in_before - z.avail_in;
    produced += out_before - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member follows (`cat a.gz b.gz`): read it on; trailing zero bytes end the file.
      size_t next = consumed;
      while (next < data.size() && data[next] == '\0') ++next;
      if (next == data.size()) break;
      consumed = next;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && consumed == data.size()) {
      inflateEnd(&z);
      return Status::Error(path + ": truncated gzip: the compressed data ends after " +
                           std::to_string(data.size()) + " bytes (" + std::to_string(produced) +
                           " bytes unpacked) before the end of its stream; the file was cut "
                           "off (copy or download it again, or check `gzip -t` on it)");
    }
    if (rc == Z_BUF_ERROR) continue;  // the output was full: grown above
    const std::string why = z.msg != nullptr ? z.msg : "error " + std::to_string(rc);
    inflateEnd(&z);
    return Status::Error(path + ": corrupt gzip data at compressed byte " +
                         std::to_string(consumed) + ": " + why +
                         " (check the file with `gzip -t`)");
  }
  inflateEnd(&z);
  out.resize(produced);
  return out;
}

StatusOr<std::string> ReadProfileFile(const std::string& path) {
  StatusOr<std::string> data = ReadWhole(path);
  if (!data.ok()) return data.status();
  if (!IsGzip(*data)) return data;
  return Gunzip(*data, path);
}

}  // namespace profile
}  // namespace orrery

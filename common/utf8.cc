#include "common/utf8.h"

#include <cstdint>

namespace orrery {
namespace {

// The length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
size_t SequenceAt(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) {
    n = 1, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 2, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 3, cp = c & 0x07;
  } else {
    return 0;
  }
  for (size_t k = 1; k <= n; ++k) {
    if (i + k >= text.size() || (byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n + 1;
}

}  // namespace

size_t FirstBadUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) return i;
    i += n;
  }
  return text.size();
}

std::string ValidUtf8(std::string_view text) {
  size_t bad = FirstBadUtf8(text);
  if (bad == text.size()) return std::string(text);
  std::string out(text.substr(0, bad));
  for (size_t i = bad; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace orrery

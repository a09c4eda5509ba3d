// UTF-8 checks for the strings Orrery writes into Chakra traces: Chakra's schema is proto3,
// whose string fields must be valid UTF-8, and a trace whose names are not is refused when it
// is read (et_feeder/wire_check.cc). Importers pass names from other tools' files through
// ValidUtf8 so that what they write can be read back.
//
//   FirstBadUtf8("caf\xc3\xa9") == 5 (the size: valid);  FirstBadUtf8("a\xff") == 1
//   ValidUtf8("a\xff" "b") == "a\xef\xbf\xbd" "b"      (U+FFFD for the bad byte)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace orrery {

// The index of the first byte that breaks UTF-8 (overlong forms, surrogates and code points
// past U+10FFFF included), or text.size() when the text is valid.
size_t FirstBadUtf8(std::string_view text);

// `text` with each byte that breaks UTF-8 replaced by U+FFFD (the replacement character), as
// decoders do; valid text comes back unchanged.
std::string ValidUtf8(std::string_view text);

}  // namespace orrery

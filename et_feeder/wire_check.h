// Why protobuf refused a message: protobuf's parser answers only yes or no, so when a trace's
// message does not parse, this walks its wire format with the message type's schema and names
// the first thing that breaks it (the field, its byte in the file, and what is wrong).
//
//   if (!node.ParseFromArray(p, n))
//     std::string why = DescribeWireProblem(p, n, offset_in_file, Node::descriptor());
//   // "in node 7, field 'attr' (#10) named 'comm_size': byte 183: field 'int64_val' (#9):
//   //  its varint is cut off by the end of its message at byte 184"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace google {
namespace protobuf {
class Descriptor;
}  // namespace protobuf
}  // namespace google

namespace orrery {
namespace et {

// The first wire-format problem of the `size` bytes at `data` read as a `type` message, with
// byte positions counted from `file_offset` (where `data` starts in the file); "" when the
// walk finds none.
std::string DescribeWireProblem(const uint8_t* data, size_t size, size_t file_offset,
                                const google::protobuf::Descriptor* type);

}  // namespace et
}  // namespace orrery

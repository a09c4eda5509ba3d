#include "et_feeder/wire_check.h"

#include <google/protobuf/descriptor.h>

#include <string_view>
#include <vector>

#include "common/utf8.h"

namespace orrery {
namespace et {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

constexpr int kMaxDepth = 100;  // protobuf's default recursion limit
constexpr uint64_t kMaxFieldNumber = (1u << 29) - 1;

const char* const kWireNames[] = {"varint",      "fixed64",   "length-delimited",
                                  "start-group", "end-group", "fixed32"};

// The wire type protobuf writes a field of this schema type with (unpacked).
int WireType(const FieldDescriptor& f) {
  switch (f.type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return 1;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return 5;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return 2;
    case FieldDescriptor::TYPE_GROUP:
      return 3;
    default:
      return 0;
  }
}

enum class Varint { kOk, kCut, kLong };

Varint ReadVarint(const uint8_t* data, size_t end, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int i = 0; i < 10; ++i) {
    if (*pos >= end) return Varint::kCut;
    const uint8_t b = data[(*pos)++];
    *value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return Varint::kOk;
  }
  return Varint::kLong;
}

class Walker {
 public:
  Walker(const uint8_t* data, size_t file_offset) : data_(data), base_(file_offset) {}

  const std::string& problem() const { return problem_; }

  // Walks [begin, end) as a `type` message (nullptr: a type the schema does not know). Inside
  // a group (`group` > 0, its field number) the walk stops at the group's end tag, whose end
  // goes to *group_end. False once a problem is found.
  bool Walk(size_t begin, size_t end, const Descriptor* type, int group, int depth,
            size_t* group_end) {
    if (depth > kMaxDepth) {
      return Fail(begin,
                  "messages nest deeper than protobuf's limit of " + std::to_string(kMaxDepth));
    }
    size_t pos = begin;
    while (pos < end) {
      const size_t at = pos;
      uint64_t tag = 0;
      const Varint t = ReadVarint(data_, end, &pos, &tag);
      if (t == Varint::kCut) return Fail(at, "a field tag is cut off by " + EndOf(end));
      if (t == Varint::kLong) return Fail(at, "a field tag is longer than 10 bytes");
      const uint64_t number = tag >> 3;
      const int wire = static_cast<int>(tag & 7);
      if (number == 0) return Fail(at, "field number 0, which protobuf does not allow");
      if (number > kMaxFieldNumber) {
        return Fail(at, "field number " + std::to_string(number) +
                            " is past protobuf's largest, 536870911");
      }
      const FieldDescriptor* field =
          type == nullptr ? nullptr : type->FindFieldByNumber(static_cast<int>(number));
      std::string name = field != nullptr
                             ? "field '" + field->name() + "' (#" + std::to_string(number) + ")"
                             : "field #" + std::to_string(number) +
                                   (type != nullptr ? " (not in " + type->name() + ")" : "");
      // A corrupted tag often keeps a known field number with another wire type.
      if (field != nullptr && wire < 6 && wire != WireType(*field) &&
          !(wire == 2 && field->is_packable())) {
        name += " (a " + std::string(field->type_name()) + " in the schema, here tagged " +
                kWireNames[wire] + ")";
      }
      if (wire == 0) {
        uint64_t v = 0;
        const Varint r = ReadVarint(data_, end, &pos, &v);
        if (r == Varint::kCut) return Fail(at, name + ": its varint is cut off by " + EndOf(end));
        if (r == Varint::kLong) return Fail(at, name + ": its varint is longer than 10 bytes");
        if (field != nullptr && depth == 0 && field->name() == "id") id_ = std::to_string(v);
      } else if (wire == 1 || wire == 5) {
        const size_t width = wire == 1 ? 8 : 4;
        if (end - pos < width) {
          return Fail(at, name + ": its " + std::to_string(width) + "-byte value is cut off by " +
                              EndOf(end));
        }
        pos += width;
      } else if (wire == 2) {
        uint64_t len = 0;
        const Varint r = ReadVarint(data_, end, &pos, &len);
        if (r == Varint::kCut) return Fail(at, name + ": its length is cut off by " + EndOf(end));
        if (r == Varint::kLong) return Fail(at, name + ": its length is longer than 10 bytes");
        if (len > end - pos) {
          return Fail(at, name + " declares " + std::to_string(len) + " bytes, but " + EndOf(end) +
                              " comes after " + std::to_string(end - pos));
        }
        if (field != nullptr && !Contents(*field, name, pos, pos + len, depth)) return false;
        pos += len;
      } else if (wire == 3) {
        size_t closed = 0;
        frames_.push_back({name, ""});
        if (!Walk(pos, end, nullptr, static_cast<int>(number), depth + 1, &closed)) return false;
        frames_.pop_back();
        if (closed == 0) {
          return Fail(at, name + " starts a group that is not closed before " + EndOf(end));
        }
        pos = closed;
      } else if (wire == 4) {
        if (static_cast<int>(number) == group) {
          *group_end = pos;
          return true;
        }
        return Fail(at, "an end-group tag for " + name +
                            (group > 0 ? " inside the group of field #" + std::to_string(group)
                                       : " with no group open"));
      } else {
        return Fail(at, name + " has wire type " + std::to_string(wire) +
                            ", which protobuf does not have (0 to 5)");
      }
    }
    return true;
  }

 private:
  struct Frame {
    std::string field;  // a field the walk is inside
    std::string name;   // its message's 'name' field, once read
  };

  // Checks a length-delimited field's bytes [begin, end) as the schema types them.
  bool Contents(const FieldDescriptor& field, const std::string& name, size_t begin, size_t end,
                int depth) {
    if (field.type() == FieldDescriptor::TYPE_MESSAGE) {
      frames_.push_back({name, ""});
      size_t unused = 0;
      if (!Walk(begin, end, field.message_type(), 0, depth + 1, &unused)) return false;
      frames_.pop_back();
      return true;
    }
    if (field.type() == FieldDescriptor::TYPE_STRING &&
        field.file()->syntax() == FileDescriptor::SYNTAX_PROTO3) {
      const size_t bad =
          FirstBadUtf8(std::string_view(reinterpret_cast<const char*>(data_ + begin), end - begin));
      if (bad < end - begin) {
        return Fail(begin + bad, name +
                                     " is not valid UTF-8 from this byte on (Chakra's schema "
                                     "is proto3, whose strings must be)");
      }
      if (field.name() == "name" && !frames_.empty()) {
        frames_.back().name.assign(reinterpret_cast<const char*>(data_ + begin), end - begin);
      }
      return true;
    }
    if (field.is_packable()) {  // packed repeated scalars
      const int wire = WireType(field);
      const size_t width = wire == 1 ? 8 : wire == 5 ? 4 : 0;  // 0: varints
      if (width > 0) {
        if ((end - begin) % width != 0) {
          return Fail(begin, name + " packs " + std::to_string(end - begin) + " bytes of " +
                                 std::to_string(width) +
                                 "-byte values, not a whole number of them");
        }
        return true;
      }
      for (size_t pos = begin; pos < end;) {
        const size_t at = pos;
        uint64_t v = 0;
        const Varint r = ReadVarint(data_, end, &pos, &v);
        if (r == Varint::kCut) {
          return Fail(at, name + ": a packed varint is cut off by the end of the list at byte " +
                              std::to_string(base_ + end));
        }
        if (r == Varint::kLong) return Fail(at, name + ": a packed varint is longer than 10 bytes");
      }
    }
    return true;
  }

  std::string EndOf(size_t end) const {
    return "the end of its message at byte " + std::to_string(base_ + end);
  }

  bool Fail(size_t at, const std::string& what) {
    std::string where;
    if (!id_.empty()) where = "in node " + id_;
    for (const Frame& f : frames_) {
      where += (where.empty() ? "in " : ", ") + f.field;
      if (!f.name.empty()) where += " named '" + f.name + "'";
    }
    problem_ =
        (where.empty() ? "" : where + ": ") + "byte " + std::to_string(base_ + at) + ": " + what;
    return false;
  }

  const uint8_t* data_;
  size_t base_;
  std::string id_;  // the node's id, once read
  std::vector<Frame> frames_;
  std::string problem_;
};

}  // namespace

std::string DescribeWireProblem(const uint8_t* data, size_t size, size_t file_offset,
                                const Descriptor* type) {
  Walker w(data, file_offset);
  size_t unused = 0;
  w.Walk(0, size, type, 0, 0, &unused);
  return w.problem();
}

}  // namespace et
}  // namespace orrery

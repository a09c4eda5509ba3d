#include "system/collective_order.h"

namespace orrery {
namespace {

bool Rooted(CollectiveType t) {
  return t == CollectiveType::kBroadcast || t == CollectiveType::kReduce ||
         t == CollectiveType::kGather || t == CollectiveType::kScatter;
}

bool Same(const CollectiveSignature& a, const CollectiveSignature& b) {
  if (a.type != b.type) return false;
  if (a.type != CollectiveType::kBarrier && a.size != b.size) return false;
  if (a.dims != b.dims) return false;
  return !Rooted(a.type) || a.root == b.root;
}

std::string Describe(const CollectiveSignature& s) {
  std::string d = CollectiveTypeName(s.type);
  if (s.type != CollectiveType::kBarrier) d += " of " + std::to_string(s.size) + " B";
  if (Rooted(s.type))
    d += s.root < 0 ? ", root: first member" : ", root NPU " + std::to_string(s.root);
  if (!s.dims.empty()) {
    std::string on;
    for (size_t k = 0; k < s.dims.size(); ++k) {
      if (s.dims[k]) on += (on.empty() ? "" : ", ") + std::to_string(k);
    }
    d += on.empty() ? ", on no dimension (involved_dim all false)"
                    : ", on dimension(s) " + on + " (involved_dim)";
  }
  return d;
}

}  // namespace

std::string CollectiveOrder::GroupName(int group) const {
  if (namer_) return namer_(group);
  return group == 0 ? std::string("all NPUs") : "communicator group " + std::to_string(group);
}

Status CollectiveOrder::Record(int npu, int group, int group_size, const CollectiveSignature& sig,
                               const std::string& label) {
  Sequence& seq = groups_[group];
  const uint64_t pos = next_[{group, npu}]++;
  if (pos == seq.first + seq.entries.size()) {
    seq.entries.push_back(Entry{sig, npu, label, 0});
  }
  Entry& e = seq.entries[pos - seq.first];
  if (!Same(e.sig, sig)) {
    const std::string where = GroupName(group);
    return Status::Error(
        "collectives do not line up among " + where + ": collective #" + std::to_string(pos + 1) +
        " of NPU " + std::to_string(npu) + " is " + label + " (" + Describe(sig) +
        "), but that of NPU " + std::to_string(e.npu) + " is " + e.label + " (" + Describe(e.sig) +
        "); every member must issue the same collectives (type, size, root, involved dimensions) "
        "in the same order");
  }
  if (++e.seen == group_size) {
    while (!seq.entries.empty() && seq.entries.front().seen == group_size) {
      seq.entries.pop_front();
      ++seq.first;
    }
  }
  return Status::Ok();
}

std::vector<std::string> CollectiveOrder::DescribeIncomplete(
    const std::function<std::vector<int>(int group)>& members, int max_items) const {
  std::vector<std::string> out;
  for (const auto& [group, seq] : groups_) {
    if (seq.entries.empty()) continue;
    const std::vector<int> npus = members(group);
    for (size_t i = 0; i < seq.entries.size(); ++i) {
      const Entry& e = seq.entries[i];
      const uint64_t pos = seq.first + i;
      std::string missing;
      int count = 0;
      for (int npu : npus) {
        auto it = next_.find({group, npu});
        if (it != next_.end() && it->second > pos) continue;
        if (count++ < 8) missing += (missing.empty() ? "" : ", ") + std::to_string(npu);
      }
      if (count == 0) continue;
      if (count > 8) missing += ", ... (" + std::to_string(count) + " NPUs)";
      if (static_cast<int>(out.size()) == max_items) return out;
      out.push_back("collective #" + std::to_string(pos + 1) + " among " + GroupName(group) + " (" +
                    Describe(e.sig) + ", " + e.label + " on NPU " + std::to_string(e.npu) +
                    ") was never issued by NPU " + missing);
    }
  }
  return out;
}

}  // namespace orrery

// The double-binary-tree all-reduce (`doubleBinaryTree`), see README.md.
#include <memory>

#include "system/collective_engine.h"

namespace orrery {
namespace {

// The tree over a ring of n = 2^L members: a complete binary tree of n-1 nodes numbered in order
// (left subtree, node, right subtree), plus a root above its top node that has that one child.
// Tree 0 puts the root at the last index (the n-1 nodes are indices 0..n-2), tree 1 at index 0
// (nodes 1..n-1). Stream chunks alternate between the two trees.
struct TreeNode {
  enum Kind { kLeaf, kInner, kRoot } kind = kLeaf;
  int parent = -1, left = -1, right = -1;  // ring indices, -1 = none
};

TreeNode NodeOf(int index, int n, int tree) {
  TreeNode t;
  const int root = tree == 0 ? n - 1 : 0;
  const int shift = tree == 0 ? 1 : 0;  // in-order position q (1-based) = index + shift
  const int top = n / 2;                // position of the top node
  if (index == root) {
    t.kind = TreeNode::kRoot;
    t.left = top - shift;  // its only child
    return t;
  }
  const int q = index + shift;
  int h = 0;  // height above the leaves: trailing zero bits of q
  while (((q >> h) & 1) == 0) ++h;
  if (q == top) {
    t.parent = root;
  } else {
    const bool is_left = ((q >> (h + 1)) & 1) == 0;
    t.parent = (is_left ? q + (1 << h) : q - (1 << h)) - shift;
  }
  if (h > 0) {
    t.kind = TreeNode::kInner;
    t.left = q - (1 << (h - 1)) - shift;
    t.right = q + (1 << (h - 1)) - shift;
  }
  return t;
}

// Every hop carries the whole chunk D. A leaf hands D off (endpoint-delay), sends it to its
// parent and waits for the result, which it hands back (endpoint-delay). An inner node receives
// from both children, reduces each (endpoint-delay + reduction, in parallel), sends up once both
// are done, receives the result from its parent, reduces it (endpoint-delay + reduction) and
// sends it to both children without waiting. The root receives from its child, reduces, and
// sends the result back.
class DoubleBinaryTreePhase final : public PhaseAlgorithm {
 public:
  DoubleBinaryTreePhase(Stream& stream, const PhaseSpec& p)
      : stream_(stream), p_(p), node_(NodeOf(p.index, p.ring_size, p.tree)) {}

  void Start() override {
    switch (node_.kind) {
      case TreeNode::kLeaf:
        stream_.HandOff(p_.data_size, /*reduce=*/false);
        break;
      case TreeNode::kInner:
        stream_.ReceiveFromPeer(p_.Member(node_.left), p_.data_size);
        stream_.ReceiveFromPeer(p_.Member(node_.right), p_.data_size);
        break;
      case TreeNode::kRoot:
        stream_.ReceiveFromPeer(p_.Member(node_.left), p_.data_size);
        break;
    }
  }

  void OnReceived() override {
    ++received_;
    if (node_.kind == TreeNode::kLeaf) {
      stream_.HandOff(p_.data_size, /*reduce=*/false, BusRoute{/*from_npu=*/false, false});
      return;
    }
    // On the shared bus every reduced copy but an inner node's first goes back to the network
    // interface (ASTRA-sim's bundles).
    const bool send_back = !(node_.kind == TreeNode::kInner && received_ == 1);
    stream_.HandOff(p_.data_size, /*reduce=*/true, BusRoute{/*from_npu=*/false, send_back});
  }

  void OnBundleDone() override {
    ++bundles_;
    switch (node_.kind) {
      case TreeNode::kLeaf:
        if (bundles_ == 1) {
          SendAndReceive(node_.parent);
        } else {
          stream_.PhaseFinished();
        }
        break;
      case TreeNode::kInner:
        if (bundles_ == 2) {
          SendAndReceive(node_.parent);
        } else if (bundles_ == 3) {
          stream_.SendToPeer(p_.Member(node_.left), p_.data_size);
          stream_.SendToPeer(p_.Member(node_.right), p_.data_size);
          stream_.PhaseFinished();
        }
        break;
      case TreeNode::kRoot:
        stream_.SendToPeer(p_.Member(node_.left), p_.data_size);
        stream_.PhaseFinished();
        break;
    }
  }

  uint64_t final_size() const override { return p_.data_size; }

 private:
  void SendAndReceive(int peer) {
    stream_.SendToPeer(p_.Member(peer), p_.data_size);
    stream_.ReceiveFromPeer(p_.Member(peer), p_.data_size);
  }

  Stream& stream_;
  const PhaseSpec p_;
  const TreeNode node_;
  int bundles_ = 0;   // hand-offs completed
  int received_ = 0;  // messages received
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeDoubleBinaryTreePhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<DoubleBinaryTreePhase>(stream, phase);
}

}  // namespace orrery

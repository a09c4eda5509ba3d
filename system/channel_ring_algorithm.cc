// NCCL's ring across nodes (`channelRing`): one flat ring over every NPU (or every member of a
// communicator group spanning nodes) per channel, rotated inside each node so that each channel
// leaves a node through a different NPU and its NIC (see README.md, "Channel ring").
#include "system/collective_engine.h"

namespace orrery {
namespace {

// Ring position of member `m` (its index in member order) in channel `c`, and back: nodes in
// order, and inside a node of `g` members the channel starts at the node's member c.
int Position(int m, int g, int c) { return (m / g) * g + ((m % g) - c % g + g) % g; }
int MemberAt(int position, int g, int c) { return (position / g) * g + (position % g + c) % g; }

}  // namespace

void SetChannelRingPeers(PhaseSpec* phase, int channel, int node_size) {
  PhaseSpec& p = *phase;
  const int g = node_size > 0 && p.ring_size % node_size == 0 ? node_size : p.ring_size;
  // By member index: a communicator group's members are not NPUs 0 to n - 1.
  const int me = Position(p.index, g, channel);
  const int next = MemberAt((me + 1) % p.ring_size, g, channel);
  const int prev = MemberAt((me + p.ring_size - 1) % p.ring_size, g, channel);
  p.receiver = p.Member(p.clockwise ? next : prev);
  p.sender = p.Member(p.clockwise ? prev : next);
}

}  // namespace orrery

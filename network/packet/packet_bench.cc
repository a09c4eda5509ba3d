// Speed of the packet backend: packet-hop events per second on one core.
//
//   bazel run -c opt //network/packet:packet_bench            # default: 64 NPUs on a switch
//   bazel run -c opt //network/packet:packet_bench -- 128 16  # NPUs, MiB per flow
//   bazel run -c opt //network/packet:packet_bench -- 64 4 incast
//
// Every NPU sends one message through one switch (400 GB/s, 500 ns, 4 KiB packets, credits),
// each packet making two hops: to NPU (i + n/2) mod n (shift: no contention), or all to NPU 0
// (incast: one congested port, senders stalled on credits). Prints hops, events, wall time and
// the rates.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "network/packet/packet_network.h"

namespace {

class Count : public orrery::DeliveryHandler {
 public:
  void OnDelivered(uint64_t) override { ++delivered; }
  int delivered = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace orrery;
  const int n = argc > 1 ? std::atoi(argv[1]) : 64;
  const uint64_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 16;
  const std::string pattern = argc > 3 ? argv[3] : "shift";
  if (n < 2 || n > kMaxPacketNpus || mib == 0 || (pattern != "shift" && pattern != "incast")) {
    std::fprintf(stderr, "usage: packet_bench [npus 2..%d] [MiB per flow > 0] [shift|incast]\n",
                 kMaxPacketNpus);
    return 2;
  }
  const bool incast = pattern == "incast";
  Topology t;
  t.dims.push_back(Dimension{BlockType::kSwitch, n, Bandwidth::FromGiBps(400), Time::FromNs(500)});
  const NetworkParams p;
  Simulation sim;
  PacketNetwork net(sim, t, p);
  Count c;
  const auto start = std::chrono::steady_clock::now();
  int flows = 0;
  for (int i = 0; i < n; ++i) {
    const int dst = incast ? 0 : (i + n / 2) % n;
    if (dst != i) net.Send(i, dst, Bytes(mib << 20), &c, flows++);
  }
  sim.Run();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (c.delivered != flows) {
    std::fprintf(stderr, "only %d of %d messages arrived\n", c.delivered, flows);
    return 1;
  }
  std::printf(
      "packet bench (%s): %d NPUs on a switch, %llu MiB per flow: %llu packet hops, %llu events, "
      "%.3f s wall, %.2f M packet-hops/s, %.2f M events/s, simulated %.3f us\n",
      pattern.c_str(), n, static_cast<unsigned long long>(mib),
      static_cast<unsigned long long>(net.packet_hops()),
      static_cast<unsigned long long>(sim.events_processed()), wall, net.packet_hops() / wall / 1e6,
      sim.events_processed() / wall / 1e6, sim.now().Us());
  return 0;
}

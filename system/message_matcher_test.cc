// Which network call each kind of message takes: the trace's own messages (ASTRA-sim hands them
// to its network as they are) go through Network::SendTraceMessage, the system layer's
// collective streams through Send.
#include "system/message_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "system/test_network.h"

namespace orrery {
namespace {

// A FixedDelayNetwork that also records, in order, how each message was handed to it.
class CallRecordingNetwork : public FixedDelayNetwork {
 public:
  using FixedDelayNetwork::FixedDelayNetwork;
  void Send(int src, int dst, Bytes size, DeliveryHandler* h, uint64_t token) override {
    calls.push_back("send " + std::to_string(size.count()));
    FixedDelayNetwork::Send(src, dst, size, h, token);
  }
  void SendTraceMessage(int src, int dst, Bytes size, uint64_t piece, DeliveryHandler* h,
                        uint64_t token) override {
    calls.push_back("trace " + std::to_string(size.count()) + " piece " + std::to_string(piece));
    FixedDelayNetwork::Send(src, dst, size, h, token);
  }
  std::vector<std::string> calls;
};

TEST(MessageMatcherTest, TheTracesOwnMessagesGoAsTraceMessages) {
  Simulation sim;
  CallRecordingNetwork net(sim, Topology{{RingDimension(4, 50, 500)}});
  MessageMatcher m(sim, net, /*p2p_piece=*/4096);
  // A Chakra send (cut into p2p-chunk-size pieces where the backend stores them), a custom
  // collective's (whole, as ASTRA-sim's), a collective stream's, and the ready messages
  // (--rendezvous-protocol: the data's tag * 4 + its space, of either sign) of a send, of a
  // custom collective's message, and of a collective stream's.
  m.Send({0, 1, TagSpace::kNative, 5, 100}, nullptr, 0);
  m.Send({0, 1, TagSpace::kCustom, 5, 101}, nullptr, 0);
  m.Send({0, 1, TagSpace::kCollective, 5, 102}, nullptr, 0);
  m.Send({1, 0, TagSpace::kRendezvous, 5 * 4 + 0, 103}, nullptr, 0);
  m.Send({1, 0, TagSpace::kRendezvous, -5 * 4 + 3, 104}, nullptr, 0);
  m.Send({1, 0, TagSpace::kRendezvous, 5 * 4 + 1, 105}, nullptr, 0);
  sim.Run();
  EXPECT_EQ(net.calls,
            (std::vector<std::string>{"trace 100 piece 4096", "trace 101 piece 0", "send 102",
                                      "trace 103 piece 0", "trace 104 piece 0", "send 105"}));
}

// A sender may end with its last message (a collective's chunk stream is freed and its memory
// reused), so the matcher asks it nothing once it has told it. It asked LivesForTheRun() after,
// for a message nobody received: UBSan caught the call on the freed stream in
// tests:end_to_end_test's EndToEnd.StuckRunsNameTheirCauseFirst.
class EndingSender : public MessageSink {
 public:
  void OnMessage(uint64_t) override { told_ = true; }
  bool LivesForTheRun() const override {
    asked_after_told_ = asked_after_told_ || told_;
    return false;
  }
  bool told() const { return told_; }
  bool asked_after_told() const { return asked_after_told_; }

 private:
  bool told_ = false;
  mutable bool asked_after_told_ = false;
};

TEST(MessageMatcherTest, ASenderIsAskedNothingAfterItIsToldOfItsMessage) {
  Simulation sim;
  FixedDelayNetwork net(sim, Topology{{RingDimension(4, 50, 500)}});
  MessageMatcher m(sim, net);
  EndingSender received, unreceived;
  m.Recv({0, 1, TagSpace::kCollective, 7, 100}, &received, 0);
  m.Send({0, 1, TagSpace::kCollective, 7, 100}, &received, 0);
  m.Send({0, 1, TagSpace::kCollective, 8, 100}, &unreceived, 0);  // no receive is posted
  sim.Run();
  EXPECT_TRUE(received.told());
  EXPECT_TRUE(unreceived.told());
  EXPECT_FALSE(received.asked_after_told());
  EXPECT_FALSE(unreceived.asked_after_told());
  EXPECT_EQ(m.unreceived_messages(), 1u);
}

}  // namespace
}  // namespace orrery

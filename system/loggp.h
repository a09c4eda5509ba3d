// The LogGP shared-bus model (`model-shared-bus: 1`): the memory bus between an NPU and its
// network interface ("MA"), over which every collective message is handed off, costed with
// LogGP (L, o, g, G) instead of a fixed endpoint-delay. Follows ASTRA-sim 2.0's MemBus / LogGP
// (see system/README.md, "Shared bus").
//
//   SharedBus bus(sim, params, /*attach_memory=*/true);
//   bus.Transfer(/*from_npu=*/true, /*bytes=*/4096, /*processed=*/false, /*send_back=*/false,
//                &target, /*arg=*/7);   // target.OnEvent(7) when the hand-off is done
//
// A bus has two ends (NPU side, MA side), each one LogGP endpoint: a transfer occupies the
// sending end for `offset + G·(size−1)` and lands at the other end after
// `offset + G·(size−1) + L + o` (offset = o, or what is left of the gap g after the end's
// previous send). A processed message is reduced by the receiving end's single reduction unit in
// `(size/100)·local-reduction-delay + 50` ns; a send-back message is returned over the bus. The
// NPU side has a second bus to local memory attached (G = 0.0038 ns/B, as ASTRA-sim hard-codes):
// data the NPU sends is first read from memory over it, data it receives is written to memory
// over it (and, when processed, read back for the reduction).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "common/event_queue.h"
#include "system/system_params.h"

namespace orrery {

class SharedBus;
class LogGpEndpoint;

// One message crossing a bus. `waiter`/`parent`/`stage` are set for the internal transfers over
// the attached memory bus, which resume their parent request at its endpoint when done.
struct BusRequest {
  enum Stage : uint8_t { kNone, kSendBack, kProcess, kRetire };
  uint64_t size = 0;
  bool processed = false;
  bool send_back = false;
  EventTarget* target = nullptr;  // told target->OnEvent(arg) when done (top-level requests)
  uint64_t arg = 0;
  BusRequest* parent = nullptr;  // owned by this request while it waits for it
  LogGpEndpoint* waiter = nullptr;
  Stage stage = kNone;
};

class LogGpEndpoint final : public EventTarget {
 public:
  LogGpEndpoint(Simulation& sim, const LogGpParams& p) : sim_(sim), p_(p) {}
  // Frees the requests still queued: a run stopped before its transfers ended (aborted, or
  // run again without a symmetry that broke) leaves them.
  ~LogGpEndpoint();
  LogGpEndpoint(const LogGpEndpoint&) = delete;
  LogGpEndpoint& operator=(const LogGpEndpoint&) = delete;
  void set_partner(LogGpEndpoint* partner) { partner_ = partner; }
  void set_memory(SharedBus* memory) { memory_ = memory; }

  // Takes ownership of `r`.
  void RequestRead(BusRequest* r);
  void OnEvent(uint64_t event) override;

 private:
  enum class State : uint8_t { kFree, kSending, kReceiving };
  enum Event : uint64_t { kSendFinished, kRecFinished, kProcessingFinished };
  static constexpr int kThreshold = 8;  // consecutive sends before the other end gets a turn

  void ProcessNextRead();
  void SwitchToReceiver(BusRequest* r, int64_t offset);
  void TryNext();
  void StartProcessing();
  void SendBackOrRetire(BusRequest* r);
  // Over the attached memory bus (the NPU side only), then resume `r` at `stage`.
  void ViaMemory(BusRequest* r, bool to_memory, bool send_back, BusRequest::Stage stage);
  void Resume(BusRequest* sub);
  static void Finish(BusRequest* r);

  Simulation& sim_;
  LogGpParams p_;
  LogGpEndpoint* partner_ = nullptr;
  SharedBus* memory_ = nullptr;
  State cur_ = State::kFree;
  State prev_ = State::kFree;
  Time last_trans_;
  bool processing_busy_ = false;
  int subsequent_reads_ = 0;
  std::deque<BusRequest*> sends_, receives_, processing_;
};

class SharedBus {
 public:
  // ASTRA-sim's per-NPU bus attaches a memory bus with G = 0.0038 to the NPU side.
  static constexpr double kMemoryBusG = 0.0038;

  SharedBus(Simulation& sim, const LogGpParams& p, bool attach_memory);
  ~SharedBus();

  // from_npu: NPU -> MA (a message the NPU injects), else MA -> NPU (one taken from the
  // network). target->OnEvent(arg) is called when the hand-off is done.
  void Transfer(bool from_npu, uint64_t bytes, bool processed, bool send_back, EventTarget* target,
                uint64_t arg);
  void Transfer(bool from_npu, BusRequest* r) { (from_npu ? npu_side_ : ma_side_).RequestRead(r); }

 private:
  LogGpEndpoint npu_side_;
  LogGpEndpoint ma_side_;
  std::unique_ptr<SharedBus> memory_;
};

}  // namespace orrery

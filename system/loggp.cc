#include "system/loggp.h"

namespace orrery {
namespace {

// ASTRA-sim computes these delays in double and converts them to whole ticks (ns).
Time Ticks(double ns) { return Time::FromNsTruncated(ns); }

}  // namespace

LogGpEndpoint::~LogGpEndpoint() {
  // A request is in one queue at a time; one crossing the memory bus holds its parent.
  for (std::deque<BusRequest*>* queue : {&sends_, &receives_, &processing_}) {
    for (BusRequest* r : *queue) {
      while (r != nullptr) {
        BusRequest* parent = r->parent;
        delete r;
        r = parent;
      }
    }
  }
}

void LogGpEndpoint::Finish(BusRequest* r) {
  if (r->waiter != nullptr) {
    r->waiter->Resume(r);
  } else {
    r->target->OnEvent(r->arg);
    delete r;
  }
}

void LogGpEndpoint::RequestRead(BusRequest* r) {
  if (memory_ != nullptr) {
    // The NPU side first reads the data from local memory.
    ViaMemory(r, /*to_memory=*/false, /*send_back=*/false, BusRequest::kSendBack);
    return;
  }
  sends_.push_back(r);
  TryNext();
}

void LogGpEndpoint::ViaMemory(BusRequest* r, bool to_memory, bool send_back,
                              BusRequest::Stage stage) {
  auto* sub = new BusRequest;
  sub->size = r->size;
  sub->send_back = send_back;
  sub->parent = r;
  sub->waiter = this;
  sub->stage = stage;
  memory_->Transfer(/*from_npu=*/to_memory, sub);
}

void LogGpEndpoint::Resume(BusRequest* sub) {
  BusRequest* r = sub->parent;
  const BusRequest::Stage stage = sub->stage;
  delete sub;
  switch (stage) {
    case BusRequest::kSendBack:
      sends_.push_back(r);
      break;
    case BusRequest::kProcess:
      processing_.push_back(r);
      if (!processing_busy_) StartProcessing();
      break;
    case BusRequest::kRetire:
      Finish(r);
      break;
    case BusRequest::kNone:
      break;
  }
  TryNext();
}

void LogGpEndpoint::TryNext() {
  if (cur_ != State::kFree || sends_.empty()) return;
  if (subsequent_reads_ > kThreshold && !partner_->sends_.empty() &&
      partner_->subsequent_reads_ <= kThreshold) {
    // Give the other direction its turn.
    if (partner_->cur_ == State::kFree) partner_->TryNext();
    return;
  }
  ProcessNextRead();
}

void LogGpEndpoint::ProcessNextRead() {
  int64_t offset = p_.o;
  if (prev_ == State::kSending) {
    const int64_t since = (sim_.now() - last_trans_).WholeNs();
    offset = p_.o + since > p_.g ? p_.o : p_.g - since;
  }
  BusRequest* r = sends_.front();
  sends_.pop_front();
  partner_->SwitchToReceiver(r, offset);
  cur_ = State::kSending;
  sim_.ScheduleAfter(Ticks(static_cast<double>(offset) + p_.G * (static_cast<double>(r->size) - 1)),
                     this, kSendFinished);
}

void LogGpEndpoint::SwitchToReceiver(BusRequest* r, int64_t offset) {
  receives_.push_back(r);
  prev_ = cur_;
  cur_ = State::kReceiving;
  const double ns = static_cast<double>(offset) + (static_cast<double>(r->size) - 1) * p_.G +
                    static_cast<double>(p_.L) + static_cast<double>(p_.o);
  sim_.ScheduleAfter(Ticks(ns), this, kRecFinished);
  subsequent_reads_ = 0;
}

void LogGpEndpoint::StartProcessing() {
  if (processing_.empty()) return;
  processing_busy_ = true;
  const int64_t size = static_cast<int64_t>(processing_.front()->size);
  sim_.ScheduleAfter(Time::FromNs(size / 100 * p_.local_reduction_delay + 50), this,
                     kProcessingFinished);
}

// A received request that needs no (more) reduction: returned over the bus if it is to be sent
// back, else done (through memory, when the NPU end has a memory bus).
void LogGpEndpoint::SendBackOrRetire(BusRequest* r) {
  if (r->send_back) {
    r->send_back = false;
    if (memory_ != nullptr) {
      ViaMemory(r, /*to_memory=*/true, /*send_back=*/true, BusRequest::kSendBack);
    } else {
      sends_.push_back(r);
    }
  } else if (memory_ != nullptr) {
    ViaMemory(r, /*to_memory=*/true, /*send_back=*/false, BusRequest::kRetire);
  } else {
    Finish(r);
  }
}

void LogGpEndpoint::OnEvent(uint64_t event) {
  switch (event) {
    case kSendFinished:
      last_trans_ = sim_.now();
      prev_ = cur_;
      cur_ = State::kFree;
      ++subsequent_reads_;
      break;
    case kRecFinished: {
      last_trans_ = sim_.now();
      prev_ = cur_;
      if (receives_.size() < 2) cur_ = State::kFree;
      BusRequest* r = receives_.front();
      receives_.pop_front();
      if (r->processed) {
        r->processed = false;
        if (memory_ != nullptr) {
          // Written to memory and read back (a round trip) before the reduction.
          ViaMemory(r, /*to_memory=*/true, /*send_back=*/true, BusRequest::kProcess);
        } else {
          processing_.push_back(r);
          if (!processing_busy_) StartProcessing();
        }
      } else {
        SendBackOrRetire(r);
      }
      break;
    }
    case kProcessingFinished: {
      processing_busy_ = false;
      BusRequest* r = processing_.front();
      processing_.pop_front();
      SendBackOrRetire(r);
      StartProcessing();
      break;
    }
  }
  TryNext();
}

SharedBus::SharedBus(Simulation& sim, const LogGpParams& p, bool attach_memory)
    : npu_side_(sim, p), ma_side_(sim, p) {
  npu_side_.set_partner(&ma_side_);
  ma_side_.set_partner(&npu_side_);
  if (attach_memory) {
    LogGpParams m = p;
    m.G = kMemoryBusG;
    memory_ = std::make_unique<SharedBus>(sim, m, /*attach_memory=*/false);
    npu_side_.set_memory(memory_.get());
  }
}

SharedBus::~SharedBus() = default;

void SharedBus::Transfer(bool from_npu, uint64_t bytes, bool processed, bool send_back,
                         EventTarget* target, uint64_t arg) {
  auto* r = new BusRequest;
  r->size = bytes;
  r->processed = processed;
  r->send_back = send_back;
  r->target = target;
  r->arg = arg;
  Transfer(from_npu, r);
}

}  // namespace orrery

// The host's side of one device, as XLA's TransferToInfeed and
// TransferFromOutfeed give it: an infeed queue the host fills and the
// device's `infeed` pops, and an outfeed queue the device's `outfeed` pushes
// and the host drains. Both the reference interpreter and the runtime's
// executable use it (hlo::EvalContext::host_queues, runtime::DeviceContext).
//
//   HostQueues queues(/*device=*/0);
//   queues.PushInfeed(value);                 // host -> device, before the run
//   ... run: %i = (f32[4], token[]) infeed(%t) pops `value` ...
//   std::vector<Literal> sent = queues.TakeOutfeed();   // device -> host, after it
//
// A pop from an empty queue fails naming the infeed and the device: the
// device would otherwise wait forever for a host that has nothing to send.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/literal.h"

namespace sharc::hlo {

class HostQueues {
 public:
  // Makes the infeed value number `index` (counting every value popped),
  // for an infeed that reads `shape`, when nothing pushed is left; nullopt
  // when the host has no more. This is how a run fed by a seed supplies as
  // many values as its loops pop.
  using InfeedSupplier =
      std::function<absl::StatusOr<std::optional<Literal>>(int64_t index, const Shape& shape)>;

  explicit HostQueues(int64_t device = 0) : device_(device) {}
  HostQueues(const HostQueues&) = delete;
  HostQueues& operator=(const HostQueues&) = delete;

  int64_t device() const { return device_; }

  void PushInfeed(Literal value);
  void SetInfeedSupplier(InfeedSupplier supplier);
  // The next value for `infeed`, which must have the shape it reads (its
  // result's first element). Fails, naming `infeed` and the device, when
  // the queue is empty or the value has another shape.
  absl::StatusOr<Literal> PopInfeed(const Instruction& infeed);
  int64_t infeed_popped() const;

  void PushOutfeed(Literal value);
  // Everything outfed so far, oldest first; the queue is empty afterwards.
  std::vector<Literal> TakeOutfeed();

 private:
  const int64_t device_;
  mutable absl::Mutex mu_;
  std::deque<Literal> infeed_ ABSL_GUARDED_BY(mu_);
  InfeedSupplier supplier_ ABSL_GUARDED_BY(mu_);
  int64_t popped_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Literal> outfeed_ ABSL_GUARDED_BY(mu_);
};

// The shape an infeed reads: the data of its (data, token[]) result.
const Shape& InfeedDataShape(const Instruction& infeed);

}  // namespace sharc::hlo

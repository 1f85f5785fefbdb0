#include "hlo/eval/host_queues.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sharc::hlo {

const Shape& InfeedDataShape(const Instruction& infeed) { return infeed.shape().tuple_shape(0); }

void HostQueues::PushInfeed(Literal value) {
  absl::MutexLock lock(&mu_);
  infeed_.push_back(std::move(value));
}

void HostQueues::SetInfeedSupplier(InfeedSupplier supplier) {
  absl::MutexLock lock(&mu_);
  supplier_ = std::move(supplier);
}

absl::StatusOr<Literal> HostQueues::PopInfeed(const Instruction& infeed) {
  const Shape& wanted = InfeedDataShape(infeed);
  std::optional<Literal> value;
  int64_t index = 0;
  {
    absl::MutexLock lock(&mu_);
    index = popped_;
    if (!infeed_.empty()) {
      value = std::move(infeed_.front());
      infeed_.pop_front();
    } else if (supplier_) {
      absl::StatusOr<std::optional<Literal>> made = supplier_(index, wanted);
      if (!made.ok()) {
        return absl::Status(made.status().code(),
                            absl::StrCat("making infeed value #", index, " for device ", device_,
                                         ": ", made.status().message(), ", in ",
                                         infeed.Describe()));
      }
      value = *std::move(made);
    }
    if (value.has_value()) ++popped_;
  }
  if (!value.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "infeed queue of device ", device_, " is empty: '%", infeed.name(), "' reads value #",
        index, " (", wanted.ToString(), ") but the host gave only ", index,
        " (sharc run: --infeed FILE.npy per array, or --random-inputs), in ",
        infeed.Describe()));
  }
  if (value->shape() != wanted) {
    return absl::InvalidArgumentError(absl::StrCat(
        "infeed value #", index, " for device ", device_, " is ", value->shape().ToString(),
        " but '%", infeed.name(), "' reads ", wanted.ToString(), ", in ", infeed.Describe()));
  }
  return *std::move(value);
}

int64_t HostQueues::infeed_popped() const {
  absl::MutexLock lock(&mu_);
  return popped_;
}

void HostQueues::PushOutfeed(Literal value) {
  absl::MutexLock lock(&mu_);
  outfeed_.push_back(std::move(value));
}

std::vector<Literal> HostQueues::TakeOutfeed() {
  absl::MutexLock lock(&mu_);
  std::vector<Literal> out = std::move(outfeed_);
  outfeed_.clear();
  return out;
}

}  // namespace sharc::hlo

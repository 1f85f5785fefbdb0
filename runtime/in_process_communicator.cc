#include "runtime/in_process_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/communicator_checks.h"
#include "runtime/in_process_internal.h"
#include "runtime/reduction.h"

namespace sharc::runtime {

using namespace in_process;  // NOLINT: this file's own helpers

namespace in_process {
namespace {

uint64_t HashShape(uint64_t h, const hlo::Shape& shape) {
  h = Mix(h, static_cast<uint64_t>(shape.type()));
  h = Mix(h, static_cast<uint64_t>(shape.rank()));
  for (int64_t d : shape.dims()) h = Mix(h, static_cast<uint64_t>(d));
  return h;
}

}  // namespace

uint64_t HashCall(const CollectiveFingerprint& fp, absl::Span<const int64_t> group,
                  const Buffer& input, const Buffer& output, uint64_t extra) {
  uint64_t h = Mix(0x5348415243ull, static_cast<uint64_t>(fp.opcode));
  h = Mix(h, std::hash<std::string_view>()(fp.name));
  h = Mix(h, static_cast<uint64_t>(fp.channel_id));
  h = Mix(h, static_cast<uint64_t>(fp.sequence));
  h = Mix(h, group.size());
  for (int64_t m : group) h = Mix(h, static_cast<uint64_t>(m));
  h = HashShape(h, input.shape());
  h = HashShape(h, output.shape());
  return Mix(h, extra);
}

}  // namespace in_process

InProcessCommunicator::InProcessCommunicator(int64_t num_devices, InProcessOptions options)
    : num_devices_(std::max<int64_t>(num_devices, 1)),
      options_(options),
      slots_(new Slot[static_cast<size_t>(std::max<int64_t>(num_devices, 1))]) {
  spin_ = options_.spin;
  if (spin_ < absl::ZeroDuration()) {
    const int64_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
    spin_ = num_devices_ <= cores ? absl::Microseconds(50) : absl::Microseconds(2);
  }
  if (num_devices < 1) {
    failure_ = absl::InvalidArgumentError(
        absl::StrCat("a communicator needs at least one device, got ", num_devices));
    poisoned_.store(true);
  }
}

InProcessCommunicator::~InProcessCommunicator() = default;

// Every state change a waiter waits for is a seq_cst read-modify-write (or
// store) made just before Notify; with the waiter's seq_cst increment of
// sleepers_ and fence before it re-checks, either the waiter sees the change
// or Notify sees the sleeper (no lost wake-up, no fence needed here).
void InProcessCommunicator::Notify() {
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
  }
}

void InProcessCommunicator::Poison(const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.ok()) failure_ = status;
    poisoned_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
}

absl::Status InProcessCommunicator::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

void InProcessCommunicator::Abort(int64_t device, const absl::Status& reason) {
  absl::Status status = reason.ok() ? absl::AbortedError("aborted") : reason;
  Poison(absl::Status(status.code(),
                      absl::StrCat("device ", device, " failed: ", status.message())));
}

void InProcessCommunicator::MarkFinished(int64_t device) {
  if (device < 0 || device >= num_devices_) return;
  slots_[static_cast<size_t>(device)].finished.store(true, std::memory_order_seq_cst);
  Notify();
}

absl::Status InProcessCommunicator::LocalError(int64_t device, absl::Status status) {
  Poison(absl::Status(status.code(),
                      absl::StrCat("device ", device, " failed: ", status.message())));
  return status;
}

std::string InProcessCommunicator::DescribePublished(int64_t device) const {
  const Slot& s = slots_[static_cast<size_t>(device)];
  char name[kNameWords * 8 + 1] = {};
  for (int i = 0; i < kNameWords; ++i) {
    uint64_t w = s.name[i].load(std::memory_order_relaxed);
    std::memcpy(name + 8 * i, &w, 8);
  }
  int32_t op = s.opcode.load(std::memory_order_relaxed);
  std::string text = absl::StrCat(
      op >= 0 && op < hlo::kNumOpcodes ? hlo::OpcodeName(static_cast<hlo::Opcode>(op)) : "?",
      " %", name, " (");
  if (int64_t ch = s.channel_id.load(std::memory_order_relaxed); ch != 0) {
    absl::StrAppend(&text, "channel_id=", ch, ", ");
  }
  absl::StrAppend(&text, "sequence ", s.sequence.load(std::memory_order_relaxed), ", ",
                  s.bytes.load(std::memory_order_relaxed), " bytes)");
  return text;
}

absl::StatusOr<InProcessCommunicator::GroupState*> InProcessCommunicator::FindGroup(
    int64_t device, absl::Span<const int64_t> group) {
  Slot& me = slots_[static_cast<size_t>(device)];
  if (me.cached_group != nullptr && absl::MakeConstSpan(me.cached_members) == group) {
    return me.cached_group;
  }
  if (static_cast<int64_t>(group.size()) > kMaxGroupSize) {
    return absl::InvalidArgumentError(absl::StrCat("a group of ", group.size(),
                                                   " devices is larger than the supported ",
                                                   kMaxGroupSize));
  }
  std::vector<int64_t> key(group.begin(), group.end());
  std::vector<int64_t> sorted = key;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= num_devices_) {
      return absl::InvalidArgumentError(absl::StrCat("group ", GroupString(group), " names device ",
                                                     sorted[i], ", outside [0, ", num_devices_,
                                                     ")"));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", GroupString(group), " names device ", sorted[i], " twice"));
    }
  }
  GroupState* state;
  {
    std::lock_guard<std::mutex> lock(groups_mu_);
    std::unique_ptr<GroupState>& slot = groups_[key];
    if (slot == nullptr) {
      slot = std::make_unique<GroupState>();
      slot->members = key;
    }
    state = slot.get();
  }
  me.cached_members = std::move(key);
  me.cached_group = state;
  return state;
}

}  // namespace sharc::runtime

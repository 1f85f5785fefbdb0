#include "spmd/while_channel_devices.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace sharc::spmd {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Sharding;

// The one device that holds all of a value: a maximal sharding, or a tuple
// whose elements all are on the same device.
std::optional<int64_t> UniqueDevice(const Sharding& sharding) {
  if (sharding.IsMaximal()) return sharding.maximal_device();
  if (!sharding.IsTuple() || sharding.tuple_elements().empty()) return std::nullopt;
  std::optional<int64_t> device;
  for (const Sharding& element : sharding.tuple_elements()) {
    std::optional<int64_t> d = UniqueDevice(element);
    if (!d.has_value() || (device.has_value() && *device != *d)) return std::nullopt;
    device = d;
  }
  return device;
}

std::optional<int64_t> UniqueDevice(const Instruction& inst) {
  if (!inst.has_sharding()) return std::nullopt;
  return UniqueDevice(*inst.sharding());
}

bool IsChannelInstruction(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kSend:
    case Opcode::kRecv:
      return !inst.attr_bool("is_host_transfer");
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
      // Cross-replica ones have no channel and no device invariant.
      return inst.has_attr("channel_id");
    default:
      return false;
  }
}

absl::Status Conflict(const Instruction& inst, int64_t device, const Instruction& channel,
                      int64_t channel_device, const Instruction& loop) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", inst.name(), "' is on device ", device, ", which conflicts with device ",
      channel_device, " of channel instruction '", channel.name(), "' in the body of while '",
      loop.name(), "' (a loop with a channel runs on one device), in ", inst.Describe()));
}

absl::Status CheckLoop(const Instruction& loop) {
  const Computation* body = loop.attr_computation("body");
  if (body == nullptr) return absl::OkStatus();
  const Instruction* channel = nullptr;
  int64_t channel_device = 0;
  for (const Instruction* inst : body->instructions()) {
    if (IsChannelInstruction(*inst) && UniqueDevice(*inst).has_value()) {
      channel = inst;
      channel_device = *UniqueDevice(*inst);
      break;
    }
  }
  if (channel == nullptr) return absl::OkStatus();
  for (const Instruction* inst : body->instructions()) {
    std::optional<int64_t> device = UniqueDevice(*inst);
    if (device.has_value() && *device != channel_device) {
      return Conflict(*inst, *device, *channel, channel_device, loop);
    }
  }
  if (std::optional<int64_t> device = UniqueDevice(loop);
      device.has_value() && *device != channel_device) {
    return Conflict(loop, *device, *channel, channel_device, loop);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWhileChannelDevices(const hlo::Module& module) {
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      if (inst->opcode() != Opcode::kWhile) continue;
      if (absl::Status status = CheckLoop(*inst); !status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::spmd

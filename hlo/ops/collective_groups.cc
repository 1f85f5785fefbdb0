#include "hlo/ops/collective_groups.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/ops/collective_devices.h"

namespace sharc::hlo {
namespace {

// Replicas x partitions of the devices `inst` runs on.
struct Grid {
  int64_t replicas = 1, partitions = 1;
};

Grid GridOf(const Instruction& inst, int64_t num_devices) {
  const Module* module = inst.parent() == nullptr ? nullptr : inst.parent()->parent();
  if (module != nullptr) {
    const ModuleConfig& c = module->config();
    if (!HeaderDeclaresNoDevices(c) && c.replica_count * c.num_partitions == num_devices) {
      return {c.replica_count, c.num_partitions};
    }
  }
  // No grid to split ids by: the ids a collective names are device ids.
  switch (GroupModeOf(inst)) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return {num_devices, 1};
    default:
      return {1, num_devices};
  }
}

const char* IdKind(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return "partition";
    case CollectiveGroupMode::kFlattenedId:
      return "device";
    default:
      return "replica";
  }
}

absl::Status GroupError(const Instruction& inst, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ", in ", inst.Describe()));
}

// The replica group (of ids below `bound`) holding `id`; all ids when the
// groups are empty.
absl::StatusOr<std::vector<int64_t>> GroupHolding(const Instruction& inst, int64_t id,
                                                  int64_t bound, const char* kind) {
  const IntListList& groups = inst.attr_int_lists("replica_groups");
  if (groups.empty()) {
    std::vector<int64_t> all(static_cast<size_t>(bound));
    for (int64_t i = 0; i < bound; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  for (const std::vector<int64_t>& g : groups) {
    if (std::find(g.begin(), g.end(), id) == g.end()) continue;
    for (int64_t member : g) {
      if (member < 0 || member >= bound) {
        return GroupError(inst, absl::StrCat("replica group names ", kind, " ", member,
                                             " but there are ", bound, " ", kind, "s"));
      }
    }
    return g;
  }
  return GroupError(inst, absl::StrCat(kind, " ", id, " is in no replica group"));
}

}  // namespace

CollectiveGroupMode GroupModeOf(const Instruction& inst) {
  if (!inst.has_attr("channel_id")) return CollectiveGroupMode::kCrossReplica;
  // Only these three carry use_global_device_ids; the rest (all-to-all,
  // collective-permute, ...) name partitions under a channel.
  const Opcode op = inst.opcode();
  if (op != Opcode::kAllReduce && op != Opcode::kAllGather && op != Opcode::kReduceScatter) {
    return CollectiveGroupMode::kCrossPartition;
  }
  return inst.attr_bool("use_global_device_ids") ? CollectiveGroupMode::kFlattenedId
                                                 : CollectiveGroupMode::kCrossReplicaAndPartition;
}

absl::StatusOr<std::vector<int64_t>> CollectiveGroup(const Instruction& inst, int64_t device,
                                                     int64_t num_devices) {
  if (device < 0 || device >= num_devices) {
    return GroupError(inst, absl::StrCat("device ", device, " is outside the ", num_devices,
                                         " running devices"));
  }
  const Grid g = GridOf(inst, num_devices);
  const int64_t replica = device / g.partitions, partition = device % g.partitions;
  const CollectiveGroupMode mode = GroupModeOf(inst);
  std::vector<int64_t> devices;
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica: {
      ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       GroupHolding(inst, replica, g.replicas, IdKind(mode)));
      for (int64_t r : ids) devices.push_back(r * g.partitions + partition);
      break;
    }
    case CollectiveGroupMode::kCrossPartition: {
      ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       GroupHolding(inst, partition, g.partitions, IdKind(mode)));
      for (int64_t p : ids) devices.push_back(replica * g.partitions + p);
      break;
    }
    case CollectiveGroupMode::kCrossReplicaAndPartition: {
      ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       GroupHolding(inst, replica, g.replicas, IdKind(mode)));
      for (int64_t r : ids)
        for (int64_t p = 0; p < g.partitions; ++p) devices.push_back(r * g.partitions + p);
      break;
    }
    case CollectiveGroupMode::kFlattenedId: {
      ASSIGN_OR_RETURN(devices, GroupHolding(inst, device, num_devices, IdKind(mode)));
      break;
    }
  }
  return devices;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GlobalPairs(const Instruction& inst,
                                                                     int64_t num_devices) {
  const Grid g = GridOf(inst, num_devices);
  const bool across_partitions = GroupModeOf(inst) != CollectiveGroupMode::kCrossReplica;
  const int64_t bound = across_partitions ? g.partitions : g.replicas;
  const int64_t copies = across_partitions ? g.replicas : g.partitions;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const std::vector<int64_t>& pair : inst.attr_int_lists("source_target_pairs")) {
    if (pair.size() != 2) return GroupError(inst, "source_target_pairs needs pairs");
    for (int64_t id : pair) {
      if (id < 0 || id >= bound) {
        return GroupError(inst, absl::StrCat("source_target_pairs names ",
                                             across_partitions ? "partition " : "replica ", id,
                                             " but there are ", bound));
      }
    }
    for (int64_t c = 0; c < copies; ++c) {
      if (across_partitions) {
        pairs.emplace_back(c * g.partitions + pair[0], c * g.partitions + pair[1]);
      } else {
        pairs.emplace_back(pair[0] * g.partitions + c, pair[1] * g.partitions + c);
      }
    }
  }
  return pairs;
}

bool IsSingletonCollective(const Instruction& inst, int64_t num_devices) {
  if (inst.opcode() == Opcode::kCollectivePermute) {
    // The identity only if every device sends to itself (a device no pair
    // targets receives zeros).
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs = GlobalPairs(inst, num_devices);
    if (!pairs.ok()) return false;
    int64_t self = 0;
    for (const auto& [source, target] : *pairs) {
      if (source != target) return false;
      ++self;
    }
    return self == num_devices;
  }
  for (int64_t d = 0; d < num_devices; ++d) {
    absl::StatusOr<std::vector<int64_t>> group = CollectiveGroup(inst, d, num_devices);
    if (!group.ok() || group->size() != 1) return false;
  }
  return true;
}

}  // namespace sharc::hlo

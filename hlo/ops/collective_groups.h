// Which devices a collective's replica_groups and source_target_pairs name,
// as XLA's CollectiveOpGroupMode defines them. Devices are numbered by
// global id, replica * num_partitions + partition.
//
//   no channel_id                                  cross-replica: ids are replica ids; each
//                                                  partition's replicas meet apart
//   channel_id, no use_global_device_ids           cross-partition: ids are partition ids; each
//     (all-to-all, collective-permute, and the     replica's partitions meet apart
//     others when the attribute is absent)
//   channel_id, use_global_device_ids=false        cross-replica-and-partition: ids are replica
//     (all-reduce, all-gather, reduce-scatter)     ids; the group spans all their partitions
//   channel_id, use_global_device_ids=true         flattened: ids are global device ids
//
// So in a module of num_partitions=4 and one replica, `all-reduce(x),
// replica_groups={}` without a channel_id reduces over the one replica: it
// is x itself on every device (XLA keeps such an all-reduce of a sharded
// operand as it is: it is not a cross-partition sum).
//
// A program whose header declares no device count (a per-device program run
// with --devices N) has nothing to split ids by: its ids are device ids.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

enum class CollectiveGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};

CollectiveGroupMode GroupModeOf(const Instruction& inst);

// The global ids of the devices in `device`'s group, in group order (the
// order contributions combine and gathered blocks are laid out), for
// `inst` run on `num_devices` devices.
absl::StatusOr<std::vector<int64_t>> CollectiveGroup(const Instruction& inst, int64_t device,
                                                     int64_t num_devices);

// A collective-permute's source-target pairs as global ids: each pair of
// partition ids once per replica (with a channel_id), or each pair of
// replica ids once per partition (without).
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GlobalPairs(const Instruction& inst,
                                                                     int64_t num_devices);

// Whether every group of `inst` on `num_devices` devices is the device
// alone: then the collective is the identity (an all-reduce or all-gather
// over one replica), the same in a global program and after partitioning.
bool IsSingletonCollective(const Instruction& inst, int64_t num_devices);

}  // namespace sharc::hlo

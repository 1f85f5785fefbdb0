// How many devices a module's collectives name. A program XLA has already
// partitioned (one per-device module with collectives over, say, 128 devices)
// often carries no num_partitions in its header; the device count is then
// only implied by the replica groups and source-target pairs.
#pragma once

#include <cstdint>

#include "hlo/ir/module.h"

namespace sharc::hlo {

// One more than the largest device id in any replica-group or pairs
// attribute (by the op table's attribute kinds), or 0 if none names one.
int64_t DevicesNamedByCollectives(const Module& module);

// True if the module has collectives and all of them name replica ids:
// none has a channel_id (XLA's cross-replica mode, collective_groups.h), as
// in a per-device program of replicas (pmap's), or an all-reduce,
// all-gather or reduce-scatter has one without use_global_device_ids
// (cross-replica-and-partition: its groups are replicas).
bool CollectivesNameReplicas(const Module& module);

// True if the header gives no device count (num_partitions, replica_count
// and mesh all left at their defaults).
bool HeaderDeclaresNoDevices(const ModuleConfig& config);

}  // namespace sharc::hlo

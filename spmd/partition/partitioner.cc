#include "spmd/partition/partitioner.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/passes/dce.h"
#include "spmd/partition/insert_reshards.h"
#include "spmd/partition/localize.h"
#include "spmd/partition/reshard.h"
#include "spmd/partition/reshard_to_collectives.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

// A partially manual all-reduce (its sharding's manual subgroup dim) sums
// within manual subgroups: the devices that share a data tile and differ
// only along the manual dim hold that tile's per-device values. A replica
// group reaching into another subgroup mixes values of other tiles, which
// GSPMD refuses too.
absl::Status CheckManualAllReduceGroups(const Instruction& inst) {
  if (inst.opcode() != Opcode::kAllReduce || !inst.has_sharding() ||
      !inst.sharding()->IsTiled() || !inst.sharding()->HasManualSubgroup() ||
      !inst.attr_bool("use_global_device_ids")) {
    return absl::OkStatus();
  }
  const Sharding& s = *inst.sharding();
  const auto& types = s.subgroup_types();
  const int64_t manual =
      s.TiledDataRank() +
      (std::find(types.begin(), types.end(), hlo::SubgroupType::kManual) - types.begin());
  // Each device's subgroup: the devices that differ from it only along the
  // manual dim.
  absl::flat_hash_map<int64_t, int64_t> subgroup;
  const std::vector<std::vector<int64_t>> subgroups = GroupsAlongDims(s, {manual});
  for (size_t g = 0; g < subgroups.size(); ++g) {
    for (int64_t device : subgroups[g]) subgroup[device] = static_cast<int64_t>(g);
  }
  for (const std::vector<int64_t>& group : inst.attr_int_lists("replica_groups")) {
    for (int64_t device : group) {
      auto it = subgroup.find(device), first = subgroup.find(group.front());
      if (it == subgroup.end() || first == subgroup.end() || it->second != first->second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "manual all-reduce across devices that belong to different manual subgroups: "
            "replica group {", absl::StrJoin(group, ","), "} under sharding ", s.ToString(),
            ", in ", inst.Describe()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShardings(const Module& module, int64_t num_devices,
                            PartitionOptions::Unsharded unsharded) {
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding()) {
        if (unsharded == PartitionOptions::Unsharded::kError && comp == module.entry()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "instruction '", inst->name(),
              "' has no sharding: run sharding propagation first (`sharc propagate`, or let "
              "`sharc partition` do it), or annotate it, in ",
              inst->Describe()));
        }
        continue;
      }
      absl::Status st = inst->sharding()->Validate(inst->shape(), num_devices);
      if (!st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot partition for ", num_devices, " devices: ", st.message(),
            "; pass --devices matching the module's num_partitions, or fix the annotation, in ",
            inst->Describe()));
      }
      RETURN_IF_ERROR(CheckManualAllReduceGroups(*inst));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PartitionOptions::Stage> ParsePartitionStage(std::string_view name) {
  using Stage = PartitionOptions::Stage;
  if (name == "insert-reshards") return Stage::kInsertReshards;
  if (name == "reshard-to-collectives") return Stage::kReshardToCollectives;
  if (name == "localize") return Stage::kLocalize;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown partitioner pass '", std::string(name),
      "': expected insert-reshards, reshard-to-collectives or localize"));
}

absl::StatusOr<std::unique_ptr<Module>> PartitionModule(const Module& global,
                                                        const PartitionOptions& options) {
  using Stage = PartitionOptions::Stage;
  if (global.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  const int64_t n = options.num_devices > 0 ? options.num_devices : global.config().num_partitions;
  RETURN_IF_ERROR(CheckShardings(global, n, options.unsharded));

  InsertReshardsOptions insert;
  insert.halo_exchange = options.halo_exchange;
  ASSIGN_OR_RETURN(std::unique_ptr<Module> explicit_module, InsertReshards(global, insert));
  explicit_module->mutable_config().num_partitions = n;
  if (options.stop_after == Stage::kInsertReshards) return explicit_module;
  RETURN_IF_ERROR(ReshardToCollectives(*explicit_module));
  if (options.stop_after == Stage::kReshardToCollectives) return explicit_module;
  LocalizeOptions localize;
  localize.windowed_einsum_threshold_bytes = options.windowed_einsum_threshold_mib < 0
                                                 ? -1
                                                 : options.windowed_einsum_threshold_mib << 20;
  ASSIGN_OR_RETURN(std::unique_ptr<Module> out, Localize(*explicit_module, n, localize));
  // Drop what the new program does not use: collectives included, since
  // each exists only to feed a value (the compiler's pass list runs this as
  // its `dce` pass).
  hlo::DceOptions dce;
  dce.keep = hlo::DceOptions::Keep::kEffectsButNotCollectives;
  for (Computation* comp : out->computations()) hlo::RemoveDeadInstructions(*comp, dce);
  return out;
}

absl::StatusOr<std::string> ExplainPartitionChoice(const Module& global, std::string_view name,
                                                   const PartitionOptions& options) {
  if (global.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  const Instruction* found = nullptr;
  for (const Computation* comp : global.computations())
    if (found == nullptr) found = comp->FindInstruction(std::string(name));
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("no instruction named '", std::string(name), "'"));
  }
  const int64_t n = options.num_devices > 0 ? options.num_devices : global.config().num_partitions;
  RETURN_IF_ERROR(CheckShardings(global, n, options.unsharded));
  StrategyLog log;
  log.name = std::string(name);
  InsertReshardsOptions insert;
  insert.halo_exchange = options.halo_exchange;
  insert.log = &log;
  RETURN_IF_ERROR(InsertReshards(global, insert).status());
  if (log.accounts.empty()) {
    return absl::StrCat(found->name(), " = ", found->shape().ToString(), " ",
                        hlo::OpcodeName(found->opcode()),
                        ": no choice of plan (no factor rule, or control flow, a parameter, a "
                        "constant, a tuple or part of a manual region); its sharding is ",
                        found->has_sharding() ? found->sharding()->ToString() : "{replicated}",
                        "\n");
  }
  return absl::StrJoin(log.accounts, "\n");
}

}  // namespace sharc::spmd

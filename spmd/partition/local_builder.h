// Emits per-device instructions into a computation of the partitioned
// module: partition-id arithmetic, per-device offsets, masks, and
// collectives with replica groups and channel ids as XLA writes them.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

// State shared by every builder of one partitioned module.
struct PartitionContext {
  hlo::Module* module = nullptr;
  int64_t num_devices = 1;
  int64_t next_channel_id = 1;
  // Control-flow bodies localized so far.
  absl::flat_hash_map<const hlo::Computation*, hlo::Computation*> localized_bodies;
  int64_t next_name = 0;
};

class LocalBuilder {
 public:
  LocalBuilder(PartitionContext& context, hlo::Computation& computation)
      : context_(context), computation_(computation) {}

  PartitionContext& context() { return context_; }
  hlo::Computation& computation() { return computation_; }
  int64_t num_devices() const { return context_.num_devices; }

  // Adds `inst` under a fresh name derived from `base` (unless `keep_name`).
  hlo::Instruction* Add(std::unique_ptr<hlo::Instruction> inst);
  std::string FreshName(const std::string& base);

  // This device's partition id as s32[] (one per computation).
  hlo::Instruction* PartitionId();
  // table[partition_id] for a per-device table of values, as s32[].
  hlo::Instruction* PerDeviceValue(const std::vector<int64_t>& table, const std::string& base);
  hlo::Instruction* ConstantS32(int64_t value);
  hlo::Instruction* ScalarConstant(hlo::PrimitiveType type, double value);
  hlo::Instruction* Broadcast(hlo::Instruction* scalar_or_array, const hlo::Shape& shape,
                              std::vector<int64_t> dims);
  hlo::Instruction* Reshape(hlo::Instruction* value, std::vector<int64_t> dims);
  hlo::Instruction* Transpose(hlo::Instruction* value, std::vector<int64_t> perm);
  hlo::Instruction* Slice(hlo::Instruction* value, std::vector<int64_t> limits);
  // Zero padding (or `pad_value`) at the high end of each dim.
  hlo::Instruction* PadHigh(hlo::Instruction* value, const std::vector<int64_t>& high,
                            hlo::Instruction* pad_value = nullptr);
  hlo::Instruction* DynamicSlice(hlo::Instruction* value, const std::vector<hlo::Instruction*>& starts,
                                 std::vector<int64_t> sizes);
  // Replaces elements at global positions >= size along `dim` (this device's
  // tile starts at `offset`) by `fill`: the mask that keeps padding out of
  // reductions and contractions.
  hlo::Instruction* MaskPadding(hlo::Instruction* value, int64_t dim, hlo::Instruction* offset,
                                int64_t size, hlo::Instruction* fill);
  // `value` on the devices where `keep[partition id]` is nonzero, the scalar
  // `filler` broadcast elsewhere.
  hlo::Instruction* KeepOnly(hlo::Instruction* value, const std::vector<int64_t>& keep,
                             hlo::Instruction* filler);
  hlo::Instruction* GetTupleElement(hlo::Instruction* tuple, int64_t index);

  // Collectives over explicit groups of partition ids.
  hlo::Instruction* AllGather(hlo::Instruction* value, int64_t dim,
                              const std::vector<std::vector<int64_t>>& groups);
  hlo::Instruction* AllReduce(hlo::Instruction* value, hlo::Computation* reducer,
                              const std::vector<std::vector<int64_t>>& groups);
  // Reduces over each group and leaves member i with block i of `dim`.
  hlo::Instruction* ReduceScatter(hlo::Instruction* value, hlo::Computation* reducer, int64_t dim,
                                  const std::vector<std::vector<int64_t>>& groups);
  hlo::Instruction* AllToAll(hlo::Instruction* value, int64_t dim,
                             const std::vector<std::vector<int64_t>>& groups);
  hlo::Instruction* CollectivePermute(hlo::Instruction* value,
                                      const std::vector<std::vector<int64_t>>& pairs);
  // A scalar (T, T) -> T computation applying `op` (add, maximum, ...).
  hlo::Computation* Reducer(hlo::Opcode op, hlo::PrimitiveType type);

 private:
  PartitionContext& context_;
  hlo::Computation& computation_;
  hlo::Instruction* partition_id_ = nullptr;
};

}  // namespace sharc::spmd

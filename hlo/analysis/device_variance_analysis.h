// Device variance of every value of a shard_map body (DESIGN.md, "shard_map
// and device variance"): the mesh axes along which it may differ between
// devices, per tuple element, from the axes its parameters vary over. It is
// the one analysis behind spmd's variance pass (spmd/variance.h, which then
// inserts the pbroadcasts a body needs) and autodiff's BodyVariance (which
// only reads variance); both used to walk bodies on their own and drifted.
//
// The walk is hlo/analysis/data_flow_walk.h's: tuples, calls, loops and
// branches pass variance on through their declared edges (a varying
// predicate or branch index makes every carry or result vary), and every
// other op varies where its operands do, plus its own sources
// (hlo/ops/device_variance.h: named collectives, partition-id, axis_index
// in called scalar computations).
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/device_variance.h"

namespace sharc::hlo {

// One entry per element of a tuple-shaped value (nested tuples as the union
// of their leaves), one for an array.
using LeafVariance = std::vector<VarianceAxes>;

class DeviceVarianceAnalysis {
 public:
  // Analyses `body` (and the computations its data flow reaches) with
  // parameter i varying as params[i].
  static absl::StatusOr<DeviceVarianceAnalysis> Run(const Computation& body,
                                                    const std::vector<LeafVariance>& params,
                                                    const ManualMesh& mesh);

  bool Has(const Instruction* value) const { return leaves_.contains(value); }
  // The axes `value` may vary over (the union over a tuple's elements;
  // empty for a value the analysis did not reach).
  VarianceAxes Of(const Instruction* value) const;
  // Per element of a tuple-shaped value (one entry for an array).
  const LeafVariance& Leaves(const Instruction* value) const;
  const absl::flat_hash_map<const Instruction*, LeafVariance>& all() const { return leaves_; }
  const ManualMesh& mesh() const { return mesh_; }

 private:
  absl::flat_hash_map<const Instruction*, LeafVariance> leaves_;
  ManualMesh mesh_;
};

}  // namespace sharc::hlo

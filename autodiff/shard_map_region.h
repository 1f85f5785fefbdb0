// What autodiff's shard_map rules read off a shard_map and need to build
// new ones: its mesh, specs and local shapes, whether its body's device
// variance is checked (check_variance, JAX's check_vma), and which
// shard_map a named-axis collective runs in. The rules of
// jvp_rules/shard_map.cc, transpose_rules/shard_map.cc and
// shard_map_transpose.cc share these so they read the attributes one way.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/builder.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::autodiff {

// A set of mesh axes (a device variance), kept in mesh order.
using Axes = std::vector<std::string>;

struct ShardMapSignature {
  hlo::ManualMesh mesh;
  std::vector<hlo::AxisSpec> in_specs;
  std::vector<hlo::AxisSpec> out_specs;
  std::vector<Shape> local_inputs;   // the body's parameter shapes
  std::vector<Shape> local_outputs;  // the body's result leaves
  // check_variance (default true): the body is typed and transposes need
  // no rescaling; false is JAX's check_vma=False.
  bool checked = true;
};

absl::StatusOr<ShardMapSignature> ReadShardMap(const Instruction& shard_map);

// The shard_map whose body contains `inst`, directly or through calls,
// loops and branches; nullptr outside any shard_map.
const Instruction* EnclosingShardMap(const Instruction& inst);

// Whether `inst` runs in a body whose variance is checked (true outside any
// shard_map: a collective there is typed by the module's mesh).
bool InCheckedBody(const Instruction& inst);

// The mesh axes not in `axes`, in mesh order (the axes a spec leaves the
// value invariant over).
Axes OtherAxes(const hlo::ManualMesh& mesh, const Axes& axes);

// Emits a shard_map like `like` (same mesh attribute and check_variance)
// over `operands` with the given specs and body; its shape is the tuple of
// the global outputs, or the one global output when `tuple` is false.
absl::StatusOr<Instruction*> EmitShardMap(Emitter& e, const Instruction& like,
                                          std::vector<Instruction*> operands,
                                          const std::vector<hlo::AxisSpec>& in_specs,
                                          const std::vector<hlo::AxisSpec>& out_specs,
                                          Computation* body, bool tuple);

// A named-axis collective over `axes` with the given attributes (axes
// excluded).
Instruction* EmitCollective(Emitter& e, Opcode opcode, const Shape& shape, Instruction* operand,
                            const std::string& axes, std::vector<hlo::Attribute> attributes = {});

}  // namespace sharc::autodiff

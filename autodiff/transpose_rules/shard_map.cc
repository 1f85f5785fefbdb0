// Transpose rules of shard_map and its named-axis collectives. In a checked
// body (device variance typed, the default) each collective transposes to
// its partner in hlo/ops/named_collectives.h: psum <-> pbroadcast,
// all_gather <-> psum_scatter, all_gather_invariant <-> pscatter, all_to_all
// to itself with split and concat swapped, ppermute to itself with the
// pairs inverted. Transposing twice gives back the original op.
//
// In an unchecked body (check_variance=false) values carry no variance, so
// each device's body is transposed as a function of that device's own
// values (shard_map_transpose.h): psum -> psum, pbroadcast (a no-op there)
// -> nothing, all_gather_invariant -> psum_scatter, and pscatter -> this
// device's block put back in place among zeros.
#include <utility>

#include "autodiff/shard_map_region.h"
#include "autodiff/shard_map_transpose.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/named_collectives.h"

namespace sharc::autodiff {
namespace {

std::vector<Cotangent> One(Instruction* ct) { return {Cotangent::Of(ct)}; }

// The transpose of an unchecked pscatter on one device: zeros of the
// operand's shape with the cotangent at this device's block.
Instruction* PlaceBlock(Emitter& e, const Instruction& inst, Instruction* block) {
  const Shape& whole = inst.operand(0)->shape();
  const int64_t d = inst.attr_int("dimension");
  Instruction* piece = block;
  if (!inst.attr_bool("tiled")) {
    std::vector<int64_t> dims = block->shape().dims();
    dims.insert(dims.begin() + d, 1);
    piece = Reshape(e, block, dims);
  }
  Instruction* position = EmitCollective(e, Opcode::kAxisIndex, Shape::Scalar(PrimitiveType::kS32),
                                         nullptr, inst.attr_string("axes"));
  Instruction* start = Mul(
      e, position, ScalarOf(e, PrimitiveType::kS32, static_cast<double>(piece->shape().dim(d))));
  std::vector<Instruction*> operands = {Zeros(e, whole), piece};
  for (int64_t k = 0; k < whole.rank(); ++k) {
    operands.push_back(k == d ? start : ScalarOf(e, PrimitiveType::kS32, 0));
  }
  return e.Add(Opcode::kDynamicUpdateSlice, whole, std::move(operands));
}

absl::StatusOr<std::vector<Cotangent>> TransposeCollective(const Instruction& inst,
                                                           const Cotangent& ct,
                                                           TransposeContext& ctx) {
  const hlo::NamedCollectiveInfo* info = hlo::FindNamedCollective(inst.opcode());
  Emitter& e = ctx.emitter();
  Opcode partner = *info->transpose;
  if (!InCheckedBody(inst)) {
    switch (inst.opcode()) {
      case Opcode::kPSum:
        partner = Opcode::kPSum;
        break;
      case Opcode::kPBroadcast:
        return One(ct.value);
      case Opcode::kNamedAllGatherInvariant:
        partner = Opcode::kPSumScatter;
        break;
      case Opcode::kPScatter:
        return One(PlaceBlock(e, inst, ct.value));
      default:
        break;
    }
  }
  std::vector<hlo::Attribute> attributes = inst.attributes();
  for (hlo::Attribute& a : attributes) {
    if (inst.opcode() == Opcode::kNamedAllToAll) {
      if (a.name == "split_dimension") {
        a.value = inst.attr_int("concat_dimension");
      } else if (a.name == "concat_dimension") {
        a.value = inst.attr_int("split_dimension");
      }
    } else if (inst.opcode() == Opcode::kPPermute && a.name == "pairs") {
      hlo::IntListList inverse;
      for (const std::vector<int64_t>& pair : inst.attr_int_lists("pairs")) {
        inverse.push_back({pair[1], pair[0]});
      }
      a.value = std::move(inverse);
    }
  }
  return One(e.Add(partner, inst.operand(0)->shape(), {ct.value}, std::move(attributes)));
}

}  // namespace

void RegisterShardMapTransposeRules(TransposeRuleRegistry& r) {
  for (Opcode op : {Opcode::kPSum, Opcode::kPBroadcast, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kPSumScatter, Opcode::kPScatter,
                    Opcode::kNamedAllToAll, Opcode::kPPermute}) {
    r.Register(op, TransposeCollective);
  }
  for (Opcode op : {Opcode::kPMax, Opcode::kPMin}) {
    r.RegisterUnsupported(op,
                          "it is not linear (it selects the extreme value rather than adding); its "
                          "derivative is linear and transposes, so differentiate it instead");
  }
  r.RegisterNotLinear(Opcode::kAxisIndex);
  r.Register(Opcode::kShardMap, TransposeShardMap);
}

}  // namespace sharc::autodiff

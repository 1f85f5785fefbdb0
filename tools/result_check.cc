#include "tools/result_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/ops/collective_groups.h"
#include "hlo/ops/convolution_dims.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_def.h"
#include "spmd/cost_model.h"
#include "tools/per_device_reference.h"

namespace sharc::tools {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

// A value of a manual region: manual, or manual in some tile dims.
bool InManualRegion(const Instruction& inst) {
  if (!inst.has_sharding()) return false;
  for (const hlo::Sharding& leaf : inst.sharding()->LeavesFor(inst.shape())) {
    if (leaf.IsManual() || leaf.HasManualSubgroup()) return true;
  }
  return false;
}

// A complex array [d...] as the array [d..., 2] of its parts (the same bytes).
hlo::Literal ComplexParts(const hlo::Literal& complex) {
  std::vector<int64_t> dims = complex.shape().dims();
  dims.push_back(2);
  const hlo::PrimitiveType part = complex.shape().type() == hlo::PrimitiveType::kC64
                                      ? hlo::PrimitiveType::kF32
                                      : hlo::PrimitiveType::kF64;
  hlo::Literal parts(hlo::Shape(part, dims));
  std::memcpy(parts.untyped_data(), complex.untyped_data(),
              static_cast<size_t>(complex.size_bytes()));
  return parts;
}

}  // namespace

namespace {

// Calls `visit` on each collective and partition-id of the program itself:
// in the entry and the bodies it calls (not shard_map bodies, which the
// interpreter runs per mesh device), outside manual regions (whose
// collectives the per-device reference runs as written), and not one each
// device runs alone (an all-reduce over the one replica of a partitioned
// program is the identity in every run). Stops at the first error.
template <typename Visit>
absl::Status ForEachProgramCollective(const hlo::Module& module, Visit visit) {
  const bool regions = HasManualRegions(module);
  const int64_t devices = module.config().num_partitions * module.config().replica_count;
  std::vector<const hlo::Computation*> stack{module.entry()};
  absl::flat_hash_set<const hlo::Computation*> seen;
  while (!stack.empty()) {
    const hlo::Computation* comp = stack.back();
    stack.pop_back();
    if (comp == nullptr || !seen.insert(comp).second) continue;
    for (const Instruction* inst : comp->instructions()) {
      // The op table says which ops are collectives.
      const bool collective = inst->opcode() == Opcode::kPartitionId ||
                              (hlo::HasOpDef(inst->opcode()) &&
                               hlo::GetOpDef(inst->opcode()).traits.collective);
      const bool alone = collective && inst->opcode() != Opcode::kPartitionId &&
                         hlo::IsSingletonCollective(*inst, devices);
      if (collective && !alone && !(regions && InManualRegion(*inst))) {
        RETURN_IF_ERROR(visit(*inst));
      }
      const Opcode op = inst->opcode();
      if (op == Opcode::kCall || op == Opcode::kWhile || op == Opcode::kConditional) {
        for (const hlo::Computation* c : inst->called_computations()) stack.push_back(c);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status HasGlobalReference(const hlo::Module& module) {
  // A collective of the program runs, in both the partitioned run and the
  // per-device reference, on every device's copy of its operands. Only
  // partition-id has no reference: its value is the device's, which no
  // sharding of the program decides.
  return ForEachProgramCollective(module, [](const Instruction& inst) -> absl::Status {
    if (inst.opcode() != Opcode::kPartitionId) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: --check has no global reference for %", inst.name(),
        " (partition-id): the global program runs it on one device; run without --check"));
  });
}

bool NeedsPerDeviceReference(const hlo::Module& module) {
  if (HasManualRegions(module)) return true;
  bool any = false;
  ForEachProgramCollective(module, [&](const Instruction&) {
    any = true;
    return absl::OkStatus();
  }).IgnoreError();
  return any;
}

int64_t DefaultRunDevices(const hlo::Module& module) {
  const int64_t declared = module.config().num_partitions * module.config().replica_count;
  if (declared <= 1) return 1;
  bool spans = false;
  ForEachProgramCollective(module, [&](const Instruction& inst) {
    spans = spans || inst.opcode() != Opcode::kPartitionId;
    return absl::OkStatus();
  }).IgnoreError();
  return spans ? declared : 1;
}

bool InterpreterReferenceIsSlow(const hlo::Module& module) {
  // About a second of the interpreter's work on this machine's dots and
  // convolutions, which run far slower than compiled kernels.
  constexpr double kBudget = 2e8;
  double work = 0;
  for (const hlo::Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (!spmd::HasCostFunction(inst->opcode())) continue;
      const spmd::OpCost cost = spmd::CostOf(*inst);
      work += cost.flops + cost.bytes_accessed;
    }
  }
  return work > kBudget;
}

int64_t LongestReduction(const hlo::Module& module) {
  int64_t longest = 1;
  for (const hlo::Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      int64_t terms = 1;
      if (inst->opcode() == Opcode::kDot) {
        for (int64_t d : inst->attr_ints("lhs_contracting_dims"))
          terms *= inst->operand(0)->shape().dim(d);
      } else if (inst->opcode() == Opcode::kReduce) {
        for (int64_t d : inst->attr_ints("dimensions")) terms *= inst->operand(0)->shape().dim(d);
      } else if (inst->opcode() == Opcode::kConvolution) {
        // Each output sums the kernel window times its group's input features.
        absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(*inst);
        if (cd.ok()) {
          const hlo::Shape& kernel = inst->operand(1)->shape();
          terms = kernel.dim(cd->rhs_input_feature);
          for (int64_t d : cd->rhs_spatial) terms *= kernel.dim(d);
        }
      } else if (inst->opcode() == Opcode::kReduceWindow) {
        for (const auto& dim : inst->attr_int_lists("window"))
          if (!dim.empty()) terms *= dim[0];
      }
      longest = std::max(longest, terms);
    }
  }
  return longest;
}

CheckTolerance ToleranceFor(PrimitiveType type, int64_t reduction_length, int64_t devices) {
  // Per type: several units of the type's rounding (a partial result and
  // each addition of the all-reduce round once more); f32 keeps the 1e-4
  // that --check has always allowed it.
  double relative = 0;
  switch (type) {
    case PrimitiveType::kF64:
      relative = 1e-9;
      break;
    case PrimitiveType::kF32:
      relative = 1e-4;
      break;
    case PrimitiveType::kF16:
      relative = 8 * std::ldexp(1.0, -11);  // 11 significant bits: 3.9e-3
      break;
    case PrimitiveType::kBF16:
      relative = 8 * std::ldexp(1.0, -8);  // 8 significant bits: 3.1e-2
      break;
    default:
      // The 8- and 4-bit floats: two units of their last place (one more
      // rounding than the global program, where a partial result rounds).
      if (!hlo::IsNarrowFloat(type)) return CheckTolerance{0};
      relative = 2 * std::ldexp(1.0, 1 - hlo::NarrowFloatSignificandBits(type));
  }
  // Rounding errors of a long sum grow like the square root of its length
  // (random signs); the per-type figures cover sums of up to 1024 terms.
  const double length = static_cast<double>(std::max<int64_t>(reduction_length, 1));
  relative *= std::max(1.0, std::sqrt(length / 1024.0));
  // A reduction split over the devices adds their partial results in the
  // element type: one rounding per device at the magnitude of the running
  // sum, where the global program accumulates in f32 and rounds once. In
  // bf16 those roundings grow like the square root of the device count, and
  // with cancellation the running sum can be several times the result
  // (XLA's DefaultMaxWindowedEinsumIteration modules on 64 devices: a bf16
  // reduce-scatter of 64 partial sums reaching 6.3 for a result of 0.39,
  // off by 0.15 in exactly the order the adds take). The per-type figures
  // cover 8 devices; f32 and f64 keep theirs, hundreds of units wide. A
  // module without reductions splits none.
  if (type != PrimitiveType::kF32 && type != PrimitiveType::kF64 && reduction_length > 1) {
    relative *= std::max(1.0, std::sqrt(static_cast<double>(devices) / 8.0));
  }
  return CheckTolerance{relative};
}

std::string FirstMismatch(const hlo::Literal& got, const hlo::Literal& want,
                          const std::string& where, int64_t reduction_length, double& max_diff,
                          int64_t devices) {
  if (got.shape() != want.shape()) {
    return absl::StrCat(where, ": shape ", got.shape().ToString(), " vs ", want.shape().ToString());
  }
  if (!got.is_tuple() && hlo::IsComplex(got.shape().type())) {
    // Each part to its float type's tolerance.
    return FirstMismatch(ComplexParts(got), ComplexParts(want),
                         absl::StrCat(where, " (as [real, imag] pairs)"), reduction_length,
                         max_diff, devices);
  }
  if (got.is_tuple()) {
    for (size_t i = 0; i < got.elements().size(); ++i) {
      std::string m = FirstMismatch(got.elements()[i], want.elements()[i],
                                    absl::StrCat(where, "{", i, "}"), reduction_length, max_diff,
                                    devices);
      if (!m.empty()) return m;
    }
    return "";
  }
  if (got.shape().type() == hlo::PrimitiveType::kToken) return "";  // no data
  const bool is_float = hlo::IsFloatingPoint(got.shape().type());
  const CheckTolerance tol = ToleranceFor(got.shape().type(), reduction_length, devices);
  double scale = 0;
  if (is_float) {
    int64_t finite = 0;
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      double b = want.GetAsDouble(i);
      if (std::isfinite(b)) {
        scale += std::fabs(b);
        ++finite;
      }
    }
    // A leaf of zeros still allows the 1e-5 (f32) of rounding noise.
    scale = std::max(finite > 0 ? scale / static_cast<double>(finite) : 0.0, 0.1);
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.GetAsDouble(i), b = want.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    double diff = std::fabs(a - b);
    if (!std::isnan(diff)) max_diff = std::max(max_diff, diff);
    // An infinity matches only itself: the relative bound of an infinite
    // value is infinite and would take any value, or the other sign.
    bool ok = is_float ? (a == b || (std::isfinite(a) && std::isfinite(b) &&
                                     diff <= tol.relative * (std::fabs(b) + scale)))
                       : a == b;
    if (!ok) {
      return absl::StrCat(where, " element ", i, ": partitioned ", a, ", global ", b);
    }
  }
  return "";
}

}  // namespace sharc::tools

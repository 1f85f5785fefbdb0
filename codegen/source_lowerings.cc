// Halide lowerings of the source ops that a kernel can compute itself:
// constants (scalars become immediates, arrays are embedded in the kernel)
// and iota.
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

// A scalar literal as a Halide immediate of its storage type.
Expr ScalarImmediate(const hlo::Literal& literal) {
  const hlo::PrimitiveType t = literal.shape().type();
  const uint8_t* p = literal.untyped_data();
  return hlo::DispatchPrimitiveType(t, [&](auto tag) -> Expr {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      return Halide::cast(Halide::Bool(), Expr(v ? 1 : 0));
    } else if constexpr (hlo::kIsLowPrecisionFloat<T>) {
      // The 16-bit pattern, reinterpreted: exact for NaN payloads too.
      return Halide::reinterpret(StorageType(t), make_const(Halide::UInt(16), v.bits));
    } else if constexpr (std::is_floating_point_v<T>) {
      return make_const(StorageType(t), static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      return make_const(Halide::UInt(64), v);
    } else {
      return make_const(StorageType(t), static_cast<int64_t>(v));
    }
  });
}

// INT64_MIN as an immediate is loaded from a one-element buffer instead:
// Halide's simplifier turned max(acc, select(c, x, INT64_MIN)) into
// max(acc, 1) (a reduce or scatter under maximum over such a select came
// out wrong; ReduceLoweringTest.Int64MinInASelectUnderMax). A load is opaque to
// that rewrite.
bool IsInt64Min(const hlo::Literal& literal) {
  if (literal.shape().type() != hlo::PrimitiveType::kS64 || literal.shape().num_elements() != 1) {
    return false;
  }
  int64_t v;
  std::memcpy(&v, literal.untyped_data(), sizeof(v));
  return v == std::numeric_limits<int64_t>::min();
}

absl::StatusOr<Lowered> LowerConstant(const hlo::Instruction& inst,
                                      absl::Span<const LoweredValue>) {
  const hlo::Literal& literal = inst.literal();
  if (!literal.shape().is_array()) return LoweringError(inst, "tuple constants are not kernels");
  std::vector<Halide::Var> vars = HloVars(literal.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("constant", inst));
  if (literal.shape().rank() == 0 && !IsInt64Min(literal)) {
    Define(out.func, vars, ScalarImmediate(literal));
    return out;
  }
  if (literal.shape().num_elements() == 0) {
    Define(out.func, vars, make_zero(StorageType(literal.shape().type())));
    return out;
  }
  // Halide buffers list the innermost dim first.
  std::vector<int> extents;
  for (int64_t d = literal.shape().rank(); d-- > 0;) {
    extents.push_back(static_cast<int>(literal.shape().dim(d)));
  }
  Halide::Buffer<> buffer(StorageType(literal.shape().type()), extents,
                          HalideName("constant_data", inst));
  std::memcpy(buffer.data(), literal.untyped_data(), static_cast<size_t>(buffer.size_in_bytes()));
  std::vector<Expr> index(vars.rbegin(), vars.rend());
  Define(out.func, vars, buffer(index));
  return out;
}

absl::StatusOr<Lowered> LowerIota(const hlo::Instruction& inst, absl::Span<const LoweredValue>) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const size_t dim = static_cast<size_t>(inst.attr_int("iota_dimension"));
  const hlo::PrimitiveType t = inst.shape().type();
  Expr i = vars[dim];
  Expr value;
  if (t == hlo::PrimitiveType::kF16 || t == hlo::PrimitiveType::kBF16) {
    value = Halide::cast(StorageType(t), Halide::cast(Halide::Float(32), i));
  } else if (t == hlo::PrimitiveType::kPred) {
    value = i != 0;
  } else {
    value = Halide::cast(StorageType(t), i);
  }
  Lowered out;
  out.func = Halide::Func(HalideName("iota", inst));
  Define(out.func, vars, value);
  return out;
}

}  // namespace

void RegisterSourceLowerings(LoweringTable& table) {
  table.Add(hlo::Opcode::kConstant, LowerConstant);
  table.Add(hlo::Opcode::kIota, LowerIota);
  table.MarkCheap({hlo::Opcode::kConstant, hlo::Opcode::kIota});
}

}  // namespace sharc::codegen

// Type mapping between the IR and Halide, and the index helpers every
// lowering uses (see lowering.h for the conventions).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <limits>

#include "absl/strings/str_cat.h"
#include "codegen/host_target.h"
#include "codegen/lowering.h"

namespace sharc::codegen {

using hlo::PrimitiveType;

Halide::Type StorageType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: return Halide::Bool();
    case PrimitiveType::kS8: return Halide::Int(8);
    case PrimitiveType::kS16: return Halide::Int(16);
    case PrimitiveType::kS32: return Halide::Int(32);
    case PrimitiveType::kS64: return Halide::Int(64);
    case PrimitiveType::kU8: return Halide::UInt(8);
    case PrimitiveType::kU16: return Halide::UInt(16);
    case PrimitiveType::kU32: return Halide::UInt(32);
    case PrimitiveType::kU64: return Halide::UInt(64);
    case PrimitiveType::kF16: return Halide::Float(16);
    case PrimitiveType::kBF16: return Halide::BFloat(16);
    case PrimitiveType::kF32: return Halide::Float(32);
    case PrimitiveType::kF64: return Halide::Float(64);
    default: break;  // no storage: modules holding these never reach codegen
  }
  return Halide::Type();
}

Halide::Type ComputeType(PrimitiveType type) {
  if (type == PrimitiveType::kF16 || type == PrimitiveType::kBF16) return Halide::Float(32);
  return StorageType(type);
}

Halide::Expr ToCompute(const Halide::Expr& e, PrimitiveType type) {
  Halide::Type t = ComputeType(type);
  return e.type() == t ? e : Halide::cast(t, e);
}

Halide::Expr ToStorage(const Halide::Expr& e, PrimitiveType type) {
  Halide::Type t = StorageType(type);
  if (e.type() == t) return e;
  if ((type == PrimitiveType::kF16 || type == PrimitiveType::kBF16) && e.type().is_float()) {
    // Halide 14's f32 -> f16 conversion turns NaN into infinity, and its
    // f32 -> bf16 conversion rounds by adding to the bits, which carries a
    // NaN payload's low half into the exponent or the sign (0x7fffffff
    // became -0, 0x7f800001 infinity).
    const uint16_t quiet_nan_bits = type == PrimitiveType::kF16 ? 0x7e00 : 0x7fc0;
    Halide::Expr quiet_nan = Halide::reinterpret(t, make_const(Halide::UInt(16), quiet_nan_bits));
    return Halide::select(Halide::is_nan(e), quiet_nan, Halide::cast(t, e));
  }
  return Halide::cast(t, e);
}

std::vector<Halide::Var> HloVars(int64_t rank) {
  std::vector<Halide::Var> vars;
  for (int64_t d = 0; d < rank; ++d) vars.emplace_back(absl::StrCat("d", d));
  return vars;
}

std::vector<Halide::Expr> AsExprs(const std::vector<Halide::Var>& vars) {
  return std::vector<Halide::Expr>(vars.begin(), vars.end());
}

Halide::Expr Call(const Halide::Func& f, const std::vector<Halide::Expr>& index) {
  std::vector<Halide::Expr> reversed(index.rbegin(), index.rend());
  return Halide::Func(f)(reversed);
}

void Define(Halide::Func& f, const std::vector<Halide::Var>& vars, const Halide::Expr& value) {
  std::vector<Halide::Var> reversed(vars.rbegin(), vars.rend());
  f(reversed) = value;
}

Halide::Target KernelTarget() {
  Halide::Target t(HostTargetName());
  // Without StrictFloat Halide lets LLVM assume there are no NaNs or
  // infinities; comparisons, maximum and is-finite must see them. FMA
  // contraction, which StrictFloat also forbids, is given back per
  // instruction when the object is written (object_writer.h).
  return t.with_feature(Halide::Target::NoRuntime)
      .with_feature(Halide::Target::NoAsserts)
      .with_feature(Halide::Target::NoBoundsQuery)
      .with_feature(Halide::Target::StrictFloat);
}

int NativeLanes(const Halide::Type& type) {
  static const Halide::Target target = KernelTarget();
  return target.natural_vector_size(type);
}

int NativeVectorRegisters() {
  static const bool avx512 = KernelTarget().has_feature(Halide::Target::AVX512);
  return avx512 ? 32 : 16;
}

int VectorLanes(hlo::PrimitiveType type) {
  return NativeLanes(Halide::UInt(8)) / std::max(1, static_cast<int>(hlo::ByteWidth(type)));
}

Halide::Expr ClampIndex(const Halide::Expr& i, int64_t extent) {
  if (extent <= 1) return Halide::Expr(0);
  return Halide::clamp(i, 0, static_cast<int>(extent - 1));
}

absl::Status CheckIndexable(const hlo::Instruction& inst) {
  auto fits = [](const hlo::Shape& s) {
    if (!s.is_array()) return true;
    return s.num_elements() < std::numeric_limits<int32_t>::max();
  };
  bool ok = fits(inst.shape());
  for (const hlo::Instruction* op : inst.operands()) ok = ok && fits(op->shape());
  if (ok) return absl::OkStatus();
  return LoweringError(inst, "has more than 2^31 elements in one array, beyond Halide's 32-bit indexing");
}

std::string HalideName(const std::string& prefix, const hlo::Instruction& inst) {
  static std::atomic<int64_t> counter{0};
  std::string name = absl::StrCat(prefix, "_", inst.name());
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return absl::StrCat(name, "_", counter++);
}

absl::Status LoweringError(const hlo::Instruction& inst, const std::string& message) {
  return absl::UnimplementedError(
      absl::StrCat("Halide backend: ", message, ", in ", inst.Describe()));
}

}  // namespace sharc::codegen

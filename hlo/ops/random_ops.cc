// Random numbers.
//
//   rng(a, b), distribution=rng_uniform   -> T[...] uniform in [a, b)
//   rng(a, b), distribution=rng_normal    -> T[...] normal, mean a, stddev b
//   rng-bit-generator(state), algorithm=rng_default|rng_philox|rng_three_fry
//                                         -> (state', uN[...])
//   rng-get-and-update-state(), delta=N   -> u64[2]
//
// XLA leaves rng's bits to the backend. sharc's are deterministic: a stream
// seeded from the instruction's name, so every device of a partitioned run
// (which evaluates the whole value and takes its shard: the sharding rule is
// replicated) and the global program draw the same numbers, and each
// evaluation of one instruction (in a loop too) repeats them.
// rng-bit-generator's output is defined bit for bit by its algorithm, and
// sharc's are XLA's (random_bit_algorithms.h; rng_default is Philox, as on
// XLA's CPU and GPU). rng-get-and-update-state reads a state the backend
// keeps: it is read, verified and partitioned, and refuses to run
// (OpDef::cannot_run) rather than return other bits.
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/random_bit_algorithms.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferRng(const Instruction& inst) {
  const Shape& out = inst.shape();
  if (!out.is_array()) return OpError(inst, "needs its (array) result shape written");
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& bound = inst.operand(i)->shape();
    if (bound != Shape::Scalar(out.type())) {
      return OpError(inst, "operand ", i, " must be ", PrimitiveTypeName(out.type()),
                     "[] (the result's type), got ", bound.ToString());
    }
  }
  const std::string& distribution = inst.attr_string("distribution");
  if (distribution == "rng_uniform") {
    if (out.type() == PrimitiveType::kPred) return OpError(inst, "cannot draw pred values");
  } else if (distribution == "rng_normal") {
    if (!IsFloatingPoint(out.type())) {
      return OpError(inst, "draws normal values of floating-point types only, not ",
                     PrimitiveTypeName(out.type()));
    }
  } else {
    return OpError(inst, "has distribution=", distribution,
                   "; expected rng_uniform or rng_normal");
  }
  return out;
}

absl::StatusOr<Literal> EvaluateRng(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferRng(inst));
  std::mt19937_64 engine(std::hash<std::string>{}(inst.name()));
  Literal out(shape);
  const bool normal = inst.attr_string("distribution") == "rng_normal";
  if (IsFloatingPoint(shape.type())) {
    const double a = operands[0]->GetAsDouble(0);
    const double b = operands[1]->GetAsDouble(0);
    if (normal) {
      std::normal_distribution<double> dist(a, b);
      for (int64_t i = 0; i < out.num_elements(); ++i) out.SetFromDouble(i, dist(engine));
      return out;
    }
    if (!(a < b)) return OpError(inst, "needs a < b for a uniform draw, got [", a, ", ", b, ")");
    std::uniform_real_distribution<double> dist(a, b);
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      out.SetFromDouble(i, dist(engine));
      // Rounding to a narrow type may reach b; [a, b) excludes it.
      if (!(out.GetAsDouble(i) < b)) out.SetFromDouble(i, a);
    }
    return out;
  }
  const int64_t a = operands[0]->GetAsInt64(0);
  const int64_t b = operands[1]->GetAsInt64(0);
  if (!(a < b)) return OpError(inst, "needs a < b for a uniform draw, got [", a, ", ", b, ")");
  std::uniform_int_distribution<int64_t> dist(a, b - 1);
  for (int64_t i = 0; i < out.num_elements(); ++i) out.SetFromInt64(i, dist(engine));
  return out;
}

absl::StatusOr<Shape> InferRngBitGenerator(const Instruction& inst) {
  const Shape& state = inst.operand(0)->shape();
  if (!state.is_array() || state.rank() != 1 || state.type() != PrimitiveType::kU64) {
    return OpError(inst, "state must be u64[n], got ", state.ToString());
  }
  const std::string& algorithm = inst.attr_string("algorithm");
  if (algorithm != "rng_default" && algorithm != "rng_philox" && algorithm != "rng_three_fry") {
    return OpError(inst, "has algorithm=", algorithm,
                   "; expected rng_default, rng_philox or rng_three_fry");
  }
  // XLA writes (state', bits) and, in some tests, the bits alone.
  const Shape& out = inst.shape();
  const bool tuple = out.is_tuple() && out.tuple_size() == 2 && out.tuple_shape(0) == state &&
                     out.tuple_shape(1).is_array() && IsInteger(out.tuple_shape(1).type());
  const bool bits = out.is_array() && IsInteger(out.type());
  if (!tuple && !bits) {
    return OpError(inst, "must return (", state.ToString(), ", uN[...]) or uN[...], declares ",
                   out.ToString());
  }
  return out;
}

absl::StatusOr<Literal> EvaluateRngBitGenerator(const Instruction& inst,
                                                absl::Span<const Literal* const> operands,
                                                EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferRngBitGenerator(inst));
  const Literal& state = *operands[0];
  std::vector<uint64_t> words(static_cast<size_t>(state.num_elements()));
  for (int64_t i = 0; i < state.num_elements(); ++i) {
    words[static_cast<size_t>(i)] = static_cast<uint64_t>(state.GetAsInt64(i));
  }
  const Shape& bits_shape = shape.is_tuple() ? shape.tuple_shape(1) : shape;
  const BitAlgorithm algorithm = inst.attr_string("algorithm") == "rng_three_fry"
                                     ? BitAlgorithm::kThreeFry
                                     : BitAlgorithm::kPhilox;
  const int width = ByteWidth(bits_shape.type());
  absl::StatusOr<GeneratedBits> drawn =
      GenerateBits(algorithm, words, bits_shape.dims(), 8 * width);
  if (!drawn.ok()) return OpError(inst, drawn.status().message());
  Literal bits(bits_shape);
  for (size_t i = 0; i < drawn->bits.size(); ++i) {
    if (IsSubByteInteger(bits_shape.type())) {
      // Its own low bits, stored extended (hlo/ir/narrow_types.h).
      bits.SetFromInt64(static_cast<int64_t>(i), static_cast<int64_t>(drawn->bits[i]));
      continue;
    }
    // The low bytes of each word, as the element's bit pattern (signed too).
    std::memcpy(bits.untyped_data() + i * static_cast<size_t>(width), &drawn->bits[i],
                static_cast<size_t>(width));
  }
  if (!shape.is_tuple()) return bits;
  Literal next(state.shape());
  for (size_t i = 0; i < drawn->state.size(); ++i) {
    next.SetFromInt64(static_cast<int64_t>(i), static_cast<int64_t>(drawn->state[i]));
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(next));
  elements.push_back(std::move(bits));
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferRngGetAndUpdateState(const Instruction& inst) {
  if (inst.attr_int("delta", 0) < 0) return OpError(inst, "needs delta >= 0");
  return Shape(PrimitiveType::kU64, {2});
}

}  // namespace

void RegisterRandomOps(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kRng;
    def.min_operands = 2;
    def.max_operands = 2;
    def.attributes = {{"distribution", AttrKind::kEnum, /*required=*/true}};
    def.infer_shape = InferRng;
    def.evaluate = EvaluateRng;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kRngBitGenerator;
    def.min_operands = 1;
    def.max_operands = 1;
    def.attributes = {{"algorithm", AttrKind::kEnum, /*required=*/true}};
    def.infer_shape = InferRngBitGenerator;
    def.evaluate = EvaluateRngBitGenerator;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kRngGetAndUpdateState;
    def.min_operands = 0;
    def.max_operands = 0;
    def.attributes = {{"delta", AttrKind::kInt, /*required=*/true}};
    def.infer_shape = InferRngGetAndUpdateState;
    def.traits.side_effecting = true;
    def.cannot_run = "it reads and advances a random state XLA's backend keeps, which sharc has not";
    def.evaluate = CannotRunEvaluator();
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

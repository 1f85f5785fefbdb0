// JVP rule of while loops. Forward mode runs the body's JVP in one loop over
// (carry, tangent carry), for any loop. Linearizing needs a static trip count
// (fori_loop.h): the body is linearized once; the primal loop runs its primal
// part and saves each iteration's residuals in buffers [trip_count, ...] at
// the iteration's index (dynamic-update-slice), and a second loop, counting
// 0..trip_count-1, runs the linear part on the tangent carry with that
// iteration's residuals (dynamic-slice). The tangent loop is linear in its
// tangent carry, which is the form the transpose of a while expects.
#include "absl/strings/str_cat.h"
#include "autodiff/fori_loop.h"
#include "autodiff/jvp_rule.h"
#include "autodiff/linearizer.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {
namespace {

std::vector<int64_t> Stacked(int64_t n, const Shape& shape) {
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

// The carry tuple's elements.
std::vector<Instruction*> Elements(Emitter& e, Instruction* tuple, int64_t from, int64_t count) {
  std::vector<Instruction*> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(Gte(e, tuple, from + i));
  return out;
}

// `next` with its integer leaves replaced by those of `previous`.
Instruction* KeepIntegerLeaves(Emitter& e, Instruction* next, Instruction* previous) {
  const Shape& shape = next->shape();
  if (!shape.is_tuple()) return CarriesTangent(shape) ? next : previous;
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    elements.push_back(KeepIntegerLeaves(e, Gte(e, next, i), Gte(e, previous, i)));
  }
  return Tuple(e, std::move(elements));
}

Instruction* Parameter(Emitter& e, const Shape& shape) {
  return e.Add(Instruction::CreateParameter(0, "carry", shape), /*keep_name=*/true);
}

// Forward mode needs no residuals: one loop carries (primal carry, tangent
// carry) and runs the body's JVP, for any trip count.
absl::StatusOr<JvpValue> ForwardWhileJvp(const Instruction& inst, const JvpArgs& args,
                                         JvpContext& ctx) {
  const Computation& body = *inst.attr_computation("body");
  const Computation& cond = *inst.attr_computation("condition");
  Module& module = ModuleOf(ctx.primal());
  const Shape& carry_shape = inst.shape();
  // The joint carry holds the carry's elements, then their tangents (a
  // non-tuple carry counts as one element).
  const bool tuple_carry = carry_shape.is_tuple();
  std::vector<Shape> leaves =
      tuple_carry ? carry_shape.tuple_shapes() : std::vector<Shape>{carry_shape};
  const int64_t m = static_cast<int64_t>(leaves.size());
  auto split = [&](Emitter& e, Instruction* value) {
    return tuple_carry ? Elements(e, value, 0, m) : std::vector<Instruction*>{value};
  };
  auto join = [&](Emitter& e, Instruction* joint, int64_t from) {
    return tuple_carry ? Tuple(e, Elements(e, joint, from, m)) : Gte(e, joint, from);
  };
  std::vector<Shape> joint(leaves);
  joint.insert(joint.end(), leaves.begin(), leaves.end());
  const Shape joint_shape = Shape::Tuple(joint);
  Computation* joint_body = NewComputation(module, body.name() + ".jvp");
  {
    Emitter e(joint_body);
    Instruction* q = Parameter(e, joint_shape);
    Instruction* x = join(e, q, 0);
    Instruction* t = join(e, q, m);
    Linearizer linearizer(e, e, /*split=*/false);
    ASSIGN_OR_RETURN(JvpValue next, linearizer.Run(body, {x}, {t}));
    Instruction* t_next = KeepIntegerLeaves(
        e, next.tangent != nullptr ? next.tangent : Zeros(e, carry_shape), t);
    std::vector<Instruction*> out = split(e, next.primal);
    for (Instruction* leaf : split(e, t_next)) out.push_back(leaf);
    joint_body->set_root(Tuple(e, std::move(out)));
  }
  Computation* joint_cond = NewComputation(module, cond.name() + ".jvp");
  {
    Emitter e(joint_cond);
    Instruction* q = Parameter(e, joint_shape);
    joint_cond->set_root(InlineInto(e, cond, {join(e, q, 0)}));
  }
  Emitter& p = ctx.primal();
  std::vector<Instruction*> init = split(p, args.primals[0]);
  for (Instruction* leaf : split(p, args.TangentOrZeros(ctx, 0))) init.push_back(leaf);
  Instruction* loop = p.Add(Opcode::kWhile, joint_shape, {Tuple(p, std::move(init))},
                            {{"condition", joint_cond}, {"body", joint_body}});
  return JvpValue{join(p, loop, 0), join(p, loop, m)};
}

absl::StatusOr<JvpValue> WhileJvp(const Instruction& inst, const JvpArgs& args,
                                  JvpContext& ctx) {
  if (!ctx.split()) return ForwardWhileJvp(inst, args, ctx);
  ASSIGN_OR_RETURN(ForiLoop loop, MatchForiLoop(inst));
  const Computation& body = *inst.attr_computation("body");
  const Computation& cond = *inst.attr_computation("condition");
  Module& module = ModuleOf(ctx.primal());
  const Shape& carry_shape = inst.shape();
  const int64_t m = carry_shape.tuple_size();
  // Buffers hold at least one entry so that their shapes stay valid.
  const int64_t slots = std::max<int64_t>(loop.trip_count, 1);

  // The body split into its primal part (carry -> (carry..., residuals...))
  // and its linear step ((tangent carry, residuals...) -> tangent carry).
  ASSIGN_OR_RETURN(LinearizedCallee split, ctx.LinearizeCallee(body, {true}));
  const Shape& split_result = split.primal->root()->shape();
  const int64_t r = split.num_residuals;
  std::vector<Shape> residual_shapes;
  for (int64_t j = 0; j < r; ++j) residual_shapes.push_back(split_result.tuple_shape(m + j));

  // The primal body also saves each iteration's residuals at its index.
  std::vector<Shape> primal_carry(carry_shape.tuple_shapes());
  for (const Shape& s : residual_shapes) {
    primal_carry.push_back(Shape(s.type(), Stacked(slots, s)));
  }
  const Shape primal_carry_shape = Shape::Tuple(primal_carry);
  Computation* primal_body = NewComputation(module, body.name() + ".primal");
  {
    Emitter pe(primal_body);
    Instruction* q = Parameter(pe, primal_carry_shape);
    Instruction* out = InlineInto(pe, *split.primal, {Tuple(pe, Elements(pe, q, 0, m))});
    Instruction* counter = Gte(pe, q, loop.counter_index);
    const PrimitiveType counter_type = counter->shape().type();
    Instruction* index = Sub(pe, counter, ScalarOf(pe, counter_type, loop.start));
    std::vector<Instruction*> next = Elements(pe, out, 0, m);
    for (int64_t j = 0; j < r; ++j) {
      const Shape& s = residual_shapes[static_cast<size_t>(j)];
      std::vector<Instruction*> operands = {Gte(pe, q, m + j),
                                            Reshape(pe, Gte(pe, out, m + j), Stacked(1, s))};
      operands.push_back(index);
      for (int64_t d = 0; d < s.rank(); ++d) operands.push_back(ScalarOf(pe, counter_type, 0));
      next.push_back(pe.Add(Opcode::kDynamicUpdateSlice, primal_carry[static_cast<size_t>(m + j)],
                            std::move(operands)));
    }
    primal_body->set_root(Tuple(pe, std::move(next)));
  }

  Computation* primal_cond = NewComputation(module, cond.name() + ".primal");
  {
    Emitter e(primal_cond);
    Instruction* p = Parameter(e, primal_carry_shape);
    primal_cond->set_root(InlineInto(e, cond, {Tuple(e, Elements(e, p, 0, m))}));
  }

  // The primal loop.
  Emitter& p = ctx.primal();
  std::vector<Instruction*> init = Elements(p, args.primals[0], 0, m);
  for (int64_t j = 0; j < r; ++j) init.push_back(Zeros(p, primal_carry[static_cast<size_t>(m + j)]));
  Instruction* loop_out = p.Add(Opcode::kWhile, primal_carry_shape, {Tuple(p, std::move(init))},
                                {{"condition", primal_cond}, {"body", primal_body}});
  JvpValue result;
  result.primal = Tuple(p, Elements(p, loop_out, 0, m));

  // The tangent loop: carry (i, tangent elements..., buffers...).
  std::vector<Shape> tangent_carry = {Shape::Scalar(PrimitiveType::kS32)};
  for (const Shape& s : carry_shape.tuple_shapes()) tangent_carry.push_back(s);
  for (int64_t j = 0; j < r; ++j) tangent_carry.push_back(primal_carry[static_cast<size_t>(m + j)]);
  const Shape tangent_carry_shape = Shape::Tuple(tangent_carry);
  Computation* tangent_body = NewComputation(module, body.name() + ".tangent");
  {
    Emitter e(tangent_body);
    Instruction* tq = Parameter(e, tangent_carry_shape);
    Instruction* i = Gte(e, tq, 0);
    std::vector<Instruction*> step_args = {Tuple(e, Elements(e, tq, 1, m))};
    for (int64_t j = 0; j < r; ++j) {
      const Shape& res_shape = residual_shapes[static_cast<size_t>(j)];
      std::vector<Instruction*> operands = {Gte(e, tq, 1 + m + j), i};
      for (int64_t d = 0; d < res_shape.rank(); ++d) {
        operands.push_back(ScalarOf(e, PrimitiveType::kS32, 0));
      }
      Instruction* slice = e.Add(Opcode::kDynamicSlice,
                                 Shape(res_shape.type(), Stacked(1, res_shape)),
                                 std::move(operands),
                                 {{"dynamic_slice_sizes", Stacked(1, res_shape)}});
      step_args.push_back(Reshape(e, slice, res_shape.dims()));
    }
    Instruction* t_next = InlineInto(e, *split.linear, step_args);
    std::vector<Instruction*> out = {Add(e, i, ScalarOf(e, PrimitiveType::kS32, 1))};
    // Integer carry elements have zero tangents: pass them through
    // unchanged, so the loop's only changing non-linear value is its counter
    // (the form WhileTranspose needs).
    for (int64_t k = 0; k < m; ++k) {
      out.push_back(KeepIntegerLeaves(e, Gte(e, t_next, k), Gte(e, tq, 1 + k)));
    }
    for (int64_t j = 0; j < r; ++j) out.push_back(Gte(e, tq, 1 + m + j));
    tangent_body->set_root(Tuple(e, std::move(out)));
  }
  Computation* tangent_cond = NewComputation(module, cond.name() + ".tangent");
  {
    Emitter e(tangent_cond);
    Instruction* tq = Parameter(e, tangent_carry_shape);
    tangent_cond->set_root(
        Cmp(e, Gte(e, tq, 0), ScalarOf(e, PrimitiveType::kS32, loop.trip_count), "LT"));
  }
  Emitter& t = ctx.tangent();
  std::vector<Instruction*> tangent_init = {ScalarOf(t, PrimitiveType::kS32, 0)};
  for (Instruction* x : Elements(t, args.TangentOrZeros(ctx, 0), 0, m)) tangent_init.push_back(x);
  for (int64_t j = 0; j < r; ++j) tangent_init.push_back(ctx.Residual(Gte(p, loop_out, m + j)));
  Instruction* tangent_out =
      t.Add(Opcode::kWhile, tangent_carry_shape, {Tuple(t, std::move(tangent_init))},
            {{"condition", tangent_cond}, {"body", tangent_body}});
  result.tangent = Tuple(t, Elements(t, tangent_out, 1, m));
  return result;
}

}  // namespace

void RegisterWhileJvpRule(JvpRuleRegistry& r) {
  r.RegisterPrimalAndTangent(Opcode::kWhile, WhileJvp);
}

}  // namespace sharc::autodiff

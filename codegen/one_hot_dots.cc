#include "codegen/one_hot_dots.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/batching/batch_util.h"
#include "hlo/batching/emitter.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::codegen {
namespace {

using hlo::Emitter;
using hlo::Instruction;
using hlo::IntList;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

// A one-hot: element [t..., v, t...] is 1 where ids[t...] == v, else 0.
struct OneHot {
  Instruction* ids = nullptr;
  int64_t class_dim = 0;
  int64_t classes = 0;
  std::vector<int64_t> token_dims;  // the one-hot's other dims, in order
};

// A lookup of one row is exact in every float type (the dot's one non-zero
// term, rounded to the type it already has); a sum of rows is only in the
// types a dot accumulates in, since a scatter rounds after every addition.
bool GathersExactly(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kBF16 ||
         t == PrimitiveType::kF16;
}
bool ScattersExactly(PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; }

std::optional<OneHot> MatchOneHot(const Instruction& h) {
  if (h.opcode() != Opcode::kConvert || !h.shape().is_array() || !GathersExactly(h.shape().type())) {
    return std::nullopt;
  }
  const Instruction& cmp = *h.operand(0);
  if (cmp.opcode() != Opcode::kCompare || cmp.attr_string("direction") != "EQ") return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Instruction& iota = *cmp.operand(side);
    const Instruction& bcast = *cmp.operand(1 - side);
    if (iota.opcode() != Opcode::kIota || bcast.opcode() != Opcode::kBroadcast ||
        !hlo::IsInteger(iota.shape().type())) {
      continue;
    }
    OneHot o;
    o.class_dim = iota.attr_int("iota_dimension");
    o.classes = h.shape().dim(o.class_dim);
    for (int64_t d = 0; d < h.shape().rank(); ++d) {
      if (d != o.class_dim) o.token_dims.push_back(d);
    }
    if (bcast.attr_ints("dimensions") != IntList(o.token_dims.begin(), o.token_dims.end())) continue;
    o.ids = bcast.operand(0);
    if (o.ids->shape().type() != iota.shape().type()) continue;
    // An iota too narrow for its classes wraps, and its one-hot selects
    // several rows; the lookup would take one.
    const int64_t bits = 8 * hlo::ByteWidth(iota.shape().type());
    const int64_t value_bits = hlo::IsSignedInteger(iota.shape().type()) ? bits - 1 : bits;
    if (o.classes < 1 || (value_bits < 63 && o.classes - 1 > (int64_t{1} << value_bits) - 1)) continue;
    return o;
  }
  return std::nullopt;
}

std::vector<int64_t> FreeDims(int64_t rank, const IntList& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end()) free.push_back(d);
  }
  return free;
}

// A scalar of `type` holding `value` (a double, so NaN too) broadcast to
// `dims`.
Instruction* Splat(Emitter& e, PrimitiveType type, double value, const std::vector<int64_t>& dims) {
  hlo::Literal literal(Shape::Scalar(type));
  if (hlo::IsFloatingPoint(type)) {
    literal.SetFromDouble(0, value);
  } else {
    literal.SetFromInt64(0, static_cast<int64_t>(value));
  }
  Instruction* scalar = e.Add(Instruction::CreateConstant("constant", std::move(literal)));
  return hlo::Broadcast(e, scalar, Shape(type, dims), {});
}

// An elementwise op of `type` over operands of one shape.
Instruction* Elementwise(Emitter& e, Opcode op, PrimitiveType type, std::vector<Instruction*> operands) {
  Shape shape(type, operands.back()->shape().dims());
  return e.Add(op, std::move(shape), std::move(operands));
}

// s32 1 where `x` is inf or NaN, else 0.
Instruction* NonFiniteCount(Emitter& e, Instruction* x) {
  Instruction* finite = Elementwise(e, Opcode::kIsFinite, PrimitiveType::kPred, {x});
  Instruction* bad = Elementwise(e, Opcode::kNot, PrimitiveType::kPred, {finite});
  return Elementwise(e, Opcode::kConvert, PrimitiveType::kS32, {bad});
}

// NaN where `poison` (s32 counts of non-finite terms outside the selected
// one) is positive, else `value`.
Instruction* PoisonedByNonFinite(Emitter& e, Instruction* value, Instruction* poison) {
  const PrimitiveType t = value->shape().type();
  Instruction* zero = Splat(e, PrimitiveType::kS32, 0, poison->shape().dims());
  Instruction* nan = Splat(e, t, std::numeric_limits<double>::quiet_NaN(), value->shape().dims());
  return Elementwise(e, Opcode::kSelect, t, {hlo::Compare(e, poison, zero, "GT"), nan, value});
}

// ids as gather or scatter indices: [ids..., 1].
Instruction* IndexVectors(Emitter& e, Instruction* ids) {
  std::vector<int64_t> dims = ids->shape().dims();
  dims.push_back(1);
  return e.Add(Opcode::kReshape, Shape(ids->shape().type(), dims), {ids});
}

// dot(one_hot, E) contracting the class dim with one dim of E: E's rows at
// ids. Returns the value standing for the dot, or nullptr.
Instruction* AsGather(Emitter& e, Instruction* dot, int h_side, const OneHot& o) {
  const IntList& hc = dot->attr_ints(h_side == 0 ? "lhs_contracting_dims" : "rhs_contracting_dims");
  const IntList& ec = dot->attr_ints(h_side == 0 ? "rhs_contracting_dims" : "lhs_contracting_dims");
  if (hc != IntList{o.class_dim} || ec.size() != 1) return nullptr;
  Instruction* table = dot->operand(1 - h_side);
  const Shape& es = table->shape();
  const PrimitiveType t = dot->shape().type();
  if (es.type() != t || es.dim(ec[0]) != o.classes) return nullptr;
  const int64_t row_dim = ec[0], tokens = static_cast<int64_t>(o.token_dims.size());
  const std::vector<int64_t> width_dims = FreeDims(es.rank(), ec);

  // [token dims..., E's other dims...]
  std::vector<int64_t> out_dims = o.ids->shape().dims();
  IntList offset_dims, slice_sizes;
  for (size_t i = 0; i < width_dims.size(); ++i) {
    out_dims.push_back(es.dim(width_dims[i]));
    offset_dims.push_back(tokens + static_cast<int64_t>(i));
  }
  for (int64_t d = 0; d < es.rank(); ++d) slice_sizes.push_back(d == row_dim ? 1 : es.dim(d));
  Instruction* rows = e.Add(Opcode::kGather, Shape(t, out_dims), {table, IndexVectors(e, o.ids)},
                            {{"offset_dims", offset_dims},
                             {"collapsed_slice_dims", IntList{row_dim}},
                             {"start_index_map", IntList{row_dim}},
                             {"index_vector_dim", tokens},
                             {"slice_sizes", slice_sizes}});
  // Gather clamps its start indices; the one-hot of an id outside
  // [0, classes) is a row of zeros.
  IntList token_positions, width_positions;
  for (int64_t i = 0; i < tokens; ++i) token_positions.push_back(i);
  for (size_t i = 0; i < width_dims.size(); ++i) width_positions.push_back(tokens + static_cast<int64_t>(i));
  const PrimitiveType id_type = o.ids->shape().type();
  const std::vector<int64_t>& id_dims = o.ids->shape().dims();
  Instruction* low = hlo::Compare(e, o.ids, Splat(e, id_type, 0, id_dims), "GE");
  Instruction* high = hlo::Compare(e, o.ids, Splat(e, id_type, static_cast<double>(o.classes - 1), id_dims), "LE");
  Instruction* in_range = hlo::Broadcast(e, Elementwise(e, Opcode::kAnd, PrimitiveType::kPred, {low, high}),
                                         Shape(PrimitiveType::kPred, out_dims), token_positions);
  // + 0: the dot's sum of a -0 row value and +0 terms is +0.
  Instruction* zeros = Splat(e, t, 0, out_dims);
  Instruction* picked = Elementwise(e, Opcode::kSelect, t,
                                    {in_range, Elementwise(e, Opcode::kAdd, t, {rows, zeros}), zeros});
  // Non-finite values of E's columns outside the selected row make NaN.
  Instruction* column_bad = hlo::Broadcast(e, hlo::ReduceSum(e, NonFiniteCount(e, table), IntList{row_dim}),
                                           Shape(PrimitiveType::kS32, out_dims), width_positions);
  Instruction* selected_bad = Elementwise(e, Opcode::kSelect, PrimitiveType::kS32,
                                          {in_range, NonFiniteCount(e, rows), Splat(e, PrimitiveType::kS32, 0, out_dims)});
  Instruction* value = PoisonedByNonFinite(
      e, picked, Elementwise(e, Opcode::kSubtract, PrimitiveType::kS32, {column_bad, selected_bad}));
  if (h_side == 0) return value;
  // dot(E, one_hot): [E's other dims..., token dims...].
  std::vector<int64_t> perm;
  for (size_t i = 0; i < width_dims.size(); ++i) perm.push_back(tokens + static_cast<int64_t>(i));
  for (int64_t i = 0; i < tokens; ++i) perm.push_back(i);
  return hlo::Transpose(e, value, std::move(perm));
}

// dot(G, one_hot) contracting every token dim: G's rows added into the
// rows of their ids. Returns the value standing for the dot, or nullptr.
Instruction* AsScatter(Emitter& e, Instruction* dot, int h_side, const OneHot& o) {
  const IntList& hc = dot->attr_ints(h_side == 0 ? "lhs_contracting_dims" : "rhs_contracting_dims");
  const IntList& gc = dot->attr_ints(h_side == 0 ? "rhs_contracting_dims" : "lhs_contracting_dims");
  std::vector<int64_t> sorted(hc.begin(), hc.end());
  std::sort(sorted.begin(), sorted.end());
  if (sorted != o.token_dims || o.token_dims.empty()) return nullptr;
  Instruction* g = dot->operand(1 - h_side);
  const PrimitiveType t = dot->shape().type();
  if (g->shape().type() != t || !ScattersExactly(t)) return nullptr;
  const int64_t tokens = static_cast<int64_t>(o.token_dims.size());
  // G's dims in the one-hot's token order, then its free dims.
  std::vector<int64_t> perm;
  for (int64_t token_dim : o.token_dims) {
    const auto at = std::find(hc.begin(), hc.end(), token_dim) - hc.begin();
    perm.push_back(gc[static_cast<size_t>(at)]);
  }
  const std::vector<int64_t> g_free = FreeDims(g->shape().rank(), gc);
  perm.insert(perm.end(), g_free.begin(), g_free.end());

  Instruction* updates = hlo::Transpose(e, g, perm);
  std::vector<int64_t> out_dims = {o.classes};
  IntList window_dims, free_positions;
  for (size_t i = 0; i < g_free.size(); ++i) {
    out_dims.push_back(g->shape().dim(g_free[i]));
    window_dims.push_back(tokens + static_cast<int64_t>(i));
    free_positions.push_back(1 + static_cast<int64_t>(i));
  }
  Instruction* indices = IndexVectors(e, o.ids);
  // Scatter skips updates whose id is outside [0, classes), as the one-hot
  // of such an id selects no row.
  auto scatter_add = [&](Instruction* values, PrimitiveType type) {
    hlo::Computation* add = hlo::BinaryReducer(*dot->parent()->parent(), Opcode::kAdd, type);
    return e.Add(Opcode::kScatter, Shape(type, out_dims), {Splat(e, type, 0, out_dims), indices, values},
                 {{"update_window_dims", window_dims},
                  {"inserted_window_dims", IntList{0}},
                  {"scatter_dims_to_operand_dims", IntList{0}},
                  {"index_vector_dim", tokens},
                  {"to_apply", add}});
  };
  Instruction* sums = scatter_add(updates, t);
  // Non-finite values of G's columns in rows of other classes make NaN.
  Instruction* bad = NonFiniteCount(e, updates);
  IntList token_positions;
  for (int64_t i = 0; i < tokens; ++i) token_positions.push_back(i);
  Instruction* column_bad = hlo::Broadcast(e, hlo::ReduceSum(e, bad, token_positions),
                                           Shape(PrimitiveType::kS32, out_dims), free_positions);
  Instruction* value = PoisonedByNonFinite(
      e, sums, Elementwise(e, Opcode::kSubtract, PrimitiveType::kS32,
                           {column_bad, scatter_add(bad, PrimitiveType::kS32)}));
  if (h_side == 0) return value;  // [classes, G's free dims...]
  // dot(G, one_hot): [G's free dims..., classes].
  std::vector<int64_t> to_result;
  for (size_t i = 0; i < g_free.size(); ++i) to_result.push_back(1 + static_cast<int64_t>(i));
  to_result.push_back(0);
  return hlo::Transpose(e, value, std::move(to_result));
}

// Removes `inst` and then its operands as they lose their last user (the
// one-hot no dot reads any more), so no kernel computes it for nothing.
void RemoveIfDead(hlo::Computation& comp, Instruction* inst) {
  if (!inst->users().empty() || comp.root() == inst || inst->opcode() == Opcode::kParameter) return;
  std::vector<Instruction*> operands(inst->operands().begin(), inst->operands().end());
  std::sort(operands.begin(), operands.end());
  operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
  if (!comp.RemoveInstruction(inst).ok()) return;
  for (Instruction* operand : operands) RemoveIfDead(comp, operand);
}

bool Rewrite(Emitter& e, Instruction* dot) {
  // Two operands: a sparse dot's third (its metadata) changes what they mean.
  if (dot->operand_count() != 2 || !dot->attr_ints("lhs_batch_dims").empty() ||
      !dot->attr_ints("rhs_batch_dims").empty() ||
      !dot->shape().is_array() || !GathersExactly(dot->shape().type()) || dot->has_sharding()) {
    return false;
  }
  for (int side = 0; side < 2; ++side) {
    std::optional<OneHot> o = MatchOneHot(*dot->operand(side));
    if (!o) continue;
    e.set_origin(dot);
    Instruction* value = AsGather(e, dot, side, *o);
    if (value == nullptr) value = AsScatter(e, dot, side, *o);
    if (value == nullptr) continue;
    hlo::Computation* comp = dot->parent();
    Instruction* one_hot = dot->operand(side);
    dot->ReplaceAllUsesWith(value);
    if (comp->root() == dot) comp->set_root(value);
    const std::string name = dot->name();
    if (!comp->RemoveInstruction(dot).ok()) return false;
    value->set_name(name);  // profiles and dumps name it as the user wrote it
    RemoveIfDead(*comp, one_hot);
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<int64_t> RewriteOneHotDots(hlo::Module& module) {
  int64_t rewritten = 0;
  for (hlo::Computation* comp : module.computations()) {
    std::vector<Instruction*> dots;
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kDot) dots.push_back(inst);
    }
    if (dots.empty()) continue;
    Emitter e(comp);
    int64_t here = 0;
    for (Instruction* dot : dots) here += Rewrite(e, dot) ? 1 : 0;
    // The emitter appends; the rewrites' users come before them until sorted.
    if (here > 0) comp->SortInDefinitionOrder();
    rewritten += here;
  }
  return rewritten;
}

}  // namespace sharc::codegen

#include "codegen/dot_canonicalizer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/gemm_packing.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/fresh_name.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::FreshName;

bool Consecutive(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != dims[i - 1] + 1) return false;
  }
  return true;
}

std::vector<int64_t> FreeDims(int64_t rank, const hlo::IntList& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end()) free.push_back(d);
  }
  return free;
}

int64_t Product(const hlo::Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dim(d);
  return n;
}

// One operand as the GEMM sees it: [free, contracting] or, transposed,
// [contracting, free], each run collapsed to one dim.
struct Collapsed {
  int64_t free = 0, contracting = 0;
  bool contracting_first = false;
};

std::optional<Collapsed> Collapse(const hlo::Shape& shape, const std::vector<int64_t>& contracting) {
  const std::vector<int64_t> free = FreeDims(shape.rank(), contracting);
  if (free.empty() || contracting.empty() || !Consecutive(free) || !Consecutive(contracting)) {
    return std::nullopt;
  }
  Collapsed c;
  c.free = Product(shape, free);
  c.contracting = Product(shape, contracting);
  c.contracting_first = contracting[0] < free[0];
  return c;
}

hlo::Shape Matrix(hlo::PrimitiveType type, const Collapsed& c) {
  return c.contracting_first ? hlo::Shape(type, {c.contracting, c.free})
                             : hlo::Shape(type, {c.free, c.contracting});
}

// The operands' 2-D views made so far, so that the dots of one activation
// (a layer's query, key and value projections) share one reshape.
using MatrixViews = absl::flat_hash_map<std::pair<Instruction*, std::vector<int64_t>>, Instruction*>;

// The rewrite of one dot, or false when it is already plain or cannot be.
bool Canonicalize(Instruction* dot, MatrixViews& views) {
  if (!dot->shape().is_array() || !dot->attr_ints("lhs_batch_dims").empty()) return false;
  const hlo::IntList& lc = dot->attr_ints("lhs_contracting_dims");
  const hlo::IntList& rc = dot->attr_ints("rhs_contracting_dims");
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  if (lhs->shape().rank() == 2 && rhs->shape().rank() == 2) return false;  // already plain
  if (lc.size() != rc.size() || lhs->shape().num_elements() == 0 ||
      rhs->shape().num_elements() == 0) {
    return false;
  }
  // The contracting pairs must run in the same order on both sides, so that
  // both flatten them alike.
  for (size_t i = 1; i < lc.size(); ++i) {
    if (lc[i] <= lc[i - 1] || rc[i] <= rc[i - 1]) return false;
  }
  std::optional<Collapsed> l = Collapse(lhs->shape(), lc);
  std::optional<Collapsed> r = Collapse(rhs->shape(), rc);
  if (!l || !r) return false;
  hlo::Computation* comp = dot->parent();
  auto reshape = [&](Instruction* operand, const hlo::Shape& shape) {
    if (operand->shape().dims() == shape.dims()) return operand;
    Instruction*& view = views[{operand, shape.dims()}];
    if (view != nullptr) return view;
    auto inst = Instruction::Create(Opcode::kReshape,
                                    FreshName(*comp, absl::StrCat(operand->name(), ".gemm")), shape,
                                    {operand});
    inst->set_location(dot->location());
    inst->mutable_metadata() = dot->metadata();
    view = comp->AddInstructionBefore(std::move(inst), dot);
    return view;
  };
  const hlo::PrimitiveType type = dot->shape().type();
  Instruction* lhs2 = reshape(lhs, Matrix(lhs->shape().type(), *l));
  Instruction* rhs2 = reshape(rhs, Matrix(rhs->shape().type(), *r));
  auto gemm = Instruction::Create(Opcode::kDot, FreshName(*comp, absl::StrCat(dot->name(), ".gemm")),
                                  hlo::Shape(type, {l->free, r->free}), {lhs2, rhs2});
  for (const hlo::Attribute& a : dot->attributes()) gemm->set_attr(a.name, a.value);
  gemm->set_attr("lhs_contracting_dims", hlo::IntList{l->contracting_first ? 0 : 1});
  gemm->set_attr("rhs_contracting_dims", hlo::IntList{r->contracting_first ? 0 : 1});
  gemm->set_location(dot->location());
  gemm->mutable_metadata() = dot->metadata();
  Instruction* product = comp->AddInstructionBefore(std::move(gemm), dot);
  Instruction* back = product;
  if (product->shape().dims() != dot->shape().dims()) {
    back = comp->AddInstructionBefore(
        Instruction::Create(Opcode::kReshape, FreshName(*comp, dot->name() + ".result"),
                            dot->shape(), {product}),
        dot);
    back->set_location(dot->location());
    back->mutable_metadata() = dot->metadata();
  }
  if (dot->has_sharding()) back->set_sharding(*dot->sharding());
  dot->ReplaceAllUsesWith(back);
  // The result keeps the dot's name (profiles and dumps name it so).
  const std::string name = dot->name();
  if (!comp->RemoveInstruction(dot).ok()) return false;  // it has no users left
  back->set_name(name);
  return true;
}

// A weight gradient as the GEMM takes it: an f32 2-D dot of [k, m] and
// [k, n] (both contracting their first dim), whose lhs the GEMM packs whole
// where it is large (gemm_packing.h).
bool IsWeightGradient(const Instruction& dot) {
  return dot.opcode() == Opcode::kDot && dot.operand_count() == 2 && !dot.has_sharding() &&
         dot.shape().type() == hlo::PrimitiveType::kF32 && dot.attr_ints("lhs_batch_dims").empty() &&
         dot.operand(0)->shape().rank() == 2 && dot.operand(1)->shape().rank() == 2 &&
         dot.attr_ints("lhs_contracting_dims") == hlo::IntList{0} &&
         dot.attr_ints("rhs_contracting_dims") == hlo::IntList{0};
}

// Whether a weight gradient's lhs is packed whole and wider than its rhs:
// swapped, it would pack the narrower operand instead. The medium training
// step's MLP output gradient, transpose(dot(dy [2048,256], h [2048,1024])),
// swapped for its transpose, packed the 8 MiB h and re-read it from L3 for
// each of 4 column panels: 11.3 ms in the step, against 8.2 for the
// unswapped product, whose transpose then fused into the SGD update
// (0.4 ms); the step took 434-439 ms against 447-457 (Emerald Rapids, one
// thread, alternated). Its embedding gradient, dot(dlogits [2048,1024],
// h [2048,256]), went from 12.7 ms to 8.9 as transpose(dot(h, dlogits)),
// plus 1.9 for the transposed epilogue.
// `lhs` names the operand that is the lhs: 0 as the dot stands, 1 once its
// operands are swapped.
bool PacksTheWiderOperand(const Instruction& dot, int lhs = 0) {
  const hlo::Shape& packed = dot.operand(lhs)->shape();
  return IsWeightGradient(dot) && PacksTransposedLhs(packed.num_elements()) &&
         packed.dim(1) > dot.operand(1 - lhs)->shape().dim(1);
}

// dot(b, a) for `dot` = dot(a, b), with its contracting dims swapped and the
// given shape, named after it, added before `before`.
Instruction* AddSwappedDot(const Instruction& dot, const hlo::Shape& shape, const std::string& suffix,
                           Instruction* before) {
  hlo::Computation* comp = before->parent();
  auto swapped = Instruction::Create(Opcode::kDot, FreshName(*comp, absl::StrCat(dot.name(), suffix)), shape,
                                     {dot.operand(1), dot.operand(0)});
  for (const hlo::Attribute& a : dot.attributes()) swapped->set_attr(a.name, a.value);
  swapped->set_attr("lhs_contracting_dims", dot.attr_ints("rhs_contracting_dims"));
  swapped->set_attr("rhs_contracting_dims", dot.attr_ints("lhs_contracting_dims"));
  swapped->set_location(before->location());
  swapped->mutable_metadata() = before->metadata();
  return comp->AddInstructionBefore(std::move(swapped), before);
}

// transpose(dot(a, b)) of a plain 2-D dot the transpose alone reads ->
// dot(b, a): the same sums, each element's terms in the same order, so the
// same bits, without the strided copy the transpose kernel makes (autodiff
// writes this for the weight gradients it needs transposed). Not where the
// swap would make a packed lhs of the wider operand (PacksTheWiderOperand
// of the swapped dot).
bool SwapOperandsForTranspose(Instruction* transpose) {
  if (transpose->opcode() != Opcode::kTranspose || transpose->attr_ints("dimensions") != hlo::IntList{1, 0}) {
    return false;
  }
  Instruction* dot = transpose->operand(0);
  if (dot->opcode() != Opcode::kDot || dot->users().size() != 1 || dot->shape().rank() != 2 ||
      !dot->attr_ints("lhs_batch_dims").empty() || dot->operand(0)->shape().rank() != 2 ||
      dot->operand(1)->shape().rank() != 2 || dot->has_sharding()) {
    return false;
  }
  if (PacksTheWiderOperand(*dot, /*lhs=*/1)) return false;
  hlo::Computation* comp = transpose->parent();
  Instruction* product = AddSwappedDot(*dot, transpose->shape(), ".swapped", transpose);
  if (transpose->has_sharding()) product->set_sharding(*transpose->sharding());
  transpose->ReplaceAllUsesWith(product);
  const std::string name = transpose->name();
  if (!comp->RemoveInstruction(transpose).ok() || !comp->RemoveInstruction(dot).ok()) return false;
  product->set_name(name);
  return true;
}

// dot(a [k, m], b [k, n]) whose packed lhs is the wider operand ->
// transpose(dot(b, a)): the same sums in the same order, with the narrower
// operand packed (PacksTheWiderOperand). Not where a transpose reads the
// dot: that one would become a transpose of a transpose, which no pass
// after this one folds.
bool PackNarrowerOperand(Instruction* dot) {
  if (!PacksTheWiderOperand(*dot)) return false;
  for (const Instruction* user : dot->users()) {
    if (user->opcode() == Opcode::kTranspose) return false;
  }
  hlo::Computation* comp = dot->parent();
  const hlo::Shape swapped_shape(dot->shape().type(),
                                 {dot->operand(1)->shape().dim(1), dot->operand(0)->shape().dim(1)});
  Instruction* product = AddSwappedDot(*dot, swapped_shape, ".narrow_lhs", dot);
  auto transpose = Instruction::Create(Opcode::kTranspose, FreshName(*comp, dot->name() + ".t"),
                                       dot->shape(), {product});
  transpose->set_attr("dimensions", hlo::IntList{1, 0});
  transpose->set_location(dot->location());
  transpose->mutable_metadata() = dot->metadata();
  Instruction* back = comp->AddInstructionBefore(std::move(transpose), dot);
  dot->ReplaceAllUsesWith(back);
  const std::string name = dot->name();
  if (!comp->RemoveInstruction(dot).ok()) return false;
  back->set_name(name);
  return true;
}

}  // namespace

absl::StatusOr<int64_t> CanonicalizeDots(hlo::Module& module) {
  int64_t rewritten = 0;
  for (hlo::Computation* comp : module.computations()) {
    MatrixViews views;
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kDot && Canonicalize(inst, views)) ++rewritten;
    }
    for (Instruction* inst : comp->instructions()) {
      if (SwapOperandsForTranspose(inst)) ++rewritten;
    }
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kDot && PackNarrowerOperand(inst)) ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace sharc::codegen

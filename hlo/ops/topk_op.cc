// topk(x), k=K, largest=true -> (values, s32 indices): along the last dim,
// the K largest (or smallest) elements of each row in order, with their
// positions; equal values keep their order (the lower index first), and NaN
// is larger than every number (XLA's total order). XLA's "TopK" custom call
// is the same op (hlo/passes/lower_for_compute.h rewrites it to this one).
#include <algorithm>
#include <memory>
#include <string>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/topk_order.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferTopK(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& x = inst.operand(0)->shape();
  if (x.rank() < 1) return OpError(inst, "needs an operand of rank 1 or more, got ", x.ToString());
  if (x.type() == PrimitiveType::kPred || x.type() == PrimitiveType::kToken) {
    return OpError(inst, "needs a numeric operand, got ", x.ToString());
  }
  const int64_t k = inst.attr_int("k");
  const int64_t n = x.dim(x.rank() - 1);
  if (k < 0 || k > n) {
    return OpError(inst, "k=", k, " must be in [0, ", n, "], the size of the last dim");
  }
  std::vector<int64_t> dims = x.dims();
  dims.back() = k;
  return Shape::Tuple({Shape(x.type(), dims), Shape(PrimitiveType::kS32, dims)});
}

// a before b in the result: larger (or smaller) first, NaN as the largest.
template <typename T>
bool Before(T a, T b, bool largest) {
  if constexpr (kIsFloat<T>) {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const C ca = static_cast<C>(a), cb = static_cast<C>(b);
    if (std::isnan(ca) || std::isnan(cb)) return largest ? !std::isnan(cb) : !std::isnan(ca);
    return largest ? ca > cb : ca < cb;
  } else {
    return largest ? a > b : a < b;
  }
}

absl::StatusOr<Literal> EvaluateTopK(const Instruction& inst,
                                     absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferTopK(inst));
  const Literal& x = *operands[0];
  const int64_t k = inst.attr_int("k");
  const bool largest = !inst.has_attr("largest") || inst.attr_bool("largest");
  const int64_t n = x.shape().dim(x.shape().rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
  Literal values(shape.tuple_shape(0));
  Literal indices(shape.tuple_shape(1));
  int32_t* index_out = indices.data<int32_t>().data();
  DispatchPrimitiveType(x.shape().type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* in = x.data<T>().data();
      T* value_out = values.data<T>().data();
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = in + r * n;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return Before(row[a], row[b], largest); });
        for (int64_t j = 0; j < k; ++j) {
          value_out[r * k + j] = row[order[static_cast<size_t>(j)]];
          index_out[r * k + j] = static_cast<int32_t>(order[static_cast<size_t>(j)]);
        }
      }
    }
  });
  std::vector<Literal> out;
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return Literal::Tuple(std::move(out));
}

}  // namespace

// The order of Before, above, as HLO:
//   largest:  (isnan(a) && !isnan(b)) || a > b
//   smallest: (!isnan(a) && isnan(b)) || a < b
// (integers: a > b or a < b).
Computation* TopKOrderComparator(Module& module, PrimitiveType type, bool largest) {
  const std::string base =
      absl::StrCat("sharc.topk.", largest ? "largest." : "smallest.", PrimitiveTypeName(type));
  std::string name = base;
  for (int suffix = 1; module.FindComputation(name) != nullptr; ++suffix) {
    name = absl::StrCat(base, ".", suffix);
  }
  auto comp = std::make_unique<Computation>(name);
  const Shape scalar = Shape::Scalar(type), index = Shape::Scalar(PrimitiveType::kS32),
              pred = Shape::Scalar(PrimitiveType::kPred);
  Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, "a", scalar));
  Instruction* c = comp->AddInstruction(Instruction::CreateParameter(1, "b", scalar));
  comp->AddInstruction(Instruction::CreateParameter(2, "i", index));
  comp->AddInstruction(Instruction::CreateParameter(3, "j", index));
  auto compare = [&](const std::string& n, Instruction* x, Instruction* y, const char* direction) {
    auto cmp = Instruction::Create(Opcode::kCompare, n, pred, {x, y});
    cmp->set_attr("direction", std::string(direction));
    return comp->AddInstruction(std::move(cmp));
  };
  Instruction* ordered = compare("ordered", a, c, largest ? "GT" : "LT");
  if (!IsFloatingPoint(type)) {
    comp->set_root(ordered);
    return module.AddComputation(std::move(comp));
  }
  Instruction* a_nan = compare("a.nan", a, a, "NE");
  Instruction* b_nan = compare("b.nan", c, c, "NE");
  Instruction* first = largest ? a_nan : b_nan;
  Instruction* other = largest ? b_nan : a_nan;
  Instruction* other_number =
      comp->AddInstruction(Instruction::Create(Opcode::kNot, "other.number", pred, {other}));
  Instruction* nan_first =
      comp->AddInstruction(Instruction::Create(Opcode::kAnd, "nan.first", pred, {first, other_number}));
  comp->set_root(
      comp->AddInstruction(Instruction::Create(Opcode::kOr, "before", pred, {nan_first, ordered})));
  return module.AddComputation(std::move(comp));
}

void RegisterTopKOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kTopK;
  def.min_operands = 1;
  def.max_operands = 1;
  def.attributes = {{"k", AttrKind::kInt, true}, {"largest", AttrKind::kBool}};
  def.infer_shape = InferTopK;
  def.evaluate = EvaluateTopK;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo

#include "hlo/passes/expand_batch_norm.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/emitter.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::hlo {
namespace {

// Builds the expansion of one batch-norm instruction `bn` (appended to its
// computation, which is re-sorted afterwards).
class Expander {
 public:
  explicit Expander(Instruction* bn)
      : bn_(bn), e_(bn->parent()), x_(bn->operand(0)->shape()),
        feature_(bn->attr_int("feature_index")) {
    e_.set_origin(bn);
    const Shape features(x_.type(), {x_.dim(feature_)});
    features_ = features;
    for (int64_t d = 0; d < x_.rank(); ++d) {
      if (d != feature_) reduced_.push_back(d);
    }
    count_ = x_.dim(feature_) == 0 ? 0 : x_.num_elements() / x_.dim(feature_);
  }

  absl::StatusOr<Instruction*> Expand(double epsilon) {
    Instruction* x = bn_->operand(0);
    Instruction* scale = bn_->operand(1);
    switch (bn_->opcode()) {
      case Opcode::kBatchNormTraining: {
        Instruction* mean = Mean(x);
        Instruction* xc = Binary(Opcode::kSubtract, x, AlongFeature(mean));
        Instruction* var = Mean(Binary(Opcode::kMultiply, xc, xc));
        Instruction* y = Normalized(xc, scale, bn_->operand(2), Rstd(var, epsilon));
        return e_.Add(Opcode::kTuple, bn_->shape(), {y, mean, var});
      }
      case Opcode::kBatchNormInference: {
        Instruction* xc = Binary(Opcode::kSubtract, x, AlongFeature(bn_->operand(3)));
        return Normalized(xc, scale, bn_->operand(2), Rstd(bn_->operand(4), epsilon));
      }
      case Opcode::kBatchNormGrad: {
        Instruction* rstd = Rstd(bn_->operand(3), epsilon);
        Instruction* dy = bn_->operand(4);
        Instruction* xc = Binary(Opcode::kSubtract, x, AlongFeature(bn_->operand(2)));
        Instruction* sum_dy = Sum(dy);
        Instruction* sum_dy_xc = Sum(Binary(Opcode::kMultiply, dy, xc));
        Instruction* dscale = Binary(Opcode::kMultiply, sum_dy_xc, rstd);
        Instruction* rstd2 = Binary(Opcode::kMultiply, rstd, rstd);
        Instruction* mean_dy = Binary(Opcode::kDivide, sum_dy, Count(features_));
        Instruction* mean_dy_xc = Binary(Opcode::kDivide, sum_dy_xc, Count(features_));
        Instruction* centered_dy = Binary(Opcode::kSubtract, dy, AlongFeature(mean_dy));
        Instruction* projection =
            Binary(Opcode::kMultiply, xc,
                   AlongFeature(Binary(Opcode::kMultiply, mean_dy_xc, rstd2)));
        Instruction* dx =
            Binary(Opcode::kMultiply,
                   AlongFeature(Binary(Opcode::kMultiply, scale, rstd)),
                   Binary(Opcode::kSubtract, centered_dy, projection));
        return e_.Add(Opcode::kTuple, bn_->shape(), {dx, dscale, sum_dy});
      }
      default:
        return absl::InternalError(absl::StrCat("not a batch-norm: ", bn_->Describe()));
    }
  }

 private:
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return e_.Add(op, a->shape(), {a, b});
  }
  Instruction* Scalar(double value) {
    Literal literal(Shape::Scalar(x_.type()));
    literal.SetFromDouble(0, value);
    return e_.Add(Instruction::CreateConstant("constant", std::move(literal)));
  }
  Instruction* Full(const Shape& shape, double value) {
    return e_.Add(Opcode::kBroadcast, shape, {Scalar(value)}, {{"dimensions", IntList{}}});
  }
  Instruction* Count(const Shape& shape) { return Full(shape, static_cast<double>(count_)); }
  // A per-feature vector broadcast to x's shape.
  Instruction* AlongFeature(Instruction* v) {
    return e_.Add(Opcode::kBroadcast, x_, {v}, {{"dimensions", IntList{feature_}}});
  }
  Instruction* Sum(Instruction* v) {
    return e_.Add(Opcode::kReduce, features_, {v, Scalar(0)},
                  {{"dimensions", reduced_},
                   {"to_apply", BinaryReducer(*bn_->parent()->parent(), Opcode::kAdd, x_.type())}});
  }
  Instruction* Mean(Instruction* v) { return Binary(Opcode::kDivide, Sum(v), Count(features_)); }
  Instruction* Rstd(Instruction* var, double epsilon) {
    Instruction* shifted = Binary(Opcode::kAdd, var, Full(features_, epsilon));
    return e_.Add(Opcode::kRsqrt, features_, {shifted});
  }
  // xc * b(scale * rstd) + b(offset).
  Instruction* Normalized(Instruction* xc, Instruction* scale, Instruction* offset,
                          Instruction* rstd) {
    Instruction* factor = AlongFeature(Binary(Opcode::kMultiply, scale, rstd));
    return Binary(Opcode::kAdd, Binary(Opcode::kMultiply, xc, factor), AlongFeature(offset));
  }

  Instruction* bn_;
  Emitter e_;
  Shape x_;
  int64_t feature_;
  Shape features_;
  IntList reduced_;
  int64_t count_ = 0;
};

bool IsBatchNorm(Opcode op) {
  return op == Opcode::kBatchNormTraining || op == Opcode::kBatchNormInference ||
         op == Opcode::kBatchNormGrad;
}

}  // namespace

absl::Status ExpandBatchNorm(Module& module) {
  bool expanded_any = false;
  for (Computation* computation : module.computations()) {
    bool changed = false;
    for (Instruction* bn : computation->instructions()) {
      if (!IsBatchNorm(bn->opcode())) continue;
      double epsilon = 0;
      if (!absl::SimpleAtod(bn->attr_string("epsilon"), &epsilon)) {
        return absl::InvalidArgumentError(
            absl::StrCat("batch-norm epsilon is not a number, in ", bn->Describe()));
      }
      Expander expander(bn);
      ASSIGN_OR_RETURN(Instruction * expanded, expander.Expand(epsilon));
      if (bn->sharding()) expanded->set_sharding(*bn->sharding());
      // The expansion takes the op's name: shardings, --check and messages
      // refer to it.
      std::string name = bn->name();
      bn->ReplaceAllUsesWith(expanded);
      RETURN_IF_ERROR(computation->RemoveInstruction(bn));
      expanded->set_name(std::move(name));
      changed = true;
    }
    if (changed) computation->SortInDefinitionOrder();
    expanded_any = expanded_any || changed;
  }
  // The reducers the expansion added come before their callers in the text.
  if (expanded_any) module.SortCalleesFirst();
  return absl::OkStatus();
}

}  // namespace sharc::hlo

// Helpers for op-definition tests: build an instruction over parameters of
// given shapes, call its OpDef's infer_shape and evaluate directly (no parser,
// no interpreter), and make literals tersely.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo::testing {

// An EvalContext for ops that need no callee and no communication.
class FakeEvalContext : public EvalContext {
 public:
  explicit FakeEvalContext(int64_t partition_id = 0, int64_t replica_id = 0)
      : partition_id_(partition_id), replica_id_(replica_id) {}
  absl::StatusOr<Literal> Call(const Computation&, absl::Span<const Literal* const>) override {
    return absl::UnimplementedError("FakeEvalContext cannot call computations");
  }
  int64_t partition_id() const override { return partition_id_; }
  int64_t num_partitions() const override { return 1; }
  int64_t replica_id() const override { return replica_id_; }
  absl::StatusOr<std::vector<Literal>> ExchangeWithAllDevices(const Instruction&,
                                                              Literal) override {
    return absl::UnimplementedError("FakeEvalContext has no other devices");
  }

 private:
  int64_t partition_id_;
  int64_t replica_id_;
};

struct NamedAttr {
  std::string name;
  AttrValue value;
};

// Owns a computation to hang instructions on.
class OpHarness {
 public:
  OpHarness() : computation_(std::make_unique<Computation>("test")) {}

  Instruction* Param(const Shape& shape) {
    int64_t n = computation_->num_parameters();
    return computation_->AddInstruction(
        Instruction::CreateParameter(n, absl::StrCat("p", n), shape));
  }

  Instruction* Op(Opcode opcode, const Shape& shape, std::vector<Instruction*> operands,
                  std::vector<NamedAttr> attrs = {}) {
    auto inst = Instruction::Create(opcode, absl::StrCat("op", ++counter_), shape,
                                    std::move(operands));
    for (NamedAttr& a : attrs) inst->set_attr(a.name, std::move(a.value));
    return computation_->AddInstruction(std::move(inst));
  }

  // An op over fresh parameters of the given operand shapes.
  Instruction* OpOn(Opcode opcode, const Shape& shape, const std::vector<Shape>& operand_shapes,
                    std::vector<NamedAttr> attrs = {}) {
    std::vector<Instruction*> operands;
    for (const Shape& s : operand_shapes) operands.push_back(Param(s));
    return Op(opcode, shape, std::move(operands), std::move(attrs));
  }

  static absl::StatusOr<Shape> Infer(const Instruction* inst) {
    return GetOpDef(inst->opcode()).infer_shape(*inst);
  }

  absl::StatusOr<Literal> Eval(const Instruction* inst, const std::vector<Literal>& args) {
    std::vector<const Literal*> ptrs;
    for (const Literal& l : args) ptrs.push_back(&l);
    return GetOpDef(inst->opcode()).evaluate(*inst, ptrs, context_);
  }

  // Builds `opcode` over parameters shaped like `args`, checks that shape
  // inference agrees with `shape`, and evaluates it.
  absl::StatusOr<Literal> Run(Opcode opcode, const Shape& shape, const std::vector<Literal>& args,
                              std::vector<NamedAttr> attrs = {}) {
    std::vector<Shape> shapes;
    for (const Literal& l : args) shapes.push_back(l.shape());
    Instruction* inst = OpOn(opcode, shape, shapes, std::move(attrs));
    absl::StatusOr<Shape> inferred = Infer(inst);
    if (!inferred.ok()) return inferred.status();
    if (*inferred != shape) {
      return absl::InternalError(absl::StrCat("inferred ", inferred->ToString(), ", expected ",
                                              shape.ToString()));
    }
    absl::StatusOr<Literal> result = Eval(inst, args);
    if (result.ok() && result->shape() != shape) {
      return absl::InternalError(absl::StrCat("evaluated to ", result->shape().ToString(),
                                              ", expected ", shape.ToString()));
    }
    return result;
  }

  FakeEvalContext& context() { return context_; }

 private:
  std::unique_ptr<Computation> computation_;
  FakeEvalContext context_;
  int counter_ = 0;
};

template <typename T>
Literal Lit(std::vector<int64_t> dims, std::vector<T> values) {
  return Literal::FromValues<T>(std::move(dims), absl::MakeConstSpan(values));
}

template <typename T>
Literal Vec(std::vector<T> values) {
  return Literal::Vector<T>(absl::MakeConstSpan(values));
}

// std::vector<bool> has no contiguous storage, so pred literals get their own
// builder.
inline Literal Preds(std::vector<int64_t> dims, std::vector<bool> values) {
  Literal l(Shape(PrimitiveType::kPred, std::move(dims)));
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(l.num_elements()); ++i) {
    l.data<bool>()[i] = values[i];
  }
  return l;
}

template <typename T>
std::vector<T> Values(const Literal& l) {
  auto span = l.data<T>();
  return std::vector<T>(span.begin(), span.end());
}

}  // namespace sharc::hlo::testing

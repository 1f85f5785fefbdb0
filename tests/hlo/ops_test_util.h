// Test support for the op-family tests (reduction, dot, gather/scatter,
// control flow, collectives): builds instructions programmatically and
// evaluates them through their OpDefs with a fake EvalContext, so these tests
// depend only on the op table, not on the parser or the interpreter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo::ops_test {

// Evaluates called computations by walking their instructions, and answers
// collective exchanges with canned values of the other devices.
class FakeEvalContext : public EvalContext {
 public:
  explicit FakeEvalContext(int64_t partition_id = 0, int64_t num_partitions = 1)
      : partition_id_(partition_id), num_partitions_(num_partitions) {}

  absl::StatusOr<Literal> Call(const Computation& computation,
                               absl::Span<const Literal* const> args) override {
    ++calls;
    if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat("computation '", computation.name(),
                                                     "' called with ", args.size(), " args"));
    }
    absl::flat_hash_map<const Instruction*, Literal> values;
    for (const Instruction* inst : computation.instructions()) {
      if (inst->opcode() == Opcode::kParameter) {
        values[inst] = *args[static_cast<size_t>(inst->parameter_number())];
        continue;
      }
      std::vector<const Literal*> operands;
      for (const Instruction* op : inst->operands()) operands.push_back(&values.at(op));
      absl::StatusOr<Literal> r = GetOpDef(inst->opcode()).evaluate(*inst, operands, *this);
      if (!r.ok()) return r.status();
      values[inst] = *std::move(r);
    }
    return values.at(computation.root());
  }

  int64_t partition_id() const override { return partition_id_; }
  int64_t num_partitions() const override { return num_partitions_; }

  // Returns `device_values` (one per partition) with this device's entry
  // replaced by what it contributes.
  absl::StatusOr<std::vector<Literal>> ExchangeWithAllDevices(const Instruction&,
                                                              Literal value) override {
    ++exchanges;
    std::vector<Literal> all = device_values;
    if (all.empty()) all.resize(static_cast<size_t>(num_partitions_));
    all[static_cast<size_t>(partition_id_)] = std::move(value);
    return all;
  }

  std::vector<Literal> device_values;
  int calls = 0;
  int exchanges = 0;

 private:
  int64_t partition_id_;
  int64_t num_partitions_;
};

// A module with an entry computation to which tests add parameters and the
// instruction under test.
class OpTestModule {
 public:
  OpTestModule() : module_(std::make_unique<Module>("test")) {
    entry_ = module_->AddComputation(std::make_unique<Computation>("entry"));
    module_->set_entry(entry_);
  }

  Module& module() { return *module_; }
  Computation* entry() { return entry_; }

  Instruction* Param(Shape shape, Computation* in = nullptr) {
    Computation* c = in != nullptr ? in : entry_;
    int64_t n = c->num_parameters();
    return c->AddInstruction(Instruction::CreateParameter(n, absl::StrCat("p", next_id_++), shape));
  }

  // Adds an instruction with a declared shape (invalid = "not given yet").
  Instruction* Add(Opcode opcode, std::vector<Instruction*> operands,
                   std::vector<Attribute> attrs = {}, Shape declared = Shape(),
                   Computation* in = nullptr) {
    Computation* c = in != nullptr ? in : entry_;
    auto inst = Instruction::Create(opcode, absl::StrCat("i", next_id_++), std::move(declared),
                                    std::move(operands));
    for (Attribute& a : attrs) inst->set_attr(std::move(a.name), std::move(a.value));
    Instruction* raw = c->AddInstruction(std::move(inst));
    c->set_root(raw);
    return raw;
  }

  // Adds an instruction and sets its shape by shape inference (the shape
  // stays invalid if inference fails).
  Instruction* AddInferred(Opcode opcode, std::vector<Instruction*> operands,
                           std::vector<Attribute> attrs = {}, Computation* in = nullptr) {
    Instruction* inst = Add(opcode, std::move(operands), std::move(attrs), Shape(), in);
    absl::StatusOr<Shape> shape = GetOpDef(opcode).infer_shape(*inst);
    if (shape.ok()) inst->set_shape(*shape);
    return inst;
  }

  Instruction* Constant(Literal value, Computation* in = nullptr) {
    Computation* c = in != nullptr ? in : entry_;
    return c->AddInstruction(
        Instruction::CreateConstant(absl::StrCat("c", next_id_++), std::move(value)));
  }

  Computation* NewComputation(const std::string& name) {
    return module_->AddComputation(std::make_unique<Computation>(name));
  }

  // `ROOT op(p0, p1)` on two scalars of `type`.
  Computation* BinaryComputation(const std::string& name, Opcode op, PrimitiveType type) {
    Computation* c = NewComputation(name);
    Instruction* a = Param(Shape::Scalar(type), c);
    Instruction* b = Param(Shape::Scalar(type), c);
    Instruction* r = c->AddInstruction(
        Instruction::Create(op, absl::StrCat("r", next_id_++), Shape::Scalar(type), {a, b}));
    c->set_root(r);
    return c;
  }

  absl::StatusOr<Shape> Infer(const Instruction& inst) {
    return GetOpDef(inst.opcode()).infer_shape(inst);
  }
  absl::Status Verify(const Instruction& inst) {
    const OpDef& def = GetOpDef(inst.opcode());
    absl::StatusOr<Shape> shape = def.infer_shape(inst);
    if (!shape.ok()) return shape.status();
    return def.verify ? def.verify(inst) : absl::OkStatus();
  }
  absl::StatusOr<Literal> Eval(const Instruction& inst, const std::vector<Literal>& values,
                               EvalContext* ctx = nullptr) {
    FakeEvalContext local;
    std::vector<const Literal*> ptrs;
    for (const Literal& v : values) ptrs.push_back(&v);
    return GetOpDef(inst.opcode()).evaluate(inst, ptrs, ctx != nullptr ? *ctx : local);
  }

 private:
  std::unique_ptr<Module> module_;
  Computation* entry_;
  int next_id_ = 0;
};

inline Shape F32(std::vector<int64_t> dims) { return Shape(PrimitiveType::kF32, std::move(dims)); }
inline Shape S32(std::vector<int64_t> dims) { return Shape(PrimitiveType::kS32, std::move(dims)); }

template <typename T>
Literal Values(std::vector<int64_t> dims, std::vector<T> values) {
  return Literal::FromValues<T>(std::move(dims), values);
}

template <typename T>
std::vector<T> ToVector(const Literal& literal) {
  auto d = literal.data<T>();
  return std::vector<T>(d.begin(), d.end());
}

}  // namespace sharc::hlo::ops_test

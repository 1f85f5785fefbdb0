#include "autodiff/shard_map_variance.h"


#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/device_variance.h"

namespace sharc::autodiff {
namespace {

using hlo::UnionAxes;

class Propagator {
 public:
  Propagator(const hlo::ManualMesh& mesh,
             absl::flat_hash_map<const Instruction*, std::vector<Axes>>& elements)
      : mesh_(mesh), elements_(elements) {}

  absl::Status TypeComputation(const Computation& computation,
                               const std::vector<std::vector<Axes>>& params, int depth = 0) {
    if (depth > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", computation.name(), "' calls itself too deeply"));
    }
    for (const Instruction* param : computation.parameters()) {
      const size_t i = static_cast<size_t>(param->parameter_number());
      elements_[param] =
          Shaped(param->shape(), i < params.size() ? params[i] : std::vector<Axes>{});
    }
    for (const Instruction* inst : computation.instructions()) {
      if (inst->opcode() == Opcode::kParameter) continue;
      RETURN_IF_ERROR(Type(*inst, depth));
    }
    return absl::OkStatus();
  }

  std::vector<Axes> ElementsOf(const Instruction* v) const {
    auto it = elements_.find(v);
    if (it == elements_.end()) return Shaped(v->shape(), {});
    return it->second;
  }

 private:
  // `given` fitted to `shape`: one entry per tuple element (one for an
  // array); a mismatch spreads the union over every element.
  std::vector<Axes> Shaped(const Shape& shape, std::vector<Axes> given) const {
    const size_t n = shape.is_tuple() ? static_cast<size_t>(shape.tuple_size()) : 1;
    if (given.size() == n) return given;
    Axes all;
    for (const Axes& a : given) all = UnionAxes(mesh_, all, a);
    return std::vector<Axes>(n, all);
  }

  Axes UnionOf(const Instruction* v) const {
    Axes all;
    for (const Axes& a : ElementsOf(v)) all = UnionAxes(mesh_, all, a);
    return all;
  }

  absl::Status Type(const Instruction& inst, int depth) {
    const Shape& shape = inst.shape();
    if (const hlo::NamedCollectiveInfo* info = hlo::FindNamedCollective(inst.opcode())) {
      ASSIGN_OR_RETURN(Axes axes, hlo::CollectiveAxes(inst, mesh_));
      Axes in = inst.operand_count() > 0 ? UnionOf(inst.operand(0)) : Axes{};
      elements_[&inst] = Shaped(shape, {hlo::CollectiveVariance(*info, mesh_, in, axes)});
      return absl::OkStatus();
    }
    switch (inst.opcode()) {
      case Opcode::kTuple: {
        std::vector<Axes> elements;
        for (const Instruction* op : inst.operands()) elements.push_back(UnionOf(op));
        elements_[&inst] = std::move(elements);
        return absl::OkStatus();
      }
      case Opcode::kGetTupleElement: {
        std::vector<Axes> of = ElementsOf(inst.operand(0));
        const size_t k = static_cast<size_t>(inst.attr_int("index"));
        elements_[&inst] = Shaped(shape, {k < of.size() ? of[k] : UnionOf(inst.operand(0))});
        return absl::OkStatus();
      }
      case Opcode::kCall: {
        std::vector<std::vector<Axes>> args;
        for (const Instruction* op : inst.operands()) args.push_back(ElementsOf(op));
        const Computation* callee = inst.attr_computation("to_apply");
        RETURN_IF_ERROR(TypeComputation(*callee, args, depth + 1));
        elements_[&inst] = Shaped(shape, ElementsOf(callee->root()));
        return absl::OkStatus();
      }
      case Opcode::kWhile:
        return TypeWhile(inst, depth);
      case Opcode::kConditional:
        return TypeConditional(inst, depth);
      default:
        break;
    }
    Axes joined = hlo::OwnVariance(inst, mesh_);
    for (const Instruction* op : inst.operands()) joined = UnionAxes(mesh_, joined, UnionOf(op));
    elements_[&inst] = Shaped(shape, {joined});
    return absl::OkStatus();
  }

  // A carry varies where its initial value, the body's result or a varying
  // trip count (the predicate) makes it: a fixed point, reached in at most
  // one round per axis and element since the sets only grow.
  absl::Status TypeWhile(const Instruction& inst, int depth) {
    const Computation* cond = inst.attr_computation("condition");
    const Computation* body = inst.attr_computation("body");
    std::vector<Axes> carry = ElementsOf(inst.operand(0));
    const size_t rounds = carry.size() * mesh_.axes().size() + 2;
    for (size_t round = 0; round < rounds; ++round) {
      RETURN_IF_ERROR(TypeComputation(*body, {carry}, depth + 1));
      RETURN_IF_ERROR(TypeComputation(*cond, {carry}, depth + 1));
      std::vector<Axes> out = ElementsOf(body->root());
      const Axes predicate = UnionOf(cond->root());
      bool changed = false;
      for (size_t k = 0; k < carry.size(); ++k) {
        Axes grown = UnionAxes(mesh_, carry[k], predicate);
        if (k < out.size()) grown = UnionAxes(mesh_, grown, out[k]);
        changed = changed || grown != carry[k];
        carry[k] = std::move(grown);
      }
      if (!changed) break;
    }
    elements_[&inst] = carry;
    return absl::OkStatus();
  }

  absl::Status TypeConditional(const Instruction& inst, int depth) {
    std::vector<Computation*> branches = inst.called_computations();
    const Axes index = UnionOf(inst.operand(0));
    std::vector<Axes> result = Shaped(inst.shape(), {index});
    for (size_t b = 0; b < branches.size(); ++b) {
      const Instruction* arg = inst.operand(static_cast<int64_t>(b) + 1);
      RETURN_IF_ERROR(TypeComputation(*branches[b], {ElementsOf(arg)}, depth + 1));
      std::vector<Axes> out = Shaped(inst.shape(), ElementsOf(branches[b]->root()));
      for (size_t k = 0; k < result.size(); ++k) result[k] = UnionAxes(mesh_, result[k], out[k]);
    }
    elements_[&inst] = std::move(result);
    return absl::OkStatus();
  }

  const hlo::ManualMesh& mesh_;
  absl::flat_hash_map<const Instruction*, std::vector<Axes>>& elements_;
};

void AnnotateComputation(Computation& computation, const BodyVariance& variance, int depth) {
  if (depth > 64) return;
  for (Instruction* inst : computation.instructions()) {
    inst->set_variance(variance.Of(inst));
    for (Computation* callee : inst->called_computations()) {
      AnnotateComputation(*callee, variance, depth + 1);
    }
  }
}

}  // namespace

absl::StatusOr<BodyVariance> BodyVariance::Infer(const Computation& body,
                                                 const std::vector<Axes>& params,
                                                 const hlo::ManualMesh& mesh) {
  BodyVariance out;
  out.mesh_ = mesh;
  Propagator propagator(out.mesh_, out.elements_);
  std::vector<std::vector<Axes>> args;
  for (const Axes& p : params) args.push_back({UnionAxes(out.mesh_, p, {})});
  RETURN_IF_ERROR(propagator.TypeComputation(body, args));
  return out;
}

Axes BodyVariance::Of(const Instruction* value) const {
  Axes all;
  auto it = elements_.find(value);
  if (it == elements_.end()) return all;
  for (const Axes& a : it->second) all = UnionAxes(mesh_, all, a);
  return all;
}

const std::vector<Axes>& BodyVariance::Elements(const Instruction* value) const {
  static const std::vector<Axes>* kNone = new std::vector<Axes>{Axes{}};
  auto it = elements_.find(value);
  return it == elements_.end() ? *kNone : it->second;
}

void BodyVariance::Annotate(Computation& body) const { AnnotateComputation(body, *this, 0); }

}  // namespace sharc::autodiff

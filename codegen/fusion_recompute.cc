// Which values a row kernel computes again (see fusion_recompute.h).
#include "codegen/fusion_recompute.h"

#include "codegen/kernel_graph.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

class ClosureWalk {
 public:
  ClosureWalk(const absl::flat_hash_set<Instruction*>& members,
              const absl::flat_hash_set<Instruction*>& inputs, const std::vector<int64_t>& full,
              const std::function<bool(const Instruction&)>& joinable,
              const std::function<bool(const Instruction&)>& stored, const RecomputeLimits& limits)
      : members_(members),
        inputs_(inputs),
        full_(full),
        joinable_(joinable),
        stored_(stored),
        limits_(limits) {
    rows_.assign(full.begin(), full.end() - 1);
    keepdims_rows_ = rows_;
    keepdims_rows_.push_back(1);
    for (int64_t r : rows_) row_count_ *= r;
  }

  std::optional<std::vector<Instruction*>> Run(Instruction* input) {
    if (!(IsFull(*input) || IsRow(*input)) || !Visit(input, /*is_input=*/true)) return std::nullopt;
    return order_;
  }

 private:
  bool IsFull(const Instruction& i) const { return i.shape().is_array() && i.shape().dims() == full_; }
  bool IsRow(const Instruction& i) const {
    return i.shape().is_array() && (i.shape().dims() == rows_ || i.shape().dims() == keepdims_rows_);
  }
  // No bigger than one value per row: cheap to read where it cannot be
  // computed.
  bool IsSmall(const Instruction& i) const {
    return i.shape().is_array() && i.shape().num_elements() <= row_count_;
  }

  // A reduction of this kernel's rows: the last dim of a full-size value.
  bool IsRowReduction(const Instruction& i) const { return RowReductionInput(i) == full_; }

  // An op the walk may copy: per element, or a row's reduction, or moving
  // row values between their two spellings ([rows] and [rows, 1]).
  bool Copyable(const Instruction& i) const {
    if (!joinable_(i)) return false;
    if (!(IsFull(i) || IsRow(i) || IsSmall(i))) return false;
    const Opcode op = i.opcode();
    if (op == Opcode::kBroadcast || op == Opcode::kIota || op == Opcode::kConstant) return true;
    if (op == Opcode::kReshape) return IsRow(i) && IsRow(*i.operand(0));
    if (op == Opcode::kReduce) return IsRowReduction(i);
    return hlo::GetOpDef(op).traits.elementwise;
  }

  // Adds `i` and what it needs (producers first) and returns true, or adds
  // nothing and returns whether the kernel may read `i` instead.
  bool Visit(Instruction* i, bool is_input) {
    if (members_.contains(i) || added_.contains(i)) return true;
    if (!is_input && inputs_.contains(i) && IsFull(*i)) return true;  // read already
    if (IsFull(*i) && stored_(*i)) return false;  // would be a new read, or saves no store
    const bool readable = !is_input && IsSmall(*i);
    if (!Copyable(*i)) return readable;
    const size_t mark = order_.size();
    const int compute_bound_mark = compute_bound_;
    auto undo = [&]() {
      for (size_t k = mark; k < order_.size(); ++k) added_.erase(order_[k]);
      order_.resize(mark);
      added_.erase(i);
      compute_bound_ = compute_bound_mark;
      return readable;
    };
    if (IsComputeBoundOp(i->opcode()) && ++compute_bound_ > limits_.max_compute_bound) return undo();
    added_.insert(i);
    for (Instruction* operand : i->operands()) {
      if (!Visit(operand, /*is_input=*/false)) return undo();
    }
    order_.push_back(i);
    if (order_.size() > limits_.max_instructions) return undo();
    return true;
  }

  const absl::flat_hash_set<Instruction*>& members_;
  const absl::flat_hash_set<Instruction*>& inputs_;
  const std::vector<int64_t>& full_;
  const std::function<bool(const Instruction&)>& joinable_;
  const std::function<bool(const Instruction&)>& stored_;
  const RecomputeLimits& limits_;
  std::vector<int64_t> rows_, keepdims_rows_;
  int64_t row_count_ = 1;
  absl::flat_hash_set<Instruction*> added_;
  std::vector<Instruction*> order_;
  int compute_bound_ = 0;
};

}  // namespace

std::optional<std::vector<int64_t>> RowReductionInput(const hlo::Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operand_count() != 2) return std::nullopt;
  const hlo::Shape& input = inst.operand(0)->shape();
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  if (!input.is_array() || input.rank() < 2 || dims.size() != 1 || dims[0] != input.rank() - 1) {
    return std::nullopt;
  }
  return input.dims();
}

std::optional<std::vector<hlo::Instruction*>> RecomputeClosure(
    hlo::Instruction* input, const absl::flat_hash_set<hlo::Instruction*>& members,
    const absl::flat_hash_set<hlo::Instruction*>& inputs, const std::vector<int64_t>& full,
    const std::function<bool(const hlo::Instruction&)>& joinable,
    const std::function<bool(const hlo::Instruction&)>& stored, const RecomputeLimits& limits) {
  if (full.size() < 2) return std::nullopt;
  return ClosureWalk(members, inputs, full, joinable, stored, limits).Run(input);
}

}  // namespace sharc::codegen

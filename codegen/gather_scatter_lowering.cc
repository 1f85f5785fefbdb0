// Halide lowerings of gather and scatter with XLA's general dimension numbers
// (batching dims included), with the interpreter's semantics (hlo/ops/
// gather_scatter_ops.cc): gather clamps each start index so the whole slice
// lies inside the operand; scatter skips an update whose window would leave
// the operand, and applies updates in row-major order of the updates array,
// so an overwriting combiner keeps the last duplicate, as the interpreter
// does.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "codegen/reducer.h"
#include "hlo/ir/computation.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

bool Contains(const hlo::IntList& list, int64_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Operand dims in neither list, in order (offset dims of a gather, window
// dims of a scatter).
std::vector<int64_t> RemainingDims(int64_t rank, const hlo::IntList& a, const hlo::IntList& b) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) dims.push_back(d);
  }
  return dims;
}

// The start index vector of one batch position as Int(64) expressions, one
// per operand dim (0 for dims the index does not address). `batch` holds an
// expression per index dim other than index_vector_dim. A u64 index beyond
// int64 stays "large" (clamped high by gather, skipped by scatter).
std::vector<Expr> StartIndices(const hlo::Instruction& inst, const LoweredValue& indices,
                               const hlo::Shape& operand, const hlo::IntList& start_map,
                               const hlo::IntList& operand_batching,
                               const hlo::IntList& index_batching,
                               const std::vector<Expr>& batch) {
  const int64_t ivd = inst.attr_int("index_vector_dim", -1);
  const int64_t rank = indices.shape.rank();
  std::vector<Expr> start(static_cast<size_t>(operand.rank()), Expr(int64_t{0}));
  for (size_t k = 0; k < start_map.size(); ++k) {
    std::vector<Expr> at;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d) at.push_back(d == ivd ? Expr(static_cast<int>(k)) : batch[next++]);
    Expr raw = Call(indices.func, at);
    Expr value = Halide::cast(Halide::Int(64), raw);
    if (indices.shape.type() == hlo::PrimitiveType::kU64) {
      value = Halide::select(raw > Halide::cast(Halide::UInt(64), Halide::Int(64).max()),
                             Halide::Int(64).max(), value);
    }
    start[static_cast<size_t>(start_map[k])] = value;
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    const int64_t id = index_batching[i];
    start[static_cast<size_t>(operand_batching[i])] =
        Halide::cast(Halide::Int(64), batch[static_cast<size_t>(id < ivd ? id : id - 1)]);
  }
  return start;
}

absl::StatusOr<Lowered> LowerGather(const hlo::Instruction& inst,
                                    absl::Span<const LoweredValue> ops) {
  const hlo::Shape& operand = ops[0].shape;
  const hlo::Shape& result = inst.shape();
  const hlo::IntList& offset_dims = inst.attr_ints("offset_dims");
  const hlo::IntList& collapsed = inst.attr_ints("collapsed_slice_dims");
  const hlo::IntList& operand_batching = inst.attr_ints("operand_batching_dims");
  const hlo::IntList& slice_sizes = inst.attr_ints("slice_sizes");
  std::vector<int64_t> offset_operand_dims =
      RemainingDims(operand.rank(), collapsed, operand_batching);

  std::vector<Halide::Var> vars = HloVars(result.rank());
  Lowered out;
  out.func = Halide::Func(HalideName("gather", inst));
  if (result.num_elements() == 0 || operand.num_elements() == 0) {
    Define(out.func, vars, make_zero(StorageType(result.type())));
    return out;
  }
  std::vector<Expr> batch;
  for (int64_t i = 0; i < result.rank(); ++i) {
    if (!Contains(offset_dims, i)) batch.push_back(vars[static_cast<size_t>(i)]);
  }
  std::vector<Expr> start =
      StartIndices(inst, ops[1], operand, inst.attr_ints("start_index_map"), operand_batching,
                   inst.attr_ints("start_indices_batching_dims"), batch);
  std::vector<Expr> in(static_cast<size_t>(operand.rank()));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const size_t ud = static_cast<size_t>(d);
    Expr s = Halide::clamp(start[ud], Expr(int64_t{0}),
                           Expr(int64_t{operand.dim(d) - slice_sizes[ud]}));
    in[ud] = Halide::cast(Halide::Int(32), s);
  }
  for (size_t k = 0; k < offset_dims.size(); ++k) {
    const size_t od = static_cast<size_t>(offset_operand_dims[k]);
    in[od] = in[od] + vars[static_cast<size_t>(offset_dims[k])];
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    in[static_cast<size_t>(d)] = ClampIndex(in[static_cast<size_t>(d)], operand.dim(d));
  }
  Define(out.func, vars, Call(ops[0].func, in));
  return out;
}

// How a scatter combines the current value with an update.
enum class ScatterCombiner { kBinary, kOverwrite, kKeep, kComputation };

struct ScatterRule {
  ScatterCombiner combiner = ScatterCombiner::kBinary;
  hlo::Opcode op = hlo::Opcode::kAdd;
  const hlo::Computation* reducer = nullptr;  // for kComputation
};

absl::StatusOr<ScatterRule> GetScatterRule(const hlo::Instruction& inst) {
  if (inst.operand_count() != 3) {
    return LoweringError(inst, "variadic scatter (several operands) has no Halide lowering; run "
                               "with --backend interpreter");
  }
  const hlo::Computation* reducer = inst.attr_computation("to_apply");
  if (reducer == nullptr) return LoweringError(inst, "has no combiner");
  ScatterRule rule;
  if (std::optional<hlo::Opcode> op = PlainBinaryReducer(*reducer)) {
    rule.op = *op;
    return rule;
  }
  const hlo::Instruction* root = reducer->root();
  if (reducer->num_parameters() == 2 && root != nullptr &&
      root->opcode() == hlo::Opcode::kParameter) {
    rule.combiner = root == reducer->parameter(1) ? ScatterCombiner::kOverwrite
                                                  : ScatterCombiner::kKeep;
    return rule;
  }
  // Any other elementwise combiner goes through the kernels' own lowerings.
  if (absl::Status s = CheckReducerLowerable(inst, *reducer); !s.ok()) return s;
  rule.combiner = ScatterCombiner::kComputation;
  rule.reducer = reducer;
  return rule;
}

absl::StatusOr<Lowered> LowerScatter(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  absl::StatusOr<ScatterRule> rule = GetScatterRule(inst);
  if (!rule.ok()) return rule.status();
  const hlo::Shape& operand = ops[0].shape;
  const hlo::Shape& updates = ops[2].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  const hlo::IntList& window_dims = inst.attr_ints("update_window_dims");
  const hlo::IntList& inserted = inst.attr_ints("inserted_window_dims");
  const hlo::IntList& input_batching = inst.attr_ints("input_batching_dims");
  std::vector<int64_t> window_operand_dims =
      RemainingDims(operand.rank(), inserted, input_batching);

  std::vector<Halide::Var> vars = HloVars(operand.rank());
  Lowered out;
  out.func = Halide::Func(HalideName("scatter", inst));
  Define(out.func, vars,
         operand.num_elements() == 0 ? make_zero(StorageType(t)) : Call(ops[0].func, AsExprs(vars)));
  if (operand.num_elements() == 0 || updates.num_elements() == 0 ||
      rule->combiner == ScatterCombiner::kKeep) {
    return out;
  }
  // The interpreter visits updates in row-major order, so the last updates
  // dim is the innermost (first) RDom dim; the update loop stays serial.
  std::vector<Halide::Range> ranges;
  for (int64_t d = updates.rank(); d-- > 0;) ranges.emplace_back(0, static_cast<int>(updates.dim(d)));
  if (ranges.empty()) ranges.emplace_back(0, 1);
  Halide::RDom r(ranges, HalideName("u", inst));
  std::vector<Expr> u;
  for (int64_t d = 0; d < updates.rank(); ++d) u.push_back(r[static_cast<int>(updates.rank() - 1 - d)]);

  std::vector<Expr> batch;
  std::vector<int64_t> window_extent(static_cast<size_t>(operand.rank()), 1);
  for (int64_t i = 0; i < updates.rank(); ++i) {
    auto w = std::find(window_dims.begin(), window_dims.end(), i);
    if (w == window_dims.end()) {
      batch.push_back(u[static_cast<size_t>(i)]);
    } else {
      window_extent[static_cast<size_t>(window_operand_dims[static_cast<size_t>(w - window_dims.begin())])] =
          updates.dim(i);
    }
  }
  std::vector<Expr> start = StartIndices(inst, ops[1], operand,
                                         inst.attr_ints("scatter_dims_to_operand_dims"),
                                         input_batching,
                                         inst.attr_ints("scatter_indices_batching_dims"), batch);
  Expr valid = const_true();
  std::vector<Expr> target(static_cast<size_t>(operand.rank()));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const size_t ud = static_cast<size_t>(d);
    valid = valid && start[ud] >= Expr(int64_t{0}) &&
            start[ud] <= Expr(int64_t{operand.dim(d) - window_extent[ud]});
    // Only used where valid, so the narrowing cannot wrap there.
    target[ud] = Halide::cast(Halide::Int(32),
                              Halide::clamp(start[ud], Expr(int64_t{0}), Expr(int64_t{operand.dim(d)})));
  }
  for (size_t k = 0; k < window_dims.size(); ++k) {
    const size_t od = static_cast<size_t>(window_operand_dims[k]);
    target[od] = target[od] + u[static_cast<size_t>(window_dims[k])];
  }
  // Clamped so Halide can bound the writes; skipped rows never write.
  for (int64_t d = 0; d < operand.rank(); ++d) {
    target[static_cast<size_t>(d)] = ClampIndex(target[static_cast<size_t>(d)], operand.dim(d));
  }
  r.where(valid);
  Expr current = Call(out.func, target);
  Expr update = Call(ops[2].func, u);
  Expr value;
  if (rule->combiner == ScatterCombiner::kOverwrite) {
    value = update;
  } else if (rule->combiner == ScatterCombiner::kComputation) {
    absl::StatusOr<std::vector<Expr>> v = ApplyReducer(inst, *rule->reducer, {current, update});
    if (!v.ok()) return v.status();
    value = (*v)[0];
  } else {
    value = ToStorage(Combine(rule->op, ToCompute(current, t), ToCompute(update, t)), t);
  }
  std::vector<Expr> lhs(target.rbegin(), target.rend());
  out.func(lhs) = value;
  out.kind = LoweringKind::kReduction;
  const hlo::Shape shape = inst.shape();
  out.schedule = [shape](Halide::Func f) {
    // The copy of the operand is data-parallel; the updates are ordered.
    f.compute_root();
    const int width = 64 / std::max<int>(1, static_cast<int>(hlo::ByteWidth(shape.type())));
    if (shape.rank() > 0 && shape.dim(shape.rank() - 1) >= width) f.vectorize(f.args()[0], width);
    f.update(0).unscheduled();
  };
  return out;
}

}  // namespace

void RegisterGatherScatterLowerings(LoweringTable& table) {
  table.Add(hlo::Opcode::kGather, LowerGather);
  table.Add(hlo::Opcode::kScatter, LowerScatter,
            [](const hlo::Instruction& inst) { return GetScatterRule(inst).status(); });
}

}  // namespace sharc::codegen

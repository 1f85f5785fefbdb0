// Halide lowerings of gather and scatter with XLA's general dimension numbers
// (batching dims included), with the interpreter's semantics (hlo/ops/
// gather_scatter_ops.cc): gather clamps each start index so the whole slice
// lies inside the operand; scatter skips an update whose window would leave
// the operand, and applies updates in row-major order of the updates array,
// so an overwriting combiner keeps the last duplicate, as the interpreter
// does. A variadic scatter (N operands, N updates, a combiner over 2N
// scalars) updates all N values of an element together.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "codegen/reducer.h"
#include "hlo/base/status_macros.h"
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

// Number of operands N of a scatter (N operands, the indices, N updates).
int64_t ScatterOperandCount(const hlo::Instruction& inst) { return (inst.operand_count() - 1) / 2; }

absl::StatusOr<ScatterRule> GetScatterRule(const hlo::Instruction& inst) {
  const hlo::Computation* reducer = inst.attr_computation("to_apply");
  if (reducer == nullptr) return LoweringError(inst, "has no combiner");
  ScatterRule rule;
  if (ScatterOperandCount(inst) == 1) {
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
  }
  // Any other elementwise combiner (all of a variadic scatter's, over 2N
  // scalars) goes through the kernels' own lowerings.
  if (absl::Status s = CheckReducerLowerable(inst, *reducer); !s.ok()) return s;
  rule.combiner = ScatterCombiner::kComputation;
  rule.reducer = reducer;
  return rule;
}

// The update loop of a scatter: an RDom over the updates (the last updates
// dim innermost: the interpreter visits updates in row-major order), with
// `phases` extra innermost steps per update, the operand element each
// update goes to and whether it is applied (its window fits).
struct ScatterLoop {
  Halide::RDom r;
  std::vector<Expr> u;       // the updates index, HLO order
  std::vector<Expr> target;  // the operand index, HLO order
  Expr valid;
  // HLO updates dim -> index of its RVar in r.
  std::vector<int> rvar_of_dim;
};

ScatterLoop GetScatterLoop(const hlo::Instruction& inst, const LoweredValue& indices,
                           const hlo::Shape& operand, const hlo::Shape& updates, int phases) {
  const hlo::IntList& window_dims = inst.attr_ints("update_window_dims");
  const hlo::IntList& inserted = inst.attr_ints("inserted_window_dims");
  const hlo::IntList& input_batching = inst.attr_ints("input_batching_dims");
  std::vector<int64_t> window_operand_dims =
      RemainingDims(operand.rank(), inserted, input_batching);
  ScatterLoop loop;
  std::vector<Halide::Range> ranges;
  if (phases > 1) ranges.emplace_back(0, phases);
  const int first = static_cast<int>(ranges.size());
  for (int64_t d = updates.rank(); d-- > 0;) ranges.emplace_back(0, static_cast<int>(updates.dim(d)));
  if (ranges.empty()) ranges.emplace_back(0, 1);
  loop.r = Halide::RDom(ranges, HalideName("u", inst));
  for (int64_t d = 0; d < updates.rank(); ++d) {
    loop.rvar_of_dim.push_back(first + static_cast<int>(updates.rank() - 1 - d));
    loop.u.push_back(loop.r[loop.rvar_of_dim.back()]);
  }
  std::vector<Expr> batch;
  std::vector<int64_t> window_extent(static_cast<size_t>(operand.rank()), 1);
  for (int64_t i = 0; i < updates.rank(); ++i) {
    auto w = std::find(window_dims.begin(), window_dims.end(), i);
    if (w == window_dims.end()) {
      batch.push_back(loop.u[static_cast<size_t>(i)]);
    } else {
      window_extent[static_cast<size_t>(window_operand_dims[static_cast<size_t>(w - window_dims.begin())])] =
          updates.dim(i);
    }
  }
  std::vector<Expr> start = StartIndices(inst, indices, operand,
                                         inst.attr_ints("scatter_dims_to_operand_dims"),
                                         input_batching,
                                         inst.attr_ints("scatter_indices_batching_dims"), batch);
  loop.valid = const_true();
  loop.target.resize(static_cast<size_t>(operand.rank()));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const size_t ud = static_cast<size_t>(d);
    loop.valid = loop.valid && start[ud] >= Expr(int64_t{0}) &&
                 start[ud] <= Expr(int64_t{operand.dim(d) - window_extent[ud]});
    // Only used where valid, so the narrowing cannot wrap there.
    loop.target[ud] = Halide::cast(
        Halide::Int(32), Halide::clamp(start[ud], Expr(int64_t{0}), Expr(int64_t{operand.dim(d)})));
  }
  for (size_t k = 0; k < window_dims.size(); ++k) {
    const size_t od = static_cast<size_t>(window_operand_dims[k]);
    loop.target[od] = loop.target[od] + loop.u[static_cast<size_t>(window_dims[k])];
  }
  // Clamped so Halide can bound the writes; skipped rows never write.
  for (int64_t d = 0; d < operand.rank(); ++d) {
    loop.target[static_cast<size_t>(d)] = ClampIndex(loop.target[static_cast<size_t>(d)], operand.dim(d));
  }
  loop.r.where(loop.valid);
  return loop;
}

// Updates that share their scatter (batch) index go to distinct operand
// elements (distinct window offsets from one start), so the loops over the
// window dims may run in parallel, provided they are the updates' innermost
// dims: then the row-major order of the updates is "each batch index in
// turn, its whole window", so every element still receives its updates one
// at a time in the interpreter's order. Returns the RVar index to
// parallelise (the outermost window dim), or -1 when that does not hold or
// the windows are too small to pay for a parallel loop per batch index.
// The first of the updates' window dims where they are its innermost dims,
// else -1.
int64_t TrailingWindowStart(const hlo::Instruction& inst, const hlo::Shape& updates) {
  const hlo::IntList& window_dims = inst.attr_ints("update_window_dims");
  if (window_dims.empty()) return -1;
  const int64_t first = updates.rank() - static_cast<int64_t>(window_dims.size());
  for (size_t k = 0; k < window_dims.size(); ++k) {
    if (window_dims[k] != first + static_cast<int64_t>(k)) return -1;
  }
  return first;
}

int ParallelWindowRVar(const hlo::Instruction& inst, const hlo::Shape& updates,
                       const ScatterLoop& loop) {
  constexpr int64_t kMinParallelWindow = 1 << 13;
  const int64_t first = TrailingWindowStart(inst, updates);
  if (first < 0) return -1;
  int64_t volume = 1;
  for (int64_t d = first; d < updates.rank(); ++d) volume *= updates.dim(d);
  if (volume < kMinParallelWindow || updates.dim(first) < 2) return -1;
  return loop.rvar_of_dim[static_cast<size_t>(first)];
}

// The RVar of the updates' innermost dim where it is a window dim that runs
// along the operand's innermost dim (an embedding gradient's row of width
// values), so that its updates go to consecutive elements and may be one
// vector (distinct elements, as in ParallelWindowRVar); else -1. The medium
// training step's embedding gradient, two scatter-adds of 2048 rows of 256
// into [1024,256] (and their checks), took 1.15-1.25 ms vectorised against
// 1.49-1.71 with scalar updates (Emerald Rapids, one thread, alternated
// twice under the profiler).
int VectorWindowRVar(const hlo::Instruction& inst, const hlo::Shape& operand,
                     const hlo::Shape& updates, const ScatterLoop& loop) {
  if (TrailingWindowStart(inst, updates) < 0 || operand.rank() == 0 ||
      updates.dim(updates.rank() - 1) < VectorLanes(updates.type())) {
    return -1;
  }
  // Window dims map in order onto the operand dims not inserted (nor
  // batching), so the last one is the operand's last unless that is one.
  for (const char* attr : {"inserted_window_dims", "input_batching_dims"}) {
    if (!inst.has_attr(attr)) continue;
    for (int64_t d : inst.attr_ints(attr)) {
      if (d == operand.rank() - 1) return -1;
    }
  }
  return loop.rvar_of_dim[static_cast<size_t>(updates.rank() - 1)];
}

// Schedules a scatter's state: the copy of the operands is data-parallel;
// the update loop is ordered, except for the window loops (see above).
void ScheduleScatter(Halide::Func state, const hlo::Shape& operand, const hlo::Shape& element,
                     Halide::RDom r, int parallel_rvar, int vector_rvar = -1) {
  state.compute_root();
  const int width = VectorLanes(element.type());
  if (operand.rank() > 0 && operand.dim(operand.rank() - 1) >= width) {
    state.vectorize(state.args()[0], width);
  }
  if (!state.has_update_definition()) return;
  if (parallel_rvar >= 0) {
    // Halide cannot prove the writes of one batch index distinct (they go
    // through the start index); they are (ParallelWindowRVar).
    state.update(0).allow_race_conditions().parallel(r[parallel_rvar]);
  } else if (vector_rvar >= 0) {
    state.update(0).allow_race_conditions().vectorize(r[vector_rvar], width);
  } else {
    state.update(0).unscheduled();
  }
}

absl::StatusOr<Lowered> LowerScatter(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  ASSIGN_OR_RETURN(ScatterRule rule, GetScatterRule(inst));
  const size_t n = static_cast<size_t>(ScatterOperandCount(inst));
  const hlo::Shape& operand = ops[0].shape;
  const LoweredValue& indices = ops[n];
  const hlo::Shape& updates = ops[n + 1].shape;
  const hlo::Shape element = inst.shape().is_tuple() ? inst.shape().tuple_shape(0) : inst.shape();

  std::vector<Halide::Var> vars = HloVars(operand.rank());
  const std::vector<Expr> kept = AsExprs(vars);
  const std::vector<Expr> pure(kept.rbegin(), kept.rend());
  // The operands' values (zeros for an empty operand, which is never read).
  std::vector<Expr> operands;
  for (size_t k = 0; k < n; ++k) {
    operands.push_back(operand.num_elements() == 0 ? make_zero(StorageType(ops[k].shape.type()))
                                                   : Call(ops[k].func, kept));
  }
  const bool nothing_to_do = operand.num_elements() == 0 || updates.num_elements() == 0 ||
                             rule.combiner == ScatterCombiner::kKeep;
  Lowered out;
  out.func = Halide::Func(HalideName("scatter", inst));
  if (n == 1) {
    const hlo::PrimitiveType t = element.type();
    out.func(pure) = operands[0];
    if (nothing_to_do) return out;
    ScatterLoop loop = GetScatterLoop(inst, indices, operand, updates, 1);
    Expr current = Call(out.func, loop.target);
    Expr update = Call(ops[2].func, loop.u);
    Expr value;
    if (rule.combiner == ScatterCombiner::kOverwrite) {
      value = update;
    } else if (rule.combiner == ScatterCombiner::kComputation) {
      ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, *rule.reducer, {current, update}));
      value = v[0];
    } else {
      value = ToStorage(Combine(rule.op, ToCompute(current, t), ToCompute(update, t)), t);
    }
    std::vector<Expr> lhs(loop.target.rbegin(), loop.target.rend());
    out.func(lhs) = value;
    out.kind = LoweringKind::kReduction;
    const Halide::RDom r = loop.r;
    const int parallel_rvar = ParallelWindowRVar(inst, updates, loop);
    const int vector_rvar = VectorWindowRVar(inst, operand, updates, loop);
    out.schedule = [operand, element, r, parallel_rvar, vector_rvar](Halide::Func f) {
      ScheduleScatter(f, operand, element, r, parallel_rvar, vector_rvar);
    };
    return out;
  }

  // Several operands: a Tuple-valued state of 2N values per element, the
  // current values c and a scratch copy s. Halide 14 stores a Tuple update's
  // values one after the other and may re-read a value already stored in
  // the same step (see LowerComputationReduce), so each update takes two
  // steps in which nothing read is overwritten: step 0 keeps c and sets
  // s = combiner(c, update); step 1 sets c = s and keeps s.
  if (nothing_to_do) {
    out.func(pure) = Halide::Tuple(operands);
    return out;
  }
  Halide::Func state(HalideName("scatter_state", inst));
  std::vector<Expr> init = operands;
  for (size_t k = 0; k < n; ++k) init.push_back(make_zero(StorageType(ops[k].shape.type())));
  state(pure) = Halide::Tuple(init);
  ScatterLoop loop = GetScatterLoop(inst, indices, operand, updates, 2);
  std::vector<Expr> lhs(loop.target.rbegin(), loop.target.rend());
  Expr phase = loop.r[0];
  std::vector<Expr> args, scratch;
  for (size_t k = 0; k < n; ++k) args.push_back(state(lhs)[static_cast<int>(k)]);
  for (size_t k = 0; k < n; ++k) scratch.push_back(state(lhs)[static_cast<int>(n + k)]);
  for (size_t k = 0; k < n; ++k) args.push_back(Call(ops[n + 1 + k].func, loop.u));
  ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, *rule.reducer, args));
  std::vector<Expr> next;
  for (size_t k = 0; k < n; ++k) next.push_back(Halide::select(phase == 0, args[k], scratch[k]));
  for (size_t k = 0; k < n; ++k) next.push_back(Halide::select(phase == 0, v[k], scratch[k]));
  state(lhs) = Halide::Tuple(next);
  std::vector<Expr> result;
  for (size_t k = 0; k < n; ++k) result.push_back(state(pure)[static_cast<int>(k)]);
  // The result reads the current values; it is inlined into the outputs.
  out.func(pure) = Halide::Tuple(result);
  out.kind = LoweringKind::kReduction;
  out.helpers = {state};
  const Halide::RDom r = loop.r;
  const int parallel_rvar = ParallelWindowRVar(inst, updates, loop);
  out.schedule = [state, operand, element, r, parallel_rvar](Halide::Func) {
    ScheduleScatter(state, operand, element, r, parallel_rvar);
  };
  return out;
}

}  // namespace

void RegisterGatherScatterLowerings(LoweringTable& table) {
  table.Add(hlo::Opcode::kGather, LowerGather);
  table.Add(hlo::Opcode::kScatter, LowerScatter,
            [](const hlo::Instruction& inst) { return GetScatterRule(inst).status(); });
  table.AllowTupleResult(hlo::Opcode::kScatter);
}

}  // namespace sharc::codegen

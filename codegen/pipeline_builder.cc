// Building and scheduling a kernel's Halide pipeline.
//
// Schedule policy (perf_anchors.md §2-3):
// - every op is inlined into its consumer unless it is a reduction or a dot;
// - each output owns its loops: innermost dim vectorised at the native width
//   (64 bytes with AVX-512, 32 with AVX2), outer loop parallel when there is
//   enough work;
// - a kernel of one [rows..., C] output whose reductions give one value per
//   row computes them per row inside the output's loop (row_kernel_schedule.h);
// - a dot whose only path to an output is elementwise with the dot's dims is
//   computed inside that output's tiles (the epilogue is fused into the GEMM
//   micro-kernel); other dots and reductions are computed once (compute_root)
//   with their own schedule.
#include "codegen/pipeline_builder.h"

#include <algorithm>
#include <sstream>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/halide_status.h"
#include "codegen/lowering.h"
#include "codegen/page_walk.h"
#include "codegen/row_kernel_schedule.h"
#include "codegen/value_sign.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

// Outputs below this stay in the caches, where the walk gains nothing.
constexpr int64_t kInterleaveMinBytes = int64_t{4} << 20;
// Row groups needed before rows are walked in groups: the groups are the
// parallel tasks, and the threads need several each to share.
constexpr int64_t kMinRowGroups = 8;
// A rank-1 output's parallel tasks are multiples of this: one group of
// pages walked side by side.
constexpr int64_t kTaskQuantumBytes = kInterleavedPages * kPageBytes;
// The least work of a parallel task over rows, in elements (as a rank-1
// f32 output's smallest task, kTaskQuantumBytes).
constexpr int64_t kMinTaskElements = 4096;

// Vectorise the innermost dim, parallelise over the rest; walk pages side by
// side when `interleave` and the output is big enough. Returns how far
// ahead, in elements of the output, a streamed input's loads should
// prefetch for the loop order chosen (0: the object writer's default).
int64_t ScheduleElementwise(Halide::Func f, const hlo::Shape& shape, bool interleave) {
  const int64_t rank = shape.rank();
  if (rank == 0 || shape.num_elements() == 0) return 0;
  std::vector<Halide::Var> args = f.args();  // innermost first
  const int width = VectorLanes(shape.type());
  const int64_t inner = shape.dim(rank - 1);
  const int64_t total = shape.num_elements();
  const bool parallel = total >= (1 << 15);
  interleave = interleave && parallel && shape.byte_size() >= kInterleaveMinBytes;
  const int64_t page = kPageBytes / hlo::ByteWidth(shape.type());  // elements
  const int64_t step = kPageStepBytes / hlo::ByteWidth(shape.type());  // elements
  if (rank == 1) {
    if (!parallel) {
      if (inner >= width) f.vectorize(args[0], width);
      return 0;
    }
    // Tasks of 16 KiB, or about 1/256 of a big array: each task costs a
    // trip through the runtime's loop pool, which 4096 tasks of 16 KiB in a
    // 64 MiB array would notice. In bytes, a multiple of kTaskQuantumBytes
    // (a group of pages), so that a task is whole groups of pages for every
    // element width and vector width.
    const int64_t bytes = shape.byte_size();
    const int64_t task_bytes =
        std::max(kTaskQuantumBytes, bytes / 256 / kTaskQuantumBytes * kTaskQuantumBytes);
    const int64_t task = task_bytes / hlo::ByteWidth(shape.type());  // elements
    Halide::Var xo("xo"), xi("xi");
    f.split(args[0], xo, xi, static_cast<int>(task)).parallel(xo);
    if (!interleave || task % (kInterleavedPages * page) != 0 || page % step != 0) {
      f.vectorize(xi, width);
      return 0;
    }
    // Within a task: groups of kInterleavedPages pages; in a group, each
    // page's first `step` elements, then each page's next, and so on.
    Halide::Var group("page_group"), in_group("in_group"), p("page"), in_page("in_page");
    Halide::Var chunk("chunk"), v("v"), vo("vo"), vi("vi");
    f.split(xi, group, in_group, static_cast<int>(kInterleavedPages * page))
        .split(in_group, p, in_page, static_cast<int>(page))
        .split(in_page, chunk, v, static_cast<int>(step))
        .split(v, vo, vi, width)
        .reorder(vi, vo, p, chunk, group, xo)
        .fuse(vo, p, vo)
        .vectorize(vi);
    // The same place in the next group of pages.
    return kInterleavedPages * page;
  }
  // Every dim above the innermost as one row dim: a batch of one ([1, S, H])
  // is then parallel over its rows like any other output.
  Halide::Var row = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    Halide::Var fused(row.name() + "_" + args[i].name());
    f.fuse(row, args[i], fused);
    row = fused;
  }
  const int64_t rows = total / inner;
  // Rows of a page or more, kInterleavedPages at a time, when there are
  // enough row groups to share among the threads.
  if (interleave && rows >= kInterleavedPages * kMinRowGroups && inner % step == 0 &&
      inner >= page) {
    Halide::Var yo("row_group"), yi("row"), xo("chunk"), v("v"), vo("vo"), vi("vi");
    f.split(row, yo, yi, kInterleavedPages, Halide::TailStrategy::GuardWithIf)
        .split(args[0], xo, v, static_cast<int>(step))
        .split(v, vo, vi, width)
        .reorder(vi, vo, yi, xo, yo)
        .fuse(vo, yi, vo)
        .vectorize(vi)
        .parallel(yo);
    // Ahead in its own row when the row is long enough, else to the same
    // place in the next group of rows.
    return inner >= kInterleavedPages * page ? page : kInterleavedPages * inner;
  }
  if (inner >= width) f.vectorize(args[0], width);
  if (parallel && rows >= 2) {
    // Tasks of at least kMinTaskElements: short rows are grouped, so that
    // a task is worth its trip through the runtime's loop pool.
    const int64_t rows_per_task = std::max<int64_t>(1, (kMinTaskElements + inner - 1) / inner);
    if (rows_per_task == 1) {
      f.parallel(row);
    } else {
      Halide::Var task("row_task"), in_task("row_in_task");
      f.split(row, task, in_task, static_cast<int>(rows_per_task), Halide::TailStrategy::GuardWithIf)
          .parallel(task);
    }
  }
  return 0;
}

// Schedules a reduction's update: parallel over its outermost kept dim and
// vectorised across the innermost kept dim when the input's innermost dim is
// not reduced.
//
// A reduce that keeps its input's innermost dim (a bias gradient: f32[16,
// 128,1024] summed over {0,1}) walks the input in rows: the kept innermost
// dim inside the reduction's loops, so each step reads a contiguous row of
// the input into a row of accumulators, rather than one vector of a column
// through every row (16 streams 512 KiB apart); each output element still
// folds in the same order. A rank-1 result of several vectors' width is
// split over the threads by columns. f32[16,128,1024] -> f32[1024] took
// 2.0-2.2 ms (4 GB/s) column by column (docs/performance.md).
void ScheduleReduction(Halide::Func f, const hlo::Shape& shape, bool keeps_innermost_dim) {
  f.compute_root();
  if (shape.rank() == 0 || shape.num_elements() == 0) return;
  std::vector<Halide::Var> args = f.args();
  const int width = VectorLanes(shape.type());
  const int64_t inner = shape.dim(shape.rank() - 1);
  if (keeps_innermost_dim && inner >= 4 * width) {
    const int64_t chunks = shape.rank() == 1 ? std::min<int64_t>(8, inner / (4 * width)) : 1;
    std::vector<Halide::VarOrRVar> order;
    Halide::Var column = args[0], part("column_part");
    if (chunks > 1) {
      f.update().split(args[0], part, column, static_cast<int>((inner + chunks - 1) / chunks),
                       Halide::TailStrategy::GuardWithIf);
    }
    order.push_back(column);
    for (const Halide::Internal::ReductionVariable& rv : f.update().get_schedule().rvars()) {
      order.push_back(Halide::RVar(rv.var));
    }
    if (chunks > 1) order.push_back(part);
    for (size_t i = 1; i < args.size(); ++i) order.push_back(args[i]);
    f.update().reorder(order).vectorize(column, width);
    f.vectorize(args[0], width);
    if (chunks > 1) {
      f.update().parallel(part);
    } else if (shape.rank() >= 2 && shape.num_elements() >= 64) {
      f.parallel(args.back());
      f.update().parallel(args.back());
    }
    return;
  }
  if (inner >= width) {
    f.vectorize(args[0], width);
    f.update().vectorize(args[0], width);
  }
  if (shape.num_elements() >= 64 && shape.rank() >= 2) {
    f.parallel(args.back());
    f.update().parallel(args.back());
  }
}

// True if `inst`'s only consumers up to `output` are elementwise ops with
// the same dims, so its loops can be the output's loops.
bool FeedsOnlyElementwise(const hlo::Instruction* inst, const hlo::Instruction* output,
                          const absl::flat_hash_map<const hlo::Instruction*, int>& in_body) {
  const hlo::Instruction* v = inst;
  while (v != output) {
    if (v->users().size() != 1) return false;
    const hlo::Instruction* u = v->users()[0];
    if (!in_body.contains(u) || !hlo::GetOpDef(u->opcode()).traits.elementwise ||
        u->opcode() == hlo::Opcode::kCopy || u->shape().dims() != inst->shape().dims()) {
      return false;
    }
    v = u;
  }
  return true;
}

absl::StatusOr<BuiltPipeline> Build(const KernelGraph& graph) {
  BuiltPipeline built;
  absl::flat_hash_map<const hlo::Instruction*, LoweredValue> values;
  absl::flat_hash_map<const hlo::Instruction*, int> in_body;
  for (size_t i = 0; i < graph.body.size(); ++i) in_body[graph.body[i]] = static_cast<int>(i);

  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const hlo::Shape& shape = graph.inputs[i]->shape();
    Halide::ImageParam param(StorageType(shape.type()), static_cast<int>(shape.rank()),
                             absl::StrCat("in", i));
    std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims());
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int hd = static_cast<int>(shape.rank() - 1 - d);
      param.dim(hd).set_bounds(0, static_cast<int>(shape.dim(d)));
      param.dim(hd).set_stride(static_cast<int>(strides[static_cast<size_t>(d)]));
    }
    built.arguments.push_back(param);
    std::vector<Halide::Var> vars = HloVars(shape.rank());
    Halide::Func f(absl::StrCat("input", i));
    // An empty input is never read; a constant keeps Halide from touching it.
    Define(f, vars, shape.num_elements() == 0 ? make_zero(StorageType(shape.type()))
                                              : Call(Halide::Func(param), AsExprs(vars)));
    values[graph.inputs[i]] = LoweredValue{f, shape};
  }

  absl::flat_hash_map<const hlo::Instruction*, Lowered> lowered;
  KernelValueSigns signs([&](const hlo::Instruction& v) { return in_body.contains(&v); });
  for (const hlo::Instruction* inst : graph.body) {
    absl::Status ok = CheckLowerable(*inst);
    if (!ok.ok()) return ok;
    std::vector<LoweredValue> operands;
    for (const hlo::Instruction* op : inst->operands()) {
      auto it = values.find(op);
      if (it == values.end()) {
        return LoweringError(*inst, absl::StrCat("operand ", op->name(), " is not in the kernel"));
      }
      operands.push_back(it->second);
    }
    ASSIGN_OR_RETURN(Lowered l, FindLoweringRule(inst->opcode())->lower(*inst, operands));
    values[inst] = LoweredValue{l.func, inst->shape(), signs.NonPositive(*inst)};
    lowered[inst] = std::move(l);
  }

  std::vector<Halide::Func> outputs;
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const hlo::Instruction* o = graph.outputs[k];
    const hlo::Shape& shape = OutputShape(graph, k);
    std::vector<Halide::Var> vars = HloVars(shape.rank());
    Halide::Func out(absl::StrCat("out", k));
    const int64_t element = OutputElement(graph, k);
    const Halide::Func& source = values.at(o).func;
    if (element >= 0 && source.outputs() > 1) {
      std::vector<Halide::Expr> at(vars.rbegin(), vars.rend());
      Define(out, vars, Halide::Func(source)(at)[static_cast<int>(element)]);
    } else {
      Define(out, vars, Call(source, AsExprs(vars)));
    }
    std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims());
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int hd = static_cast<int>(shape.rank() - 1 - d);
      out.output_buffer().dim(hd).set_bounds(0, static_cast<int>(shape.dim(d)));
      out.output_buffer().dim(hd).set_stride(static_cast<int>(strides[static_cast<size_t>(d)]));
    }
    outputs.push_back(out);
  }

  // A row kernel (softmax, layernorm) computes its reductions inside the
  // output's row loop; otherwise dots first: one may claim an output's loops.
  std::vector<bool> output_scheduled(outputs.size(), false);
  const bool row_kernel = outputs.size() == 1 && ScheduleRowKernel(graph, lowered, outputs[0]);
  if (row_kernel) output_scheduled[0] = true;
  for (const hlo::Instruction* inst : graph.body) {
    if (row_kernel) break;
    Lowered& l = lowered.at(inst);
    if (l.kind == LoweringKind::kDot) {
      built.linear_walk = false;
      bool fused = false;
      for (size_t k = 0; k < outputs.size() && !fused; ++k) {
        if (!output_scheduled[k] && FeedsOnlyElementwise(inst, graph.outputs[k], in_body) &&
            OutputShape(graph, k).dims() == inst->shape().dims()) {
          l.schedule(outputs[k]);
          output_scheduled[k] = true;
          fused = true;
        }
      }
      if (!fused) {
        l.func.compute_root();
        l.schedule(l.func);
      }
    } else if (l.kind == LoweringKind::kReduction) {
      if (l.schedule) {
        l.schedule(l.func);
      } else {
        const bool keeps_innermost_dim =
            inst->opcode() == hlo::Opcode::kReduce && inst->operand_count() == 2 &&
            inst->shape().is_array() && !absl::c_linear_search(inst->attr_ints("dimensions"),
                                                              inst->operand(0)->shape().rank() - 1);
        ScheduleReduction(l.func, inst->shape(), keeps_innermost_dim);
      }
    }
  }
  // Pages are walked side by side only where memory, not arithmetic, sets
  // the pace (see kInterleavedPages).
  const bool memory_bound =
      std::none_of(graph.body.begin(), graph.body.end(), [](const hlo::Instruction* inst) {
        const LoweringRule* rule = FindLoweringRule(inst->opcode());
        return rule != nullptr && rule->compute_bound;
      });
  int64_t prefetch_elements = -1;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (output_scheduled[k]) continue;
    const int64_t ahead = ScheduleElementwise(outputs[k], OutputShape(graph, k), memory_bound);
    // One distance serves every load of the kernel: outputs that walk
    // differently leave it at the default.
    if (prefetch_elements < 0) prefetch_elements = ahead;
    if (prefetch_elements != ahead) prefetch_elements = 0;
  }
  built.prefetch_elements = std::max<int64_t>(prefetch_elements, 0);
  built.pipeline = Halide::Pipeline(outputs);
  std::ostringstream text;
  for (const hlo::Instruction* inst : graph.body) {
    const Halide::Func& f = lowered.at(inst).func;
    text << inst->name() << " -> " << f.name() << "(";
    for (size_t i = 0; i < f.args().size(); ++i) text << (i ? ", " : "") << f.args()[i].name();
    text << ") = ";
    for (size_t i = 0; i < f.values().size(); ++i) text << (i ? ", " : "") << f.values()[i];
    text << "\n";
    if (f.has_update_definition()) {
      text << "  update: " << f.name() << "(...) =";
      for (size_t i = 0; i < f.update_values().size(); ++i) text << " " << f.update_values()[i];
      text << "\n";
    }
    // Where the value is stored, if it is not inlined into its readers.
    // Locking fixes each Func's levels as Halide's compile would (it also
    // fills an unset store level from the compute level), so nothing may be
    // scheduled after this point.
    Halide::Internal::Function function = f.function();
    function.lock_loop_levels();
    const Halide::LoopLevel at = function.schedule().compute_level();
    if (!at.is_inlined()) text << "  computed at " << at.to_string() << "\n";
  }
  built.lowered_text = text.str();
  return built;
}

}  // namespace

absl::StatusOr<BuiltPipeline> BuildPipeline(const KernelGraph& graph) {
  // Build returns a StatusOr of its own: unwrap the one CallHalide adds.
  absl::StatusOr<absl::StatusOr<BuiltPipeline>> built =
      CallHalide(absl::StrCat("build kernel '", graph.name, "'"), [&] { return Build(graph); });
  if (!built.ok()) return built.status();
  return *std::move(built);
}

}  // namespace sharc::codegen

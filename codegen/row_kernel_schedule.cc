// Row kernels (see row_kernel_schedule.h).
#include "codegen/row_kernel_schedule.h"

#include "absl/container/flat_hash_set.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

// Rows per parallel task: enough work to amortise a task, few enough that
// both cores get many tasks.
constexpr int kRowsPerTask = 8;

// True if a reduction of the kernel consumes `inst`, directly or through
// other body values.
bool FeedsReduction(const hlo::Instruction* inst,
                    const absl::flat_hash_map<const hlo::Instruction*, Lowered>& lowered) {
  std::vector<const hlo::Instruction*> work = {inst};
  absl::flat_hash_set<const hlo::Instruction*> seen;
  while (!work.empty()) {
    const hlo::Instruction* v = work.back();
    work.pop_back();
    for (const hlo::Instruction* u : v->users()) {
      auto it = lowered.find(u);
      if (it == lowered.end() || !seen.insert(u).second) continue;
      if (it->second.kind == LoweringKind::kReduction) return true;
      work.push_back(u);
    }
  }
  return false;
}

// True if `inst`, and the full-size values it is computed from, are few and
// all cheap (LoweringRule::cheap): recomputing it in each reader then costs
// less than storing the row and loading it back, and leaves the readers
// loading the kernel's input, whose loads carry the prefetch of the next
// row (object_writer.h). layernorm's x - mean over [4096,1024] on 2 threads:
// 0.94-0.99 -> 0.88-0.93 ms in three alternations, level within the noise on
// 1 thread (docs/performance_log.md). The walk stops at inputs, at reductions,
// and at per-row values (dims `rows`) and scalars, which Halide hoists out
// of the row's loop whatever they cost; any other value (a per-column
// vector, say) is counted like the row's own.
bool CheapToRecompute(const hlo::Instruction* inst, const std::vector<int64_t>& rows,
                      const absl::flat_hash_map<const hlo::Instruction*, Lowered>& lowered) {
  constexpr int kMaxOps = 4;
  std::vector<const hlo::Instruction*> work = {inst};
  absl::flat_hash_set<const hlo::Instruction*> seen;
  int ops = 0;
  while (!work.empty()) {
    const hlo::Instruction* v = work.back();
    work.pop_back();
    auto it = lowered.find(v);
    if (it == lowered.end() || it->second.kind != LoweringKind::kInline ||
        v->shape().dims() == rows || v->shape().rank() == 0 || !seen.insert(v).second) {
      continue;
    }
    const LoweringRule* rule = FindLoweringRule(v->opcode());
    if (rule == nullptr || !rule->cheap || ++ops > kMaxOps) return false;
    for (const hlo::Instruction* operand : v->operands()) work.push_back(operand);
  }
  return true;
}

}  // namespace

bool ScheduleRowKernel(const KernelGraph& graph,
                       const absl::flat_hash_map<const hlo::Instruction*, Lowered>& lowered,
                       Halide::Func output) {
  if (graph.outputs.size() != 1 || OutputElement(graph, 0) >= 0) return false;
  const hlo::Shape& shape = OutputShape(graph, 0);
  if (shape.rank() < 2 || shape.num_elements() == 0) return false;
  const std::vector<int64_t> rows(shape.dims().begin(), shape.dims().end() - 1);
  std::vector<const hlo::Instruction*> reductions;
  for (const hlo::Instruction* inst : graph.body) {
    const Lowered& l = lowered.at(inst);
    if (l.kind == LoweringKind::kDot) return false;
    if (l.kind != LoweringKind::kReduction) continue;
    if (!l.schedule_in_row || inst->shape().dims() != rows) return false;
    reductions.push_back(inst);
  }
  if (reductions.empty()) return false;

  std::vector<Halide::Var> args = output.args();  // innermost (the row) first
  Halide::Var row = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    Halide::Var fused(row.name() + "_" + args[i].name());
    output.fuse(row, args[i], fused);
    row = fused;
  }
  int64_t num_rows = 1;
  for (int64_t r : rows) num_rows *= r;
  Halide::Var row_in_task = row;
  if (num_rows >= 2 * kRowsPerTask) {
    Halide::Var task("row_task");
    row_in_task = Halide::Var("row_in_task");
    output.split(row, task, row_in_task, kRowsPerTask, Halide::TailStrategy::GuardWithIf)
        .parallel(task);
  }
  const int lanes = VectorLanes(shape.type());
  if (shape.dim(shape.rank() - 1) >= lanes) output.vectorize(args[0], lanes);
  const Halide::LoopLevel at(output, row_in_task);
  for (const hlo::Instruction* inst : reductions) {
    const Lowered& l = lowered.at(inst);
    l.schedule_in_row(l.func, at);
  }
  // A row value that a reduction and something else both read (softmax's
  // exp(x - max)) is computed once per row rather than once per reader,
  // unless it is cheaper to recompute (layernorm's x - mean).
  for (const hlo::Instruction* inst : graph.body) {
    const Lowered& l = lowered.at(inst);
    if (l.kind != LoweringKind::kInline || inst->shape().dims() != shape.dims()) continue;
    int readers = 0;
    for (const hlo::Instruction* u : inst->users()) readers += lowered.contains(u) ? 1 : 0;
    if (readers < 2 || !FeedsReduction(inst, lowered)) continue;
    if (CheapToRecompute(inst, rows, lowered)) continue;
    Halide::Func f = l.func;
    f.compute_at(at);
    if (shape.dim(shape.rank() - 1) >= lanes) f.vectorize(f.args()[0], lanes);
  }
  return true;
}

}  // namespace sharc::codegen

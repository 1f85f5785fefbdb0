#include "frontend/mapreduce.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "frontend/elementwise.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend::mapreduce {
namespace {

// One active program (or, with program == nullptr, the body of a map_fn,
// where blocks would nest placements) and the values its blocks placed.
struct ActiveProgram {
  const Program* program = nullptr;
  // Placed values by IR instruction, with the line that placed them.
  absl::flat_hash_map<const hlo::Instruction*, std::source_location> placed;
};

thread_local std::vector<ActiveProgram> active_programs;

ActiveProgram& Innermost() { return active_programs.back(); }

// Marks the body of a map_fn for its duration.
class InsideMapBody {
 public:
  InsideMapBody() { active_programs.push_back(ActiveProgram{}); }
  ~InsideMapBody() { active_programs.pop_back(); }
};

hlo::Attribute PlacementAttribute(const Program& program) {
  return hlo::Attribute{"placement", program.placement()};
}

// `x` must be placed: a leading dimension of the program's n groups.
void ExpectPlaced(const Program& program, const Tensor& x, const char* block, int64_t leaf,
                  const std::source_location& loc) {
  if (x.rank() >= 1 && x.dim(0) == program.n()) return;
  ThrowTraceError(loc, absl::StrCat(block, " expects values placed at '", program.placement(),
                                    "' (a leading dimension of ", program.n(),
                                    " groups); leaf ", leaf, " is ", x.ToString(),
                                    x.rank() == 0 || x.dim(0) != program.n()
                                        ? ", a non-partitioned value"
                                        : ""));
}

Tensor MarkPlaced(Tensor t, const std::source_location& loc) {
  Innermost().placed[t.instruction()] = loc;
  return t;
}

Tensor BroadcastLeaf(const Program& program, const Tensor& x, const std::source_location& loc) {
  auto it = Innermost().placed.find(Resolve(x, loc));
  if (it != Innermost().placed.end()) {
    ThrowTraceError(loc, absl::StrCat("broadcast expects a non-partitioned value, but this ",
                                      x.ToString(), " is already placed at '",
                                      program.placement(), "' (by ",
                                      FormatLocation(it->second), ")"));
  }
  std::vector<int64_t> dims = {program.n()};
  dims.insert(dims.end(), x.dims().begin(), x.dims().end());
  Tensor out = Emit(hlo::Opcode::kMapReduceBroadcast, {x}, {PlacementAttribute(program)},
                    hlo::Shape(x.dtype(), dims), loc);
  return MarkPlaced(out, loc);
}

Tensor ReduceLeaf(hlo::Opcode opcode, const char* block, const Tensor& x, int64_t leaf,
                  const std::source_location& loc) {
  const Program& program = Program::Active(block, loc);
  ExpectPlaced(program, x, block, leaf, loc);
  return Emit(opcode, {x}, {PlacementAttribute(program)}, std::nullopt, loc);
}

Tree ReduceTree(hlo::Opcode opcode, const char* block, const Tree& x,
                const std::source_location& loc) {
  int64_t leaf = 0;
  return MapTree(x, [&](const Tensor& t) { return ReduceLeaf(opcode, block, t, leaf++, loc); });
}

}  // namespace

Program::Program(std::string placement, int64_t n, std::source_location loc)
    : placement_(std::move(placement)), n_(n) {
  if (placement_.empty()) throw TraceError(absl::InvalidArgumentError(absl::StrCat(
      FormatLocation(loc), ": a mapreduce::Program needs a placement name")));
  if (n_ < 1) throw TraceError(absl::InvalidArgumentError(absl::StrCat(
      FormatLocation(loc), ": a mapreduce::Program needs at least one group, got ", n_)));
}

Program::Activation::Activation(const Program& program) {
  active_programs.push_back(ActiveProgram{&program, {}});
}

Program::Activation::~Activation() { active_programs.pop_back(); }

const Program& Program::Active(const char* block, const std::source_location& loc) {
  if (active_programs.empty()) {
    ThrowTraceError(loc, absl::StrCat(block, " is only defined inside a mapreduce::Program (wrap "
                                             "the function with Program::wrap)"));
  }
  if (Innermost().program == nullptr) {
    ThrowTraceError(loc, absl::StrCat(block, " inside the function of a map_fn: placements do "
                                             "not nest"));
  }
  return *Innermost().program;
}

Tensor broadcast(const Tensor& x, std::source_location loc) {
  return BroadcastLeaf(Program::Active("broadcast", loc), x, loc);
}

Tree broadcast(const Tree& x, std::source_location loc) {
  const Program& program = Program::Active("broadcast", loc);
  return MapTree(x, [&](const Tensor& t) { return BroadcastLeaf(program, t, loc); });
}

Tree map_fn(const TreeFunction& fn, bool positional, const Tree& args, std::source_location loc) {
  const Program& program = Program::Active("map_fn", loc);
  if (positional && !args.is_list()) {
    ThrowTraceError(loc, "map_fn of a function of Tensors takes its arguments as a list");
  }
  auto [leaves, structure] = Flatten(args);
  std::vector<hlo::Shape> slices;
  for (size_t i = 0; i < leaves.size(); ++i) {
    ExpectPlaced(program, leaves[i], "map_fn", static_cast<int64_t>(i), loc);
    std::vector<int64_t> dims(leaves[i].dims().begin() + 1, leaves[i].dims().end());
    slices.emplace_back(leaves[i].dtype(), dims);
  }
  if (leaves.empty()) ThrowTraceError(loc, "map_fn needs at least one placed argument");
  absl::StatusOr<ShapeTree> slice_tree = Unflatten(structure, std::move(slices));
  ThrowIfError(slice_tree.status(), loc);
  absl::StatusOr<TracedFunction> body = [&] {
    InsideMapBody inside;
    return TraceComputation(fn, *slice_tree, "map_body", /*tuple_root=*/false, loc);
  }();
  ThrowIfError(body.status(), loc);
  // Values of the enclosing function that the body reads are the same for
  // every group: they enter the map broadcast.
  std::vector<Tensor> operands = leaves;
  for (const Tensor& captured : body->captures) {
    operands.push_back(BroadcastLeaf(program, captured, loc));
  }
  Tensor mapped = Emit(hlo::Opcode::kMapReduceMap, operands,
                       {PlacementAttribute(program),
                        hlo::Attribute{"to_apply", body->computation}},
                       std::nullopt, loc);
  std::vector<Tensor> results;
  if (mapped.shape().is_tuple()) {
    for (int64_t i = 0; i < mapped.shape().tuple_size(); ++i) {
      results.push_back(MarkPlaced(TupleElement(mapped, i, loc), loc));
    }
  } else {
    results.push_back(MarkPlaced(mapped, loc));
  }
  absl::StatusOr<Tree> out = Unflatten(body->results, std::move(results));
  ThrowIfError(out.status(), loc);
  return *out;
}

Tensor reduce_sum(const Tensor& x, std::source_location loc) {
  return ReduceLeaf(hlo::Opcode::kMapReduceSum, "reduce_sum", x, 0, loc);
}

Tree reduce_sum(const Tree& x, std::source_location loc) {
  return ReduceTree(hlo::Opcode::kMapReduceSum, "reduce_sum", x, loc);
}

Tensor reduce_mean(const Tensor& x, std::source_location loc) {
  return ReduceLeaf(hlo::Opcode::kMapReduceMean, "reduce_mean", x, 0, loc);
}

Tree reduce_mean(const Tree& x, std::source_location loc) {
  return ReduceTree(hlo::Opcode::kMapReduceMean, "reduce_mean", x, loc);
}

Tree reduce_weighted_mean(const Tree& x, const Tensor& weights, std::source_location loc) {
  const Program& program = Program::Active("reduce_weighted_mean", loc);
  ExpectPlaced(program, weights, "reduce_weighted_mean", 0, loc);
  const Tensor total_weight = reduce_sum(weights, loc);
  return MapTree(x, [&](const Tensor& leaf) {
    Tensor weighted = map_fn([](Tensor v, Tensor w) { return v * w; },
                             Tree::list({Tree(leaf), Tree(weights)}), loc)
                          .leaf();
    return reduce_sum(weighted, loc) / total_weight;
  });
}

}  // namespace sharc::frontend::mapreduce

// Internal to codegen/: the Halide lowering of one op, registered once per
// opcode (DESIGN.md, "Ops are defined once"). Includes Halide.h, so only
// codegen .cc files may include this header; the public headers of codegen/
// stay free of Halide.
//
// Conventions every lowering follows:
// - A value is a Halide::Func whose arguments are the HLO dims in reverse
//   order (Halide's first argument is the innermost, contiguous dim). Index
//   lists in this header are in HLO order; Call/Define reverse them.
// - A Func holds the storage type (pred -> Bool, f16 -> Float(16), bf16 ->
//   BFloat(16)); arithmetic on f16/bf16 happens in f32 and is rounded back
//   after every op, as the interpreter does.
// - Index expressions stay inside their operand even where a select throws
//   the value away: Halide evaluates both sides of a select.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "Halide.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/opcode.h"

namespace sharc::codegen {

// One operand as seen by a lowering: its Func and its HLO shape.
struct LoweredValue {
  Halide::Func func;
  hlo::Shape shape;
  // Every element is <= 0 or NaN, as proven inside the kernel
  // (value_sign.h); false for the kernel's inputs.
  bool non_positive = false;
};

// How an op was lowered, so the pipeline builder can schedule it.
enum class LoweringKind {
  kInline,     // pure, cheap to recompute: inlined into its consumers
  kReduction,  // has an update over an RDom; computed once per use site
  kDot,        // a contraction (dot, convolution); gets a register-tiled schedule
};

struct Lowered {
  Halide::Func func;
  LoweringKind kind = LoweringKind::kInline;
  // For kDot: the accumulator and helper stages (packing), and how to
  // schedule them given the Func that owns the loops: the dot itself, or an
  // elementwise epilogue with the dot's dims. A kReduction may bring its own
  // schedule (applied to its own Func) instead of the generic one.
  Halide::Func accumulator;
  std::vector<Halide::Func> helpers;
  std::function<void(Halide::Func)> schedule;
  // For a reduction of rows (row_reduction.h): computes one row of it, and
  // its helper stages, at `at`, a row loop of a consumer in the same kernel.
  std::function<void(Halide::Func, Halide::LoopLevel)> schedule_in_row;
};

using LowerFn = std::function<absl::StatusOr<Lowered>(const hlo::Instruction&,
                                                      absl::Span<const LoweredValue>)>;

// A row of the lowering table: either a lowering, or the reason the op has
// none (which becomes the user's error message).
// Whether this instance of an op lowers (the reducer of a reduce, the
// target of a custom-call); checked before anything is compiled.
using SupportsFn = std::function<absl::Status(const hlo::Instruction&)>;

struct LoweringRule {
  hlo::Opcode opcode;
  LowerFn lower;
  std::string unsupported_reason;
  SupportsFn supports;  // optional
  // The lowering may yield a tuple (a Tuple-valued Func, one value per
  // element); such a value is only ever a kernel output.
  bool tuple_result = false;
  // A few vector instructions per element for every dtype (no division,
  // transcendental, libm call, conversion or float-compare NaN handling),
  // and bit-identical wherever it is evaluated: a kernel recomputes such a
  // value in each reader rather than storing it and loading it back. Not a
  // multiply: a float product recomputed next to a reader's add may be
  // fused into an FMA with it (object_writer.h allows contraction), which a
  // stored, rounded product is not.
  bool cheap = false;
  // Tens of vector instructions per element, or one slow one (a
  // transcendental, a division, a root, a power): a kernel with such an op
  // is limited by its arithmetic rather than by memory, so its schedule
  // keeps the simplest loop (pipeline_builder.cc).
  bool compute_bound = false;
};

// The table; a rule missing for an opcode is a bug the completeness test
// catches.
const LoweringRule* FindLoweringRule(hlo::Opcode opcode);

class LoweringTable;
// Family registration functions, one per file.
void RegisterElementwiseLowerings(LoweringTable& table);  // elementwise_lowerings.cc
void RegisterShapeLowerings(LoweringTable& table);        // shape_lowerings.cc
void RegisterSourceLowerings(LoweringTable& table);       // source_lowerings.cc
void RegisterReduceLowerings(LoweringTable& table);       // reduce_lowering.cc
void RegisterGatherScatterLowerings(LoweringTable& table);  // gather_scatter_lowering.cc
void RegisterDotLowering(LoweringTable& table);           // dot_lowering.cc
void RegisterConvolutionLowering(LoweringTable& table);   // convolution_lowering.cc
void RegisterCustomCallLowering(LoweringTable& table);    // custom_call_lowering.cc
void RegisterSelectAndScatterLowering(LoweringTable& table);  // select_and_scatter_lowering.cc
void RegisterUnsupportedOps(LoweringTable& table);        // unsupported_ops.cc

class LoweringTable {
 public:
  void Add(hlo::Opcode opcode, LowerFn lower, SupportsFn supports = nullptr);
  // Marks an added rule as able to yield tuples (see LoweringRule).
  void AllowTupleResult(hlo::Opcode opcode);
  // Marks added rules as cheap to recompute (see LoweringRule).
  void MarkCheap(std::initializer_list<hlo::Opcode> opcodes);
  // Marks added rules as compute-bound (see LoweringRule).
  void MarkComputeBound(std::initializer_list<hlo::Opcode> opcodes);
  void AddUnsupported(hlo::Opcode opcode, std::string reason);
  const LoweringRule* Find(hlo::Opcode opcode) const;

 private:
  std::vector<LoweringRule> rules_ = std::vector<LoweringRule>(static_cast<size_t>(hlo::kNumOpcodes));
  std::vector<bool> present_ = std::vector<bool>(static_cast<size_t>(hlo::kNumOpcodes), false);
};

// ---- helpers shared by the lowerings (halide_types.cc) --------------------

using Halide::Internal::const_false;
using Halide::Internal::const_true;
using Halide::Internal::make_const;
using Halide::Internal::make_zero;

Halide::Type StorageType(hlo::PrimitiveType type);
// The type arithmetic happens in: f32 for f16/bf16, the storage type else.
Halide::Type ComputeType(hlo::PrimitiveType type);
Halide::Expr ToCompute(const Halide::Expr& e, hlo::PrimitiveType type);
Halide::Expr ToStorage(const Halide::Expr& e, hlo::PrimitiveType type);

// The target every kernel is compiled for: the host, with Halide's runtime,
// asserts and bounds queries left out and StrictFloat on.
Halide::Target KernelTarget();
// Lanes of one vector register of `type` on KernelTarget(): 16 f32 lanes
// with AVX-512, 8 with AVX2.
int NativeLanes(const Halide::Type& type);
// Vector registers of that target: 32 with AVX-512, 16 otherwise.
int NativeVectorRegisters();
// Lanes of one native vector register of `type`'s storage (64 bytes with
// AVX-512, 32 with AVX2). Wider vectors than the registers cost more than
// they save: on AVX2, 16-lane f32 vectors spilled the tanh chain's
// constants to the stack and legalised its 16-lane masks through byte
// packs, 3.5x the instructions.
int VectorLanes(hlo::PrimitiveType type);

// Fresh variables for the HLO dims 0..rank-1 (named d0, d1, ...).
std::vector<Halide::Var> HloVars(int64_t rank);
std::vector<Halide::Expr> AsExprs(const std::vector<Halide::Var>& vars);
// f(index) with `index` in HLO order.
Halide::Expr Call(const Halide::Func& f, const std::vector<Halide::Expr>& index);
// f(vars) = value, `vars` in HLO order.
void Define(Halide::Func& f, const std::vector<Halide::Var>& vars, const Halide::Expr& value);
// An Int(32) index expression clamped to [0, extent-1] (0 when extent is 0).
Halide::Expr ClampIndex(const Halide::Expr& i, int64_t extent);
// Halide indexes with 32-bit ints; shapes beyond that are refused.
absl::Status CheckIndexable(const hlo::Instruction& inst);
// A Halide name for a stage of `inst`: Halide reserves '.' (HLO names often
// have it), so other characters become '_', and a counter keeps names unique.
std::string HalideName(const std::string& prefix, const hlo::Instruction& inst);
// Applies the scalar computation `reducer` (elementwise ops and constants
// of its parameters, returning a scalar or a tuple of scalars) to `args`
// (storage-typed Exprs, one per parameter), through the same lowerings as
// kernels use; one storage-typed Expr per result (computation_reducer.cc).
absl::StatusOr<std::vector<Halide::Expr>> ApplyReducer(const hlo::Instruction& inst,
                                                       const hlo::Computation& reducer,
                                                       const std::vector<Halide::Expr>& args);
// OK if ApplyReducer can lower `reducer`, else why not, naming `inst`.
absl::Status CheckReducerLowerable(const hlo::Instruction& inst, const hlo::Computation& reducer);
// An error naming the instruction.
absl::Status LoweringError(const hlo::Instruction& inst, const std::string& message);

}  // namespace sharc::codegen

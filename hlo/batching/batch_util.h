// Helpers shared by the batching rules: moving values into the canonical
// "batched at dim 0" form, dimension-number arithmetic, and small builders.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/attribute.h"

namespace sharc::hlo {

// [batch_size, ...shape.dims()] for an array shape.
Shape BatchedShape(const Shape& shape, int64_t batch_size);
// Each dim + `by` (operand dims after a new leading dim).
IntList ShiftDims(absl::Span<const int64_t> dims, int64_t by = 1);
// {0} followed by ShiftDims(dims): the new dim joins a list of dims.
IntList PrependZero(absl::Span<const int64_t> dims);
// {start, start+1, ..., start+count-1}.
IntList DimRange(int64_t start, int64_t count);

// Broadcasts an unbatched array to [batch_size, ...].
Instruction* BroadcastToBatch(Emitter& emitter, Instruction* unbatched, int64_t batch_size);
// Makes every leaf batched at dim 0.
absl::StatusOr<Instruction*> Materialize(Emitter& emitter, const BatchedValue& value,
                                         int64_t batch_size);
// Makes `value` batched exactly as `target` (which must include every leaf
// already batched in `value`).
absl::StatusOr<Instruction*> MaterializeAs(Emitter& emitter, const BatchedValue& value,
                                           const BatchTree& target, int64_t batch_size);
// Batched array leaves for every operand of an op whose operands all share
// the batch dim (concatenate, variadic reduce, ...).
absl::StatusOr<std::vector<Instruction*>> MaterializeAll(Emitter& emitter,
                                                         absl::Span<const BatchedValue> values,
                                                         int64_t batch_size);

// A batched value with zero slices: `shape` (per slice) with a leading 0,
// every leaf. Rules whose batched form needs a batch of at least one
// (gather/scatter batching dims take one element per slice) return it when
// batch_size is 0.
Instruction* EmptyBatch(Emitter& emitter, const Shape& shape);

// Transposes `inst` so that its dim `dim` becomes dim 0 (others keep order).
Instruction* MoveDimToFront(Emitter& emitter, Instruction* inst, int64_t dim);
// broadcast(operand), dimensions=dims, to `shape`.
Instruction* Broadcast(Emitter& emitter, Instruction* operand, Shape shape, IntList dims);
// transpose(x), dimensions=permutation (x itself for the identity).
Instruction* Transpose(Emitter& emitter, Instruction* x, IntList permutation);
// The sum of `x` over `dims` (a reduce with the module's add reducer of x's
// type; x itself when `dims` is empty).
Instruction* ReduceSum(Emitter& emitter, Instruction* x, IntList dims);
// A scalar constant of `type` holding `value` (converted).
Instruction* ScalarConstant(Emitter& emitter, PrimitiveType type, int64_t value);
Instruction* GetTupleElement(Emitter& emitter, Instruction* tuple, int64_t index);
Instruction* MakeTuple(Emitter& emitter, std::vector<Instruction*> elements);
// Per slice: the pred[B] `choose` picks the leaves of `on_true` or
// `on_false` (values of one shape, every leaf batched).
Instruction* SelectLeaves(Emitter& emitter, Instruction* choose, Instruction* on_true,
                          Instruction* on_false);
// compare(a, b), direction=`direction` (EQ, LT, ...).
Instruction* Compare(Emitter& emitter, Instruction* a, Instruction* b, const char* direction);
// call(args), to_apply=callee.
Instruction* CallComputation(Emitter& emitter, Computation* callee, std::vector<Instruction*> args);

// A copy of `inst` (attributes, literal, sharding, metadata) over `operands`.
std::unique_ptr<Instruction> CloneWithOperands(const Instruction& inst,
                                               std::vector<Instruction*> operands);

// Copies every attribute of `inst` except those named in `skip`.
std::vector<Attribute> AttributesExcept(const Instruction& inst,
                                        std::initializer_list<std::string_view> skip);

// True if `computation` or anything it calls has a side effect (a
// side-effecting custom-call or a collective); such code must not run for
// slices that would not have run it.
bool HasSideEffects(const Computation& computation);

// Unimplemented "<op> cannot be batched by vmap: <why>, in `<inst>`".
absl::Status CannotBatch(const Instruction& inst, const std::string& why);

}  // namespace sharc::hlo

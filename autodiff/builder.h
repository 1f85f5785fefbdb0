// Small instruction builders shared by the JVP and transpose rules: constants,
// arithmetic and reshaping on an hlo::Emitter, so each rule reads like the
// formula it implements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/batching/batch_util.h"
#include "hlo/batching/emitter.h"
#include "hlo/ir/attribute.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

using hlo::Computation;
using hlo::Emitter;
using hlo::Instruction;
using hlo::IntList;
using hlo::Module;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

// `value` in every element of the array `shape` (a broadcast scalar constant).
Instruction* Full(Emitter& e, const Shape& shape, double value);
// Zeros of any shape, tuples included.
Instruction* Zeros(Emitter& e, const Shape& shape);
// A scalar constant.
Instruction* ScalarOf(Emitter& e, PrimitiveType type, double value);

Instruction* Unary(Emitter& e, Opcode opcode, Instruction* x);
// An elementwise binary op whose result has `a`'s shape.
Instruction* Binary(Emitter& e, Opcode opcode, Instruction* a, Instruction* b);
Instruction* Add(Emitter& e, Instruction* a, Instruction* b);
Instruction* Sub(Emitter& e, Instruction* a, Instruction* b);
Instruction* Mul(Emitter& e, Instruction* a, Instruction* b);
Instruction* Div(Emitter& e, Instruction* a, Instruction* b);
Instruction* Neg(Emitter& e, Instruction* a);
// x * c for a scalar c, elementwise.
Instruction* Scale(Emitter& e, Instruction* x, double c);
// compare(a, b), direction=dir, giving pred of a's dims.
Instruction* Cmp(Emitter& e, Instruction* a, Instruction* b, const char* direction);
Instruction* Select(Emitter& e, Instruction* pred, Instruction* on_true, Instruction* on_false);
Instruction* Convert(Emitter& e, Instruction* x, PrimitiveType type);
// The parts of complex numbers, complex numbers from parts, and the
// conjugate (HLO has no conj op: complex(real(z), -imag(z)), as JAX emits).
Instruction* RealPart(Emitter& e, Instruction* z);
Instruction* ImagPart(Emitter& e, Instruction* z);
Instruction* MakeComplex(Emitter& e, Instruction* re, Instruction* im);
Instruction* Conj(Emitter& e, Instruction* z);
Instruction* Reshape(Emitter& e, Instruction* x, std::vector<int64_t> dims);
// transpose and sum over dims: the builders the batching rules use
// (hlo/batching/batch_util.h), which codegen shares too.
using hlo::Transpose;
Instruction* BroadcastInDim(Emitter& e, Instruction* x, const Shape& shape, IntList dims);
using hlo::ReduceSum;
Instruction* Gte(Emitter& e, Instruction* tuple, int64_t index);
Instruction* Tuple(Emitter& e, std::vector<Instruction*> elements);
Instruction* CallOf(Emitter& e, Computation* callee, std::vector<Instruction*> args);
// Elementwise sum of two values of one shape, tuples leaf by leaf.
Instruction* AddAny(Emitter& e, Instruction* a, Instruction* b);

// Emits a copy of `callee`'s instructions with its parameters bound to
// `args`; returns the copy of its root (a call, inlined).
Instruction* InlineInto(Emitter& e, const Computation& callee,
                        const std::vector<Instruction*>& args);

// The module `e` builds into: autodiff adds every computation to its module
// as soon as it is created (Module::SortCalleesFirst restores callee-first
// order at the end).
Module& ModuleOf(Emitter& e);
// Adds an empty computation named uniquely after `base` to `module`.
Computation* NewComputation(Module& module, const std::string& base);
// A computation name not yet used in `module`, derived from `base`.
std::string UniqueComputationName(const Module& module, const std::string& base);

}  // namespace sharc::autodiff

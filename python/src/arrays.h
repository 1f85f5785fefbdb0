// NumPy arrays and sharc's host values (hlo::Literal): element types both
// ways, checked inputs that name the parameter at fault, and outputs that
// hand a literal's memory to NumPy without copying it.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "hlo/ir/instruction.h"
#include "hlo/ir/literal.h"
#include "runtime/buffer.h"

namespace sharc::python {

// NumPy's dtype for an element type. bf16 has none in NumPy: it travels as
// uint16 bit patterns (the high half of an f32).
pybind11::dtype DtypeFor(hlo::PrimitiveType type);

// The argument for entry parameter `parameter` as a C-contiguous array: an
// ndarray must have its dtype exactly (TypeError otherwise) and its dims
// (ValueError); Python scalars and lists are converted to the parameter's
// dtype first, as JAX does. Messages name the input, the parameter and both
// shapes. A contiguous ndarray comes back as itself (no copy).
pybind11::array CheckedArgument(const pybind11::handle& value, const hlo::Instruction& parameter,
                                int64_t index);

// A copy of a checked argument, for the engine's literal interface.
hlo::Literal ArgumentLiteral(const pybind11::array& array, const hlo::Shape& shape);

// A checked argument as a buffer over its own memory (no copy); the buffer
// keeps the array alive. Must be called with the GIL held.
runtime::Buffer BorrowedArgument(const pybind11::array& array, const hlo::Shape& shape);

// The literal as NumPy arrays (a tuple of them, recursively, for a tuple).
// Array memory moves into the result: no copy.
pybind11::object ToPython(hlo::Literal literal);

// A result buffer as NumPy arrays over its memory (no copy), except for
// leaves that alias one of `arguments` (a root that returns a parameter),
// which are copied so that results never share memory with inputs.
pybind11::object ToPython(const runtime::Buffer& result,
                          const std::vector<pybind11::array>& arguments);

}  // namespace sharc::python

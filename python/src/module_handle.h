// What a sharc._sharc._Module holds: one module, shared with the programs
// compiled from it only through copies (compile clones it).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "hlo/ir/module.h"

namespace sharc::python {

struct ModuleHandle {
  std::shared_ptr<hlo::Module> module;
};

// A value's description for Python: name, dtype, dims (None for a tuple),
// type text, sharding text and, where the module has a mesh and one
// exists, the partition spec's axes per dimension.
pybind11::dict Describe(const hlo::Module& module, const hlo::Instruction& value);

}  // namespace sharc::python

// The extension module sharc._sharc: the compiler's library (tools/, the
// same one the `sharc` command, jit and the C API use) seen from Python.
// The public API is the pure-Python package around it (sharc/__init__.py).
#include <pybind11/pybind11.h>

#include "errors.h"
#include "hlo/ir/literal.h"

namespace sharc::python {
void RegisterModule(pybind11::module_& m);
void RegisterExecutable(pybind11::module_& m);
}  // namespace sharc::python

PYBIND11_MODULE(_sharc, m) {
  m.doc() = "sharc's compiler library; use the `sharc` package, not this module.";
  m.attr("__version__") = SHARC_VERSION;
  sharc::python::RegisterErrors(m);
  sharc::python::RegisterModule(m);
  sharc::python::RegisterExecutable(m);
}

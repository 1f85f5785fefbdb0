#include "errors.h"

#include <string>

namespace sharc::python {
namespace {

namespace py = pybind11;

// Owned by the extension module (it holds a reference); created once at
// import. Raw pointers so that nothing is released at interpreter exit
// after Python itself has gone.
PyObject* g_error = nullptr;
PyObject* g_parse_error = nullptr;
PyObject* g_verify_error = nullptr;
PyObject* g_partition_error = nullptr;
PyObject* g_transform_error = nullptr;
PyObject* g_runtime_error = nullptr;
PyObject* g_internal_error = nullptr;

PyObject* NewError(py::module_& m, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("sharc.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.attr(name) = py::handle(type);
  return type;
}

PyObject* ClassFor(const absl::Status& status, Stage stage) {
  if (status.code() == absl::StatusCode::kInternal) return g_internal_error;
  if (status.code() == absl::StatusCode::kNotFound && stage == Stage::kParse) {
    return PyExc_FileNotFoundError;
  }
  if (status.code() == absl::StatusCode::kResourceExhausted) return PyExc_MemoryError;
  switch (stage) {
    case Stage::kParse: return g_parse_error;
    case Stage::kVerify: return g_verify_error;
    case Stage::kPartition: return g_partition_error;
    case Stage::kTransform: return g_transform_error;
    case Stage::kRun: return g_runtime_error;
  }
  return g_error;
}

}  // namespace

void RegisterErrors(py::module_& m) {
  g_error = NewError(m, "Error",
                     "Base of every error sharc raises about a program: the message is the "
                     "`sharc` command's, naming FILE:LINE:COL, the instruction, mesh axis or "
                     "dimension at fault. `.code` is the absl::StatusCode name.",
                     PyExc_Exception);
  g_parse_error = NewError(m, "ParseError", "The HLO text does not parse.", g_error);
  g_verify_error =
      NewError(m, "VerifyError", "The module parses but is not a valid HLO program.", g_error);
  g_partition_error = NewError(m, "PartitionError",
                               "Propagating shardings, partitioning or compiling failed (for "
                               "example a sharding that does not fit the mesh).",
                               g_error);
  g_transform_error = NewError(
      m, "TransformError", "A module-to-module transform (grad, jvp, transpose) failed.", g_error);
  py::tuple runtime_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_RuntimeError));
  g_runtime_error = NewError(m, "RuntimeError",
                             "Running a compiled program failed (a collective timed out, a "
                             "kernel failed). Also a builtins.RuntimeError.",
                             runtime_bases.ptr());
  g_internal_error = NewError(m, "InternalError",
                              "A bug in sharc: please report it with the message.", g_error);
}

void ThrowStatus(const absl::Status& status, Stage stage) {
  PyObject* type = ClassFor(status, stage);
  const std::string message(status.message());
  py::object error = py::handle(type)(py::str(message));
  if (PyObject_IsSubclass(type, g_error) == 1) {
    error.attr("code") = py::str(absl::StatusCodeToString(status.code()));
  }
  PyErr_SetObject(type, error.ptr());
  throw py::error_already_set();
}

}  // namespace sharc::python

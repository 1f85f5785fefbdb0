// sharc's Python exceptions and the one place an absl::Status becomes one.
// The class follows the stage that failed (parsing, verifying,
// propagating/partitioning/compiling, transforming, running), so callers can
// catch by kind; the message is the CLI's, with its FILE:LINE:COL.
#pragma once

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sharc::python {

enum class Stage { kParse, kVerify, kPartition, kTransform, kRun };

// Creates sharc._sharc.Error and its subclasses on `m`.
void RegisterErrors(pybind11::module_& m);

// Throws the Python exception for a failed `status` from `stage`:
// InternalError for INTERNAL wherever it happens, FileNotFoundError for a
// missing file, MemoryError for RESOURCE_EXHAUSTED, else the stage's class.
[[noreturn]] void ThrowStatus(const absl::Status& status, Stage stage);

inline void ThrowIfError(const absl::Status& status, Stage stage) {
  if (!status.ok()) ThrowStatus(status, stage);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value, Stage stage) {
  if (!value.ok()) ThrowStatus(value.status(), stage);
  return *std::move(value);
}

}  // namespace sharc::python

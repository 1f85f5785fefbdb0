// Long work (compiling a program) that Ctrl-C can interrupt. The work runs
// on a worker thread while the calling thread, without the GIL, waits in
// short slices and checks Python's signal handlers between them; on
// KeyboardInterrupt the caller returns at once and the worker finishes in
// the background, its result dropped (sharc's passes have no cancellation
// points, and abandoning a thread mid-pass could leak locks). Interpreter
// exit waits for such workers, so none runs while the process tears down.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>

#include "absl/status/status.h"

namespace sharc::python {

// Runs `work` to completion unless a Python signal handler raises, in which
// case the exception propagates (error_already_set) and `work` carries on
// alone; `work` must own everything it touches.
absl::Status RunInterruptibly(std::function<absl::Status()> work);

// Blocks until every abandoned worker has finished (registered with atexit).
void WaitForAbandonedWork();

}  // namespace sharc::python

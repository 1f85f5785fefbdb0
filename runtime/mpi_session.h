// The process's MPI environment for `mpirun -np R sharc ...`: initialisation
// with MPI_THREAD_MULTIPLE (every process hosts several device threads, and
// each group's leader thread talks MPI on its own), errors returned rather
// than fatal, and the ways a process leaves (finalise, or abort the whole
// job so that no peer waits for a process that has given up). Built only
// when CMake finds MPI (SHARC_HAVE_MPI); no MPI header leaks from here.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace sharc::runtime {

// Initialises MPI once (later calls are no-ops). Fails if the library
// cannot give MPI_THREAD_MULTIPLE.
absl::Status InitMpi();
bool MpiInitialized();
int MpiRank();
int MpiSize();
// Finalises MPI (after a successful run on every process).
void FinalizeMpi();
// Ends every process of the job with `exit_code` (MPI_Abort).
[[noreturn]] void AbortMpiJob(int exit_code);

// "MPI_Bcast failed: <MPI's error string>" for an MPI error code, OK for
// MPI_SUCCESS. Used wherever an MPI call's code becomes an absl::Status.
absl::Status MpiCallStatus(int code, const std::string& what);

}  // namespace sharc::runtime

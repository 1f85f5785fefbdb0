#include "runtime/mpi_session.h"

#include <mpi.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace sharc::runtime {

absl::Status InitMpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return absl::OkStatus();
  int provided = MPI_THREAD_SINGLE;
  if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      rc != MPI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("MPI_Init_thread failed (code ", rc, ")"));
  }
  // Errors come back as codes and become absl::Status; a fatal handler
  // would kill the job without saying which collective failed.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_MULTIPLE) {
    return absl::UnavailableError(
        "the MPI library does not support MPI_THREAD_MULTIPLE, which the MPI backend needs "
        "(several device threads of a process call MPI)");
  }
  return absl::OkStatus();
}

bool MpiInitialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

int MpiRank() {
  int rank = 0;
  if (MpiInitialized()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int MpiSize() {
  int size = 1;
  if (MpiInitialized()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void FinalizeMpi() {
  if (MpiInitialized()) MPI_Finalize();
}

void AbortMpiJob(int exit_code) {
  if (MpiInitialized()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

absl::Status MpiCallStatus(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::UnavailableError(absl::StrCat(what, " failed: ", std::string(text, length)));
}

}  // namespace sharc::runtime

// Ends the MPI job when a blocking MPI call outlives its deadline. Most of
// the MPI backend uses non-blocking calls polled against a deadline, but a
// few steps have no non-blocking form (creating a group's communicator) or
// are simpler blocking (the input broadcast); a peer that died or never
// comes would hang them. The watchdog thread prints the armed message and
// calls MPI_Abort, so every process exits with an error instead.
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace sharc::runtime {

// The exit code of a job the watchdog ends: sharc's "runtime failure".
inline constexpr int kWatchdogExitCode = 3;

class MpiWatchdogGuard {
 public:
  // Arms the process-wide watchdog: if this guard still lives after
  // `timeout`, the job ends with "sharc: error: <message>" on stderr.
  MpiWatchdogGuard(absl::Duration timeout, std::string message);
  ~MpiWatchdogGuard();
  MpiWatchdogGuard(const MpiWatchdogGuard&) = delete;
  MpiWatchdogGuard& operator=(const MpiWatchdogGuard&) = delete;

 private:
  int64_t id_;
};

}  // namespace sharc::runtime

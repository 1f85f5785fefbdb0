// How an MPI run keeps single-process I/O: process 0 alone reads the inputs
// and writes the results, so the others receive the inputs from it and send
// their devices' results back to it. Also the start-of-run check that every
// process runs the same program. Every step runs under the MpiWatchdog (the
// collective timeout), so a peer that died or never comes ends the job with
// an error rather than a hang. Built only with MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/buffer.h"

namespace sharc::runtime {

// Fails on every process, naming the processes, unless all of them pass the
// same `program_fingerprint`.
absl::Status CheckSameProgramEverywhere(uint64_t program_fingerprint, absl::Duration timeout);

// Broadcasts the array contents of `buffers` (tuples recursively) from
// process 0. Elsewhere the buffers must already have the same shapes; their
// contents are overwritten.
absl::Status BroadcastBuffers(std::vector<Buffer>& buffers, absl::Duration timeout);

// Every process passes its devices' results (the same count and shapes on
// every process). Process 0 gets all of them in process order (the whole
// mesh's results in device order); the others get an empty vector.
absl::StatusOr<std::vector<Buffer>> GatherBuffersToFirst(const std::vector<Buffer>& local,
                                                         absl::Duration timeout);

}  // namespace sharc::runtime

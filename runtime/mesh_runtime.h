// A mesh of N in-process CPU devices: each device runs the same Executable on
// its own std::thread with its own buffers, and the devices talk through an
// InProcessCommunicator created for the run.
//
// Threads and cores: the device threads are the mesh's parallelism. OpenMP
// loops inside a device (the collectives' element loops, and the kernels'
// own parallel loops, which Halide hands to runtime/kernel_loop_pool.h
// instead of its own thread pool) get max(1, cores / devices) threads per
// device (std::thread::hardware_concurrency), set with omp_set_num_threads
// on each device thread, so devices x OpenMP threads never exceed the cores
// when devices <= cores: 2 devices on 2 cores run their loops serially, 1
// device uses both cores, 8 devices on 2 cores keep 8 threads (no pool on
// top).
// Waiting devices spin only briefly and then block, so 4 or 8 devices on 2
// cores do not starve each other.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/ir/literal.h"
#include "runtime/buffer.h"
#include "runtime/communicator.h"
#include "runtime/executable.h"

namespace sharc::runtime {

struct MeshOptions {
  int64_t num_devices = 1;
  // A collective whose peers do not all arrive within this time fails the
  // run with an error naming the collective and the missing devices.
  absl::Duration collective_timeout = absl::Seconds(60);
  // OpenMP threads per device; 0 = max(1, hardware_concurrency / devices).
  int threads_per_device = 0;
  // Spin time before a waiting device blocks; negative = automatic.
  absl::Duration spin = absl::Microseconds(-1);
};

class DeviceMesh {
 public:
  explicit DeviceMesh(MeshOptions options);

  int64_t num_devices() const { return options_.num_devices; }
  // Whether runs record their kernels' and collectives' times
  // (ExecutionStats::events, DeviceContext::profile).
  void set_profiling(bool on) { profiling_ = on; }
  int threads_per_device() const { return threads_per_device_; }
  // The host queues device d's infeeds and outfeeds use in the runs that
  // follow: queues[d] (none when empty; each outlives those runs).
  void set_host_queues(std::vector<hlo::HostQueues*> queues) { host_queues_ = std::move(queues); }

  // Runs `executable` on every device; `arguments[d]` are device d's entry
  // arguments. Returns, per device, the root's value: the elements of a tuple
  // root, or the one array. The first failure (a kernel error, a timeout, a
  // collective mismatch) fails the whole run; its message names the device.
  absl::StatusOr<std::vector<std::vector<hlo::Literal>>> Run(
      const Executable& executable,
      const std::vector<std::vector<hlo::Literal>>& arguments) const;

  // The same on buffers (no literal conversions); `stats`, if given, gets
  // one entry per device.
  absl::StatusOr<std::vector<Buffer>> RunBuffers(const Executable& executable,
                                                 const std::vector<std::vector<Buffer>>& arguments,
                                                 std::vector<ExecutionStats>* stats = nullptr) const;

  // Runs only devices [first_device, first_device + arguments.size()) of the
  // mesh, talking through `communicator`, which connects them to the rest
  // (an MpiCommunicator whose other devices live in other processes).
  // Returns those devices' results. RunBuffers is this with an
  // InProcessCommunicator over all devices.
  absl::StatusOr<std::vector<Buffer>> RunLocalBuffers(
      const Executable& executable, Communicator& communicator, int64_t first_device,
      const std::vector<std::vector<Buffer>>& arguments,
      std::vector<ExecutionStats>* stats = nullptr) const;

 private:
  MeshOptions options_;
  int threads_per_device_ = 1;
  bool profiling_ = false;
  std::vector<hlo::HostQueues*> host_queues_;
};

// max(1, hardware_concurrency / devices): the OpenMP threads each device may use.
int DefaultThreadsPerDevice(int64_t num_devices);

}  // namespace sharc::runtime

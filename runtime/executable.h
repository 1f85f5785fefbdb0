// An Executable is a per-device hlo::Module turned into schedules of steps,
// one per computation the entry reaches through control flow: kernel
// launches, collectives (run through a Communicator), partition-id and
// replica-id (answered by the device), tuple plumbing (zero-copy), tokens,
// infeed and outfeed (the device's host queues) and control flow (while,
// conditional, call). Each value lives in a slot that
// is released right after its last use, so a device holds only live values.
//
// One Executable is shared by all devices of a mesh: Run is const and keeps
// per-run state on the caller's stack.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/eval/host_queues.h"
#include "hlo/ir/module.h"
#include "runtime/buffer.h"
#include "runtime/buffer_pool.h"
#include "runtime/communicator.h"
#include "runtime/kernel.h"

namespace sharc::runtime {

// Who is running: the device's ids and its link to the others.
struct DeviceContext {
  int64_t device_id = 0;   // the partition id
  int64_t replica_id = 0;  // sharc runs one replica
  int64_t num_devices = 1;
  Communicator* communicator = nullptr;  // may be null on a single device
  // Record a StepEvent for every kernel launch and collective.
  bool profile = false;
  // What its infeeds pop and its outfeeds push (none: they fail).
  hlo::HostQueues* host_queues = nullptr;
};

// One kernel launch or collective of a profiled run, timed on the steady
// clock (nanoseconds since its epoch, the same for every device thread).
struct StepEvent {
  const hlo::Instruction* instruction = nullptr;  // in the executable's module
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct ExecutionStats {
  int64_t kernel_launches = 0;
  int64_t collectives = 0;
  // Bytes of buffers the run allocated that were alive at once (arguments
  // and constants not counted).
  int64_t peak_live_bytes = 0;
  // In execution order, when the run is profiled (DeviceContext::profile).
  std::vector<StepEvent> events;
};

// True for the instructions an Executable runs itself, without a kernel:
// parameters, constants, partition and replica ids, tuple plumbing,
// row-major reshapes of arrays (the result aliases the operand's memory),
// while, conditional and call (a fusion call asks its factory for a kernel
// first; callers that care check that), collectives, tokens (after-all,
// add-dependency) and the host queues' infeed and outfeed. Kernel factories
// are asked for everything else.
bool RunsWithoutKernel(const hlo::Instruction& inst);

class Executable {
 public:
  // Builds the schedules of `module`'s entry (the module is cloned; the
  // executable owns its copy) with kernels from `factory`. Fails, naming the
  // instruction, on ops the runtime cannot run (a collective whose reducer is
  // not a plain binary op, a kernel the factory refuses).
  static absl::StatusOr<std::unique_ptr<Executable>> Create(const hlo::Module& module,
                                                            KernelFactory& factory);
  ~Executable();

  const hlo::Module& module() const { return *module_; }
  int64_t num_parameters() const;
  const hlo::Shape& parameter_shape(int64_t i) const;
  const hlo::Shape& result_shape() const;

  // Runs the entry computation as device `device`. `arguments` must match
  // the entry parameters' shapes.
  absl::StatusOr<Buffer> Run(const DeviceContext& device, absl::Span<const Buffer> arguments,
                             ExecutionStats* stats = nullptr) const;

  // The schedules as text, one step per line (for tests and debugging).
  std::string ScheduleToString() const;

  // Where the runs' buffers came from: after the first run of a program
  // whose shapes do not change, every block is a pool hit (no system
  // allocation, no page fault on first touch).
  BufferPoolStats pool_stats() const { return pool_->stats(); }

  struct Program;  // one computation's schedule

 private:
  Executable() = default;
  struct RunState;
  class Frame;  // one program's run: the step loop (executable.cc)
  absl::StatusOr<Buffer> Execute(const Program& program, absl::Span<const Buffer> arguments,
                                 RunState& state) const;

  std::unique_ptr<hlo::Module> module_;
  std::vector<std::unique_ptr<Program>> programs_;
  const Program* entry_ = nullptr;
  // Every buffer a run allocates comes from here, so that the runs after
  // the first reuse memory they have touched (runtime/buffer_pool.h).
  std::unique_ptr<BufferPool> pool_ = std::make_unique<BufferPool>();
};

}  // namespace sharc::runtime

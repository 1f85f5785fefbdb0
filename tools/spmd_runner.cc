#include "tools/spmd_runner.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "hlo/eval/interpreter.h"
#include "hlo/verifier/verifier.h"
#include "runtime/executable.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"
#include "spmd/partition/device_values.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"

#ifdef SHARC_HAVE_MPI
#include "runtime/mpi_communicator.h"
#include "runtime/mpi_host_transfer.h"
#include "runtime/mpi_session.h"
#endif

namespace sharc::tools {
namespace {

absl::Status Prefix(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

hlo::Sharding ShardingOrReplicated(const hlo::Instruction& instruction) {
  return instruction.sharding() ? *instruction.sharding() : hlo::Sharding::Replicated();
}

// Open MPI's launch environment (mpirun sets it for every process).
int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  int64_t parsed = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &parsed)) return fallback;
  return parsed;
}

absl::Status RunFailed(int64_t num_devices, const absl::Status& status) {
  return absl::AbortedError(
      absl::StrCat("running on ", num_devices, " devices failed: ", status.message()));
}

// The root's value of one device as a literal (a tuple root gives a tuple).
absl::StatusOr<hlo::Literal> DeviceResult(const runtime::Buffer& result) {
  if (!result.is_tuple()) return result.ToLiteral();
  std::vector<hlo::Literal> elements;
  for (const runtime::Buffer& e : result.elements()) {
    absl::StatusOr<hlo::Literal> l = e.ToLiteral();
    if (!l.ok()) return l.status();
    elements.push_back(*std::move(l));
  }
  return hlo::Literal::Tuple(std::move(elements));
}

// Splits the global arguments into device `d`'s parts.
absl::StatusOr<std::vector<runtime::Buffer>> DeviceArguments(
    const hlo::Computation& entry, const std::vector<hlo::Literal>& args, int64_t d) {
  std::vector<runtime::Buffer> out;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    hlo::Sharding sharding = ShardingOrReplicated(*entry.parameter(i));
    absl::StatusOr<hlo::Literal> part =
        spmd::ShardLiteral(args[static_cast<size_t>(i)], sharding, d);
    if (!part.ok()) {
      return Prefix(part.status(), absl::StrCat("splitting parameter ", i, " for device ", d));
    }
    absl::StatusOr<runtime::Buffer> buffer = runtime::Buffer::FromLiteral(*part);
    if (!buffer.ok()) return buffer.status();
    out.push_back(*std::move(buffer));
  }
  return out;
}

#ifdef SHARC_HAVE_MPI
// The MPI run: every process partitioned the same module; process 0's
// inputs reach the others by broadcast, each process runs its N/R devices
// with an MpiCommunicator, and the results come back to process 0.
absl::StatusOr<std::vector<hlo::Literal>> RunOnMpiProcesses(
    const hlo::Module& local, const hlo::Computation& entry, const std::vector<hlo::Literal>& args,
    const runtime::Executable& executable, const PartitionedRunOptions& options) {
  if (absl::Status st = runtime::InitMpi(); !st.ok()) return st;
  const int rank = runtime::MpiRank(), size = runtime::MpiSize();
  const int64_t n = options.num_devices;
  if (n % size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices ", n, " cannot be spread over ", size,
                     " MPI processes: the device count must be a multiple of the process count"));
  }
  const std::string text = local.ToString();
  uint64_t program = std::hash<std::string>()(text) ^ static_cast<uint64_t>(n);
  if (absl::Status st = runtime::CheckSameProgramEverywhere(program, options.collective_timeout);
      !st.ok()) {
    return st;
  }

  // Process 0 has the global inputs; the others receive them.
  if (rank == 0 && static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", entry.num_parameters(),
                                                   " arguments, got ", args.size()));
  }
  std::vector<runtime::Buffer> inputs;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    absl::StatusOr<runtime::Buffer> b =
        rank == 0 ? runtime::Buffer::FromLiteral(args[static_cast<size_t>(i)])
                  : runtime::Buffer::Allocate(entry.parameter(i)->shape());
    if (!b.ok()) return b.status();
    inputs.push_back(*std::move(b));
  }
  if (absl::Status st = runtime::BroadcastBuffers(inputs, options.collective_timeout); !st.ok()) {
    return st;
  }
  std::vector<hlo::Literal> global_args;
  for (const runtime::Buffer& b : inputs) {
    absl::StatusOr<hlo::Literal> l = b.ToLiteral();
    if (!l.ok()) return l.status();
    global_args.push_back(*std::move(l));
  }

  runtime::MeshOptions mesh_options;
  mesh_options.num_devices = n;
  mesh_options.collective_timeout = options.collective_timeout;
  runtime::DeviceMesh mesh(mesh_options);
  runtime::MpiOptions mpi_options;
  mpi_options.num_devices = n;
  mpi_options.timeout = options.collective_timeout;
  mpi_options.program_fingerprint = program;
  mpi_options.local.threads_per_device = mesh.threads_per_device();
  absl::StatusOr<std::unique_ptr<runtime::MpiCommunicator>> comm =
      runtime::MpiCommunicator::Create(mpi_options);
  if (!comm.ok()) return comm.status();
  const int64_t first = (*comm)->first_local_device();
  std::vector<std::vector<runtime::Buffer>> device_args;
  for (int64_t d = first; d < first + (*comm)->num_local_devices(); ++d) {
    absl::StatusOr<std::vector<runtime::Buffer>> a = DeviceArguments(entry, global_args, d);
    if (!a.ok()) return a.status();
    device_args.push_back(*std::move(a));
  }
  absl::StatusOr<std::vector<runtime::Buffer>> results =
      mesh.RunLocalBuffers(executable, **comm, first, device_args);
  if (!results.ok()) return RunFailed(n, results.status());
  absl::StatusOr<std::vector<runtime::Buffer>> all =
      runtime::GatherBuffersToFirst(*results, options.collective_timeout);
  if (!all.ok()) return all.status();
  std::vector<hlo::Literal> parts;
  for (const runtime::Buffer& b : *all) {
    absl::StatusOr<hlo::Literal> l = DeviceResult(b);
    if (!l.ok()) return l.status();
    parts.push_back(*std::move(l));
  }
  return parts;
}
#endif

}  // namespace

bool LaunchedByMpirun() { return EnvInt("OMPI_COMM_WORLD_SIZE", 1) > 1; }

bool IsMainProcess() { return !LaunchedByMpirun() || EnvInt("OMPI_COMM_WORLD_RANK", 0) == 0; }

std::string DescribeDeviceMesh(int64_t num_devices) {
  if (!LaunchedByMpirun()) return "an in-process device mesh";
  const int64_t processes = EnvInt("OMPI_COMM_WORLD_SIZE", 1);
  if (num_devices % processes != 0) return absl::StrCat(processes, " MPI processes");
  return absl::StrCat(processes, " MPI processes (", num_devices / processes, " devices each)");
}

absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            int64_t num_devices) {
  PartitionedRunOptions options;
  options.num_devices = num_devices;
  return RunPartitioned(global, args, options);
}

absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            const PartitionedRunOptions& options) {
  const int64_t num_devices = options.num_devices;
  const bool mpi = LaunchedByMpirun();
#ifndef SHARC_HAVE_MPI
  if (mpi) {
    return absl::FailedPreconditionError(
        "sharc was started by mpirun with several processes, but this build has no MPI backend "
        "(CMake did not find MPI); run it without mpirun, or rebuild with Open MPI installed");
  }
#endif
  // Propagation works in place; the caller's module stays as written.
  std::unique_ptr<hlo::Module> propagated = global.Clone();
  if (auto result = spmd::PropagateShardings(*propagated); !result.ok()) {
    return Prefix(result.status(), "sharding propagation failed");
  }
  spmd::PartitionOptions partition_options;
  partition_options.num_devices = num_devices;
  absl::StatusOr<std::unique_ptr<hlo::Module>> local =
      spmd::PartitionModule(*propagated, partition_options);
  if (!local.ok()) return Prefix(local.status(), "partitioning failed");
  // A partitioner bug should surface as a clear compile error, not as a
  // confusing failure inside the interpreter.
  if (absl::Status verified = hlo::VerifyModule(**local); !verified.ok()) {
    return absl::InternalError(
        absl::StrCat("the partitioned module does not verify: ", verified.message()));
  }

  const hlo::Computation& entry = *propagated->entry();
  // The per-device program runs on the runtime's device mesh (one thread
  // per device, shared-memory collectives, MPI between processes) with the
  // reference interpreter's kernels. Programs the runtime cannot schedule
  // (a collective with a non-elementary reducer) fall back to the
  // interpreter's own SPMD mode, in one process only.
  if (options.prepare) {
    if (absl::Status st = options.prepare(**local); !st.ok()) return st;
  }
  runtime::InterpreterKernelFactory interpreter_factory;
  runtime::KernelFactory& factory =
      options.kernel_factory != nullptr ? *options.kernel_factory : interpreter_factory;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(**local, factory);
  if (!executable.ok() && !(absl::IsUnimplemented(executable.status()) && !mpi)) {
    return Prefix(executable.status(), "building the per-device executable");
  }
  std::vector<hlo::Literal> parts;
  if (mpi) {
#ifdef SHARC_HAVE_MPI
    absl::StatusOr<std::vector<hlo::Literal>> gathered =
        RunOnMpiProcesses(**local, entry, args, **executable, options);
    if (!gathered.ok()) {
      // Bad flags stay input errors; anything else failed the run.
      if (absl::IsAborted(gathered.status()) || absl::IsInvalidArgument(gathered.status())) {
        return gathered.status();
      }
      return RunFailed(num_devices, gathered.status());
    }
    if (!IsMainProcess()) return hlo::Literal();
    parts = *std::move(gathered);
#endif
  } else if (executable.ok()) {
    std::vector<std::vector<runtime::Buffer>> device_args;
    for (int64_t d = 0; d < num_devices; ++d) {
      absl::StatusOr<std::vector<runtime::Buffer>> a = DeviceArguments(entry, args, d);
      if (!a.ok()) return a.status();
      device_args.push_back(*std::move(a));
    }
    runtime::MeshOptions mesh_options;
    mesh_options.num_devices = num_devices;
    mesh_options.collective_timeout = options.collective_timeout;
    runtime::DeviceMesh mesh(mesh_options);
    absl::StatusOr<std::vector<runtime::Buffer>> outputs =
        mesh.RunBuffers(**executable, device_args);
    if (!outputs.ok()) return RunFailed(num_devices, outputs.status());
    for (int64_t i = 0; i < options.timed_iterations; ++i) {
      const absl::Time start = absl::Now();
      absl::StatusOr<std::vector<runtime::Buffer>> again = mesh.RunBuffers(**executable, device_args);
      if (!again.ok()) return RunFailed(num_devices, again.status());
      if (options.run_seconds != nullptr) {
        options.run_seconds->push_back(absl::ToDoubleSeconds(absl::Now() - start));
      }
    }
    for (const runtime::Buffer& b : *outputs) {
      absl::StatusOr<hlo::Literal> l = DeviceResult(b);
      if (!l.ok()) return l.status();
      parts.push_back(*std::move(l));
    }
  } else {
    std::vector<std::vector<hlo::Literal>> device_args(static_cast<size_t>(num_devices));
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      hlo::Sharding sharding = ShardingOrReplicated(*entry.parameter(i));
      for (int64_t d = 0; d < num_devices; ++d) {
        absl::StatusOr<hlo::Literal> part =
            spmd::ShardLiteral(args[static_cast<size_t>(i)], sharding, d);
        if (!part.ok()) {
          return Prefix(part.status(), absl::StrCat("splitting parameter ", i, " for device ", d));
        }
        device_args[static_cast<size_t>(d)].push_back(*std::move(part));
      }
    }
    hlo::SpmdOptions spmd_options;
    spmd_options.num_devices = num_devices;
    absl::StatusOr<std::vector<hlo::Literal>> evaluated =
        hlo::EvaluateSpmd(**local, device_args, spmd_options);
    if (!evaluated.ok()) return RunFailed(num_devices, evaluated.status());
    parts = *std::move(evaluated);
  }
  const hlo::Instruction& root = *entry.root();
  absl::StatusOr<hlo::Literal> assembled =
      spmd::AssembleLiteral(parts, ShardingOrReplicated(root), root.shape());
  if (!assembled.ok()) return Prefix(assembled.status(), "assembling the result");
  return assembled;
}

}  // namespace sharc::tools

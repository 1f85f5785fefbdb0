#include "driver/mpi_program_run.h"

#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "driver/device_arguments.h"
#include "hlo/base/status_macros.h"

#ifdef SHARC_HAVE_MPI
#include "runtime/mesh_runtime.h"
#include "runtime/mpi_communicator.h"
#include "runtime/mpi_host_transfer.h"
#include "runtime/mpi_session.h"
#endif

namespace sharc::driver {

#ifndef SHARC_HAVE_MPI
absl::StatusOr<std::vector<hlo::Literal>> RunOnMpiProcesses(
    const hlo::Module&, const hlo::Computation&, const std::vector<hlo::Literal>&,
    const runtime::Executable&, int64_t, absl::Duration) {
  return absl::FailedPreconditionError(
      "sharc was started by mpirun with several processes, but this build has no MPI backend "
      "(CMake did not find MPI); run it without mpirun, or rebuild with Open MPI installed");
}
#else
absl::StatusOr<std::vector<hlo::Literal>> RunOnMpiProcesses(
    const hlo::Module& per_device, const hlo::Computation& entry,
    const std::vector<hlo::Literal>& args, const runtime::Executable& executable,
    int64_t num_devices, absl::Duration timeout) {
  if (absl::Status st = runtime::InitMpi(); !st.ok()) return st;
  const int rank = runtime::MpiRank(), size = runtime::MpiSize();
  const int64_t n = num_devices;
  if (n % size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(n, " devices (--devices, or the count a per-device program's collectives "
                     "span) cannot be spread over ", size,
                     " MPI processes: the device count must be a multiple of the process count"));
  }
  const std::string text = per_device.ToString();
  uint64_t program = std::hash<std::string>()(text) ^ static_cast<uint64_t>(n);
  if (absl::Status st = runtime::CheckSameProgramEverywhere(program, timeout); !st.ok()) {
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
  if (absl::Status st = runtime::BroadcastBuffers(inputs, timeout); !st.ok()) return st;
  std::vector<hlo::Literal> global_args;
  for (const runtime::Buffer& b : inputs) {
    ASSIGN_OR_RETURN(hlo::Literal l, b.ToLiteral());
    global_args.push_back(std::move(l));
  }

  runtime::MeshOptions mesh_options;
  mesh_options.num_devices = n;
  mesh_options.collective_timeout = timeout;
  runtime::DeviceMesh mesh(mesh_options);
  runtime::MpiOptions mpi_options;
  mpi_options.num_devices = n;
  mpi_options.timeout = timeout;
  mpi_options.program_fingerprint = program;
  mpi_options.local.threads_per_device = mesh.threads_per_device();
  absl::StatusOr<std::unique_ptr<runtime::MpiCommunicator>> comm =
      runtime::MpiCommunicator::Create(mpi_options);
  if (!comm.ok()) return comm.status();
  const int64_t first = (*comm)->first_local_device();
  std::vector<std::vector<runtime::Buffer>> device_args;
  for (int64_t d = first; d < first + (*comm)->num_local_devices(); ++d) {
    ASSIGN_OR_RETURN(std::vector<runtime::Buffer> a, DeviceArgumentBuffers(entry, global_args, d));
    device_args.push_back(std::move(a));
  }
  absl::StatusOr<std::vector<runtime::Buffer>> results =
      mesh.RunLocalBuffers(executable, **comm, first, device_args);
  if (!results.ok()) {
    return absl::AbortedError(
        absl::StrCat("running on ", n, " devices failed: ", results.status().message()));
  }
  absl::StatusOr<std::vector<runtime::Buffer>> all =
      runtime::GatherBuffersToFirst(*results, timeout);
  if (!all.ok()) return all.status();
  std::vector<hlo::Literal> parts;
  for (const runtime::Buffer& b : *all) {
    ASSIGN_OR_RETURN(hlo::Literal l, DeviceResultLiteral(b));
    parts.push_back(std::move(l));
  }
  return parts;
}
#endif

}  // namespace sharc::driver

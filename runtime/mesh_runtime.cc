#include "runtime/mesh_runtime.h"

#include <algorithm>
#include <thread>

#include "hlo/base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "runtime/in_process_communicator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sharc::runtime {

int DefaultThreadsPerDevice(int64_t num_devices) {
  const int64_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
  return static_cast<int>(std::max<int64_t>(1, cores / std::max<int64_t>(1, num_devices)));
}

DeviceMesh::DeviceMesh(MeshOptions options) : options_(options) {
  threads_per_device_ = options_.threads_per_device > 0
                            ? options_.threads_per_device
                            : DefaultThreadsPerDevice(options_.num_devices);
}

absl::StatusOr<std::vector<Buffer>> DeviceMesh::RunBuffers(
    const Executable& executable, const std::vector<std::vector<Buffer>>& arguments,
    std::vector<ExecutionStats>* stats) const {
  const int64_t n = options_.num_devices;
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("a mesh needs at least one device, got ", n));
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected arguments for ", n, " devices, got ", arguments.size()));
  }
  InProcessOptions comm_options;
  comm_options.timeout = options_.collective_timeout;
  comm_options.spin = options_.spin;
  comm_options.threads_per_device = threads_per_device_;
  InProcessCommunicator communicator(n, comm_options);
  return RunLocalBuffers(executable, communicator, 0, arguments, stats);
}

absl::StatusOr<std::vector<Buffer>> DeviceMesh::RunLocalBuffers(
    const Executable& executable, Communicator& communicator, int64_t first_device,
    const std::vector<std::vector<Buffer>>& arguments, std::vector<ExecutionStats>* stats) const {
  const int64_t n = options_.num_devices;
  const int64_t local = static_cast<int64_t>(arguments.size());
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("a mesh needs at least one device, got ", n));
  if (first_device < 0 || local < 1 || first_device + local > n) {
    return absl::InvalidArgumentError(absl::StrCat("devices [", first_device, ", ",
                                                   first_device + local, ") are not within a mesh of ",
                                                   n));
  }
  std::vector<absl::StatusOr<Buffer>> results(static_cast<size_t>(local),
                                              absl::UnknownError("not run"));
  std::vector<ExecutionStats> device_stats(static_cast<size_t>(local));
  auto run_device = [&](int64_t i) {
#ifdef _OPENMP
    omp_set_dynamic(0);
    omp_set_num_threads(threads_per_device_);
#endif
    const int64_t d = first_device + i;
    DeviceContext context;
    context.device_id = d;
    context.num_devices = n;
    context.communicator = &communicator;
    context.profile = profiling_;
    if (static_cast<size_t>(d) < host_queues_.size()) {
      context.host_queues = host_queues_[static_cast<size_t>(d)];
    }
    absl::StatusOr<Buffer>& result = results[static_cast<size_t>(i)];
    result = executable.Run(context, arguments[static_cast<size_t>(i)],
                            &device_stats[static_cast<size_t>(i)]);
    if (result.ok()) {
      communicator.MarkFinished(d);
    } else {
      communicator.Abort(d, result.status());
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(local));
  for (int64_t i = 1; i < local; ++i) threads.emplace_back(run_device, i);
  {
    // The first device runs on the calling thread: its OpenMP team (the
    // threads of its kernels' parallel loops) then lives as long as the
    // caller, so runs repeated from one thread do not start and stop
    // threads each time (with a new device thread per run, a 1-device run
    // of a parallel kernel took 10x longer on a loaded host). The caller's
    // OpenMP settings are restored afterwards.
#ifdef _OPENMP
    const int caller_threads = omp_get_max_threads();
    const int caller_dynamic = omp_get_dynamic();
#endif
    run_device(0);
#ifdef _OPENMP
    omp_set_num_threads(caller_threads);
    omp_set_dynamic(caller_dynamic);
#endif
  }
  for (std::thread& t : threads) t.join();
  if (stats != nullptr) *stats = device_stats;

  // The first failure is the cause; later ones are its echoes.
  if (absl::Status cause = communicator.failure(); !cause.ok()) return cause;
  std::vector<Buffer> out;
  out.reserve(static_cast<size_t>(local));
  for (int64_t i = 0; i < local; ++i) {
    absl::StatusOr<Buffer>& r = results[static_cast<size_t>(i)];
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat("device ", first_device + i,
                                                          " failed: ", r.status().message()));
    }
    out.push_back(*std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<hlo::Literal>>> DeviceMesh::Run(
    const Executable& executable,
    const std::vector<std::vector<hlo::Literal>>& arguments) const {
  std::vector<std::vector<Buffer>> buffers(arguments.size());
  for (size_t d = 0; d < arguments.size(); ++d) {
    for (size_t i = 0; i < arguments[d].size(); ++i) {
      absl::StatusOr<Buffer> b = Buffer::FromLiteral(arguments[d][i]);
      if (!b.ok()) {
        return absl::Status(b.status().code(), absl::StrCat("argument ", i, " of device ", d, ": ",
                                                            b.status().message()));
      }
      buffers[d].push_back(*std::move(b));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Buffer> results, RunBuffers(executable, buffers));
  std::vector<std::vector<hlo::Literal>> out(results.size());
  for (size_t d = 0; d < results.size(); ++d) {
    const Buffer& r = results[d];
    if (r.is_tuple()) {
      for (const Buffer& e : r.elements()) {
        ASSIGN_OR_RETURN(hlo::Literal l, e.ToLiteral());
        out[d].push_back(std::move(l));
      }
    } else {
      ASSIGN_OR_RETURN(hlo::Literal l, r.ToLiteral());
      out[d].push_back(std::move(l));
    }
  }
  return out;
}

}  // namespace sharc::runtime

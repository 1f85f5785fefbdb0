#include "driver/spmd_runner.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "driver/compiled_program.h"

namespace sharc::driver {
namespace {

// Open MPI's launch environment (mpirun sets it for every process).
int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  int64_t parsed = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &parsed)) return fallback;
  return parsed;
}

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
  ProgramOptions program_options;
  program_options.num_devices = options.num_devices;
  program_options.backend = options.backend;
  program_options.collective_timeout = options.collective_timeout;
  program_options.show_progress = options.show_progress;
  program_options.note = options.note;
  program_options.pipeline = options.pipeline;
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program =
      CompiledProgram::Compile(global, program_options);
  if (!program.ok()) return program.status();
  absl::StatusOr<hlo::Literal> result = (*program)->Run(args, options.host);
  if (!result.ok() || !IsMainProcess()) return result;
  if (options.timed_iterations > 0) {
    absl::StatusOr<std::vector<double>> seconds =
        (*program)->TimeRuns(args, options.timed_iterations);
    if (!seconds.ok()) return seconds.status();
    if (options.run_seconds != nullptr) {
      options.run_seconds->insert(options.run_seconds->end(), seconds->begin(), seconds->end());
    }
  }
  if (options.profiled_iterations > 0 && options.profile != nullptr) {
    absl::StatusOr<Profile> profile = (*program)->ProfileRuns(args, options.profiled_iterations);
    if (!profile.ok()) return profile.status();
    *options.profile = *std::move(profile);
  }
  return result;
}

}  // namespace sharc::driver

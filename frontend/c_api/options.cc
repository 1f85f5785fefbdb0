// Compile options: the C form of `--mesh`, `--devices`, `--mapreduce-mode`,
// `--backend`, `--collective-timeout` and `--pass-timings`.
#include <cmath>

#include "frontend/c_api/handles.h"
#include "hlo/ir/device_limits.h"

using sharc::c_api::CheckNotNull;
using sharc::c_api::Guard;

extern "C" {

sharc_error* sharc_options_create(sharc_options** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    *out = new sharc_options;
    return absl::OkStatus();
  });
}

void sharc_options_free(sharc_options* options) { delete options; }

sharc_error* sharc_options_set_mesh(sharc_options* options, const char* mesh) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    if (mesh == nullptr || *mesh == '\0') {
      options->mesh.reset();
      return absl::OkStatus();
    }
    absl::StatusOr<sharc::spmd::Mesh> parsed = sharc::spmd::Mesh::Parse(mesh);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": mesh '", mesh, "': ", parsed.status().message()));
    }
    options->mesh = *std::move(parsed);
    return absl::OkStatus();
  });
}

sharc_error* sharc_options_set_num_devices(sharc_options* options, int64_t num_devices) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    if (num_devices < 0 || num_devices > sharc::hlo::kMaxDevices) {
      return absl::InvalidArgumentError(absl::StrCat(function, ": num_devices ", num_devices,
                                                     " is outside [1, ", sharc::hlo::kMaxDevices,
                                                     "] (0 removes the override)"));
    }
    if (num_devices == 0) {
      options->num_devices.reset();
    } else {
      options->num_devices = num_devices;
    }
    return absl::OkStatus();
  });
}

sharc_error* sharc_options_set_mapreduce_mode(sharc_options* options, sharc_mapreduce_mode mode) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    switch (mode) {
      case SHARC_MAPREDUCE_ANNOTATED:
        options->mapreduce_mode = sharc::spmd::MapReduceMode::kAnnotated;
        return absl::OkStatus();
      case SHARC_MAPREDUCE_NS:
        options->mapreduce_mode = sharc::spmd::MapReduceMode::kNoSharding;
        return absl::OkStatus();
      case SHARC_MAPREDUCE_LOOP:
        options->mapreduce_mode = sharc::spmd::MapReduceMode::kLoop;
        return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(function, ": unknown mode ",
                                                   static_cast<int>(mode),
                                                   " (not a sharc_mapreduce_mode)"));
  });
}

sharc_error* sharc_options_set_backend(sharc_options* options, sharc_backend backend) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    switch (backend) {
      case SHARC_BACKEND_DEFAULT:
        options->backend = sharc::driver::Backend::kDefault;
        return absl::OkStatus();
      case SHARC_BACKEND_HALIDE:
        options->backend = sharc::driver::Backend::kHalide;
        return absl::OkStatus();
      case SHARC_BACKEND_INTERPRETER:
        options->backend = sharc::driver::Backend::kInterpreter;
        return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        function, ": unknown backend ", static_cast<int>(backend), " (not a sharc_backend)"));
  });
}

sharc_error* sharc_options_set_collective_timeout(sharc_options* options, double seconds) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    if (!std::isfinite(seconds) || seconds <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": the timeout must be a positive number of seconds, got ",
                       seconds));
    }
    options->collective_timeout_seconds = seconds;
    return absl::OkStatus();
  });
}

sharc_error* sharc_options_set_pass_timings(sharc_options* options, int enabled) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(options, function, "options"));
    options->pass_timings = enabled != 0;
    return absl::OkStatus();
  });
}

}  // extern "C"

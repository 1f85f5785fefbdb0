// Compiling a module into a program and running it on host arrays, through
// driver::CompileForRun (the same engine as `sharc run`, the frontend's jit
// and the Python package, so they agree on what a compiled program is).
#include "frontend/c_api/arrays.h"
#include "frontend/c_api/handles.h"
#include "driver/compile_for_run.h"

namespace sharc::c_api {
namespace {

absl::Status Compile(const sharc_module& module, const sharc_options& options,
                     sharc_program& program) {
  driver::RunRequest request;
  request.mesh = options.mesh;
  request.num_devices = options.num_devices;
  request.mapreduce_mode = options.mapreduce_mode;
  request.backend = options.backend;
  request.collective_timeout_seconds = options.collective_timeout_seconds;
  request.pass_timings = options.pass_timings;
  ASSIGN_OR_RETURN(driver::CompiledForRun compiled, driver::CompileForRun(*module.module, request));
  program.prepared = std::move(compiled.prepared);
  program.compiled = std::move(compiled.compiled);
  program.notes = std::move(compiled.notes);
  program.pass_timings = std::move(compiled.pass_timings);
  return absl::OkStatus();
}

// The inputs as literals, each checked against its parameter so that a
// mistake names the parameter and both shapes.
absl::StatusOr<std::vector<hlo::Literal>> InputLiterals(const hlo::Computation& entry,
                                                        const sharc_array* inputs,
                                                        int64_t num_inputs, const char* function) {
  if (num_inputs != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(function, ": the program takes ",
                                                   entry.num_parameters(),
                                                   " input(s), one per entry parameter, but ",
                                                   num_inputs, " were given"));
  }
  if (num_inputs > 0 && inputs == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(function, ": inputs is NULL but num_inputs is ", num_inputs));
  }
  std::vector<hlo::Literal> literals;
  literals.reserve(static_cast<size_t>(num_inputs));
  for (int64_t i = 0; i < num_inputs; ++i) {
    const hlo::Instruction& parameter = *entry.parameter(i);
    const std::string what = absl::StrCat(function, ": input ", i, " for parameter %",
                                          parameter.name(), " (", parameter.shape().ToString(), ")");
    if (!parameter.shape().is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": tuple-shaped parameters cannot be passed through the C API"));
    }
    const sharc_array& input = inputs[i];
    std::optional<hlo::PrimitiveType> type = ToPrimitiveType(input.dtype);
    if (type && *type != parameter.shape().type()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": the array has dtype ", sharc_dtype_name(input.dtype), " but ",
                       hlo::PrimitiveTypeName(parameter.shape().type()), " is expected"));
    }
    ASSIGN_OR_RETURN(hlo::Literal literal, LiteralFromArray(input, what));
    if (literal.shape() != parameter.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the array is ",
                                                     literal.shape().ToString(), " but ",
                                                     parameter.shape().ToString(),
                                                     " is expected"));
    }
    literals.push_back(std::move(literal));
  }
  return literals;
}

absl::Status CheckProgram(const sharc_program* program, const char* function) {
  RETURN_IF_ERROR(CheckNotNull(program, function, "program"));
  if (program->compiled == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(function, ": the program was not compiled"));
  }
  return absl::OkStatus();
}

absl::StatusOr<const hlo::Literal*> ResultOutput(const sharc_result* result, int64_t index,
                                                        const char* function) {
  RETURN_IF_ERROR(CheckNotNull(result, function, "result"));
  if (index < 0 || index >= static_cast<int64_t>(result->outputs.size())) {
    return absl::OutOfRangeError(absl::StrCat(function, ": output index ", index,
                                              " is out of range: the result has ",
                                              result->outputs.size(), " output(s)"));
  }
  return &result->outputs[static_cast<size_t>(index)];
}

}  // namespace
}  // namespace sharc::c_api

using sharc::c_api::CheckNotNull;
using sharc::c_api::CheckProgram;
using sharc::c_api::Guard;
using sharc::c_api::ResultOutput;

extern "C" {

sharc_error* sharc_compile(const sharc_module* module, const sharc_options* options,
                           sharc_program** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    const sharc_options defaults;
    auto program = std::make_unique<sharc_program>();
    absl::Status compiled =
        sharc::c_api::Compile(*module, options != nullptr ? *options : defaults, *program);
    if (!compiled.ok()) {
      return absl::Status(compiled.code(), absl::StrCat(function, ": ", compiled.message()));
    }
    *out = program.release();
    return absl::OkStatus();
  });
}

void sharc_program_free(sharc_program* program) { delete program; }

sharc_error* sharc_program_num_devices(const sharc_program* program, int64_t* out_count) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_count, function, "out_count"));
    *out_count = program->compiled->num_devices();
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_uses_halide(const sharc_program* program, int* out_flag) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_flag, function, "out_flag"));
    *out_flag = program->compiled->uses_halide() ? 1 : 0;
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_notes(const sharc_program* program, const char** out_text) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_text, function, "out_text"));
    *out_text = program->notes.c_str();
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_pass_timings(const sharc_program* program, const char** out_text) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_text, function, "out_text"));
    *out_text = program->pass_timings.c_str();
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_print(const sharc_program* program, sharc_program_stage stage,
                                 char** out_text) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_text, function, "out_text"));
    const sharc::hlo::Module* module = nullptr;
    switch (stage) {
      case SHARC_STAGE_PREPARED: module = program->prepared.get(); break;
      case SHARC_STAGE_PROPAGATED: module = &program->compiled->propagated(); break;
      case SHARC_STAGE_PER_DEVICE: module = &program->compiled->per_device(); break;
    }
    if (module == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          function, ": unknown stage ", static_cast<int>(stage), " (not a sharc_program_stage)"));
    }
    *out_text = sharc::c_api::CopyToCString(module->ToString());
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_num_parameters(const sharc_program* program, int64_t* out_count) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out_count, function, "out_count"));
    *out_count = program->prepared->entry()->num_parameters();
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_parameter_shape(const sharc_program* program, int64_t index,
                                           sharc_dtype* out_dtype, int32_t* out_rank,
                                           int64_t* dims, int32_t dims_capacity) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    const sharc::hlo::Computation& entry = *program->prepared->entry();
    if (index < 0 || index >= entry.num_parameters()) {
      return absl::OutOfRangeError(absl::StrCat(function, ": parameter index ", index,
                                                " is out of range: the program has ",
                                                entry.num_parameters(), " parameter(s)"));
    }
    sharc::c_api::ReportShape(entry.parameter(index)->shape(), out_dtype, out_rank, dims,
                              dims_capacity);
    return absl::OkStatus();
  });
}

sharc_error* sharc_program_run(sharc_program* program, const sharc_array* inputs,
                               int64_t num_inputs, sharc_result** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckProgram(program, function));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(std::vector<sharc::hlo::Literal> args,
                     sharc::c_api::InputLiterals(*program->prepared->entry(), inputs, num_inputs,
                                                 function));
    absl::StatusOr<sharc::hlo::Literal> result;
    {
      std::lock_guard<std::mutex> lock(program->run_mutex);
      result = program->compiled->Run(args);
    }
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat(function, ": ", result.status().message()));
    }
    auto outputs = std::make_unique<sharc_result>();
    sharc::c_api::FlattenLeaves(*std::move(result), outputs->outputs);
    *out = outputs.release();
    return absl::OkStatus();
  });
}

void sharc_result_free(sharc_result* result) { delete result; }

sharc_error* sharc_result_num_outputs(const sharc_result* result, int64_t* out_count) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(result, function, "result"));
    RETURN_IF_ERROR(CheckNotNull(out_count, function, "out_count"));
    *out_count = static_cast<int64_t>(result->outputs.size());
    return absl::OkStatus();
  });
}

sharc_error* sharc_result_output(const sharc_result* result, int64_t index, sharc_array* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(const sharc::hlo::Literal* output, ResultOutput(result, index, function));
    *out = sharc::c_api::ArrayView(*output);
    return absl::OkStatus();
  });
}

sharc_error* sharc_result_copy_output(const sharc_result* result, int64_t index,
                                      void* destination, size_t capacity_bytes) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    ASSIGN_OR_RETURN(const sharc::hlo::Literal* output, ResultOutput(result, index, function));
    const size_t bytes = static_cast<size_t>(output->size_bytes());
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckNotNull(destination, function, "destination"));
    if (capacity_bytes < bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          function, ": output ", index, " (", output->shape().ToString(), ") needs ", bytes,
          " bytes but the destination holds ", capacity_bytes));
    }
    std::memcpy(destination, output->untyped_data(), bytes);
    return absl::OkStatus();
  });
}

}  // extern "C"

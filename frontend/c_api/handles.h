// What the C API's opaque handles hold, and the plumbing every entry point
// shares: absl::Status to sharc_error, argument checks that name the
// function and argument, and a guard that turns any escaping C++ exception
// into an error object (no exception may cross the C boundary).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontend/c_api/sharc_c.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "spmd/cost_report.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/mesh.h"
#include "driver/compiled_program.h"

struct sharc_error {
  sharc_error_code code = SHARC_OK;
  std::string message;
};

struct sharc_module {
  std::unique_ptr<sharc::hlo::Module> module;
};

struct sharc_builder {
  // The module under construction. Its entry has no root until Finish,
  // which works on a copy; `values[v]` is the instruction of sharc_value v.
  std::unique_ptr<sharc::hlo::Module> module;
  std::vector<sharc::hlo::Instruction*> values;
  int64_t num_parameters = 0;
};

struct sharc_options {
  std::optional<sharc::spmd::Mesh> mesh;
  std::optional<int64_t> num_devices;
  sharc::spmd::MapReduceMode mapreduce_mode = sharc::spmd::MapReduceMode::kAnnotated;
  sharc::driver::Backend backend = sharc::driver::Backend::kDefault;
  double collective_timeout_seconds = 60;
  bool pass_timings = false;
};

struct sharc_program {
  // The module as compiled: options applied, MapReduce blocks and
  // shard_maps lowered.
  std::unique_ptr<sharc::hlo::Module> prepared;
  std::unique_ptr<sharc::driver::CompiledProgram> compiled;
  std::string notes;
  std::string pass_timings;
  // CompiledProgram::Run must not run twice at once; the C API lets callers
  // share a program between threads, so runs (and reports, which read what
  // a run may be updating) take turns here.
  mutable std::mutex run_mutex;
};

struct sharc_result {
  // The root's array leaves, depth first.
  std::vector<sharc::hlo::Literal> outputs;
};

struct sharc_report {
  sharc::spmd::CostReport report;
  std::string json;
  std::string text;
};

namespace sharc::c_api {

// NULL for OK; otherwise a new error with the status's code and message.
sharc_error* ToError(const absl::Status& status);
sharc_error* MakeError(sharc_error_code code, std::string message);

// InvalidArgument "FUNCTION: ARGUMENT is NULL" unless `pointer` is set.
absl::Status CheckNotNull(const void* pointer, const char* function, const char* argument);

// Runs `body(function)` (returning absl::Status; `function` is the entry
// point's name for messages, as __func__ inside a lambda is not) and
// converts its outcome; an exception becomes RESOURCE_EXHAUSTED (out of
// memory) or INTERNAL, with the function's name.
template <typename Body>
sharc_error* Guard(const char* function, Body&& body) noexcept {
  try {
    return ToError(body(function));
  } catch (const std::bad_alloc&) {
    return MakeError(SHARC_ERROR_RESOURCE_EXHAUSTED, absl::StrCat(function, ": out of memory"));
  } catch (const std::exception& e) {
    return MakeError(SHARC_ERROR_INTERNAL, absl::StrCat(function, ": internal error: ", e.what()));
  } catch (...) {
    return MakeError(SHARC_ERROR_INTERNAL,
                     absl::StrCat(function, ": internal error: unknown exception"));
  }
}

// A copy of `text` the caller releases with sharc_string_free.
char* CopyToCString(const std::string& text);

}  // namespace sharc::c_api

// Error objects, their codes and the `sharc` command's exit codes for them.
// The codes are Abseil's so that a status from any layer keeps its meaning
// across the C boundary unchanged.
#include <cstdlib>
#include <cstring>

#include "frontend/c_api/handles.h"
#include "driver/exit_codes.h"

static_assert(SHARC_ERROR_INVALID_ARGUMENT == static_cast<int>(absl::StatusCode::kInvalidArgument));
static_assert(SHARC_ERROR_ABORTED == static_cast<int>(absl::StatusCode::kAborted));
static_assert(SHARC_ERROR_INTERNAL == static_cast<int>(absl::StatusCode::kInternal));
static_assert(SHARC_ERROR_UNAUTHENTICATED == static_cast<int>(absl::StatusCode::kUnauthenticated));

namespace sharc::c_api {
namespace {

// Without memory for an error object the caller still learns that the call
// failed, from this shared object, which sharc_error_free leaves alone.
sharc_error out_of_memory_error{SHARC_ERROR_RESOURCE_EXHAUSTED, "out of memory"};

}  // namespace

sharc_error* MakeError(sharc_error_code code, std::string message) {
  auto* error = new (std::nothrow) sharc_error;
  if (error == nullptr) return &out_of_memory_error;
  error->code = code;
  error->message = std::move(message);
  return error;
}

sharc_error* ToError(const absl::Status& status) {
  if (status.ok()) return nullptr;
  return MakeError(static_cast<sharc_error_code>(status.code()), std::string(status.message()));
}

absl::Status CheckNotNull(const void* pointer, const char* function, const char* argument) {
  if (pointer != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(function, ": ", argument, " is NULL"));
}

char* CopyToCString(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

}  // namespace sharc::c_api

extern "C" {

const char* sharc_version(void) { return "0.1.0"; }

sharc_error_code sharc_error_get_code(const sharc_error* error) {
  return error == nullptr ? SHARC_OK : error->code;
}

const char* sharc_error_message(const sharc_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

// The CLI's mapping (docs/cli.md): bad input and compile errors 1, failed
// runs 3, bugs 70.
int sharc_error_exit_code(const sharc_error* error) {
  using namespace sharc::driver;
  switch (sharc_error_get_code(error)) {
    case SHARC_OK:
      return kExitOk;
    case SHARC_ERROR_ABORTED:
    case SHARC_ERROR_CANCELLED:
    case SHARC_ERROR_DEADLINE_EXCEEDED:
    case SHARC_ERROR_RESOURCE_EXHAUSTED:
    case SHARC_ERROR_UNAVAILABLE:
      return kExitRuntimeFailure;
    case SHARC_ERROR_INTERNAL:
    case SHARC_ERROR_UNKNOWN:
    case SHARC_ERROR_DATA_LOSS:
      return kExitInternal;
    default:
      return kExitInputError;
  }
}

const char* sharc_error_code_name(sharc_error_code code) {
  switch (code) {
    case SHARC_OK: return "OK";
    case SHARC_ERROR_CANCELLED: return "CANCELLED";
    case SHARC_ERROR_UNKNOWN: return "UNKNOWN";
    case SHARC_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case SHARC_ERROR_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case SHARC_ERROR_NOT_FOUND: return "NOT_FOUND";
    case SHARC_ERROR_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case SHARC_ERROR_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case SHARC_ERROR_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case SHARC_ERROR_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case SHARC_ERROR_ABORTED: return "ABORTED";
    case SHARC_ERROR_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case SHARC_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case SHARC_ERROR_INTERNAL: return "INTERNAL";
    case SHARC_ERROR_UNAVAILABLE: return "UNAVAILABLE";
    case SHARC_ERROR_DATA_LOSS: return "DATA_LOSS";
    case SHARC_ERROR_UNAUTHENTICATED: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

void sharc_error_free(sharc_error* error) {
  if (error == &sharc::c_api::out_of_memory_error) return;
  delete error;
}

void sharc_string_free(char* text) { std::free(text); }

}  // extern "C"

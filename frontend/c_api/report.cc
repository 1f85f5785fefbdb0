// The per-device cost report of a compiled program (spmd::CostReport, as
// `sharc report` prints it), and the figures callers most often want.
#include "frontend/c_api/handles.h"

using sharc::c_api::CheckNotNull;
using sharc::c_api::Guard;

extern "C" {

sharc_error* sharc_program_report(const sharc_program* program, sharc_report** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(program, function, "program"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    if (program->compiled == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(function, ": the program was not compiled"));
    }
    absl::StatusOr<sharc::spmd::CostReport> report;
    {
      std::lock_guard<std::mutex> lock(program->run_mutex);
      report = program->compiled->Report();
    }
    if (!report.ok()) {
      return absl::Status(report.status().code(),
                          absl::StrCat(function, ": ", report.status().message()));
    }
    auto handle = std::make_unique<sharc_report>();
    handle->report = *std::move(report);
    handle->json = handle->report.ToJson();
    handle->text = handle->report.ToText();
    *out = handle.release();
    return absl::OkStatus();
  });
}

void sharc_report_free(sharc_report* report) { delete report; }

sharc_error* sharc_report_json(const sharc_report* report, const char** out_json) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_json, function, "out_json"));
    *out_json = report->json.c_str();
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_text(const sharc_report* report, const char** out_text) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_text, function, "out_text"));
    *out_text = report->text.c_str();
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_num_devices(const sharc_report* report, int64_t* out_count) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_count, function, "out_count"));
    *out_count = report->report.num_devices;
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_flops(const sharc_report* report, double* out_flops) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_flops, function, "out_flops"));
    *out_flops = report->report.flops;
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_bytes_accessed(const sharc_report* report, double* out_bytes) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_bytes, function, "out_bytes"));
    *out_bytes = report->report.bytes_accessed;
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_peak_memory_bytes(const sharc_report* report, int64_t* out_bytes) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_bytes, function, "out_bytes"));
    *out_bytes = report->report.peak_memory_in_bytes;
    return absl::OkStatus();
  });
}

sharc_error* sharc_report_communication_bytes(const sharc_report* report, int64_t* out_bytes) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(report, function, "report"));
    RETURN_IF_ERROR(CheckNotNull(out_bytes, function, "out_bytes"));
    *out_bytes = report->report.communication_bytes;
    return absl::OkStatus();
  });
}

}  // extern "C"

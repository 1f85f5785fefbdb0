// What `sharc compare` compares: one module compiled several ways, each
// with its per-device cost report. A module with MapReduce blocks is
// compiled once per lowering (annotated, ns, loop: the papers' DrJAX vs
// DrJAX-NS vs for-loop); any other module as annotated and with its
// internal annotations removed ("unannotated": only the entry parameters
// and the root keep theirs). The first variant is the baseline of ratios.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "spmd/cost_report.h"
#include "driver/compile_stages.h"

namespace sharc::tools {

using driver::CompileOptions;

using LabelledReports = std::vector<std::pair<std::string, spmd::CostReport>>;

// Compiles (propagates and partitions) each variant of `module` for the
// options' devices and mesh; `options.mapreduce_mode` is ignored (every mode
// is a variant). Errors name the variant that failed.
absl::StatusOr<LabelledReports> CompareVariants(const hlo::Module& module,
                                                const CompileOptions& options);

}  // namespace sharc::tools

#include "tools/compare_variants.h"

#include <memory>

#include "hlo/base/status_macros.h"

namespace sharc::tools {

using driver::CompileOptions;
using driver::PartitionGlobal;
using driver::PrepareModule;
using driver::StripInternalAnnotations;
namespace {

using Variants = std::vector<std::pair<std::string, std::unique_ptr<hlo::Module>>>;

absl::StatusOr<Variants> PreparedVariants(const hlo::Module& module,
                                          const CompileOptions& options) {
  Variants variants;
  if (spmd::HasMapReduceBlocks(module)) {
    for (spmd::MapReduceMode mode : {spmd::MapReduceMode::kAnnotated,
                                     spmd::MapReduceMode::kNoSharding,
                                     spmd::MapReduceMode::kLoop}) {
      CompileOptions variant_options = options;
      variant_options.mapreduce_mode = mode;
      variants.emplace_back(spmd::MapReduceModeName(mode), module.Clone());
      RETURN_IF_ERROR(PrepareModule(*variants.back().second, variant_options));
    }
    return variants;
  }
  std::unique_ptr<hlo::Module> annotated = module.Clone();
  RETURN_IF_ERROR(PrepareModule(*annotated, options));
  std::unique_ptr<hlo::Module> unannotated = StripInternalAnnotations(*annotated);
  variants.emplace_back("annotated", std::move(annotated));
  variants.emplace_back("unannotated", std::move(unannotated));
  return variants;
}

}  // namespace

absl::StatusOr<LabelledReports> CompareVariants(const hlo::Module& module,
                                                const CompileOptions& options) {
  ASSIGN_OR_RETURN(Variants variants, PreparedVariants(module, options));
  LabelledReports reports;
  for (auto& [label, variant] : variants) {
    absl::StatusOr<std::unique_ptr<hlo::Module>> local = PartitionGlobal(*variant, options.devices);
    absl::StatusOr<spmd::CostReport> report =
        local.ok() ? spmd::AnalyzeCost(**local, variant.get()) : local.status();
    if (!report.ok()) {
      return absl::Status(report.status().code(),
                          absl::StrCat("(", label, ") ", report.status().message()));
    }
    reports.emplace_back(label, *std::move(report));
  }
  return reports;
}

}  // namespace sharc::tools

// `sharc compare FILE`: the module as annotated next to the module with its
// internal annotations removed (only entry parameters and the root keep
// theirs), with the ratio of each per-device figure.
#include "spmd/cost_report.h"
#include "tools/command.h"
#include "tools/compile_pipeline.h"
#include "tools/exit_codes.h"
#include "tools/flags.h"
#include "tools/module_loader.h"

namespace sharc::tools {
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc compare [FILE] [--devices N] [--json]

Compiles the module twice, as annotated and with every annotation removed
except those on the entry parameters and the root, and prints their per-device
reports side by side with the ratio of each figure (unannotated / annotated).
This is the comparison users want when they ask what their annotations buy.

flags:
  --devices N   partition count (overrides the header's num_partitions)
  --json        both reports as JSON, with "schema_version"
  -h, --help    show this text
)";

int RunCompare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kCompareCommand = {
    "compare", "annotated vs unannotated: per-device memory, flops, communication", kUsage,
    RunCompare};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}, {"json", FlagKind::kBool}};

int RunCompare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kCompareCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kCompareCommand, "expected one FILE", err);
  std::optional<int64_t> devices;
  if (auto d = parsed->Get("devices")) {
    absl::StatusOr<int64_t> n = ParseIntFlag("devices", *d, 1, 1 << 20);
    if (!n.ok()) return UsageError(kCompareCommand, n.status().message(), err);
    devices = *n;
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  auto module = LoadModule(path);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  std::unique_ptr<hlo::Module> stripped = StripInternalAnnotations(**module);
  std::vector<std::pair<std::string, spmd::CostReport>> reports;
  for (auto& [label, m] : std::vector<std::pair<std::string, hlo::Module*>>{
           {"annotated", module->get()}, {"unannotated", stripped.get()}}) {
    auto local = PartitionGlobal(*m, devices);
    if (!local.ok()) {
      err << DisplayName(path) << ": error (" << label << "): " << local.status().message() << "\n";
      return kExitInputError;
    }
    absl::StatusOr<spmd::CostReport> report = spmd::AnalyzeCost(**local, m);
    if (!report.ok()) {
      err << DisplayName(path) << ": error: " << report.status().message() << "\n";
      return kExitInputError;
    }
    reports.emplace_back(label, *std::move(report));
  }
  out << spmd::CompareReports(reports, parsed->Has("json"));
  if (parsed->Has("json")) out << "\n";
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools

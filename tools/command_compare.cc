// `sharc compare FILE`: the module as annotated next to the module with its
// internal annotations removed (only entry parameters and the root keep
// theirs), with the ratio of each per-device figure.
#include "spmd/cost_report.h"
#include "tools/command.h"
#include "tools/compare_variants.h"
#include "tools/compile_flags.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"

namespace sharc::tools {

using driver::CompileOptions;
using driver::DisplayName;
using driver::LoadModule;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc compare [FILE] [--devices N] [--mesh AXES] [--json]

Compiles the module twice, as annotated and with every annotation removed
except those on the entry parameters and the root, and prints their per-device
reports side by side with the ratio of each figure (unannotated / annotated).
This is the comparison users want when they ask what their annotations buy.

A module with MapReduce blocks is compiled three times instead, once per
lowering: annotated (DrJAX's internal constraints), ns (none) and loop (map
unrolled over the groups), with ratios against annotated.

flags:
  --devices N   partition count (overrides the header's num_partitions)
  --json        both reports as JSON, with "schema_version"
  --mesh AXES       named mesh, e.g. clients=2,data=2 (overrides the header's)
  -h, --help    show this text
)";

int RunCompare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kCompareCommand = {
    "compare", "annotated vs unannotated: per-device memory, flops, communication", kUsage,
    RunCompare};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}, kMeshFlag, {"json", FlagKind::kBool}};

int RunCompare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kCompareCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kCompareCommand, "expected one FILE", err);
  absl::StatusOr<CompileOptions> compile = CompileOptionsFromFlags(*parsed);
  if (!compile.ok()) return UsageError(kCompareCommand, compile.status().message(), err);
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  auto module = LoadModule(path);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  absl::StatusOr<LabelledReports> reports = CompareVariants(**module, *compile);
  if (!reports.ok()) {
    err << DisplayName(path) << ": error: " << reports.status().message() << "\n";
    return kExitInputError;
  }
  out << spmd::CompareReports(*reports, parsed->Has("json"));
  if (parsed->Has("json")) out << "\n";
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools

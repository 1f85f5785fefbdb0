// `sharc opt FILE --passes P1,P2`: runs generic passes alone and prints the
// module (XLA's hlo-opt), so each pass has a golden test of its own.
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "driver/exit_codes.h"
#include "driver/module_loader.h"
#include "hlo/passes/generic_passes.h"
#include "hlo/passes/pipeline.h"
#include "hlo/text/printer.h"
#include "tools/command.h"
#include "tools/compile_flags.h"
#include "tools/flags.h"

namespace sharc::tools {

using driver::DisplayName;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc opt [FILE] --passes P1[,P2...] [--verify-passes] [--pass-timings]

Runs the named generic passes, in the order given, on the module as written
(no propagation, no partitioning) and prints the result. The passes:
  inline    calls become their callee's body
  algsimp   exact algebraic identities (x*1, x-0, transpose of transpose...)
  cse       duplicate values become one
  dce       unused instructions go (side effects stay)
The module is verified after every pass.

flags:
  --passes P1,P2    the passes to run, comma-separated
  --verify-passes   (always on here; accepted for symmetry with the others)
  --pass-timings    print each pass's wall time on stderr, longest first
  -h, --help        show this text
)";

int RunOpt(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kOptCommand = {"opt", "run generic passes alone and print the module",
                                    kUsage, RunOpt};

namespace {

constexpr FlagSpec kFlags[] = {{"passes", FlagKind::kValue}, kVerifyPassesFlag, kPassTimingsFlag};

int RunOpt(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kOptCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kOptCommand, "expected one FILE", err);
  std::optional<std::string> pass_list = parsed->Get("passes");
  if (!pass_list || pass_list->empty()) return UsageError(kOptCommand, "--passes is required", err);
  absl::StatusOr<hlo::PipelineOptions> options = PipelineOptionsFromFlags(*parsed);
  if (!options.ok()) return UsageError(kOptCommand, options.status().message(), err);
  options->verify_each = true;
  PassTimingsPrinter timings(*options, err);
  hlo::Pipeline pipeline("opt", *options);
  for (absl::string_view name : absl::StrSplit(*pass_list, ',')) {
    absl::StatusOr<std::unique_ptr<hlo::Pass>> pass = hlo::MakeGenericPass(std::string_view(name.data(), name.size()));
    if (!pass.ok()) return UsageError(kOptCommand, pass.status().message(), err);
    pipeline.AddPass(*std::move(pass));
  }
  const std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  driver::LoadOptions load;
  load.allow_transfers = true;  // the passes compute nothing: any type, any op
  load.allow_unrunnable_types = true;
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = driver::LoadModule(path, load);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  if (absl::Status st = pipeline.Run(**module); !st.ok()) {
    err << DisplayName(path) << ": error: pass '" << pipeline.failed_pass() << "': " << st.message()
        << "\n";
    return kExitInputError;
  }
  out << hlo::PrintModule(**module);
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools

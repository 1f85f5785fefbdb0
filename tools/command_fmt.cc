// `sharc fmt FILE`: the module's canonical text. Because printing is
// canonical, `fmt` is a fixed point: fmt(fmt(x)) == fmt(x).
#include "hlo/text/printer.h"
#include "tools/command.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"

namespace sharc::tools {

using driver::LoadModule;
using driver::LoadOptions;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc fmt [FILE] [--no-verify] [--devices N]

Prints the canonical text of an HLO module on standard output: `%` names,
no layouts, attributes in a fixed order, callees before callers. The module is
verified first; errors are reported as by `sharc verify` (exit 1).
FILE defaults to standard input ("-").

flags:
  --no-verify   only parse (format a module the verifier rejects)
  --devices N   the number of devices, for a header without num_partitions
                (printed as num_partitions=N)
  -h, --help    show this text
)";

int RunFmt(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kFmtCommand = {"fmt", "print an HLO module in canonical text form", kUsage,
                                    RunFmt};

namespace {

constexpr FlagSpec kFlags[] = {{"no-verify", FlagKind::kBool}, {"devices", FlagKind::kValue}};

int RunFmt(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kFmtCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) {
    return UsageError(kFmtCommand, "expected at most one FILE", err);
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  LoadOptions options;
  options.allow_unrunnable_types = true;  // nothing is computed
  options.verify = !parsed->Has("no-verify");
  if (std::optional<std::string> devices = parsed->Get("devices")) {
    absl::StatusOr<int64_t> n = ParseIntFlag("devices", *devices, 1, int64_t{1} << 20);
    if (!n.ok()) return UsageError(kFmtCommand, n.status().message(), err);
    options.devices = *n;
  }
  auto module = LoadModule(path, options);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  std::string text = hlo::PrintModule(**module);
  // A text file ends with a newline, so `fmt` output diffs and concatenates
  // cleanly.
  if (text.empty() || text.back() != '\n') text.push_back('\n');
  out << text;
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools

// `sharc verify FILE`: parse and verify; silent on success (like a compiler),
// one diagnostic on stderr and exit 1 otherwise.
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

constexpr absl::string_view kUsage = R"(usage: sharc verify [FILE] [--devices N]

Parses an HLO text module and runs the verifier. Prints nothing and exits 0
when the module is valid; otherwise prints one error and exits 1:
  FILE:LINE:COL: error: ...      for text (syntax, names, attributes)
  FILE: error: ...               for verifier errors, naming the instruction,
                                 its text and its FILE:LINE:COL
FILE defaults to standard input ("-").

A module whose header gives no device count (a program XLA already
partitioned, with collectives over its devices) runs on as many devices as
its replica groups and source-target pairs name, or on --devices N.

flags:
  --devices N   the number of devices (for a header without num_partitions)
  -h, --help    show this text
)";

int RunVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kVerifyCommand = {
    "verify", "parse and verify an HLO module (exit 0 if valid, 1 with a diagnostic if not)",
    kUsage, RunVerify};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}};

int RunVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kVerifyCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) {
    return UsageError(kVerifyCommand, "expected at most one FILE", err);
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  LoadOptions options;
  options.allow_unrunnable_types = true;  // nothing is computed
  if (std::optional<std::string> devices = parsed->Get("devices")) {
    absl::StatusOr<int64_t> n = ParseIntFlag("devices", *devices, 1, int64_t{1} << 20);
    if (!n.ok()) return UsageError(kVerifyCommand, n.status().message(), err);
    options.devices = *n;
  }
  auto module = LoadModule(path, options);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools

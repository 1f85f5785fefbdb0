// `sharc jvp FILE`: the forward-mode (JVP) module of the entry.
#include "autodiff/jvp.h"
#include "tools/command.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"
#include "tools/module_transform.h"

namespace sharc::tools {

using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc jvp [FILE]

Prints the forward-mode derivative of FILE's entry computation: parameters
(x..., t...) with one tangent t_i per parameter x_i (same shape), result
(f(x), df(x)·t) (docs/autodiff.md). Tangents of integer parameters are
ignored. The printed module runs with `sharc run`.

flags:
  -h, --help        show this text
)";

int RunJvp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kJvpCommand = {"jvp", "print the forward-mode (JVP) module", kUsage,
                                    RunJvp};

namespace {

int RunJvp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, {});
  if (!parsed.ok()) return UsageError(kJvpCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kJvpCommand, "expected one FILE", err);
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  return PrintTransformedModule(
      path, [](const hlo::Module& m) { return autodiff::JvpModule(m); }, out, err);
}

}  // namespace
}  // namespace sharc::tools

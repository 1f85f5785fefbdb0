// `sharc grad FILE [--wrt 0,2]`: the gradient module of a scalar-valued entry.
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "autodiff/grad.h"
#include "tools/command.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"
#include "tools/module_transform.h"

namespace sharc::tools {

using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc grad [FILE] [--wrt I,J,...]

Prints the gradient module of FILE's entry computation, which must return a
floating-point scalar: same parameters, result the tuple of gradients with
respect to the chosen parameters (reverse mode: linearize, then transpose;
docs/autodiff.md). MapReduce blocks stay blocks: broadcast and sum swap, map
maps its body's derivative. The printed module runs with `sharc run`.

flags:
  --wrt I,J,...     parameter numbers to differentiate by (default: every
                    floating-point parameter)
  -h, --help        show this text
)";

int RunGrad(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kGradCommand = {"grad", "print the gradient module of a scalar function",
                                     kUsage, RunGrad};

namespace {

constexpr FlagSpec kFlags[] = {{"wrt", FlagKind::kValue}};

int RunGrad(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kGradCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kGradCommand, "expected one FILE", err);
  std::vector<int64_t> wrt;
  if (auto list = parsed->Get("wrt")) {
    for (absl::string_view item : absl::StrSplit(*list, ',')) {
      int64_t index = 0;
      if (!absl::SimpleAtoi(item, &index) || index < 0) {
        return UsageError(kGradCommand,
                          "--wrt needs parameter numbers separated by commas, e.g. --wrt 0,2",
                          err);
      }
      wrt.push_back(index);
    }
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  return PrintTransformedModule(
      path, [&wrt](const hlo::Module& m) { return autodiff::GradModule(m, wrt); }, out, err);
}

}  // namespace
}  // namespace sharc::tools

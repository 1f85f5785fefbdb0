// `sharc transpose FILE [--linear K]`: the transpose of an entry linear in
// its parameters.
#include "autodiff/transpose_module.h"
#include "tools/command.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"
#include "tools/module_transform.h"

namespace sharc::tools {

using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc transpose [FILE] [--linear K]

Prints the transpose of FILE's entry computation, which must be linear in
its floating-point parameters (the others, such as indices, pass through):
f(x..., r...) -> y becomes f.transpose(ct_y, r...) -> ct_x, one cotangent
parameter per element of y and the cotangent itself as the result when
there is one linear parameter (docs/autodiff.md). Each cotangent is named
after the value it belongs to, so transposing the output again gives back
the original program when its transposes are exact.

shard_map bodies are typed first (device variance, docs/shard_map.md): with
variance checking on (the default) psum transposes to pbroadcast, all_gather
to psum_scatter, all_gather_invariant to pscatter, and nothing is rescaled;
with check_variance=false the transpose is JAX's defensive one (outputs
divided by the devices that share them, inputs psum'd).

flags:
  --linear K        the first K parameters are linear, the rest pass through
                    (default: every floating-point parameter is linear)
  -h, --help        show this text
)";

int RunTranspose(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kTransposeCommand = {"transpose", "print the transpose of a linear function",
                                          kUsage, RunTranspose};

namespace {

constexpr FlagSpec kFlags[] = {{"linear", FlagKind::kValue}};

int RunTranspose(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kTransposeCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) {
    return UsageError(kTransposeCommand, "expected one FILE", err);
  }
  int64_t num_linear = -1;
  if (auto value = parsed->Get("linear")) {
    absl::StatusOr<int64_t> k = ParseIntFlag("linear", *value, 1, int64_t{1} << 20);
    if (!k.ok()) return UsageError(kTransposeCommand, k.status().message(), err);
    num_linear = *k;
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  return PrintTransformedModule(
      path, [num_linear](const hlo::Module& m) { return autodiff::TransposeModule(m, num_linear); },
      out, err);
}

}  // namespace
}  // namespace sharc::tools

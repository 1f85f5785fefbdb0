// Loading a module for a subcommand: read a file (or stdin for "-"), parse
// it, verify it, and turn every failure into one diagnostic the user can act
// on (`FILE:LINE:COL: error: ...` for text errors, `FILE: error: ...` with the
// instruction's text and location for verifier errors).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::driver {

// Reading more than this is refused (matches the parser's own bound).
inline constexpr int64_t kMaxModuleFileBytes = int64_t{1} << 30;

struct LoadOptions {
  // Run the verifier after parsing.
  bool verify = true;
  // The number of devices the program runs on (`--devices`), for a module
  // whose header gives none: an already-partitioned per-device program.
  // Without it such a module gets the count its collectives name. A header
  // that gives a different count is an error.
  std::optional<int64_t> devices;
  // Accept values of types sharc cannot compute with (c64, f8e4m3fn, s4...):
  // only for commands that do not compute (verify, fmt).
  bool allow_unrunnable_types = false;
  // Accept tokens and the ops that cannot run (send, recv, infeed,
  // outfeed): for commands that only propagate and partition.
  bool allow_transfers = false;
};

// The name used for `path` in messages: "<stdin>" for "-".
std::string DisplayName(const std::string& path);

// Reads the whole file (or stdin for "-"). Errors name the path.
absl::StatusOr<std::string> ReadTextInput(const std::string& path);

// Parses `text`, named `name` in messages; errors read
// "NAME:LINE:COL: error: ..." (the parser's) or "NAME: error: ...". A
// header without a device count gets `devices`, or the count its
// collectives name (a per-device program); a header that has one must
// agree with `devices`.
absl::StatusOr<std::unique_ptr<hlo::Module>> ParseModuleText(
    std::string_view text, const std::string& name, std::optional<int64_t> devices = std::nullopt);
// Verifies; errors read "NAME: error: ..." quoting the instruction.
absl::Status VerifyLoadedModule(const hlo::Module& module, const std::string& name);

// Reads, parses and (by default) verifies; unless unrunnable types are
// allowed, lowers fusions and ordering-only ops (hlo::LowerForCompute) and
// checks that the module can be computed with. The error status's message is a
// complete diagnostic, ready to print as is.
absl::StatusOr<std::unique_ptr<hlo::Module>> LoadModule(const std::string& path,
                                                        const LoadOptions& options = {});

}  // namespace sharc::driver

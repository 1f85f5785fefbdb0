// Parser for XLA's HLO text format (see ../shared/reference/xla_gspmd.md,
// Part A). Errors are InvalidArgument statuses whose message starts with
// `FILE:LINE:COL: error: ` followed by what was expected, the offending line
// and a caret. The parser checks syntax, names and attribute schemas; shapes
// are checked by the verifier (hlo/verifier/verifier.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/ir/sharding.h"

namespace sharc::hlo {

struct ParseOptions {
  // Name used in error messages ("FILE:LINE:COL").
  std::string filename = "<input>";
  // Input larger than this is refused before lexing.
  int64_t max_input_bytes = int64_t{1} << 30;
  // Deeper nesting of (), {}, [] is refused (protects the stack).
  int max_nesting_depth = 1000;
};

// Parses a module without verifying shapes.
absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options = {});
// Parses and then runs the verifier.
absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(std::string_view text,
                                                             const ParseOptions& options = {});
// Parses the text after `sharding=` (e.g. "{devices=[2,1]0,1}").
absl::StatusOr<Sharding> ParseSharding(std::string_view text);
// Parses replica groups as written after `replica_groups=` ("{{0,1},{2,3}}"
// or the iota form "[2,2]<=[4]").
absl::StatusOr<IntListList> ParseReplicaGroups(std::string_view text);
// Parses a shape such as "f32[2,3]{1,0}" or "(f32[], s32[4])".
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace sharc::hlo

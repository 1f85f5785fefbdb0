// A small command-line flag parser for the subcommands: `--flag=value`,
// `--flag value`, boolean `--flag`, optional-value `--flag[=value]`,
// repeatable flags, `--` to end flags and `-` as a positional (stdin).
// Hand-rolled because Debian's Abseil flags are process-global and we want
// per-subcommand flag sets with precise usage errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace sharc::tools {

enum class FlagKind {
  kBool,           // --quiet
  kValue,          // --devices 2 or --devices=2
  kOptionalValue,  // --random-inputs or --random-inputs=7 (value only after '=')
};

struct FlagSpec {
  absl::string_view name;  // without the leading "--"
  FlagKind kind = FlagKind::kValue;
  bool repeated = false;
};

class ParsedArgs {
 public:
  std::vector<std::string> positionals;
  bool help = false;

  bool Has(absl::string_view name) const { return values_.contains(name); }
  // The value of a single-valued flag ("" for a bool or a bare optional-value
  // flag); nullopt if absent.
  std::optional<std::string> Get(absl::string_view name) const;
  // Every value of a repeated flag, in command-line order.
  std::vector<std::string> GetAll(absl::string_view name) const;

 private:
  friend absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>&,
                                               absl::Span<const FlagSpec>);
  absl::flat_hash_map<std::string, std::vector<std::string>> values_;
};

// Errors (unknown flag, missing value, a single-valued flag given twice) are
// InvalidArgument with a message fit for the user.
absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args,
                                      absl::Span<const FlagSpec> specs);

// Parses an integer flag value within [min, max].
absl::StatusOr<int64_t> ParseIntFlag(absl::string_view name, absl::string_view value, int64_t min,
                                     int64_t max);

}  // namespace sharc::tools

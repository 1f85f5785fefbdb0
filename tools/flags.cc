#include "tools/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"

namespace sharc::tools {

std::optional<std::string> ParsedArgs::Get(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::GetAll(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return {};
  return it->second;
}

absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args,
                                      absl::Span<const FlagSpec> specs) {
  ParsedArgs parsed;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", arg, "' (flags are spelled --name)"));
    }
    absl::string_view body = absl::string_view(arg).substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      inline_value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : specs) {
      if (s.name == body) spec = &s;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '--", body, "'"));
    }
    std::string value;
    switch (spec->kind) {
      case FlagKind::kBool:
        if (inline_value.has_value()) {
          return absl::InvalidArgumentError(absl::StrCat("flag '--", body, "' takes no value"));
        }
        break;
      case FlagKind::kOptionalValue:
        if (inline_value.has_value()) value = *inline_value;
        break;
      case FlagKind::kValue:
        if (inline_value.has_value()) {
          value = *inline_value;
        } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
          value = args[++i];
        } else {
          return absl::InvalidArgumentError(absl::StrCat("flag '--", body, "' needs a value"));
        }
        if (value.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("flag '--", body, "' needs a non-empty value"));
        }
        break;
    }
    std::vector<std::string>& slot = parsed.values_[std::string(body)];
    if (!slot.empty() && !spec->repeated) {
      return absl::InvalidArgumentError(absl::StrCat("flag '--", body, "' given more than once"));
    }
    slot.push_back(std::move(value));
  }
  return parsed;
}

absl::StatusOr<int64_t> ParseIntFlag(absl::string_view name, absl::string_view value, int64_t min,
                                     int64_t max) {
  int64_t result = 0;
  if (!absl::SimpleAtoi(value, &result)) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag '--", name, "' expects an integer, got '", value, "'"));
  }
  if (result < min || result > max) {
    return absl::InvalidArgumentError(absl::StrCat("flag '--", name, "' must be in [", min, ", ",
                                                   max, "], got ", result));
  }
  return result;
}

}  // namespace sharc::tools

#include "hlo/text/frontend_attributes.h"

#include <cctype>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace sharc::hlo {
namespace {

absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status ErrorAt(size_t pos, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("frontend_attributes: ", AsAbsl(what), " at character ", pos + 1));
}

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

}  // namespace

absl::StatusOr<FrontendAttributes> ParseFrontendAttributes(std::string_view text) {
  absl::string_view stripped = absl::StripAsciiWhitespace(AsAbsl(text));
  std::string_view body(stripped.data(), stripped.size());
  if (!body.empty() && body.front() == '{') {
    if (body.back() != '}') return ErrorAt(body.size() - 1, "expected '}'");
    body = body.substr(1, body.size() - 2);
  }
  FrontendAttributes attributes;
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < body.size() && std::isspace(static_cast<unsigned char>(body[pos]))) ++pos;
  };
  skip_space();
  while (pos < body.size()) {
    std::string key;
    if (body[pos] == '"') {
      size_t end = body.find('"', pos + 1);
      if (end == std::string_view::npos) return ErrorAt(pos, "unterminated key");
      key = std::string(body.substr(pos + 1, end - pos - 1));
      pos = end + 1;
    } else {
      const size_t start = pos;
      while (pos < body.size() && IsKeyChar(body[pos])) ++pos;
      if (pos == start) return ErrorAt(pos, "expected an attribute name");
      key = std::string(body.substr(start, pos - start));
    }
    skip_space();
    if (pos >= body.size() || body[pos] != '=') return ErrorAt(pos, "expected '=' after a name");
    ++pos;
    skip_space();
    if (pos >= body.size()) return ErrorAt(pos, "expected a value");
    std::string_view raw;
    if (body[pos] == '"') {
      const size_t start = ++pos;
      while (pos < body.size() && body[pos] != '"') pos += body[pos] == '\\' ? 2 : 1;
      if (pos >= body.size()) return ErrorAt(start - 1, "unterminated string");
      raw = body.substr(start, pos - start);
      ++pos;
    } else if (body[pos] == '{') {
      const size_t start = pos;
      int depth = 0;
      bool in_string = false;
      for (; pos < body.size(); ++pos) {
        const char c = body[pos];
        if (c == '\\') { ++pos; continue; }
        if (c == '"') in_string = !in_string;
        if (in_string) continue;
        if (c == '{') ++depth;
        if (c == '}' && --depth == 0) break;
      }
      if (pos >= body.size()) return ErrorAt(start, "unbalanced '{'");
      raw = body.substr(start, ++pos - start);
    } else {
      return ErrorAt(pos, "expected a string or '{'");
    }
    // A braced value is kept as written (XLA prints a value that reads as
    // a braced dictionary raw, unescaped); a string's escapes are resolved.
    std::string value, error;
    if (body[pos - 1] == '}') {
      value = std::string(raw);
    } else if (!absl::CUnescape(AsAbsl(raw), &value, &error)) {
      return ErrorAt(pos, absl::StrCat("invalid escape in the value of ", key, ": ", error));
    }
    attributes.emplace_back(std::move(key), std::move(value));
    skip_space();
    if (pos < body.size()) {
      if (body[pos] != ',') return ErrorAt(pos, "expected ',' between attributes");
      ++pos;
      skip_space();
    }
  }
  return attributes;
}

std::optional<std::string> FindFrontendAttribute(const FrontendAttributes& attributes,
                                                 std::string_view key) {
  for (const auto& [k, v] : attributes) {
    if (k == key) return v;
  }
  return std::nullopt;
}

}  // namespace sharc::hlo

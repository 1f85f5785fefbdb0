// HloParser: error reporting, token helpers, integers, shapes and literals.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/text/parser_impl.h"

namespace sharc::hlo::text_internal {
namespace {

// The source line containing `token`, made printable, and the matching caret
// line. Very long lines (minified input) are cut to a window around the caret.
std::string SourceExcerpt(std::string_view source, const Token& token) {
  int64_t line_start = token.offset - (token.column - 1);
  if (line_start < 0) line_start = 0;
  int64_t line_end = line_start;
  while (line_end < static_cast<int64_t>(source.size()) && source[line_end] != '\n') ++line_end;
  int64_t from = line_start;
  int64_t to = line_end;
  constexpr int64_t kHalfWindow = 80;
  if (token.offset - from > kHalfWindow) from = token.offset - kHalfWindow;
  if (to - token.offset > kHalfWindow) to = token.offset + kHalfWindow;
  // A cut side is marked with "..." so the excerpt is not taken for the
  // whole line.
  std::string line = from > line_start ? "..." : "";
  std::string caret(line.size(), ' ');
  for (int64_t i = from; i < to; ++i) {
    unsigned char c = static_cast<unsigned char>(source[i]);
    line += (c == '\t' || (c >= 0x20 && c < 0x7f)) ? static_cast<char>(c) : '?';
  }
  if (to < line_end) line += "...";
  for (int64_t i = from; i < token.offset && i < to; ++i) caret += source[i] == '\t' ? '\t' : ' ';
  caret += '^';
  return Cat(line, "\n", caret);
}

template <typename T>
constexpr bool kIsIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// True if `value` rounds to a finite f32: below f32's largest value plus
// half a step (round-to-nearest-even takes the halfway point up, to inf).
bool RoundsToFiniteF32(double value) {
  const double max = std::numeric_limits<float>::max();
  const double below_max = std::nextafter(std::numeric_limits<float>::max(), 0.0f);
  return std::fabs(value) < max + (max - below_max) / 2;
}

// False if the written number `value` is infinite or rounds to infinity or
// NaN in the floating point `type`.
bool FitsFloatType(PrimitiveType type, double value) {
  if (!std::isfinite(value)) return false;
  if (IsNarrowFloat(type)) {
    return std::isfinite(NarrowFloatToDouble(type, NarrowFloatFromDouble(type, value)));
  }
  bool fits = true;
  DispatchPrimitiveType(type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, float>) {
      fits = RoundsToFiniteF32(value);
    } else if constexpr (kIsLowPrecisionFloat<T>) {
      // Through f32, as Literal::SetFromDouble stores them.
      fits = RoundsToFiniteF32(value) &&
             std::isfinite(static_cast<float>(T(static_cast<float>(value))));
    }
  });
  return fits;
}

}  // namespace

HloParser::HloParser(std::string_view text, const ParseOptions& options)
    : options_(options), lexer_(text, options.max_nesting_depth) {}

absl::Status HloParser::ErrorAt(const Token& token, std::string_view message) const {
  return absl::InvalidArgumentError(Cat(options_.filename, ":", token.line, ":", token.column,
                                        ": error: ", message, "\n",
                                        SourceExcerpt(lexer_.source(), token)));
}

absl::Status HloParser::Expected(std::string_view what) const {
  const Token& t = lexer_.Peek();
  if (t.kind == TokenKind::kError) return ErrorAt(t, lexer_.error());
  return ErrorAt(t, Cat("expected ", what, ", found ", DescribeToken(t)));
}

absl::Status HloParser::Expect(TokenKind kind, std::string_view what) {
  if (lexer_.Peek().kind != kind) return Expected(what);
  lexer_.Next();
  return absl::OkStatus();
}

bool HloParser::TryConsume(TokenKind kind) {
  if (lexer_.Peek().kind != kind) return false;
  lexer_.Next();
  return true;
}

bool HloParser::PeekKeyword(std::string_view word) const {
  const Token& t = lexer_.Peek();
  return t.kind == TokenKind::kName && !t.has_percent && t.text == word;
}

absl::StatusOr<Token> HloParser::ExpectName(std::string_view what) {
  if (lexer_.Peek().kind != TokenKind::kName) return Expected(what);
  return lexer_.Next();
}

absl::StatusOr<int64_t> HloParser::ParseInt64(std::string_view what) {
  if (lexer_.Peek().kind != TokenKind::kInt) return Expected(what);
  Token t = lexer_.Next();
  int64_t value;
  if (!absl::SimpleAtoi(ToAbsl(t.text), &value)) {
    return ErrorAt(t, Cat("integer '", t.text, "' does not fit in 64 bits"));
  }
  return value;
}

absl::StatusOr<bool> HloParser::ParseBool() {
  if (PeekKeyword("true")) {
    lexer_.Next();
    return true;
  }
  if (PeekKeyword("false")) {
    lexer_.Next();
    return false;
  }
  return Expected("'true' or 'false'");
}

absl::StatusOr<std::vector<int64_t>> HloParser::ParseIntList(TokenKind open,
                                                             std::string_view what) {
  TokenKind close = open == TokenKind::kLsquare ? TokenKind::kRsquare : TokenKind::kRbrace;
  RETURN_IF_ERROR(
      Expect(open, Cat(open == TokenKind::kLsquare ? "'['" : "'{'", " to start ", what)));
  std::vector<int64_t> values;
  if (TryConsume(close)) return values;
  do {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(Cat("an integer in ", what)));
    values.push_back(v);
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(
      Expect(close, Cat(close == TokenKind::kRsquare ? "']'" : "'}'", " or ',' in ", what)));
  return values;
}

absl::StatusOr<std::string_view> HloParser::SkipBalanced() {
  const Token& first = lexer_.Peek();
  if (first.kind != TokenKind::kLbrace && first.kind != TokenKind::kLparen &&
      first.kind != TokenKind::kLsquare) {
    return Expected("'{'");
  }
  if (first.kind == TokenKind::kLbrace) {
    // Braced values skipped whole (backend configs, frontend attributes,
    // layouts) may hold another language's text, e.g. MLIR attributes.
    Token open = first;
    std::string error;
    std::optional<std::string_view> text = lexer_.ConsumeRawBraces(&error);
    if (!text) return ErrorAt(open, error);
    return *text;
  }
  int64_t start = first.offset;
  // Brackets of all kinds are counted together: the values skipped here
  // (JSON, layouts, aliasing maps) always nest properly.
  int depth = 0;
  do {
    Token t = lexer_.Next();
    switch (t.kind) {
      case TokenKind::kLbrace:
      case TokenKind::kLparen:
      case TokenKind::kLsquare:
        ++depth;
        break;
      case TokenKind::kRbrace:
      case TokenKind::kRparen:
      case TokenKind::kRsquare:
        --depth;
        break;
      case TokenKind::kEof:
        return ErrorAt(t, "unbalanced brackets: end of input before the closing bracket");
      case TokenKind::kError:
        return ErrorAt(t, lexer_.error());
      default:
        break;
    }
  } while (depth > 0);
  return lexer_.source().substr(static_cast<size_t>(start),
                                static_cast<size_t>(lexer_.last_end() - start));
}

absl::Status HloParser::SkipAttributeValue() {
  switch (lexer_.Peek().kind) {
    case TokenKind::kLbrace:
    case TokenKind::kLparen:
    case TokenKind::kLsquare:
      return SkipBalanced().status();
    case TokenKind::kName:
    case TokenKind::kInt:
    case TokenKind::kFloat:
    case TokenKind::kWord:
    case TokenKind::kString:
      lexer_.Next();
      return absl::OkStatus();
    default:
      return Expected("an attribute value");
  }
}

absl::Status HloParser::ExpectEnd() {
  if (lexer_.Peek().kind != TokenKind::kEof) return Expected("end of input");
  return absl::OkStatus();
}

// ------------------------------------------------------------------ shapes

bool HloParser::PeekShape() {
  Lexer::State saved = lexer_.Save();
  // Tuple shapes: skip the opening parentheses, then look for `()` or `type[`.
  while (lexer_.Peek().kind == TokenKind::kLparen) {
    lexer_.Next();
    if (lexer_.Peek().kind == TokenKind::kRparen) {
      lexer_.Restore(saved);
      return true;
    }
  }
  bool is_shape = false;
  const Token& t = lexer_.Peek();
  if (t.kind == TokenKind::kName && !t.has_percent &&
      PrimitiveTypeFromName(t.text).has_value()) {
    lexer_.Next();
    is_shape = lexer_.Peek().kind == TokenKind::kLsquare;
  }
  lexer_.Restore(saved);
  return is_shape;
}

bool HloParser::PeekVariance() {
  if (lexer_.Peek().kind != TokenKind::kLbrace) return false;
  Lexer::State saved = lexer_.Save();
  lexer_.Next();
  bool is_variance = lexer_.Peek().kind == TokenKind::kName && !lexer_.Peek().has_percent &&
                     lexer_.Peek().text == "V";
  if (is_variance) {
    lexer_.Next();
    is_variance = lexer_.Peek().kind == TokenKind::kColon;
  }
  lexer_.Restore(saved);
  return is_variance;
}

absl::StatusOr<std::vector<std::string>> HloParser::ParseVariance() {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{V:' to start a device variance"));
  RETURN_IF_ERROR(ExpectName("'V' in a device variance").status());
  RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after 'V'"));
  std::vector<std::string> axes;
  do {
    Token axis = lexer_.Peek();
    ASSIGN_OR_RETURN(Token name, ExpectName("a mesh axis name in the device variance"));
    if (std::find(axes.begin(), axes.end(), std::string(name.text)) != axes.end()) {
      return ErrorAt(axis, Cat("axis '", name.text, "' appears twice in the device variance"));
    }
    axes.emplace_back(name.text);
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in the device variance"));
  return axes;
}

// A layout `{minor, ..., major}` reorders dimensions unless, leaving out
// dims of size 1, it lists them from last to first (row-major). Tiling
// (`:T(8,128)`) reorders elements too; a memory space (`:S(1)`) does not.
bool LayoutReorders(std::string_view layout, const std::vector<int64_t>& dims) {
  std::string_view inner = layout.substr(1, layout.size() >= 2 ? layout.size() - 2 : 0);
  std::string_view order = inner.substr(0, inner.find(':'));
  if (inner.size() > order.size() && inner.find("T(") != std::string_view::npos) return true;
  std::vector<int64_t> minor_to_major;
  int64_t value = -1;
  for (char c : order) {
    if (c >= '0' && c <= '9') {
      // A dimension number past the rank is no row-major order; stopping
      // there also keeps a long run of digits from overflowing `value`.
      if (value >= static_cast<int64_t>(dims.size())) return true;
      value = (value < 0 ? 0 : value * 10) + (c - '0');
    } else if (c == ',') {
      if (value < 0) return true;
      minor_to_major.push_back(value);
      value = -1;
    } else if (c != ' ') {
      return true;
    }
  }
  if (value >= 0) minor_to_major.push_back(value);
  if (minor_to_major.empty()) return false;
  if (minor_to_major.size() != dims.size()) return true;
  int64_t previous = static_cast<int64_t>(dims.size());
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size())) return true;
    if (dims[static_cast<size_t>(d)] == 1) continue;
    if (d >= previous) return true;
    previous = d;
  }
  return false;
}

std::string LayoutError(std::string_view layout) {
  std::string_view inner = layout.substr(1, layout.size() >= 2 ? layout.size() - 2 : 0);
  size_t colon = inner.find(':');
  if (colon == std::string_view::npos) return "";
  std::string_view details = inner.substr(colon + 1);
  // Dim level types `D(D,C+,S~)`: dense, compressed, singleton or loose
  // compressed, each maybe marked non-unique (+) or unordered (~).
  bool sparse = false;
  size_t d = details.find("D(");
  if (d != std::string_view::npos) {
    size_t close = details.find(')', d);
    std::string_view list = details.substr(d + 2, close == std::string_view::npos
                                                      ? std::string_view::npos
                                                      : close - d - 2);
    for (absl::string_view item : absl::StrSplit(ToAbsl(list), ',')) {
      item = absl::StripAsciiWhitespace(item);
      if (!item.empty() && item.back() == '~') item.remove_suffix(1);
      if (!item.empty() && item.back() == '+') item.remove_suffix(1);
      if (item != "D" && item != "C" && item != "S" && item != "H") {
        return Cat("invalid dim level type '", std::string_view(item.data(), item.size()),
                   "' in layout ", layout, ": expected D, C, S or H");
      }
      sparse = sparse || item != "D";
    }
  }
  // A physical shape `P(...)` describes a sparse array's storage.
  if (!sparse && details.find("P(") != std::string_view::npos) {
    return Cat("layout ", layout, " has a physical shape (P(...)) but the array is not sparse");
  }
  return "";
}

absl::StatusOr<Shape> HloParser::ParseShape() {
  Token start = lexer_.Peek();
  if (start.kind == TokenKind::kLparen) {
    lexer_.Next();
    std::vector<Shape> elements;
    bool any_reorders = false;
    if (!TryConsume(TokenKind::kRparen)) {
      do {
        ASSIGN_OR_RETURN(Shape element, ParseShape());
        any_reorders = any_reorders || last_layout_reorders_;
        elements.push_back(std::move(element));
      } while (TryConsume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' or ',' in a tuple shape"));
    }
    last_layout_reorders_ = any_reorders;
    return Shape::Tuple(std::move(elements));
  }
  if (start.kind != TokenKind::kName || start.has_percent) return Expected("a shape");
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(start.text);
  if (!type.has_value()) {
    return Expected("a shape (an element type such as f32)");
  }
  lexer_.Next();
  RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' after the element type"));
  std::vector<int64_t> dims;
  std::vector<int64_t> dynamic;  // indices of `<=` (bounded dynamic) dimensions
  if (!TryConsume(TokenKind::kRsquare)) {
    do {
      const Token& d = lexer_.Peek();
      if (d.kind == TokenKind::kQuestion) {
        return ErrorAt(d, "unbounded dynamic dimensions ('?') are not supported");
      }
      if (TryConsume(TokenKind::kLeq)) dynamic.push_back(static_cast<int64_t>(dims.size()));
      ASSIGN_OR_RETURN(int64_t dim, ParseInt64("a dimension size"));
      dims.push_back(dim);
    } while (TryConsume(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' or ',' in the dimensions"));
  }
  // A layout is written right after the dims (`f32[2,3]{1,0}`); sharc keeps
  // every array row-major, so it is skipped. A '{' after whitespace is not a
  // layout (in `constant(f32[2] {1, 2})` it starts the literal).
  // `{V:i}` is not a layout but a device-variance suffix, which the
  // instruction parser reads (PeekVariance).
  last_layout_reorders_ = false;
  if (lexer_.Peek().kind == TokenKind::kLbrace && lexer_.Peek().offset == lexer_.last_end() &&
      !PeekVariance()) {
    Token layout_token = lexer_.Peek();
    ASSIGN_OR_RETURN(std::string_view layout, SkipBalanced());
    if (std::string error = LayoutError(layout); !error.empty()) {
      return ErrorAt(layout_token, error);
    }
    last_layout_reorders_ = LayoutReorders(layout, dims);
  }
  if (*type == PrimitiveType::kToken && !dims.empty()) {
    return ErrorAt(start, "a token has no dimensions: write token[]");
  }
  Shape shape(*type, std::move(dims));
  for (int64_t d : dynamic) shape.set_dynamic_dim(d, true);
  if (absl::Status st = ValidateShape(shape); !st.ok())
    return ErrorAt(start, std::string(st.message()));
  return shape;
}

// ---------------------------------------------------------------- literals

absl::StatusOr<Literal> HloParser::ParseLiteral(const Shape& shape) {
  // Two passes: the first checks the text against the shape without storing
  // anything, so a huge declared shape with a short literal allocates nothing.
  Lexer::State start = lexer_.Save();
  RETURN_IF_ERROR(ScanLiteral(shape, nullptr));
  lexer_.Restore(start);
  Literal literal(shape);
  RETURN_IF_ERROR(ScanLiteral(shape, &literal));
  return literal;
}

absl::Status HloParser::ScanLiteral(const Shape& shape, Literal* out) {
  if (!shape.is_tuple()) return ScanArrayLiteral(shape, out);
  RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start a tuple literal"));
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (i > 0) {
      RETURN_IF_ERROR(
          Expect(TokenKind::kComma, Cat("',' and tuple element ", i, " of ", shape.ToString())));
    }
    Literal* element = out ? &out->elements()[static_cast<size_t>(i)] : nullptr;
    RETURN_IF_ERROR(ScanLiteral(shape.tuple_shape(i), element));
  }
  return Expect(TokenKind::kRparen, Cat("')': the tuple literal of ", shape.ToString(), " has ",
                                        shape.tuple_size(), " elements"));
}

absl::Status HloParser::ScanArrayLiteral(const Shape& shape, Literal* out) {
  const int64_t rank = shape.rank();
  if (rank == 0) return ScanElement(shape.type(), out, 0);
  // Iterative walk over the nested braces: counts[d] is the number of entries
  // seen so far in the innermost open brace of dimension d.
  std::vector<int64_t> counts(static_cast<size_t>(rank), 0);
  int64_t d = 0;
  int64_t index = 0;
  RETURN_IF_ERROR(
      Expect(TokenKind::kLbrace, Cat("'{' to start a literal of shape ", shape.ToString())));
  auto mismatch = [&](const Token& at) {
    return ErrorAt(at, Cat("literal element count mismatch: dimension ", d, " of ",
                           shape.ToString(), " has ", shape.dim(d), " elements, found ",
                           counts[d] > shape.dim(d) ? "more" : Cat(counts[d])));
  };
  // An empty brace ({} for a zero-sized dimension) goes straight to '}'.
  bool just_opened_empty = lexer_.Peek().kind == TokenKind::kRbrace;
  bool expect_entry = !just_opened_empty;
  while (true) {
    if (expect_entry) {
      Token at = lexer_.Peek();
      if (counts[d] >= shape.dim(d)) {
        ++counts[d];
        return mismatch(at);
      }
      if (d + 1 < rank) {
        RETURN_IF_ERROR(
            Expect(TokenKind::kLbrace, Cat("'{' for dimension ", d + 1, " of ", shape.ToString())));
        ++d;
        counts[d] = 0;
        just_opened_empty = lexer_.Peek().kind == TokenKind::kRbrace;
        expect_entry = !just_opened_empty;
        continue;
      }
      RETURN_IF_ERROR(ScanElement(shape.type(), out, index++));
      ++counts[d];
    }
    // After an entry (or at an empty brace): ',' continues, '}' closes.
    if (!just_opened_empty && TryConsume(TokenKind::kComma)) {
      expect_entry = true;
      continue;
    }
    Token close = lexer_.Peek();
    RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in the literal"));
    just_opened_empty = false;
    if (counts[d] != shape.dim(d)) return mismatch(close);
    if (d == 0) return absl::OkStatus();
    --d;
    ++counts[d];
    expect_entry = false;
  }
}

absl::Status HloParser::ScanElement(PrimitiveType type, Literal* out, int64_t index) {
  if (IsComplex(type)) {
    // (real, imaginary), each stored as the component type.
    RETURN_IF_ERROR(Expect(TokenKind::kLparen, Cat("'(' to start a ", PrimitiveTypeName(type),
                                                   " value (real, imaginary)")));
    Literal parts(Shape(PrimitiveType::kF64, {2}));
    for (int64_t k = 0; k < 2; ++k) {
      if (k == 1) {
        RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between the real and imaginary parts"));
      }
      Token at = lexer_.Peek();
      RETURN_IF_ERROR(ScanElement(PrimitiveType::kF64, &parts, k));
      // As XLA does, a c64 part that f32 cannot hold is refused, not rounded.
      const double v = parts.data<double>()[k];
      const float f = static_cast<float>(v);
      if (type == PrimitiveType::kC64 && std::isfinite(v) && !std::isfinite(f)) {
        return ErrorAt(at, Cat("value ", at.text, " is out of range for the parts of c64 (f32)"));
      }
    }
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the imaginary part"));
    if (out) {
      uint8_t* dst = out->untyped_data() + index * ByteWidth(type);
      if (type == PrimitiveType::kC64) {
        const float f[2] = {static_cast<float>(parts.data<double>()[0]),
                            static_cast<float>(parts.data<double>()[1])};
        std::memcpy(dst, f, sizeof(f));
      } else {
        std::memcpy(dst, parts.untyped_data(), 2 * sizeof(double));
      }
    }
    return absl::OkStatus();
  }
  Token t = lexer_.Peek();
  if (type == PrimitiveType::kS2 || type == PrimitiveType::kS4 || type == PrimitiveType::kU2 ||
      type == PrimitiveType::kU4) {
    // One byte per element, range-checked against the type's bits.
    const int bits = type == PrimitiveType::kS2 || type == PrimitiveType::kU2 ? 2 : 4;
    const bool is_signed = IsSignedInteger(type);
    const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    int64_t v = 0;
    if (t.kind != TokenKind::kInt || !absl::SimpleAtoi(ToAbsl(t.text), &v) || v < lo || v > hi) {
      if (t.kind != TokenKind::kInt) return Expected(Cat("an integer of type ", PrimitiveTypeName(type)));
      return ErrorAt(t, Cat("value ", t.text, " is out of range for ", PrimitiveTypeName(type)));
    }
    lexer_.Next();
    if (out) out->untyped_data()[index] = static_cast<uint8_t>(static_cast<int8_t>(v));
    return absl::OkStatus();
  }
  std::string_view type_name = PrimitiveTypeName(type);
  if (type == PrimitiveType::kPred) {
    bool value;
    if (PeekKeyword("true") || PeekKeyword("false")) {
      value = t.text == "true";
    } else if (t.kind == TokenKind::kInt && (t.text == "0" || t.text == "1")) {
      value = t.text == "1";
    } else {
      return Expected("'true' or 'false'");
    }
    lexer_.Next();
    if (out) out->data<bool>()[index] = value;
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    if (t.kind != TokenKind::kInt) return Expected(Cat("an integer of type ", type_name));
    lexer_.Next();
    auto out_of_range = [&] {
      return ErrorAt(t, Cat("value ", t.text, " is out of range for ", type_name));
    };
    return DispatchPrimitiveType(type, [&](auto zero) -> absl::Status {
      using T = decltype(zero);
      if constexpr (kIsIntegral<T>) {
        T value;
        if constexpr (std::is_signed_v<T>) {
          int64_t v;
          if (!absl::SimpleAtoi(ToAbsl(t.text), &v) || v < std::numeric_limits<T>::min() ||
              v > std::numeric_limits<T>::max()) {
            return out_of_range();
          }
          value = static_cast<T>(v);
        } else {
          uint64_t v;
          if (t.text.front() == '-' || !absl::SimpleAtoi(ToAbsl(t.text), &v) ||
              v > std::numeric_limits<T>::max()) {
            return out_of_range();
          }
          value = static_cast<T>(v);
        }
        if (out) out->data<T>()[index] = value;
      }
      return absl::OkStatus();
    });
  }
  // Floating point: numbers, inf, nan, and -inf / -nan.
  double value;
  bool negate = false;
  if (t.kind == TokenKind::kMinus) {
    lexer_.Next();
    negate = true;
    t = lexer_.Peek();
    if (!PeekKeyword("inf") && !PeekKeyword("nan")) return Expected("'inf' or 'nan' after '-'");
  }
  if (t.kind == TokenKind::kName && !t.has_percent && (t.text == "inf" || t.text == "nan")) {
    value = t.text == "inf" ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN();
  } else if (t.kind == TokenKind::kInt || t.kind == TokenKind::kFloat) {
    if (!absl::SimpleAtod(ToAbsl(t.text), &value)) {
      return ErrorAt(t, Cat("invalid number '", t.text, "'"));
    }
  } else {
    return Expected(Cat("a number of type ", type_name));
  }
  lexer_.Next();
  if (negate) value = -value;
  // As XLA does, a written number the type cannot hold is refused rather
  // than read as infinity: 1e400 for any type, 65520 for f16.
  if (t.kind != TokenKind::kName && !FitsFloatType(type, value)) {
    return ErrorAt(t, Cat("value ", t.text, " is out of range for ", type_name));
  }
  if (out) out->SetFromDouble(index, value);
  return absl::OkStatus();
}

}  // namespace sharc::hlo::text_internal

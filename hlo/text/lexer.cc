#include "hlo/text/lexer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sharc::hlo {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsLetter(c) || IsDigit(c) || c == '.' || c == '-'; }

// Printable form of a byte for "unexpected character" messages (the input
// may be binary).
std::string DescribeByte(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return absl::StrCat("character '", std::string(1, c), "'");
  return absl::StrFormat("byte 0x%02x", u);
}

}  // namespace

bool IsBareName(std::string_view name) {
  if (name.empty() || !IsLetter(name[0])) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

Lexer::Lexer(std::string_view source, int max_depth) : source_(source), max_depth_(max_depth) {
  current_ = Lex();
}

Token Lexer::Next() {
  Token t = current_;
  if (t.kind == TokenKind::kEof || t.kind == TokenKind::kError) return t;
  last_end_ = t.end;
  current_ = Lex();
  return t;
}

std::optional<std::string_view> Lexer::ConsumeRawBraces(std::string* error) {
  *error = "unbalanced braces: this '{' has no matching '}'";
  if (current_.kind != TokenKind::kLbrace) return std::nullopt;
  const int64_t start = current_.offset;
  int64_t depth = 0;
  int64_t i = start;
  for (; !AtEnd(i); ++i) {
    char c = At(i);
    if (c == '"') {
      for (++i; !AtEnd(i) && At(i) != '"'; ++i) {
        if (At(i) == '\\') ++i;
      }
      if (AtEnd(i)) return std::nullopt;
    } else if (c == '{') {
      // The same bound as for tokens: the text is kept and printed again.
      if (depth_ + depth > max_depth_) {
        *error = absl::StrCat("nesting is deeper than the limit of ", max_depth_, " levels");
        return std::nullopt;
      }
      ++depth;
    } else if (c == '}' && --depth == 0) {
      break;
    }
  }
  if (AtEnd(i)) return std::nullopt;
  const int64_t end = i + 1;
  // The '{' was counted when it was lexed; its '}' is consumed here.
  if (depth_ > 0) --depth_;
  for (int64_t k = current_.end; k < end; ++k) {
    if (At(k) == '\n') {
      ++line_;
      line_start_ = k + 1;
    }
  }
  pos_ = end;
  last_end_ = end;
  current_ = Lex();
  return source_.substr(static_cast<size_t>(start), static_cast<size_t>(end - start));
}

void Lexer::Restore(const State& s) {
  pos_ = s.pos;
  line_ = s.line;
  line_start_ = s.line_start;
  depth_ = s.depth;
  last_end_ = s.last_end;
  current_ = s.current;
}

Token Lexer::MakeToken(TokenKind kind, int64_t start, int64_t end) {
  Token t;
  t.kind = kind;
  t.text = source_.substr(static_cast<size_t>(start), static_cast<size_t>(end - start));
  t.offset = start;
  t.end = end;
  t.line = line_;
  t.column = static_cast<int>(start - line_start_ + 1);
  return t;
}

Token Lexer::MakeError(int64_t at, std::string message) {
  error_ = std::move(message);
  Token t = MakeToken(TokenKind::kError, at, at);
  return t;
}

bool Lexer::SkipTrivia(Token& error_token) {
  while (!AtEnd(pos_)) {
    char c = At(pos_);
    if (c == '\n') {
      ++pos_;
      ++line_;
      line_start_ = pos_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      ++pos_;
    } else if (c == '/' && At(pos_ + 1) == '/') {
      while (!AtEnd(pos_) && At(pos_) != '\n') ++pos_;
    } else if (c == '/' && At(pos_ + 1) == '*') {
      int64_t start = pos_;
      int start_line = line_;
      int64_t start_line_start = line_start_;
      pos_ += 2;
      bool closed = false;
      while (!AtEnd(pos_)) {
        if (At(pos_) == '*' && At(pos_ + 1) == '/') {
          pos_ += 2;
          closed = true;
          break;
        }
        if (At(pos_) == '\n') {
          ++line_;
          line_start_ = pos_ + 1;
        }
        ++pos_;
      }
      if (!closed) {
        line_ = start_line;
        line_start_ = start_line_start;
        error_token = MakeError(start, "unterminated comment: '/*' has no matching '*/'");
        return false;
      }
    } else {
      break;
    }
  }
  return true;
}

void Lexer::ConsumeNameChars() {
  while (!AtEnd(pos_) && IsNameChar(At(pos_))) {
    if (At(pos_) == '-' && At(pos_ + 1) == '>') break;
    ++pos_;
  }
}

Token Lexer::Lex() {
  Token error_token;
  if (!SkipTrivia(error_token)) return error_token;
  int64_t start = pos_;
  if (AtEnd(pos_)) return MakeToken(TokenKind::kEof, start, start);
  char c = At(pos_);
  auto single = [&](TokenKind kind) {
    ++pos_;
    return MakeToken(kind, start, pos_);
  };
  switch (c) {
    case '(':
    case '{':
    case '[':
      if (++depth_ > max_depth_) {
        return MakeError(
            start, absl::StrCat("nesting is deeper than the limit of ", max_depth_, " levels"));
      }
      return single(c == '('   ? TokenKind::kLparen
                    : c == '{' ? TokenKind::kLbrace
                               : TokenKind::kLsquare);
    case ')':
    case '}':
    case ']':
      if (depth_ > 0) --depth_;
      return single(c == ')'   ? TokenKind::kRparen
                    : c == '}' ? TokenKind::kRbrace
                               : TokenKind::kRsquare);
    case ',':
      return single(TokenKind::kComma);
    case ':':
      return single(TokenKind::kColon);
    case '=':
      return single(TokenKind::kEqual);
    case '?':
      return single(TokenKind::kQuestion);
    case '"':
      return LexString(start);
    case '%':
      ++pos_;
      if (AtEnd(pos_) || !IsNameChar(At(pos_)) || At(pos_) == '-') {
        return MakeError(start, "expected a name after '%'");
      }
      return LexName(start, pos_, /*has_percent=*/true);
    case '<':
      if (At(pos_ + 1) == '=') {
        pos_ += 2;
        return MakeToken(TokenKind::kLeq, start, pos_);
      }
      break;
    case '-':
      if (At(pos_ + 1) == '>') {
        pos_ += 2;
        return MakeToken(TokenKind::kArrow, start, pos_);
      }
      if (IsDigit(At(pos_ + 1))) return LexNumber(start);
      return single(TokenKind::kMinus);
    default:
      if (IsDigit(c)) return LexNumber(start);
      if (IsLetter(c)) return LexName(start, start, /*has_percent=*/false);
      break;
  }
  return MakeError(start, absl::StrCat("unexpected ", DescribeByte(c)));
}

Token Lexer::LexName(int64_t start, int64_t name_start, bool has_percent) {
  pos_ = name_start;
  ConsumeNameChars();
  Token t = MakeToken(TokenKind::kName, start, pos_);
  t.text = source_.substr(static_cast<size_t>(name_start), static_cast<size_t>(pos_ - name_start));
  t.has_percent = has_percent;
  return t;
}

Token Lexer::LexNumber(int64_t start) {
  if (At(pos_) == '-') ++pos_;
  while (IsDigit(At(pos_))) ++pos_;
  TokenKind kind = TokenKind::kInt;
  if (At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
    ++pos_;
    while (IsDigit(At(pos_))) ++pos_;
    kind = TokenKind::kFloat;
  }
  if ((At(pos_) == 'e' || At(pos_) == 'E') &&
      (IsDigit(At(pos_ + 1)) ||
       ((At(pos_ + 1) == '+' || At(pos_ + 1) == '-') && IsDigit(At(pos_ + 2))))) {
    pos_ += 2;
    while (IsDigit(At(pos_))) ++pos_;
    kind = TokenKind::kFloat;
  }
  // `3x3`, `1_2_0x0_0_1`, `0x7f`: one word, interpreted by the parser where
  // such values are expected (window sizes, paddings).
  if (!AtEnd(pos_) && (IsLetter(At(pos_)) || IsDigit(At(pos_)) || At(pos_) == '.')) {
    ConsumeNameChars();
    kind = TokenKind::kWord;
  }
  return MakeToken(kind, start, pos_);
}

Token Lexer::LexString(int64_t start) {
  int start_line = line_;
  int64_t start_line_start = line_start_;
  ++pos_;
  while (!AtEnd(pos_)) {
    char c = At(pos_);
    if (c == '\\') {
      if (At(pos_ + 1) == '\n') {
        ++line_;
        line_start_ = pos_ + 2;
      }
      pos_ += 2;
      continue;
    }
    if (c == '"') {
      ++pos_;
      // The token is positioned at its opening quote.
      int cur_line = line_;
      int64_t cur_line_start = line_start_;
      line_ = start_line;
      line_start_ = start_line_start;
      Token t = MakeToken(TokenKind::kString, start, pos_);
      line_ = cur_line;
      line_start_ = cur_line_start;
      t.text =
          source_.substr(static_cast<size_t>(start + 1), static_cast<size_t>(pos_ - start - 2));
      return t;
    }
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  line_ = start_line;
  line_start_ = start_line_start;
  return MakeError(start, "unterminated string: '\"' has no closing quote");
}

std::string DescribeToken(const Token& token) {
  auto shorten = [](std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 40)) {
      unsigned char u = static_cast<unsigned char>(c);
      out += (u >= 0x20 && u < 0x7f) ? c : '?';
    }
    if (s.size() > 40) out += "...";
    return out;
  };
  switch (token.kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kError:
      return "invalid input";
    case TokenKind::kName:
      return absl::StrCat("'", token.has_percent ? "%" : "", shorten(token.text), "'");
    case TokenKind::kInt:
      return absl::StrCat("integer '", shorten(token.text), "'");
    case TokenKind::kFloat:
      return absl::StrCat("number '", shorten(token.text), "'");
    case TokenKind::kWord:
      return absl::StrCat("'", shorten(token.text), "'");
    case TokenKind::kString:
      return absl::StrCat("string \"", shorten(token.text), "\"");
    default:
      return absl::StrCat("'", shorten(token.text), "'");
  }
}

}  // namespace sharc::hlo

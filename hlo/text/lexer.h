// Lexer for XLA's HLO text format. Tokens are produced lazily, one ahead of
// the parser, so memory stays proportional to the input whatever its shape.
// The lexer also counts bracket nesting, which bounds the parser's recursion
// (shapes and tuple literals) without the parser having to thread a counter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sharc::hlo {

enum class TokenKind {
  kEof,
  kError,   // a lexical error; Lexer::error() has the message
  kName,    // identifier, `%name`, keywords, element types, `inf`, `nan`
  kInt,     // -?[0-9]+
  kFloat,   // -?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)? with a '.' or exponent
  kWord,    // a number immediately followed by name characters: `3x3`, `1_2_0x0_0_1`
  kString,  // "..." (text holds the contents between the quotes, escapes intact)
  kLparen,
  kRparen,
  kLbrace,
  kRbrace,
  kLsquare,
  kRsquare,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kLeq,       // <=
  kMinus,     // a '-' not starting a number (as in `-inf`)
  kQuestion,  // ? (unbounded dynamic dimension; rejected by the parser)
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  // The spelling; for kName without the '%', for kString without the quotes.
  std::string_view text;
  bool has_percent = false;  // kName written as `%name`
  int64_t offset = 0;        // byte offset of the first character
  int64_t end = 0;           // byte offset one past the last character
  int line = 1;              // 1-based
  int column = 1;            // 1-based, in bytes
};

// True when `name` may be printed without its '%': a letter or '_', then
// name characters. Any other name (`%01_model`) needs the '%'. (A name
// holding "->" would still lex as two tokens; the parser never makes one.)
bool IsBareName(std::string_view name);

class Lexer {
 public:
  // `max_depth` bounds the nesting of (), {} and [].
  Lexer(std::string_view source, int max_depth);

  // The next token, without consuming it.
  const Token& Peek() const { return current_; }
  // Consumes and returns the next token. A kError or kEof token is sticky.
  Token Next();

  // The whole lexer state, for the parser's bounded lookahead.
  struct State {
    int64_t pos;
    int line;
    int64_t line_start;
    int depth;
    int64_t last_end;
    Token current;
  };
  State Save() const { return State{pos_, line_, line_start_, depth_, last_end_, current_}; }
  void Restore(const State& s);

  // Consumes the peeked '{' and raw text up to its matching '}' (braces in
  // "strings" do not count), for values in another language, such as the
  // MLIR attributes (`dense<1> : tensor<i32>`) XLA puts in
  // frontend_attributes, which HLO's tokens cannot spell. Returns the text,
  // braces included, or nothing (and consumes nothing, with *error set) if
  // the '{' is not closed or nests deeper than the limit.
  std::optional<std::string_view> ConsumeRawBraces(std::string* error);

  // End offset of the most recently consumed token (0 before the first).
  int64_t last_end() const { return last_end_; }
  // Message of the kError token, if one was produced.
  const std::string& error() const { return error_; }
  std::string_view source() const { return source_; }

 private:
  Token Lex();
  // Skips whitespace and comments; returns false (with current_ set to an
  // error) on an unterminated block comment.
  bool SkipTrivia(Token& error_token);
  Token MakeToken(TokenKind kind, int64_t start, int64_t end);
  Token MakeError(int64_t at, std::string message);
  Token LexNumber(int64_t start);
  Token LexName(int64_t start, int64_t name_start, bool has_percent);
  Token LexString(int64_t start);
  // Consumes name characters [a-zA-Z0-9_.-] from pos_, stopping before "->".
  void ConsumeNameChars();
  char At(int64_t i) const {
    return i < static_cast<int64_t>(source_.size()) ? source_[static_cast<size_t>(i)] : '\0';
  }
  bool AtEnd(int64_t i) const { return i >= static_cast<int64_t>(source_.size()); }

  std::string_view source_;
  int max_depth_;
  int64_t pos_ = 0;
  int line_ = 1;
  int64_t line_start_ = 0;
  int depth_ = 0;
  int64_t last_end_ = 0;
  Token current_;
  std::string error_;
};

// "'{'", "name 'foo'", "end of input", ... for "expected X, found Y" messages.
std::string DescribeToken(const Token& token);

}  // namespace sharc::hlo

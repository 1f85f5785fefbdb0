// HloParser: XLA attributes that do not change what a program computes, so
// sharc drops them after reading, but that XLA's parser checks; a module XLA
// refuses is refused here too, at the attribute:
//
//   exponential(x), result_accuracy={mode=highest}      ok, dropped
//   exponential(x), result_accuracy={mode=high}         error at 'high'
//   bitcast-convert(x), result_accuracy={mode=highest}  error: not a transcendental op
//   custom-call(a, b), operand_layout_constraints={f32[2]{0}}   error: 2 operands
//   send(...), control-predecessors={%nowhere}          error at '%nowhere'
//   custom-call-done(u), async_execution_thread="t"     error unless its start runs on "t"
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "hlo/base/status_macros.h"
#include "hlo/text/parser_impl.h"

namespace sharc::hlo::text_internal {
namespace {

// XLA's unary ops whose implementation has an accuracy to choose.
constexpr std::string_view kOpsWithResultAccuracy[] = {
    "acos",  "acosh", "asin",  "asinh", "atanh",    "exponential-minus-one",
    "log",   "log-plus-one", "logistic", "sqrt", "cbrt", "rsqrt",
    "tanh",  "erf",   "sine",  "sinh",  "cosine",   "cosh",
    "tan",   "exponential"};

// The thread an async op runs on when none is written.
constexpr std::string_view kMainThread = "main";

}  // namespace

absl::Status HloParser::ParseResultAccuracy(const Token& name, const Instruction& inst) {
  std::string_view op = OpcodeName(inst.opcode());
  bool allowed = false;
  for (std::string_view o : kOpsWithResultAccuracy) allowed |= o == op;
  if (!allowed) {
    return ErrorAt(name, Cat("unexpected attribute 'result_accuracy' for op '", op,
                             "': only unary transcendental ops (exponential, log, sine, tanh, "
                             "...) take it"));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start 'result_accuracy'"));
  if (lexer_.Peek().kind != TokenKind::kName || lexer_.Peek().has_percent) {
    return Expected("'mode' or 'tolerance' in 'result_accuracy'");
  }
  Token field = lexer_.Next();
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", field.text, "'")));
  if (field.text == "mode") {
    const Token& value = lexer_.Peek();
    std::string mode = value.kind == TokenKind::kName && !value.has_percent
                           ? absl::AsciiStrToLower(ToAbsl(value.text))
                           : "";
    if (mode != "default" && mode != "highest") {
      return ErrorAt(value, Cat("unknown result_accuracy mode '", value.text,
                                "'; expected 'default' or 'highest'"));
    }
    lexer_.Next();
  } else if (field.text == "tolerance") {
    RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the tolerance"));
    if (!TryConsume(TokenKind::kRbrace)) {
      do {
        ASSIGN_OR_RETURN(Token key, ExpectName("'atol', 'rtol' or 'ulps'"));
        if (key.text != "atol" && key.text != "rtol" && key.text != "ulps") {
          return ErrorAt(key, Cat("unknown result_accuracy tolerance field '", key.text,
                                  "'; expected 'atol', 'rtol' or 'ulps'"));
        }
        RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", key.text, "'")));
        TokenKind k = lexer_.Peek().kind;
        if (k != TokenKind::kInt && k != TokenKind::kFloat) {
          return Expected(Cat("a number for '", key.text, "'"));
        }
        lexer_.Next();
      } while (TryConsume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in the tolerance"));
    }
  } else {
    return ErrorAt(field, Cat("unknown result_accuracy field '", field.text,
                              "'; expected 'mode' or 'tolerance'"));
  }
  return Expect(TokenKind::kRbrace, "'}' to end 'result_accuracy'");
}

absl::Status HloParser::ParseOperandLayoutConstraints(const Token& name,
                                                      const Instruction& inst) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start 'operand_layout_constraints'"));
  std::vector<std::pair<Token, Shape>> constraints;
  if (!TryConsume(TokenKind::kRbrace)) {
    do {
      Token at = lexer_.Peek();
      ASSIGN_OR_RETURN(Shape shape, ParseShape());
      constraints.emplace_back(at, std::move(shape));
    } while (TryConsume(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in 'operand_layout_constraints'"));
  }
  if (inst.opcode() != Opcode::kCustomCall) return absl::OkStatus();
  if (static_cast<int64_t>(constraints.size()) != inst.operand_count()) {
    return ErrorAt(name, Cat("operand_layout_constraints has ", constraints.size(),
                             " shapes but the custom-call has ", inst.operand_count(),
                             " operands: one shape per operand"));
  }
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Shape& operand = inst.operand(static_cast<int64_t>(i))->shape();
    if (constraints[i].second != operand) {
      return ErrorAt(constraints[i].first,
                     Cat("operand_layout_constraints shape ", constraints[i].second.ToString(),
                         " for operand ", i, " is not the operand's shape ", operand.ToString()));
    }
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseControlPredecessors() {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start 'control-predecessors'"));
  if (TryConsume(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    ASSIGN_OR_RETURN(Token predecessor, ExpectName("an instruction name"));
    control_predecessors_.push_back(predecessor);
  } while (TryConsume(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "'}' or ',' in 'control-predecessors'");
}

absl::Status HloParser::CheckControlPredecessors(const Scope& scope) {
  for (const Token& predecessor : control_predecessors_) {
    if (!scope.by_name.contains(ToAbsl(predecessor.text))) {
      return ErrorAt(predecessor, Cat("control predecessor '%", predecessor.text,
                                      "' is not defined in computation '%",
                                      scope.computation_name, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseAsyncExecutionThread() {
  if (lexer_.Peek().kind != TokenKind::kString) {
    return Expected("a string for 'async_execution_thread'");
  }
  pending_async_thread_ = lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::CheckAsyncChain(const Token& name, const Instruction& inst) {
  std::optional<Token> written = std::move(pending_async_thread_);
  pending_async_thread_.reset();
  std::string thread(kMainThread);
  if (written.has_value()) {
    std::string error;
    if (!absl::CUnescape(ToAbsl(written->text), &thread, &error)) {
      return ErrorAt(*written, Cat("invalid escape in string: ", error));
    }
  }
  if (inst.opcode() == Opcode::kAsyncStart) {
    async_threads_[&inst] = thread;
    if (const Computation* called = inst.attr_computation("calls")) {
      auto [it, inserted] = async_callers_.emplace(called, name);
      if (!inserted) {
        return ErrorAt(name, Cat("computation '%", called->name(),
                                 "' is already called by the async-start at ", it->second.line,
                                 ":", it->second.column,
                                 "; each async-start needs a computation of its own"));
      }
    }
    return absl::OkStatus();
  }
  if ((inst.opcode() != Opcode::kAsyncUpdate && inst.opcode() != Opcode::kAsyncDone) ||
      !written.has_value() || inst.operand_count() < 1) {
    return absl::OkStatus();
  }
  const Instruction* start = inst.operand(0);
  while (start->opcode() == Opcode::kAsyncUpdate && start->operand_count() >= 1) {
    start = start->operand(0);
  }
  auto it = async_threads_.find(start);
  std::string expected = it != async_threads_.end() ? it->second : std::string(kMainThread);
  if (thread != expected) {
    return ErrorAt(*written, Cat("async_execution_thread is \"", thread, "\" but the async-start '%",
                                 start->name(), "' runs on \"", expected,
                                 "\"; an async chain runs on its start's thread"));
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo::text_internal

// Internal to hlo/text: the recursive-descent HLO text parser. Its methods are
// spread over parser.cc (module, computations, instructions),
// parse_values.cc (errors, integers, shapes, literals), parse_attributes.cc
// (op attributes by AttrKind, generic attributes) and parse_sharding.cc.
// Everything returns absl::Status; the first error ends the parse.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hlo/ir/attribute.h"
#include "hlo/ir/device_limits.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "hlo/ir/shape.h"
#include "hlo/ir/sharding.h"
#include "hlo/ops/op_def.h"
#include "hlo/text/lexer.h"
#include "hlo/text/parser.h"

namespace sharc::hlo::text_internal {

// Debian's Abseil has its own absl::string_view type, which absl::StrCat,
// StrSplit and SimpleAtoi take, and std::string_view does not convert to it.
// These wrappers let the parser use std::string_view throughout.
inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
template <typename T>
decltype(auto) ToAbslArg(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return ToAbsl(value);
  } else {
    return (value);
  }
}
template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(ToAbslArg(args)...);
}
template <typename... Args>
void Append(std::string* out, const Args&... args) {
  absl::StrAppend(out, ToAbslArg(args)...);
}

// The candidate closest to `name` by edit distance, if it is close enough to
// be a plausible typo ("" otherwise). Used for "did you mean" hints.
std::string_view ClosestName(std::string_view name,
                             const std::vector<std::string_view>& candidates);

// True if a layout written after `dims` (`{1,0}`, `{0,1:T(8,128)}`) is not
// row-major: the order in which sharc keeps every array.
bool LayoutReorders(std::string_view layout, const std::vector<int64_t>& dims);

class HloParser {
 public:
  HloParser(std::string_view text, const ParseOptions& options);

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();
  // The whole input must be one sharding (resp. one shape).
  absl::StatusOr<Sharding> ParseShardingOnly();
  absl::StatusOr<Shape> ParseShapeOnly();
  absl::StatusOr<IntListList> ParseReplicaGroupsOnly();

 private:
  // Names of one computation while its body is parsed; instructions are
  // added to the Computation only once the body is complete and consistent.
  struct Scope {
    std::string computation_name;
    std::vector<std::unique_ptr<Instruction>> instructions;
    std::vector<Token> name_tokens;  // parallel to `instructions`, for errors
    absl::flat_hash_map<std::string, Instruction*> by_name;
    Instruction* root = nullptr;
  };

  // ---- errors and tokens (parse_values.cc)
  // InvalidArgument "FILE:LINE:COL: error: MESSAGE" + source line + caret.
  absl::Status ErrorAt(const Token& token, std::string_view message) const;
  // "expected WHAT, found <next token>" at the next token (or the lexer's
  // message if the next token is a lexical error).
  absl::Status Expected(std::string_view what) const;
  absl::Status Expect(TokenKind kind, std::string_view what);
  bool TryConsume(TokenKind kind);
  // The next token is the bare identifier `word` (not `%word`).
  bool PeekKeyword(std::string_view word) const;
  absl::StatusOr<Token> ExpectName(std::string_view what);
  absl::StatusOr<int64_t> ParseInt64(std::string_view what);
  absl::StatusOr<bool> ParseBool();
  // `{1,2,3}` (or `[1,2,3]` when `open` is kLsquare); may be empty.
  absl::StatusOr<std::vector<int64_t>> ParseIntList(TokenKind open, std::string_view what);
  // Consumes one balanced (), {} or [] group starting at the next token and
  // returns its source text, brackets included.
  absl::StatusOr<std::string_view> SkipBalanced();
  // Skips the value of an attribute sharc accepts and drops.
  absl::Status SkipAttributeValue();
  absl::Status ExpectEnd();

  // ---- shapes and literals (parse_values.cc)
  absl::StatusOr<Shape> ParseShape();
  // True if the next tokens start a shape (`f32[`, `(`...).
  bool PeekShape();
  // `{V:i,j}` after an instruction's shape: its device variance.
  bool PeekVariance();
  absl::StatusOr<std::vector<std::string>> ParseVariance();
  absl::StatusOr<Literal> ParseLiteral(const Shape& shape);
  absl::StatusOr<std::string> ParseTypedLiteralText();
  // Checks (out == nullptr) or fills (out != nullptr) a literal of `shape`.
  absl::Status ScanLiteral(const Shape& shape, Literal* out);
  absl::Status ScanArrayLiteral(const Shape& shape, Literal* out);
  absl::Status ScanElement(PrimitiveType type, Literal* out, int64_t index);

  // ---- shardings (parse_sharding.cc)
  absl::StatusOr<Sharding> ParseSharding();
  absl::StatusOr<Sharding> ParseSingleSharding();
  absl::StatusOr<TileAssignment> ParseTileAssignment();
  // The iota form after the dims of a tile assignment or replica groups:
  // `<=[reshape]` with an optional `T(perm)`, checked against `dims`.
  absl::Status ParseIotaForm(const std::vector<int64_t>& dims, std::vector<int64_t>* reshape,
                             std::vector<int64_t>* perm);

  // ---- attributes (parse_attributes.cc)
  absl::StatusOr<AttrValue> ParseAttrValue(const AttrSpec& spec, const Token& name);
  absl::StatusOr<IntListList> ParseSliceValue();
  absl::StatusOr<IntListList> ParsePaddingValue();
  absl::StatusOr<IntListList> ParseWindowValue();
  absl::StatusOr<IntListList> ParseReplicaGroupsValue();
  absl::StatusOr<IntListList> ParseIntListListValue(std::string_view what);
  absl::StatusOr<Computation*> ParseComputationRef();
  absl::Status ParseMetadata(OpMetadata* metadata);
  // Parses `name=value` for a name outside the op's schema. Sets *handled to
  // false if the name is not a generic attribute either.
  absl::Status ParseGenericAttribute(const Token& name, Instruction* inst, bool* handled);
  // With `written` false (a nested instruction) no attribute may follow;
  // the required ones are still checked.
  absl::Status ParseInstructionAttributes(const Token& opcode_token, Instruction* inst,
                                          bool written = true);

  // ---- the header's buffer aliasing (parse_aliasing.cc)
  // `{1, 0}` or `{}`.
  absl::StatusOr<ShapeIndexPath> ParseShapeIndexPath(std::string_view what);
  absl::Status ParseInputOutputAlias(ModuleConfig* config);
  absl::Status ParseBufferDonors(ModuleConfig* config);
  // Parameter `number` of `entry` exists and has an element at `index`.
  absl::Status CheckParameterIndex(const Token& at, std::string_view attribute,
                                   const Computation& entry, int64_t number,
                                   const ShapeIndexPath& index) const;
  // Every alias and donor names an element the entry's result and
  // parameters have; no output is aliased twice.
  absl::Status CheckBufferAliasing(const Module& module) const;

  // ---- XLA attributes sharc checks, then drops (parse_checked_hints.cc)
  // `result_accuracy={mode=highest}` or `{tolerance={atol=0.1, rtol=0, ulps=2}}`,
  // only on the unary transcendental ops.
  absl::Status ParseResultAccuracy(const Token& name, const Instruction& inst);
  // custom-call's `operand_layout_constraints={f32[2]{0}, ...}`: one shape
  // per operand, each the operand's shape up to layout.
  absl::Status ParseOperandLayoutConstraints(const Token& name, const Instruction& inst);
  // `control-predecessors={%a, %b}`: the names are checked when the
  // computation's body ends (CheckControlPredecessors).
  absl::Status ParseControlPredecessors();
  absl::Status CheckControlPredecessors(const Scope& scope);
  // `async_execution_thread="t"`: kept until the instruction is complete.
  absl::Status ParseAsyncExecutionThread();
  // On a complete instruction: an async-start records its thread and
  // called computation (one start per computation, as in XLA); an
  // async-update / -done may restate its start's thread, not change it.
  absl::Status CheckAsyncChain(const Token& name, const Instruction& inst);

  // ---- structure (parser.cc)
  absl::Status ParseHeader(Module* module);
  // The text starts with a computation rather than `HloModule`.
  bool PeekHeaderlessModule();
  absl::Status ParseHeaderAttribute(Module* module, const Token& name);
  absl::Status ParseComputation(Module* module, bool* is_entry, Computation** parsed);
  // From '{' to '}': the instructions, checked and added to `module` as
  // computation `name` (`name_token` locates errors about the whole body).
  absl::StatusOr<Computation*> ParseComputationBody(Module* module, const Token& name_token,
                                                    std::string name);
  // The stack-frame tables after the computations (FileNames, ...).
  bool PeekStackFrameTable();
  absl::Status SkipStackFrameTable();
  // A called computation written in place (`to_apply={ ... }`).
  absl::StatusOr<Computation*> ParseInlineComputation();
  absl::Status ParseInstruction(Scope& scope);
  // Everything after `name =`: shape, opcode, operands, attributes. Adds the
  // instruction to `scope`. A nested instruction (an operand written in
  // place) has no attributes, and an empty `inst_name` gets one made up.
  absl::StatusOr<Instruction*> ParseInstructionRhs(Scope& scope, const Token& name,
                                                   std::string inst_name, bool nested);
  absl::StatusOr<std::vector<Instruction*>> ParseOperands(Scope& scope);
  // XLA's async sugar `op-start(a, b), <op's attributes>`: async-start over a
  // computation made of `op` alone, from the '(' on. `shape` is the written
  // result shape (invalid when left out).
  absl::StatusOr<std::unique_ptr<Instruction>> ParseAsyncSugarStart(
      Scope& scope, const Token& opcode_token, Opcode wrapped, const std::string& inst_name,
      const Shape& shape, bool nested);
  // The next tokens are `opcode(`: an instruction written without its shape.
  bool PeekOpcodeCall();
  // Sets the shape of an instruction written without one from the op
  // table's shape inference, or reports that it cannot be inferred.
  absl::Status InferResultShape(const Token& opcode_token, Instruction* inst);
  SourceLocation LocationOf(const Token& token) const;

  const ParseOptions& options_;
  Lexer lexer_;
  absl::flat_hash_map<std::string, Computation*> computations_;
  int64_t nested_count_ = 0;  // numbers the names of nested instructions
  // Instructions written as operands of operands, now (ParseOperands).
  int nested_instruction_depth_ = 0;
  static constexpr int kMaxNestedInstructionDepth = 64;
  int64_t inline_count_ = 0;  // numbers the names of inline computations
  Module* module_ = nullptr;  // the module being parsed (for inline computations)
  // Whether the last shape parsed was written with a layout that reorders
  // its dims (or, for a tuple, any element's), and the instructions
  // declared so: a bitcast of or to one is not a row-major reshape.
  bool last_layout_reorders_ = false;
  absl::flat_hash_set<const Instruction*> reordering_layouts_;
  // Where each config.input_output_alias / buffer_donors entry was written.
  std::vector<Token> alias_tokens_;
  std::vector<Token> donor_tokens_;
  // control-predecessors names of the computation being parsed.
  std::vector<Token> control_predecessors_;
  // The async_execution_thread written on the instruction being parsed.
  std::optional<Token> pending_async_thread_;
  // Each async-start's thread, and the async-start calling each computation.
  absl::flat_hash_map<const Instruction*, std::string> async_threads_;
  absl::flat_hash_map<const Computation*, Token> async_callers_;
};

}  // namespace sharc::hlo::text_internal

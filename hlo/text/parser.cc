// HloParser: module header, computations and instructions; and the public
// entry points of hlo/text/parser.h.
#include "hlo/text/parser.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/text/parser_impl.h"
#include "hlo/verifier/runnable_types.h"
#include "hlo/verifier/verifier.h"

namespace sharc::hlo {
namespace text_internal {
namespace {

// The element types a constant can hold: the runnable ones, and the
// sub-byte integers and complex types, stored to be read and printed (no
// pass computes with them: CheckRunnableTypes).
bool HasConstantStorage(PrimitiveType type) {
  return IsRunnableType(type) || IsComplex(type) || IsNarrowType(type);
}

// The first leaf element type of `shape` a constant cannot hold (kInvalid if none).
PrimitiveType FirstTypeWithoutStorage(const Shape& shape) {
  if (shape.is_tuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      PrimitiveType t = FirstTypeWithoutStorage(element);
      if (t != PrimitiveType::kInvalid) return t;
    }
    return PrimitiveType::kInvalid;
  }
  return HasConstantStorage(shape.type()) ? PrimitiveType::kInvalid : shape.type();
}

// Largest num_partitions / replica_count accepted (no mesh comes close).
constexpr int64_t kMaxDeviceCount = kMaxDevices;

int64_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<int64_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int64_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string_view ClosestName(std::string_view name,
                             const std::vector<std::string_view>& candidates) {
  if (name.size() > 64) return "";  // garbage, not a typo
  std::string_view best;
  int64_t best_distance = 0;
  for (std::string_view c : candidates) {
    int64_t d = EditDistance(name, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  int64_t limit = std::max<int64_t>(2, static_cast<int64_t>(name.size()) / 3);
  return best_distance <= limit ? best : "";
}

SourceLocation HloParser::LocationOf(const Token& token) const {
  SourceLocation loc;
  loc.file = options_.filename;
  loc.line = token.line;
  loc.column = token.column;
  return loc;
}

// ------------------------------------------------------------------ header

absl::Status HloParser::ParseHeaderAttribute(Module* module, const Token& name) {
  ModuleConfig& config = module->mutable_config();
  std::string_view n = name.text;
  auto device_count = [&](int64_t* out) -> absl::Status {
    Token at = lexer_.Peek();
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(Cat("an integer for '", n, "'")));
    if (v < 1 || v > kMaxDeviceCount) {
      return ErrorAt(at, Cat("'", n, "' must be in [1, ", kMaxDeviceCount, "], found ", v));
    }
    *out = v;
    return absl::OkStatus();
  };
  // `true`, `{true}` or `{true,false}`.
  auto bool_list = [&](std::vector<bool>* out) -> absl::Status {
    out->clear();
    if (!TryConsume(TokenKind::kLbrace)) {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      out->push_back(b);
      return absl::OkStatus();
    }
    do {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      out->push_back(b);
    } while (TryConsume(TokenKind::kComma));
    return Expect(TokenKind::kRbrace, "'}' or ','");
  };
  if (n == "num_partitions") return device_count(&config.num_partitions);
  if (n == "replica_count") return device_count(&config.replica_count);
  if (n == "allow_spmd_sharding_propagation_to_output") {
    return bool_list(&config.allow_spmd_sharding_propagation_to_output);
  }
  if (n == "allow_spmd_sharding_propagation_to_parameters") {
    return bool_list(&config.allow_spmd_sharding_propagation_to_parameters);
  }
  // The schedule is instruction order, which sharc's passes do not promise
  // to keep; aliasing pass-through parameters is a buffer concern.
  if (n == "is_scheduled" || n == "alias_passthrough_params") return ParseBool().status();
  // Aliasing and donation are kept (and checked once the entry is parsed)
  // though sharc gives every buffer its own storage: a module handed back to
  // XLA keeps them.
  if (n == "input_output_alias") return ParseInputOutputAlias(&config);
  if (n == "buffer_donor") return ParseBufferDonors(&config);
  if (n == "entry_computation_layout" || n == "origin_recovery_table") {
    // Layouts are an XLA runtime concern sharc ignores (every array is
    // row-major); the recovery table maps values XLA's passes removed back
    // to the user's program, debug information that sharc's passes would
    // not keep up to date.
    if (lexer_.Peek().kind != TokenKind::kLbrace) return Expected("'{'");
    return SkipBalanced().status();
  }
  if (n == "frontend_attributes") {
    // Kept verbatim: Shardy's round trip stores its meshes here (xla.sdy.*).
    if (lexer_.Peek().kind != TokenKind::kLbrace) return Expected("'{'");
    ASSIGN_OR_RETURN(std::string_view text, SkipBalanced());
    config.frontend_attributes = std::string(text);
    return absl::OkStatus();
  }
  if (n == "mesh") {
    RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the mesh"));
    config.mesh.clear();
    if (TryConsume(TokenKind::kRbrace)) return absl::OkStatus();
    do {
      ASSIGN_OR_RETURN(Token axis, ExpectName("a mesh axis name"));
      for (const MeshAxis& a : config.mesh) {
        if (a.name == axis.text) {
          return ErrorAt(axis, Cat("mesh axis '", axis.text, "' appears twice"));
        }
      }
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the mesh axis name"));
      int64_t size;
      RETURN_IF_ERROR(device_count(&size));
      config.mesh.push_back(MeshAxis{std::string(axis.text), size});
    } while (TryConsume(TokenKind::kComma));
    return Expect(TokenKind::kRbrace, "'}' or ',' in the mesh");
  }
  return ErrorAt(name, Cat("unknown module attribute '", n, "'"));
}

bool HloParser::PeekHeaderlessModule() {
  // As XLA's parser: a module may start right at its computations, with
  // `ENTRY` or with `name {`.
  if (PeekKeyword("ENTRY")) return true;
  if (lexer_.Peek().kind != TokenKind::kName) return false;
  Lexer::State saved = lexer_.Save();
  lexer_.Next();
  bool is_computation = lexer_.Peek().kind == TokenKind::kLbrace;
  lexer_.Restore(saved);
  return is_computation;
}

absl::Status HloParser::ParseHeader(Module* module) {
  if (!PeekKeyword("HloModule")) return Expected("'HloModule'");
  lexer_.Next();
  ASSIGN_OR_RETURN(Token name, ExpectName("a module name"));
  module->set_name(std::string(name.text));
  // Older dumps end the name with a colon (`HloModule m:`), which XLA's
  // lexer takes as part of the name token.
  if (lexer_.Peek().kind == TokenKind::kColon && lexer_.Peek().offset == lexer_.last_end()) {
    lexer_.Next();
  }
  absl::flat_hash_set<std::string_view> seen;
  std::optional<Token> mesh_attr;
  while (TryConsume(TokenKind::kComma)) {
    ASSIGN_OR_RETURN(Token attr, ExpectName("a module attribute name"));
    if (!seen.insert(attr.text).second) {
      return ErrorAt(attr, Cat("duplicate module attribute '", attr.text, "'"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", attr.text, "'")));
    RETURN_IF_ERROR(ParseHeaderAttribute(module, attr));
    if (attr.text == "mesh") mesh_attr = attr;
  }
  // A named mesh implies the device count; a num_partitions beside it must
  // agree with it.
  ModuleConfig& config = module->mutable_config();
  if (mesh_attr && !config.mesh.empty()) {
    int64_t devices = 1;
    for (const MeshAxis& axis : config.mesh) {
      devices *= axis.size;
      if (devices > kMaxDeviceCount) {
        return ErrorAt(*mesh_attr, Cat("the mesh has more than ", kMaxDeviceCount, " devices"));
      }
    }
    if (!seen.contains("num_partitions")) {
      config.num_partitions = devices;
    } else if (config.num_partitions != devices) {
      return ErrorAt(*mesh_attr, Cat("the mesh has ", devices, " devices but num_partitions=",
                                     config.num_partitions));
    }
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ instructions

absl::StatusOr<std::vector<Instruction*>> HloParser::ParseOperands(Scope& scope) {
  std::vector<Instruction*> operands;
  if (TryConsume(TokenKind::kRparen)) return operands;
  do {
    // An operand may be an instruction written in place, without a name
    // (`add(f32[] parameter(0), multiply(a, b))`).
    Lexer::State operand_start = lexer_.Save();
    if (PeekShape()) RETURN_IF_ERROR(ParseShape().status());
    if (PeekOpcodeCall()) {
      lexer_.Restore(operand_start);
      Token at = lexer_.Peek();
      // Each level recurses through this function, with frames far larger
      // than a bracket's (several KiB under the sanitizers), so nested
      // instructions have a limit of their own, well inside the stack;
      // XLA's dumps nest a few levels at most.
      if (nested_instruction_depth_ >= kMaxNestedInstructionDepth) {
        return ErrorAt(at, Cat("instructions nested as operands go deeper than the limit of ",
                               kMaxNestedInstructionDepth, " levels"));
      }
      ++nested_instruction_depth_;
      absl::StatusOr<Instruction*> nested_inst =
          ParseInstructionRhs(scope, at, /*inst_name=*/"", /*nested=*/true);
      --nested_instruction_depth_;
      if (!nested_inst.ok()) return nested_inst.status();
      operands.push_back(*nested_inst);
      continue;
    }
    lexer_.Restore(operand_start);
    // Older dumps write each operand's shape before its name.
    std::optional<Shape> written_shape;
    if (PeekShape()) {
      ASSIGN_OR_RETURN(written_shape, ParseShape());
    }
    if (lexer_.Peek().kind != TokenKind::kName) return Expected("an operand name");
    Token name = lexer_.Next();
    // A lexical error right after the name (nesting too deep at its '(')
    // is the real problem, not the name.
    if (lexer_.Peek().kind == TokenKind::kError) return Expected("')' or ','");
    auto it = scope.by_name.find(ToAbsl(name.text));
    if (it == scope.by_name.end()) {
      return ErrorAt(name, Cat("use of undefined value '%", name.text, "'"));
    }
    if (written_shape && *written_shape != it->second->shape()) {
      return ErrorAt(name,
                     Cat("operand '%", name.text, "' has shape ", it->second->shape().ToString(),
                         " but is written as ", written_shape->ToString()));
    }
    operands.push_back(it->second);
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' or ',' in the operand list"));
  return operands;
}

absl::Status HloParser::ParseInstruction(Scope& scope) {
  bool is_root = false;
  Token root_token = lexer_.Peek();
  if (PeekKeyword("ROOT")) {
    Lexer::State saved = lexer_.Save();
    lexer_.Next();
    if (lexer_.Peek().kind == TokenKind::kName) {
      is_root = true;
    } else {
      lexer_.Restore(saved);  // an instruction named ROOT
    }
  }
  if (lexer_.Peek().kind != TokenKind::kName) {
    return Expected(
        Cat("an instruction name or '}' to end computation '%", scope.computation_name, "'"));
  }
  Token name = lexer_.Next();
  if (auto it = scope.by_name.find(ToAbsl(name.text)); it != scope.by_name.end()) {
    const SourceLocation& first = it->second->location();
    return ErrorAt(name, Cat("duplicate instruction name '%", name.text, "' in computation '%",
                             scope.computation_name, "' (first defined at ", first.line, ":",
                             first.column, ")"));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the instruction name"));
  ASSIGN_OR_RETURN(Instruction * inst,
                   ParseInstructionRhs(scope, name, std::string(name.text), /*nested=*/false));
  if (is_root) {
    if (scope.root != nullptr) {
      return ErrorAt(root_token,
                     Cat("computation '%", scope.computation_name,
                         "' has a second ROOT (the first is '%", scope.root->name(), "')"));
    }
    scope.root = inst;
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> HloParser::ParseInstructionRhs(Scope& scope, const Token& name,
                                                            std::string inst_name, bool nested) {
  // XLA lets the result shape be left out (`t = tuple(a, b)`); the op
  // table's shape inference supplies it once operands and attributes are
  // known.
  const bool shape_written = !PeekOpcodeCall();
  Shape shape;
  std::vector<std::string> variance;
  bool result_layout_reorders = false;
  if (shape_written) {
    ASSIGN_OR_RETURN(shape, ParseShape());
    result_layout_reorders = last_layout_reorders_;
    if (lexer_.Peek().offset == lexer_.last_end() && PeekVariance()) {
      ASSIGN_OR_RETURN(variance, ParseVariance());
    }
  }

  if (lexer_.Peek().kind != TokenKind::kName || lexer_.Peek().has_percent) {
    return Expected("an opcode");
  }
  Token opcode_token = lexer_.Next();
  std::optional<Opcode> opcode = OpcodeFromName(opcode_token.text);
  // XLA's async sugar: `op-start` / `op-update` / `op-done` for an op
  // without async opcodes of its own are async-start (over a computation of
  // that op alone) / async-update / async-done.
  std::optional<Opcode> sugar_wrapped;
  Opcode sugar_form = Opcode::kAsyncStart;
  if (!opcode.has_value()) {
    for (auto [suffix, form] : {std::pair<std::string_view, Opcode>{"-start", Opcode::kAsyncStart},
                                {"-update", Opcode::kAsyncUpdate},
                                {"-done", Opcode::kAsyncDone}}) {
      std::string_view text = opcode_token.text;
      if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
        sugar_wrapped = OpcodeFromName(text.substr(0, text.size() - suffix.size()));
        sugar_form = form;
        if (sugar_wrapped.has_value()) opcode = form;
        break;
      }
    }
  }
  if (!opcode.has_value() && !shape_written && opcode_token.text == "b") {
    // XLA's buffer type, `b(f32[])`: a mutable buffer (a custom-call's
    // pinned result), not an array or tuple value.
    return ErrorAt(opcode_token,
                   "unsupported: the buffer type 'b(...)' (XLA's mutable buffer values); sharc's "
                   "values are arrays, tuples and tokens");
  }
  if (!opcode.has_value()) {
    std::vector<std::string_view> names;
    for (int i = 0; i < kNumOpcodes; ++i) names.push_back(OpcodeName(static_cast<Opcode>(i)));
    std::string message = Cat("unknown opcode '", opcode_token.text, "'");
    std::string_view suggestion = ClosestName(opcode_token.text, names);
    if (!suggestion.empty()) Append(&message, "; did you mean '", suggestion, "'?");
    return ErrorAt(opcode_token, message);
  }
  const OpDef& def = GetOpDef(*opcode);
  std::string_view op_name = OpcodeName(*opcode);
  if (inst_name.empty()) {
    // A nested instruction is named after its opcode, as in XLA, with a
    // number that no name so far uses.
    do {
      inst_name = Cat(op_name, ".", ++nested_count_);
    } while (scope.by_name.contains(inst_name));
  }
  if (!shape_written && def.syntax != OperandSyntax::kOperands) {
    return ErrorAt(opcode_token, Cat("'", op_name, "' needs its result shape written before the "
                                     "opcode (e.g. 'f32[2] ", op_name, "(...)')"));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kLparen, Cat("'(' after '", op_name, "'")));

  std::unique_ptr<Instruction> inst;
  if (sugar_wrapped.has_value() && sugar_form == Opcode::kAsyncStart) {
    ASSIGN_OR_RETURN(inst, ParseAsyncSugarStart(scope, opcode_token, *sugar_wrapped, inst_name,
                                                shape_written ? shape : Shape(), nested));
    RETURN_IF_ERROR(CheckAsyncChain(name, *inst));
    inst->set_location(LocationOf(name));
    inst->set_variance(std::move(variance));
    Instruction* raw = inst.get();
    scope.by_name.emplace(std::move(inst_name), raw);
    scope.instructions.push_back(std::move(inst));
    scope.name_tokens.push_back(name);
    return raw;
  }
  switch (def.syntax) {
    case OperandSyntax::kParameterNumber: {
      Token at = lexer_.Peek();
      ASSIGN_OR_RETURN(int64_t number, ParseInt64("a parameter number"));
      if (number < 0) return ErrorAt(at, "parameter number must not be negative");
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the parameter number"));
      inst = Instruction::CreateParameter(number, inst_name, shape);
      break;
    }
    case OperandSyntax::kLiteral: {
      if (PrimitiveType t = FirstTypeWithoutStorage(shape); t != PrimitiveType::kInvalid) {
        return ErrorAt(opcode_token, Cat("constants of type ", PrimitiveTypeName(t),
                                         " are not supported: sharc stores no values of it"));
      }
      // Old form: the literal's shape repeated inside, `constant(f32[2] {1, 2})`.
      if (PeekShape()) {
        Token at = lexer_.Peek();
        ASSIGN_OR_RETURN(Shape inner, ParseShape());
        if (inner != shape) {
          return ErrorAt(at, Cat("literal shape ", inner.ToString(),
                                 " differs from the instruction's shape ", shape.ToString()));
        }
      }
      ASSIGN_OR_RETURN(Literal literal, ParseLiteral(shape));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the literal"));
      inst = Instruction::CreateConstant(inst_name, std::move(literal));
      break;
    }
    case OperandSyntax::kOperands: {
      ASSIGN_OR_RETURN(std::vector<Instruction*> operands, ParseOperands(scope));
      int64_t n = static_cast<int64_t>(operands.size());
      if (n < def.min_operands || (def.max_operands >= 0 && n > def.max_operands)) {
        std::string expected = def.max_operands < 0 ? Cat("at least ", def.min_operands)
                               : def.min_operands == def.max_operands
                                   ? Cat(def.min_operands)
                                   : Cat(def.min_operands, " to ", def.max_operands);
        return ErrorAt(opcode_token, Cat("'", op_name, "' takes ", expected, " operand",
                                         expected == "1" ? "" : "s", ", found ", n));
      }
      if (*opcode == Opcode::kBitcast &&
          (result_layout_reorders ||
           (n == 1 && reordering_layouts_.contains(operands[0])))) {
        return ErrorAt(opcode_token,
                       "unsupported: a bitcast whose shapes are written with layouts that reorder "
                       "dimensions (not row-major); sharc keeps every array row-major, so it reads "
                       "a bitcast only as a row-major reshape");
      }
      inst = Instruction::Create(*opcode, inst_name, shape, std::move(operands));
      break;
    }
  }
  inst->set_location(LocationOf(name));
  inst->set_variance(std::move(variance));
  // A nested instruction's attributes would be ambiguous with the operand
  // list's commas, so it has none (XLA's nested form has none either).
  RETURN_IF_ERROR(ParseInstructionAttributes(opcode_token, inst.get(), /*written=*/!nested));
  if (!shape_written) RETURN_IF_ERROR(InferResultShape(opcode_token, inst.get()));
  RETURN_IF_ERROR(CheckAsyncChain(name, *inst));
  if (sugar_wrapped.has_value()) {
    // `op-update` / `op-done` must follow a start of the same op.
    const Instruction* start = inst->operand(0);
    while (start->opcode() == Opcode::kAsyncUpdate) start = start->operand(0);
    const Computation* called =
        start->opcode() == Opcode::kAsyncStart ? start->attr_computation("calls") : nullptr;
    if (called == nullptr || called->root() == nullptr ||
        called->root()->opcode() != *sugar_wrapped) {
      return ErrorAt(opcode_token,
                     Cat("'", opcode_token.text, "' must follow an async start of '",
                         OpcodeName(*sugar_wrapped), "', but its operand '%", start->name(),
                         "' is not one"));
    }
  }
  Instruction* raw = inst.get();
  if (result_layout_reorders) reordering_layouts_.insert(raw);
  scope.by_name.emplace(std::move(inst_name), raw);
  scope.instructions.push_back(std::move(inst));
  scope.name_tokens.push_back(name);
  return raw;
}

absl::StatusOr<std::unique_ptr<Instruction>> HloParser::ParseAsyncSugarStart(
    Scope& scope, const Token& opcode_token, Opcode wrapped, const std::string& inst_name,
    const Shape& shape, bool nested) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> operands, ParseOperands(scope));
  std::string computation_name;
  int64_t suffix = 0;
  do {
    computation_name = Cat(inst_name, ".async_computation", suffix++ == 0 ? "" : Cat(".", suffix));
  } while (computations_.contains(computation_name));
  auto computation = std::make_unique<Computation>(computation_name);
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < operands.size(); ++i) {
    parameters.push_back(computation->AddInstruction(Instruction::CreateParameter(
        static_cast<int64_t>(i), Cat("param.", i), operands[i]->shape())));
  }
  // The start's tuple holds the wrapped op's value second.
  Shape wrapped_shape;
  if (shape.is_tuple() && shape.tuple_size() >= 2) wrapped_shape = shape.tuple_shape(1);
  std::unique_ptr<Instruction> op =
      Instruction::Create(wrapped, Cat(OpcodeName(wrapped), ".wrapped"), wrapped_shape,
                          parameters);
  op->set_location(LocationOf(opcode_token));
  RETURN_IF_ERROR(ParseInstructionAttributes(opcode_token, op.get(), /*written=*/!nested));
  if (!wrapped_shape.valid()) RETURN_IF_ERROR(InferResultShape(opcode_token, op.get()));
  computation->set_root(computation->AddInstruction(std::move(op)));
  Computation* called = module_->AddComputation(std::move(computation));
  computations_.emplace(computation_name, called);
  std::unique_ptr<Instruction> start =
      Instruction::Create(Opcode::kAsyncStart, inst_name, shape, std::move(operands));
  start->set_attr("calls", called);
  if (!shape.valid()) RETURN_IF_ERROR(InferResultShape(opcode_token, start.get()));
  return start;
}

bool HloParser::PeekOpcodeCall() {
  const Token& t = lexer_.Peek();
  if (t.kind != TokenKind::kName || t.has_percent) return false;
  Lexer::State saved = lexer_.Save();
  lexer_.Next();
  bool is_call = lexer_.Peek().kind == TokenKind::kLparen;
  lexer_.Restore(saved);
  return is_call;
}

absl::Status HloParser::InferResultShape(const Token& opcode_token, Instruction* inst) {
  // The instruction has no parent yet, so inference sees only its operands
  // and attributes, as XLA's parser does.
  absl::StatusOr<Shape> inferred = GetOpDef(inst->opcode()).infer_shape(*inst);
  if (inferred.ok() && inferred->valid()) {
    inst->set_shape(*std::move(inferred));
    return absl::OkStatus();
  }
  std::string why;
  if (!inferred.ok()) {
    // The op's message ends with the instruction, which has no shape yet.
    std::string message(inferred.status().message());
    message = message.substr(0, message.find('\n'));
    message = message.substr(0, message.find(", in `"));
    why = Cat(" (", message, ")");
  }
  return ErrorAt(opcode_token,
                 Cat("cannot infer the result shape of '", OpcodeName(inst->opcode()),
                     "'; write it before the opcode", why));
}

// ------------------------------------------------------------ computations

absl::Status HloParser::ParseComputation(Module* module, bool* is_entry, Computation** parsed) {
  *is_entry = false;
  if (PeekKeyword("ENTRY")) {
    lexer_.Next();
    *is_entry = true;
  }
  if (lexer_.Peek().kind != TokenKind::kName) return Expected("a computation name");
  Token name = lexer_.Next();
  if (computations_.contains(ToAbsl(name.text))) {
    return ErrorAt(name, Cat("duplicate computation name '%", name.text, "'"));
  }

  // Optional signature `(p: shape, ...) -> shape`, checked once the body is known.
  struct SignatureParam {
    Token name;
    Shape shape;
  };
  std::vector<SignatureParam> signature;
  std::optional<Shape> signature_result;
  Token signature_token = lexer_.Peek();
  if (TryConsume(TokenKind::kLparen)) {
    if (!TryConsume(TokenKind::kRparen)) {
      do {
        ASSIGN_OR_RETURN(Token pname, ExpectName("a parameter name"));
        RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the parameter name"));
        ASSIGN_OR_RETURN(Shape pshape, ParseShape());
        signature.push_back({pname, std::move(pshape)});
      } while (TryConsume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' or ',' in the signature"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' after the parameter list"));
    ASSIGN_OR_RETURN(signature_result, ParseShape());
  }

  ASSIGN_OR_RETURN(Computation * raw, ParseComputationBody(module, name, std::string(name.text)));
  *parsed = raw;

  // As in XLA, only the result is checked: XLA's parser reads the parameter
  // list and ignores it (its tests write `(arg_tuple.1: ())` over a body whose
  // parameter is an array, and `()` over a body with parameters), so the
  // body's parameter instructions are what count.
  if (signature_result.has_value()) {
    if (raw->root()->shape() != *signature_result) {
      return ErrorAt(
          signature_token,
          Cat("the root of '%", name.text, "' has shape ", raw->root()->shape().ToString(),
              " but the signature says ", signature_result->ToString()));
    }
  }

  // `, execution_thread="..."` after the body: sharc has one thread.
  if (TryConsume(TokenKind::kComma)) {
    if (!PeekKeyword("execution_thread")) return Expected("'execution_thread'");
    lexer_.Next();
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'execution_thread'"));
    RETURN_IF_ERROR(Expect(TokenKind::kString, "a string"));
  }
  return absl::OkStatus();
}

// Newer dumps end with the tables that metadata's stack_frame_id points
// into: `FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`, each a
// list of `ID "string"` or `ID {fields}` rows. They are debug information
// only (where each op came from in the user's program), so sharc reads and
// drops them, as it drops stack_frame_id.
namespace {
bool IsStackFrameTableName(const Token& t) {
  return t.kind == TokenKind::kName && !t.has_percent &&
         (t.text == "FileNames" || t.text == "FunctionNames" || t.text == "FileLocations" ||
          t.text == "StackFrames");
}
}  // namespace

bool HloParser::PeekStackFrameTable() {
  if (!IsStackFrameTableName(lexer_.Peek())) return false;
  // A computation may have one of these names; a table's next token is a
  // row id (or the next table, or the end).
  Lexer::State saved = lexer_.Save();
  lexer_.Next();
  const Token& next = lexer_.Peek();
  bool is_table = next.kind == TokenKind::kInt || next.kind == TokenKind::kEof ||
                  IsStackFrameTableName(next);
  lexer_.Restore(saved);
  return is_table;
}

absl::Status HloParser::SkipStackFrameTable() {
  lexer_.Next();  // the table's name
  while (lexer_.Peek().kind == TokenKind::kInt) {
    lexer_.Next();
    if (lexer_.Peek().kind == TokenKind::kString) {
      lexer_.Next();
    } else if (lexer_.Peek().kind == TokenKind::kLbrace) {
      RETURN_IF_ERROR(SkipBalanced().status());
    } else {
      return Expected("a string or '{' in a stack frame table row");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Computation*> HloParser::ParseInlineComputation() {
  // XLA names a computation written in place after its caller; any name no
  // computation uses will do.
  Token open = lexer_.Peek();
  std::string name;
  do {
    name = Cat("inline_computation.", ++inline_count_);
  } while (computations_.contains(name));
  return ParseComputationBody(module_, open, std::move(name));
}

absl::StatusOr<Computation*> HloParser::ParseComputationBody(Module* module, const Token& name_token,
                                                             std::string computation_name) {
  const Token& name = name_token;
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the computation body"));
  Scope scope;
  scope.computation_name = computation_name;
  // A computation written in place is parsed inside its caller's
  // attributes: what they have read so far waits for the caller.
  std::vector<Token> callers_predecessors = std::move(control_predecessors_);
  control_predecessors_.clear();
  std::optional<Token> callers_thread = std::move(pending_async_thread_);
  pending_async_thread_.reset();
  while (!TryConsume(TokenKind::kRbrace)) {
    RETURN_IF_ERROR(ParseInstruction(scope));
  }
  RETURN_IF_ERROR(CheckControlPredecessors(scope));
  control_predecessors_ = std::move(callers_predecessors);
  pending_async_thread_ = std::move(callers_thread);
  if (scope.instructions.empty()) {
    return ErrorAt(name, Cat("computation '%", computation_name, "' has no instructions"));
  }

  // Parameter numbers must be 0..n-1, each once.
  std::vector<size_t> params;
  for (size_t i = 0; i < scope.instructions.size(); ++i) {
    if (scope.instructions[i]->opcode() == Opcode::kParameter) params.push_back(i);
  }
  std::vector<Instruction*> by_number(params.size(), nullptr);
  for (size_t i : params) {
    Instruction* p = scope.instructions[i].get();
    int64_t n = p->parameter_number();
    if (n >= static_cast<int64_t>(params.size())) {
      return ErrorAt(scope.name_tokens[i], Cat("parameter number ", n, " of computation '%",
                                               computation_name, "' is out of range: it has ",
                                               params.size(), " parameters, numbered from 0"));
    }
    if (by_number[n] != nullptr) {
      return ErrorAt(scope.name_tokens[i],
                     Cat("parameter number ", n, " of computation '%", computation_name,
                         "' is already used by '%", by_number[n]->name(), "'"));
    }
    by_number[n] = p;
  }

  auto computation = std::make_unique<Computation>(computation_name);
  Instruction* last_instruction = scope.instructions.back().get();
  for (auto& inst : scope.instructions) computation->AddInstruction(std::move(inst));
  // Without a ROOT marker the last instruction is the root, as in XLA.
  computation->set_root(scope.root != nullptr ? scope.root : last_instruction);
  Computation* raw = module->AddComputation(std::move(computation));
  computations_.emplace(std::move(computation_name), raw);
  return raw;
}

absl::StatusOr<std::unique_ptr<Module>> HloParser::ParseModule() {
  auto module = std::make_unique<Module>("");
  module_ = module.get();
  const bool headerless = !PeekKeyword("HloModule") && PeekHeaderlessModule();
  if (!headerless) RETURN_IF_ERROR(ParseHeader(module.get()));
  if (lexer_.Peek().kind == TokenKind::kEof) return Expected("a computation");
  Computation* entry = nullptr;
  Computation* last = nullptr;
  while (lexer_.Peek().kind != TokenKind::kEof) {
    if (PeekStackFrameTable()) {
      RETURN_IF_ERROR(SkipStackFrameTable());
      continue;
    }
    Token start = lexer_.Peek();
    bool is_entry;
    RETURN_IF_ERROR(ParseComputation(module.get(), &is_entry, &last));
    if (is_entry) {
      if (entry != nullptr) {
        return ErrorAt(start,
                       Cat("second ENTRY computation (the first is '%", entry->name(), "')"));
      }
      entry = last;
    }
  }
  // Without an ENTRY marker the last computation is the entry, as in XLA.
  module->set_entry(entry != nullptr ? entry : last);
  RETURN_IF_ERROR(CheckBufferAliasing(*module));
  // XLA names a module without a header after its entry computation.
  if (headerless) module->set_name(Cat("module_", module->entry()->name()));
  return module;
}

absl::StatusOr<Shape> HloParser::ParseShapeOnly() {
  ASSIGN_OR_RETURN(Shape shape, ParseShape());
  RETURN_IF_ERROR(ExpectEnd());
  return shape;
}

absl::StatusOr<IntListList> HloParser::ParseReplicaGroupsOnly() {
  ASSIGN_OR_RETURN(IntListList groups, ParseReplicaGroupsValue());
  RETURN_IF_ERROR(ExpectEnd());
  return groups;
}

}  // namespace text_internal

namespace {

absl::Status CheckInputSize(std::string_view text, const ParseOptions& options) {
  if (static_cast<int64_t>(text.size()) > options.max_input_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(options.filename, ":1:1: error: input is ",
                                                   text.size(), " bytes, more than the limit of ",
                                                   options.max_input_bytes, " bytes"));
  }
  return absl::OkStatus();
}

// Parses one fragment of HLO text (a sharding, a shape, replica groups) with
// `parse`, a HloParser::Parse*Only method; errors name `what` as the file.
template <typename T>
absl::StatusOr<T> ParseFragment(std::string_view text, const char* what,
                                absl::StatusOr<T> (text_internal::HloParser::*parse)()) {
  ParseOptions options;
  options.filename = what;
  RETURN_IF_ERROR(CheckInputSize(text, options));
  text_internal::HloParser parser(text, options);
  return (parser.*parse)();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options) {
  RETURN_IF_ERROR(CheckInputSize(text, options));
  text_internal::HloParser parser(text, options);
  return parser.ParseModule();
}

absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(std::string_view text,
                                                             const ParseOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(text, options));
  RETURN_IF_ERROR(VerifyModule(*module));
  return module;
}

absl::StatusOr<Sharding> ParseSharding(std::string_view text) {
  return ParseFragment(text, "<sharding>", &text_internal::HloParser::ParseShardingOnly);
}

absl::StatusOr<IntListList> ParseReplicaGroups(std::string_view text) {
  return ParseFragment(text, "<replica groups>", &text_internal::HloParser::ParseReplicaGroupsOnly);
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  return ParseFragment(text, "<shape>", &text_internal::HloParser::ParseShapeOnly);
}

}  // namespace sharc::hlo

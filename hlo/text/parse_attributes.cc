// HloParser: instruction attributes. Op-specific attributes are parsed
// generically from the op's schema (AttrSpec kind); a handful of generic
// attributes are valid on every op; everything else is an error naming the
// attribute and the op.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/shard_map_attrs.h"
#include "hlo/text/parser_impl.h"

namespace sharc::hlo::text_internal {
namespace {

// Attributes XLA prints that sharc accepts on any op and drops: scheduling,
// layout and precision hints that do not change a value.
constexpr std::string_view kDroppedAttributes[] = {
    "statistics",
    "parameter_replication",
    "original_value",
    "operand_precision",
    "precision_config",
    "algorithm",
    "constrain_layout",
    "channel_id",
    "output_to_operand_aliasing",
    "custom_call_schedule",
    "api_version",
    "sharding_rule",
    "inferred_dimension",
    "schedule",
    // A composite call (`is_composite=true`) still means "call to_apply";
    // the flag only lets XLA keep the decomposition visible.
    "is_composite",
    // Where a value came from in the user's program (debug information).
    "origin",
};

// Splits "a<sep>b<sep>c" into integers; false on any malformed piece.
bool SplitInts(absl::string_view text, char sep, std::vector<int64_t>* out) {
  out->clear();
  for (absl::string_view piece : absl::StrSplit(text, sep)) {
    int64_t v;
    if (piece.empty() || !absl::SimpleAtoi(piece, &v)) return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

absl::StatusOr<Computation*> HloParser::ParseComputationRef() {
  if (lexer_.Peek().kind == TokenKind::kLbrace && module_ != nullptr) {
    return ParseInlineComputation();
  }
  if (lexer_.Peek().kind != TokenKind::kName) return Expected("a computation name");
  Token t = lexer_.Next();
  auto it = computations_.find(ToAbsl(t.text));
  if (it == computations_.end()) {
    return ErrorAt(t, Cat("use of undefined computation '%", t.text,
                          "' (a computation must be defined before it is called)"));
  }
  return it->second;
}

absl::StatusOr<IntListList> HloParser::ParseIntListListValue(std::string_view what) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, Cat("'{' to start ", what)));
  IntListList lists;
  if (TryConsume(TokenKind::kRbrace)) return lists;
  do {
    ASSIGN_OR_RETURN(std::vector<int64_t> list, ParseIntList(TokenKind::kLbrace, what));
    lists.push_back(std::move(list));
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, Cat("'}' or ',' in ", what)));
  return lists;
}

absl::StatusOr<IntListList> HloParser::ParseReplicaGroupsValue() {
  if (lexer_.Peek().kind != TokenKind::kLsquare) return ParseIntListListValue("replica groups");
  // Iota form: [G,S]<=[dims]T(perm) -- G groups of S devices.
  Token at = lexer_.Peek();
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   ParseIntList(TokenKind::kLsquare, "the replica group dimensions"));
  if (dims.size() != 2) {
    return ErrorAt(at, "iota replica groups need two dimensions: [groups,group_size]");
  }
  std::vector<int64_t> reshape, perm;
  RETURN_IF_ERROR(ParseIotaForm(dims, &reshape, &perm));
  std::vector<int64_t> devices = TileAssignment::Iota(dims, reshape, perm).devices();
  IntListList groups(static_cast<size_t>(dims[0]));
  for (int64_t g = 0; g < dims[0]; ++g) {
    groups[g].assign(devices.begin() + g * dims[1], devices.begin() + (g + 1) * dims[1]);
  }
  return groups;
}

absl::StatusOr<IntListList> HloParser::ParseSliceValue() {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a slice"));
  IntListList dims;
  if (TryConsume(TokenKind::kRbrace)) return dims;
  do {
    RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' to start a slice dimension"));
    ASSIGN_OR_RETURN(int64_t start, ParseInt64("the slice start"));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the slice start"));
    ASSIGN_OR_RETURN(int64_t limit, ParseInt64("the slice limit"));
    int64_t stride = 1;
    if (TryConsume(TokenKind::kColon)) {
      ASSIGN_OR_RETURN(stride, ParseInt64("the slice stride"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' to end a slice dimension"));
    dims.push_back({start, limit, stride});
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in the slice"));
  return dims;
}

absl::StatusOr<IntListList> HloParser::ParsePaddingValue() {
  IntListList dims;
  const Token& t = lexer_.Peek();
  // A rank-0 pad prints an empty padding; anything that is not a number
  // ends the (empty) value.
  if (t.kind != TokenKind::kWord && t.kind != TokenKind::kInt) return dims;
  Token token = lexer_.Next();
  std::vector<int64_t> parts;
  for (absl::string_view dim : absl::StrSplit(ToAbsl(token.text), 'x')) {
    if (!SplitInts(dim, '_', &parts) || parts.size() < 2 || parts.size() > 3) {
      return ErrorAt(token, Cat("invalid padding '", token.text,
                                "': expected low_high[_interior] per dimension, "
                                "joined by 'x' (e.g. 1_2_0x0_0)"));
    }
    dims.push_back({parts[0], parts[1], parts.size() == 3 ? parts[2] : 0});
  }
  return dims;
}

absl::StatusOr<IntListList> HloParser::ParseWindowValue() {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a window"));
  // Field index in the per-dim {size, stride, pad_lo, pad_hi, lhs, rhs}.
  std::vector<std::vector<int64_t>> fields(6);
  std::vector<bool> given(7, false);  // [6]: rhs_reversal
  std::vector<int64_t> reversal;
  Token first = lexer_.Peek();
  while (!TryConsume(TokenKind::kRbrace)) {
    ASSIGN_OR_RETURN(Token key, ExpectName("a window field (size, stride, pad, lhs_dilate, "
                                           "rhs_dilate) or '}'"));
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", key.text, "'")));
    const Token& v = lexer_.Peek();
    if (v.kind != TokenKind::kWord && v.kind != TokenKind::kInt) {
      return Expected(Cat("a value for window field '", key.text, "'"));
    }
    Token value = lexer_.Next();
    int index;
    if (key.text == "size") {
      index = 0;
    } else if (key.text == "stride") {
      index = 1;
    } else if (key.text == "pad") {
      index = 2;
    } else if (key.text == "lhs_dilate") {
      index = 4;
    } else if (key.text == "rhs_dilate") {
      index = 5;
    } else if (key.text == "rhs_reversal") {
      // Kept as a seventh field per dim only when some dim is reversed, so
      // ops without reversal (reduce-window) keep their six fields.
      if (given[6]) return ErrorAt(key, "window field 'rhs_reversal' twice");
      if (!SplitInts(ToAbsl(value.text), 'x', &reversal) ||
          std::any_of(reversal.begin(), reversal.end(),
                      [](int64_t f) { return f != 0 && f != 1; })) {
        return ErrorAt(value, Cat("invalid window rhs_reversal '", value.text,
                                  "': expected 0 or 1 per dimension, joined by 'x'"));
      }
      given[6] = true;
      continue;
    } else {
      return ErrorAt(key, Cat("unknown window field '", key.text, "'"));
    }
    if (given[index]) return ErrorAt(key, Cat("window field '", key.text, "' twice"));
    given[index] = true;
    if (index == 2) {
      std::vector<int64_t> lo_hi;
      for (absl::string_view dim : absl::StrSplit(ToAbsl(value.text), 'x')) {
        if (!SplitInts(dim, '_', &lo_hi) || lo_hi.size() != 2) {
          return ErrorAt(value, Cat("invalid window padding '", value.text,
                                    "': expected low_high per dimension, joined by 'x'"));
        }
        fields[2].push_back(lo_hi[0]);
        fields[3].push_back(lo_hi[1]);
      }
      given[3] = true;
    } else if (!SplitInts(ToAbsl(value.text), 'x', &fields[index])) {
      return ErrorAt(value, Cat("invalid window ", key.text, " '", value.text,
                                "': expected integers joined by 'x'"));
    }
  }
  IntListList dims;
  if (!given[0]) {
    if (std::find(given.begin(), given.end(), true) != given.end()) {
      return ErrorAt(first, "window needs 'size='");
    }
    return dims;
  }
  const size_t rank = fields[0].size();
  const bool reversed = std::any_of(reversal.begin(), reversal.end(), [](int64_t f) { return f; });
  if (given[6] && reversal.size() != rank) {
    return ErrorAt(first, Cat("window fields disagree on the number of dimensions: size has ",
                              rank, ", rhs_reversal has ", reversal.size()));
  }
  const int64_t defaults[6] = {1, 1, 0, 0, 1, 1};
  for (int k = 1; k < 6; ++k) {
    if (!given[k]) {
      fields[k].assign(rank, defaults[k]);
    } else if (fields[k].size() != rank) {
      return ErrorAt(first, Cat("window fields disagree on the number of dimensions: ", "size has ",
                                rank, ", another field has ", fields[k].size()));
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    dims.push_back(
        {fields[0][d], fields[1][d], fields[2][d], fields[3][d], fields[4][d], fields[5][d]});
    if (reversed) dims.back().push_back(reversal[d]);
  }
  return dims;
}

// A literal written with its shape, `s32[2] {1, 2}`, or a tuple of them,
// `( s32[1] {4}, pred[] 1 )` (custom-call's literal=), as canonical text.
absl::StatusOr<std::string> HloParser::ParseTypedLiteralText() {
  if (TryConsume(TokenKind::kLparen)) {
    std::vector<std::string> elements;
    if (!TryConsume(TokenKind::kRparen)) {
      do {
        ASSIGN_OR_RETURN(std::string element, ParseTypedLiteralText());
        elements.push_back(std::move(element));
      } while (TryConsume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' or ',' in a tuple literal"));
    }
    return Cat("(", absl::StrJoin(elements, ", "), ")");
  }
  ASSIGN_OR_RETURN(Shape shape, ParseShape());
  if (!shape.is_array()) return Expected("an array literal's shape");
  ASSIGN_OR_RETURN(Literal literal, ParseLiteral(shape));
  return Cat(shape.ToString(), " ", literal.ValuesToString());
}

absl::StatusOr<AttrValue> HloParser::ParseAttrValue(const AttrSpec& spec, const Token& name) {
  switch (spec.kind) {
    case AttrKind::kInt: {
      ASSIGN_OR_RETURN(int64_t v, ParseInt64(Cat("an integer for '", spec.name, "'")));
      return AttrValue(v);
    }
    case AttrKind::kIntList: {
      ASSIGN_OR_RETURN(std::vector<int64_t> v,
                       ParseIntList(TokenKind::kLbrace, Cat("'", spec.name, "'")));
      return AttrValue(std::move(v));
    }
    case AttrKind::kBool: {
      ASSIGN_OR_RETURN(bool v, ParseBool());
      return AttrValue(v);
    }
    case AttrKind::kString: {
      // XLA writes some backend configs as a JSON object rather than a
      // string; it is kept verbatim.
      if (spec.name == "backend_config" && lexer_.Peek().kind == TokenKind::kLbrace) {
        ASSIGN_OR_RETURN(std::string_view json, SkipBalanced());
        return AttrValue(std::string(json));
      }
      if (lexer_.Peek().kind != TokenKind::kString) {
        return Expected(Cat("a string for '", spec.name, "'"));
      }
      Token t = lexer_.Next();
      std::string value, error;
      if (!absl::CUnescape(ToAbsl(t.text), &value, &error)) {
        return ErrorAt(t, Cat("invalid escape in string: ", error));
      }
      return AttrValue(std::move(value));
    }
    case AttrKind::kEnum: {
      // A number or a braced value is kept as written too (batch-norm's
      // epsilon=0.001, domain's domain={kind="sharding", ...}): the op's
      // verifier reads it.
      if (lexer_.Peek().kind == TokenKind::kFloat || lexer_.Peek().kind == TokenKind::kInt) {
        return AttrValue(std::string(lexer_.Next().text));
      }
      if (lexer_.Peek().kind == TokenKind::kLbrace) {
        ASSIGN_OR_RETURN(std::string_view braced, SkipBalanced());
        return AttrValue(std::string(braced));
      }
      if (lexer_.Peek().kind != TokenKind::kName || lexer_.Peek().has_percent) {
        return Expected(Cat("a value for '", spec.name, "'"));
      }
      return AttrValue(std::string(lexer_.Next().text));
    }
    case AttrKind::kSlice: {
      ASSIGN_OR_RETURN(IntListList v, ParseSliceValue());
      return AttrValue(std::move(v));
    }
    case AttrKind::kPadding: {
      ASSIGN_OR_RETURN(IntListList v, ParsePaddingValue());
      return AttrValue(std::move(v));
    }
    case AttrKind::kWindow: {
      ASSIGN_OR_RETURN(IntListList v, ParseWindowValue());
      return AttrValue(std::move(v));
    }
    case AttrKind::kReplicaGroups: {
      ASSIGN_OR_RETURN(IntListList v, ParseReplicaGroupsValue());
      return AttrValue(std::move(v));
    }
    case AttrKind::kPairs: {
      Token at = lexer_.Peek();
      ASSIGN_OR_RETURN(IntListList v, ParseIntListListValue(Cat("'", spec.name, "'")));
      for (const auto& pair : v) {
        if (pair.size() != 2) {
          return ErrorAt(at, Cat("'", spec.name, "' needs pairs {a,b}; found {",
                                 absl::StrJoin(pair, ","), "}"));
        }
      }
      return AttrValue(std::move(v));
    }
    case AttrKind::kComputation: {
      ASSIGN_OR_RETURN(Computation * c, ParseComputationRef());
      return AttrValue(c);
    }
    case AttrKind::kComputationList: {
      RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a computation list"));
      std::vector<Computation*> list;
      if (!TryConsume(TokenKind::kRbrace)) {
        do {
          ASSIGN_OR_RETURN(Computation * c, ParseComputationRef());
          list.push_back(c);
        } while (TryConsume(TokenKind::kComma));
        RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in the computation list"));
      }
      return AttrValue(std::move(list));
    }
    case AttrKind::kShape: {
      ASSIGN_OR_RETURN(Shape shape, ParseShape());
      return AttrValue(shape.ToString());
    }
    case AttrKind::kDimLabels: {
      // `b01f_01io->b01f` lexes as a name (or a word when it starts with a
      // digit), an arrow and another; the text is kept and the labels are
      // checked by the op (hlo/ops/convolution_dims.h), which owns them.
      auto is_part = [&] {
        TokenKind k = lexer_.Peek().kind;
        return (k == TokenKind::kName && !lexer_.Peek().has_percent) || k == TokenKind::kWord ||
               k == TokenKind::kInt;
      };
      if (!is_part()) return Expected(Cat("dimension labels for '", spec.name, "'"));
      std::string operands(lexer_.Next().text);
      RETURN_IF_ERROR(Expect(TokenKind::kArrow, Cat("'->' in '", spec.name, "'")));
      if (!is_part()) return Expected(Cat("the output dimension labels of '", spec.name, "'"));
      return AttrValue(Cat(operands, "->", lexer_.Next().text));
    }
    case AttrKind::kLiteral: {
      ASSIGN_OR_RETURN(std::string text, ParseTypedLiteralText());
      return AttrValue(std::move(text));
    }
    case AttrKind::kMesh:
    case AttrKind::kPartitionSpecs:
    case AttrKind::kAxisNames: {
      // Read as balanced text, then parsed and stored canonically by
      // hlo/ops/shard_map_attrs.h, which owns these small grammars.
      Token at = lexer_.Peek();
      if (at.kind != TokenKind::kLbrace) return Expected(Cat("'{' to start '", spec.name, "'"));
      ASSIGN_OR_RETURN(std::string_view text, SkipBalanced());
      std::string_view inner = text.substr(1, text.size() - 2);
      absl::StatusOr<std::string> canonical;
      if (spec.kind == AttrKind::kMesh) {
        absl::StatusOr<std::vector<MeshAxis>> mesh = ParseMeshText(inner);
        canonical = mesh.ok() ? absl::StatusOr<std::string>(PrintMeshText(*mesh)) : mesh.status();
      } else if (spec.kind == AttrKind::kPartitionSpecs) {
        absl::StatusOr<std::vector<AxisSpec>> specs = ParseSpecsText(inner);
        canonical =
            specs.ok() ? absl::StatusOr<std::string>(PrintSpecsText(*specs)) : specs.status();
      } else {
        absl::StatusOr<std::vector<std::string>> axes = ParseAxesText(inner);
        canonical = axes.ok() ? absl::StatusOr<std::string>(PrintAxesText(*axes)) : axes.status();
      }
      if (!canonical.ok()) {
        return ErrorAt(at, Cat("invalid '", spec.name, "': ", canonical.status().message()));
      }
      return AttrValue(*std::move(canonical));
    }
  }
  return ErrorAt(name, "unsupported attribute kind");
}

absl::Status HloParser::ParseMetadata(OpMetadata* metadata) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start metadata"));
  auto string_value = [&](std::string* out) -> absl::Status {
    if (lexer_.Peek().kind != TokenKind::kString) return Expected("a string");
    Token t = lexer_.Next();
    std::string error;
    if (!absl::CUnescape(ToAbsl(t.text), out, &error)) {
      return ErrorAt(t, Cat("invalid escape in string: ", error));
    }
    return absl::OkStatus();
  };
  while (!TryConsume(TokenKind::kRbrace)) {
    if (TryConsume(TokenKind::kComma)) continue;
    ASSIGN_OR_RETURN(Token key, ExpectName("a metadata field or '}'"));
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", key.text, "'")));
    if (key.text == "op_type") {
      RETURN_IF_ERROR(string_value(&metadata->op_type));
    } else if (key.text == "op_name") {
      RETURN_IF_ERROR(string_value(&metadata->op_name));
    } else if (key.text == "source_file") {
      RETURN_IF_ERROR(string_value(&metadata->source_file));
    } else if (key.text == "source_line") {
      ASSIGN_OR_RETURN(metadata->source_line, ParseInt64("a line number"));
    } else {
      // Other fields (stack_frame_id, origin, profile info...) are debug
      // information sharc does not keep.
      RETURN_IF_ERROR(SkipAttributeValue());
    }
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseGenericAttribute(const Token& name, Instruction* inst, bool* handled) {
  *handled = true;
  std::string_view n = name.text;
  if (n == "sharding") {
    ASSIGN_OR_RETURN(Sharding sharding, ParseSharding());
    inst->set_sharding(std::move(sharding));
    return absl::OkStatus();
  }
  if (n == "metadata") return ParseMetadata(&inst->mutable_metadata());
  if (n == "frontend_attributes") {
    if (lexer_.Peek().kind != TokenKind::kLbrace) return Expected("'{'");
    ASSIGN_OR_RETURN(std::string_view text, SkipBalanced());
    inst->set_frontend_attributes(std::string(text));
    return absl::OkStatus();
  }
  if (n == "backend_config") {
    if (lexer_.Peek().kind == TokenKind::kString) {
      Token t = lexer_.Next();
      std::string value, error;
      if (!absl::CUnescape(ToAbsl(t.text), &value, &error)) {
        return ErrorAt(t, Cat("invalid escape in string: ", error));
      }
      inst->set_backend_config(std::move(value));
      return absl::OkStatus();
    }
    if (lexer_.Peek().kind != TokenKind::kLbrace) return Expected("a string or '{'");
    ASSIGN_OR_RETURN(std::string_view text, SkipBalanced());
    inst->set_backend_config(std::string(text));
    return absl::OkStatus();
  }
  // Dropped too, once checked as XLA checks them (parse_checked_hints.cc).
  if (n == "result_accuracy") return ParseResultAccuracy(name, *inst);
  if (n == "operand_layout_constraints") return ParseOperandLayoutConstraints(name, *inst);
  if (n == "control-predecessors") return ParseControlPredecessors();
  // Which thread an async op runs on, as written on XLA's async sugar
  // (`custom-call-start(...), async_execution_thread="t"`).
  if (n == "async_execution_thread") return ParseAsyncExecutionThread();
  for (std::string_view dropped : kDroppedAttributes) {
    if (n == dropped) return SkipAttributeValue();
  }
  *handled = false;
  return absl::OkStatus();
}

absl::Status HloParser::ParseInstructionAttributes(const Token& opcode_token, Instruction* inst,
                                                   bool written) {
  const OpDef& def = GetOpDef(inst->opcode());
  std::string_view op_name = OpcodeName(inst->opcode());
  std::vector<std::pair<const AttrSpec*, AttrValue>> values;
  absl::flat_hash_set<std::string_view> seen;
  while (written && TryConsume(TokenKind::kComma)) {
    const Token& peek = lexer_.Peek();
    if (peek.kind != TokenKind::kName || peek.has_percent) return Expected("an attribute name");
    Token name = lexer_.Next();
    if (!seen.insert(name.text).second) {
      return ErrorAt(name, Cat("duplicate attribute '", name.text, "'"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, Cat("'=' after '", name.text, "'")));
    // Checked against the async chain once the instruction is complete.
    if (name.text == "async_execution_thread") pending_async_thread_ = lexer_.Peek();
    if (const AttrSpec* spec = FindAttrSpec(def, name.text)) {
      ASSIGN_OR_RETURN(AttrValue value, ParseAttrValue(*spec, name));
      values.emplace_back(spec, std::move(value));
      continue;
    }
    bool handled;
    RETURN_IF_ERROR(ParseGenericAttribute(name, inst, &handled));
    if (!handled) {
      std::string message = Cat("unknown attribute '", name.text, "' for op '", op_name, "'");
      std::vector<std::string_view> candidates;
      for (const AttrSpec& spec : def.attributes) candidates.push_back(spec.name);
      std::string_view suggestion = ClosestName(name.text, candidates);
      if (!suggestion.empty()) Append(&message, "; did you mean '", suggestion, "'?");
      return ErrorAt(name, message);
    }
  }
  for (const AttrSpec& spec : def.attributes) {
    if (spec.required && !seen.contains(spec.name)) {
      return ErrorAt(opcode_token,
                     Cat("missing required attribute '", spec.name, "' for op '", op_name, "'"));
    }
  }
  // Stored in schema order so that the instruction does not depend on how
  // the text ordered its attributes.
  for (const AttrSpec& spec : def.attributes) {
    for (auto& [s, value] : values) {
      if (s == &spec) inst->set_attr(std::string(spec.name), std::move(value));
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo::text_internal

// HloParser: the header's buffer aliasing, `input_output_alias` and
// `buffer_donor` (hlo/ir/buffer_aliasing.h), read into the module config and
// checked against the entry computation once it is parsed:
//
//   HloModule m, input_output_alias={ {0}: (0, {1}, may-alias) },
//                buffer_donor={ (0, {0}) }
//   -> config.input_output_alias = {{output {0}, parameter 0 at {1}}}
//      config.buffer_donors = {{parameter 0 at {0}}}
//   an output or parameter index the entry does not have is an error at
//   the entry that names it.
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/text/parser_impl.h"

namespace sharc::hlo::text_internal {
namespace {

std::string IndexText(const ShapeIndexPath& index) {
  return Cat("{", absl::StrJoin(index, ", "), "}");
}

// The sub-shape of `shape` at `index`, or nullptr if there is none.
const Shape* SubshapeAt(const Shape& shape, const ShapeIndexPath& index) {
  const Shape* current = &shape;
  for (int64_t i : index) {
    if (!current->is_tuple() || i < 0 || i >= current->tuple_size()) return nullptr;
    current = &current->tuple_shape(i);
  }
  return current;
}

const Instruction* EntryParameter(const Computation& entry, int64_t number) {
  for (const Instruction* p : entry.parameters()) {
    if (p->parameter_number() == number) return p;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<ShapeIndexPath> HloParser::ParseShapeIndexPath(std::string_view what) {
  return ParseIntList(TokenKind::kLbrace, what);
}

absl::Status HloParser::ParseInputOutputAlias(ModuleConfig* config) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start 'input_output_alias'"));
  if (TryConsume(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    Token at = lexer_.Peek();
    InputOutputAlias alias;
    ASSIGN_OR_RETURN(alias.output_index, ParseShapeIndexPath("an output shape index"));
    RETURN_IF_ERROR(Expect(TokenKind::kColon,
                           "':' after the output index (an alias is "
                           "`{output_index}: (parameter, {parameter_index}[, must-alias])`)"));
    RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start the aliased parameter"));
    ASSIGN_OR_RETURN(alias.parameter_number, ParseInt64("a parameter number"));
    RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the parameter number"));
    ASSIGN_OR_RETURN(alias.parameter_index, ParseShapeIndexPath("a parameter shape index"));
    if (TryConsume(TokenKind::kComma)) {
      if (PeekKeyword("must-alias")) {
        alias.must_alias = true;
      } else if (!PeekKeyword("may-alias")) {
        return Expected("'must-alias' or 'may-alias'");
      }
      lexer_.Next();
    }
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' to end the aliased parameter"));
    config->input_output_alias.push_back(std::move(alias));
    alias_tokens_.push_back(at);
  } while (TryConsume(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "'}' or ',' in 'input_output_alias'");
}

absl::Status HloParser::ParseBufferDonors(ModuleConfig* config) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start 'buffer_donor'"));
  if (TryConsume(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    Token at = lexer_.Peek();
    BufferDonor donor;
    RETURN_IF_ERROR(Expect(TokenKind::kLparen,
                           "'(' to start a donor (`(parameter, {parameter_index})`)"));
    ASSIGN_OR_RETURN(donor.parameter_number, ParseInt64("a parameter number"));
    RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the parameter number"));
    ASSIGN_OR_RETURN(donor.parameter_index, ParseShapeIndexPath("a parameter shape index"));
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' to end the donor"));
    config->buffer_donors.push_back(std::move(donor));
    donor_tokens_.push_back(at);
  } while (TryConsume(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "'}' or ',' in 'buffer_donor'");
}

absl::Status HloParser::CheckParameterIndex(const Token& at, std::string_view attribute,
                                            const Computation& entry, int64_t number,
                                            const ShapeIndexPath& index) const {
  const Instruction* parameter = EntryParameter(entry, number);
  if (parameter == nullptr) {
    return ErrorAt(at, Cat(attribute, " names parameter ", number,
                           ", but the entry computation '%", entry.name(), "' has ",
                           entry.num_parameters(), " parameters"));
  }
  if (SubshapeAt(parameter->shape(), index) == nullptr) {
    return ErrorAt(at, Cat(attribute, ": parameter ", number, " ('%", parameter->name(),
                           "', ", parameter->shape().ToString(), ") has no element at index ",
                           IndexText(index)));
  }
  return absl::OkStatus();
}

absl::Status HloParser::CheckBufferAliasing(const Module& module) const {
  const ModuleConfig& config = module.config();
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::OkStatus();
  const Shape& result = entry->root()->shape();
  for (size_t i = 0; i < config.input_output_alias.size(); ++i) {
    const InputOutputAlias& alias = config.input_output_alias[i];
    const Token& at = alias_tokens_[i];
    if (SubshapeAt(result, alias.output_index) == nullptr) {
      return ErrorAt(at, Cat("input_output_alias: the entry's result (", result.ToString(),
                             ") has no element at output index ", IndexText(alias.output_index)));
    }
    for (size_t j = 0; j < i; ++j) {
      if (config.input_output_alias[j].output_index == alias.output_index) {
        return ErrorAt(at, Cat("input_output_alias: output index ", IndexText(alias.output_index),
                               " is already aliased (at ", alias_tokens_[j].line, ":",
                               alias_tokens_[j].column, ")"));
      }
    }
    RETURN_IF_ERROR(CheckParameterIndex(at, "input_output_alias", *entry, alias.parameter_number,
                                        alias.parameter_index));
    // As XLA's verifier: an output reuses an input's buffer only if both
    // are arrays of the same byte size, and each input buffer serves one
    // output.
    const Shape& output = *SubshapeAt(result, alias.output_index);
    const Shape& input =
        *SubshapeAt(EntryParameter(*entry, alias.parameter_number)->shape(), alias.parameter_index);
    auto bytes = [](const Shape& s) { return ByteWidth(s.type()) * s.num_elements(); };
    if (!output.is_array() || !input.is_array() || bytes(output) != bytes(input)) {
      return ErrorAt(at, Cat("input_output_alias: output ", IndexText(alias.output_index), " (",
                             output.ToString(), ") and parameter ", alias.parameter_number,
                             " at ", IndexText(alias.parameter_index), " (", input.ToString(),
                             ") are not arrays of the same size"));
    }
    for (size_t j = 0; j < i; ++j) {
      const InputOutputAlias& other = config.input_output_alias[j];
      if (other.parameter_number == alias.parameter_number &&
          other.parameter_index == alias.parameter_index) {
        return ErrorAt(at, Cat("input_output_alias: parameter ", alias.parameter_number, " at ",
                               IndexText(alias.parameter_index), " is already aliased (at ",
                               alias_tokens_[j].line, ":", alias_tokens_[j].column, ")"));
      }
    }
  }
  for (size_t i = 0; i < config.buffer_donors.size(); ++i) {
    const BufferDonor& donor = config.buffer_donors[i];
    RETURN_IF_ERROR(CheckParameterIndex(donor_tokens_[i], "buffer_donor", *entry,
                                        donor.parameter_number, donor.parameter_index));
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo::text_internal

// The builder's escape hatch: any op from one line of HLO text. The line is
// parsed and verified by the ordinary parser and verifier inside a context
// module that declares the builder's values (as placeholder custom-calls of
// the same names and shapes) and its computations; the parsed instruction is
// then grafted onto the builder. Messages are rewritten so that they point
// into the caller's line: "<instruction>:1:COL".
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "frontend/c_api/builder.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/runnable_types.h"
#include "hlo/verifier/verifier.h"

namespace sharc::c_api {
namespace {

using hlo::Instruction;

constexpr char kLineName[] = "<instruction>";

struct ContextText {
  std::string text;
  int line_of_instruction = 0;  // 1-based line of the caller's text
};

ContextText BuildContext(sharc_builder& builder, std::string_view line) {
  // Callees first, as the text format wants them.
  builder.module->SortCalleesFirst();
  ContextText context;
  std::string& text = context.text;
  text = "HloModule sharc_builder_context\n\n";
  for (const hlo::Computation* computation : builder.module->computations()) {
    if (computation == builder.module->entry()) continue;
    absl::StrAppend(&text, hlo::PrintComputation(*computation, /*is_entry=*/false), "\n\n");
  }
  text += "ENTRY %sharc.builder.context {\n";
  for (const Instruction* value : builder.module->entry()->instructions()) {
    absl::StrAppend(&text, "%", value->name(), " = ", value->shape().ToString(),
                    " custom-call(), custom_call_target=\"sharc.builder.value\"\n");
  }
  context.line_of_instruction =
      static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  absl::StrAppend(&text, absl::string_view(line.data(), line.size()), "\n}\n");
  return context;
}

// "<instruction>:L:" becomes "<instruction>:1:"; an error past the end of
// the caller's line (the parser met the closing brace) points just after it.
absl::Status PointIntoLine(const absl::Status& status, const ContextText& context,
                           std::string_view line, const char* function) {
  std::string message(status.message());
  const std::string at_line = absl::StrCat(kLineName, ":", context.line_of_instruction, ":");
  const std::string past_line = absl::StrCat(kLineName, ":", context.line_of_instruction + 1, ":");
  if (absl::StartsWith(message, past_line)) {
    size_t error_start = message.find(": error: ");
    size_t first_line_end = message.find('\n');
    std::string what = message.substr(error_start + 9, first_line_end == std::string::npos
                                                           ? std::string::npos
                                                           : first_line_end - error_start - 9);
    message = absl::StrCat(kLineName, ":1:", line.size() + 1, ": error: ", what, "\n",
                           absl::string_view(line.data(), line.size()), "\n",
                           std::string(line.size(), ' '), "^");
  } else {
    message = absl::StrReplaceAll(message, {{at_line, absl::StrCat(kLineName, ":1:")}});
  }
  return absl::Status(status.code(), absl::StrCat(function, ": ", message));
}

// A copy of `parsed` for the builder's entry: operands and called
// computations found again by name.
absl::StatusOr<std::unique_ptr<Instruction>> Graft(const Instruction& parsed,
                                                   sharc_builder& builder) {
  std::unique_ptr<Instruction> copy;
  if (parsed.opcode() == hlo::Opcode::kConstant) {
    copy = Instruction::CreateConstant(parsed.name(), parsed.literal());
  } else {
    std::vector<Instruction*> operands;
    for (const Instruction* operand : parsed.operands()) {
      operands.push_back(builder.module->entry()->FindInstruction(operand->name()));
    }
    copy = Instruction::Create(parsed.opcode(), parsed.name(), parsed.shape(),
                               std::move(operands));
  }
  for (const hlo::Attribute& attribute : parsed.attributes()) {
    hlo::AttrValue value = attribute.value;
    if (auto* callee = std::get_if<hlo::Computation*>(&value)) {
      *callee = builder.module->FindComputation((*callee)->name());
    } else if (auto* callees = std::get_if<std::vector<hlo::Computation*>>(&value)) {
      for (hlo::Computation*& c : *callees) c = builder.module->FindComputation(c->name());
    }
    copy->set_attr(attribute.name, std::move(value));
  }
  if (parsed.sharding()) copy->set_sharding(*parsed.sharding());
  copy->set_variance(parsed.variance());
  copy->mutable_metadata() = parsed.metadata();
  copy->set_frontend_attributes(parsed.frontend_attributes());
  copy->set_backend_config(parsed.backend_config());
  return copy;
}

absl::StatusOr<sharc_value> AddInstructionFromText(sharc_builder& builder, std::string_view line,
                                                   const char* function) {
  if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(function, ": give one instruction on one line (the text has a line break)"));
  }
  const ContextText context = BuildContext(builder, line);
  hlo::ParseOptions options;
  options.filename = kLineName;
  absl::StatusOr<std::unique_ptr<hlo::Module>> parsed = hlo::ParseModule(context.text, options);
  if (!parsed.ok()) return PointIntoLine(parsed.status(), context, line, function);
  hlo::Computation* entry = (*parsed)->entry();
  const Instruction& instruction = *entry->root();
  if (instruction.opcode() == hlo::Opcode::kParameter) {
    return absl::InvalidArgumentError(absl::StrCat(
        function, ": parameters are added with sharc_builder_parameter, not as text"));
  }
  hlo::VerifyOptions verify_options;
  verify_options.check_sharding_devices = false;  // the device count comes later
  absl::Status verified = hlo::VerifyModule(**parsed, verify_options);
  // The built module will be run: no values of types sharc cannot compute with.
  if (verified.ok()) verified = hlo::CheckRunnableTypes(**parsed);
  if (!verified.ok()) return PointIntoLine(verified, context, line, function);
  ASSIGN_OR_RETURN(std::unique_ptr<Instruction> copy, Graft(instruction, builder));
  return AddToEntry(builder, std::move(copy), function);
}

}  // namespace
}  // namespace sharc::c_api

extern "C" {

sharc_error* sharc_builder_instruction(sharc_builder* builder, const char* hlo_line,
                                       sharc_value* out) {
  return sharc::c_api::Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(sharc::c_api::CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(sharc::c_api::CheckNotNull(hlo_line, function, "hlo_line"));
    RETURN_IF_ERROR(sharc::c_api::CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(*out, sharc::c_api::AddInstructionFromText(*builder, hlo_line, function));
    return absl::OkStatus();
  });
}

}  // extern "C"

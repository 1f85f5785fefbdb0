// The module builder: an entry computation grown one checked op at a time,
// finished into a verified module.
#include "frontend/c_api/builder.h"

#include "frontend/c_api/arrays.h"
#include "driver/sharding_text.h"
#include "hlo/ir/scalar_reducer.h"
#include "hlo/ops/op_def.h"
#include "hlo/verifier/verifier.h"

namespace sharc::c_api {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

absl::StatusOr<Instruction*> BuilderValue(const sharc_builder& builder, sharc_value value,
                                          const char* function, const char* argument) {
  if (value < 0 || value >= static_cast<sharc_value>(builder.values.size())) {
    return absl::OutOfRangeError(absl::StrCat(function, ": ", argument, " (value ", value,
                                              ") is not a value of this builder, which has ",
                                              builder.values.size(), " value(s)"));
  }
  return builder.values[static_cast<size_t>(value)];
}

std::string FreshName(const sharc_builder& builder, std::string_view base) {
  const hlo::Computation& entry = *builder.module->entry();
  std::string name;
  for (int64_t n = entry.instruction_count();; ++n) {
    name = absl::StrCat(absl::string_view(base.data(), base.size()), ".", n);
    if (entry.FindInstruction(name) == nullptr) return name;
  }
}

absl::StatusOr<sharc_value> AddToEntry(sharc_builder& builder,
                                       std::unique_ptr<Instruction> instruction,
                                       const char* function) {
  const hlo::OpDef& def = hlo::GetOpDef(instruction->opcode());
  absl::Status checked = absl::OkStatus();
  absl::StatusOr<Shape> shape = def.infer_shape(*instruction);
  if (shape.ok()) {
    instruction->set_shape(*std::move(shape));
    if (def.verify) checked = def.verify(*instruction);
  } else {
    checked = shape.status();
  }
  if (!checked.ok()) {
    // The refused instruction is already a user of its operands.
    instruction->DetachFromOperands();
    return absl::Status(checked.code(), absl::StrCat(function, ": ", checked.message()));
  }
  Instruction* added = builder.module->entry()->AddInstruction(std::move(instruction));
  builder.values.push_back(added);
  return static_cast<sharc_value>(builder.values.size() - 1);
}

namespace {

// The opcode named `op`, which must be an elementwise op of `arity` operands.
absl::StatusOr<Opcode> ElementwiseOpcode(const char* op, int arity, const char* function) {
  std::optional<Opcode> opcode = hlo::OpcodeFromName(op);
  if (!opcode) {
    return absl::InvalidArgumentError(absl::StrCat(function, ": unknown op '", op, "'"));
  }
  const hlo::OpDef& def = hlo::GetOpDef(*opcode);
  const bool fits = def.traits.elementwise && def.min_operands <= arity &&
                    (def.max_operands < 0 || def.max_operands >= arity) &&
                    def.syntax == hlo::OperandSyntax::kOperands && *opcode != Opcode::kConvert;
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        function, ": '", op, "' is not an elementwise op of ", arity, " operand(s)",
        *opcode == Opcode::kConvert ? "; use sharc_builder_convert" : "",
        arity == 2 ? "; ops with attributes (compare, ...) go through sharc_builder_instruction"
                   : ""));
  }
  return *opcode;
}

absl::StatusOr<hlo::IntList> IntListFromC(const int64_t* values, int32_t count,
                                          const char* function, const char* argument) {
  if (count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(function, ": the count of ", argument, " is negative (", count, ")"));
  }
  if (count > 0 && values == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(function, ": ", argument, " is NULL but its count is ", count));
  }
  return hlo::IntList(values, values + count);
}

}  // namespace
}  // namespace sharc::c_api

using sharc::c_api::AddToEntry;
using sharc::c_api::BuilderValue;
using sharc::c_api::CheckNotNull;
using sharc::c_api::FreshName;
using sharc::c_api::Guard;
using sharc::c_api::IntListFromC;
using sharc::hlo::Instruction;
using sharc::hlo::Opcode;
using sharc::hlo::Shape;

extern "C" {

sharc_error* sharc_builder_create(const char* module_name, sharc_builder** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    auto builder = std::make_unique<sharc_builder>();
    builder->module = std::make_unique<sharc::hlo::Module>(
        module_name != nullptr && *module_name != '\0' ? module_name : "module");
    sharc::hlo::Computation* entry = builder->module->AddComputation(
        std::make_unique<sharc::hlo::Computation>("main"));
    builder->module->set_entry(entry);
    *out = builder.release();
    return absl::OkStatus();
  });
}

void sharc_builder_free(sharc_builder* builder) { delete builder; }

sharc_error* sharc_builder_parameter(sharc_builder* builder, const char* name, sharc_dtype dtype,
                                     int32_t rank, const int64_t* dims, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    const int64_t number = builder->num_parameters;
    std::string parameter_name =
        name != nullptr && *name != '\0' ? name : absl::StrCat("p", number);
    if (!parameter_name.empty() && parameter_name[0] == '%') parameter_name.erase(0, 1);
    if (builder->module->entry()->FindInstruction(parameter_name) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          function, ": the name '", parameter_name, "' is already used in this builder"));
    }
    ASSIGN_OR_RETURN(Shape shape,
                     sharc::c_api::ShapeFromC(dtype, rank, dims,
                                              absl::StrCat(function, ": parameter '",
                                                           parameter_name, "'")));
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::CreateParameter(number, parameter_name, shape),
                                      function));
    ++builder->num_parameters;
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_constant(sharc_builder* builder, const sharc_array* value,
                                    sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(value, function, "value"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(sharc::hlo::Literal literal,
                     sharc::c_api::LiteralFromArray(*value, absl::StrCat(function, ": value")));
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::CreateConstant(FreshName(*builder, "constant"),
                                                                  std::move(literal)),
                                      function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_unary(sharc_builder* builder, const char* op, sharc_value operand,
                                 sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(op, function, "op"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Opcode opcode, sharc::c_api::ElementwiseOpcode(op, 1, function));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::Create(opcode, FreshName(*builder, op),
                                                          x->shape(), {x}),
                                      function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_binary(sharc_builder* builder, const char* op, sharc_value lhs,
                                  sharc_value rhs, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(op, function, "op"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Opcode opcode, sharc::c_api::ElementwiseOpcode(op, 2, function));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, lhs, function, "lhs"));
    ASSIGN_OR_RETURN(Instruction * y, BuilderValue(*builder, rhs, function, "rhs"));
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::Create(opcode, FreshName(*builder, op),
                                                          x->shape(), {x, y}),
                                      function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_convert(sharc_builder* builder, sharc_value operand, sharc_dtype dtype,
                                   sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    std::optional<sharc::hlo::PrimitiveType> type = sharc::c_api::ToPrimitiveType(dtype);
    if (!type || !x->shape().is_array()) {
      return absl::InvalidArgumentError(
          !type ? absl::StrCat(function, ": unknown dtype ", static_cast<int>(dtype))
                : absl::StrCat(function, ": cannot convert the tuple ", x->shape().ToString()));
    }
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::Create(Opcode::kConvert,
                                                          FreshName(*builder, "convert"),
                                                          Shape(*type, x->shape().dims()), {x}),
                                      function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_dot(sharc_builder* builder, sharc_value lhs, sharc_value rhs,
                               const int64_t* lhs_contracting, const int64_t* rhs_contracting,
                               int32_t num_contracting, const int64_t* lhs_batch,
                               const int64_t* rhs_batch, int32_t num_batch, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, lhs, function, "lhs"));
    ASSIGN_OR_RETURN(Instruction * y, BuilderValue(*builder, rhs, function, "rhs"));
    ASSIGN_OR_RETURN(auto lhs_batch_dims,
                     IntListFromC(lhs_batch, num_batch, function, "lhs_batch"));
    ASSIGN_OR_RETURN(auto lhs_contracting_dims,
                     IntListFromC(lhs_contracting, num_contracting, function, "lhs_contracting"));
    ASSIGN_OR_RETURN(auto rhs_batch_dims,
                     IntListFromC(rhs_batch, num_batch, function, "rhs_batch"));
    ASSIGN_OR_RETURN(auto rhs_contracting_dims,
                     IntListFromC(rhs_contracting, num_contracting, function, "rhs_contracting"));
    auto dot = Instruction::Create(Opcode::kDot, FreshName(*builder, "dot"), Shape(), {x, y});
    // Schema order; empty lists are left out, as the parser leaves them.
    if (!lhs_batch_dims.empty()) dot->set_attr("lhs_batch_dims", lhs_batch_dims);
    if (!lhs_contracting_dims.empty()) dot->set_attr("lhs_contracting_dims", lhs_contracting_dims);
    if (!rhs_batch_dims.empty()) dot->set_attr("rhs_batch_dims", rhs_batch_dims);
    if (!rhs_contracting_dims.empty()) dot->set_attr("rhs_contracting_dims", rhs_contracting_dims);
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder, std::move(dot), function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_reduce_sum(sharc_builder* builder, sharc_value operand,
                                      const int64_t* dims, int32_t num_dims, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    ASSIGN_OR_RETURN(sharc::hlo::IntList dimensions, IntListFromC(dims, num_dims, function, "dims"));
    if (!x->shape().is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": cannot sum the tuple ", x->shape().ToString()));
    }
    const sharc::hlo::PrimitiveType type = x->shape().type();
    // The zero goes in as a value of its own; the caller never sees it.
    sharc::hlo::Instruction* zero = builder->module->entry()->AddInstruction(
        Instruction::CreateConstant(FreshName(*builder, "zero"),
                                    sharc::hlo::Literal(Shape::Scalar(type))));
    auto reduce = Instruction::Create(Opcode::kReduce, FreshName(*builder, "reduce"), Shape(),
                                      {x, zero});
    reduce->set_attr("dimensions", dimensions);
    reduce->set_attr("to_apply", sharc::hlo::BinaryReducer(*builder->module, Opcode::kAdd, type));
    absl::StatusOr<sharc_value> added = AddToEntry(*builder, std::move(reduce), function);
    if (!added.ok()) {
      (void)builder->module->entry()->RemoveInstruction(zero);
      return added.status();
    }
    *out = *added;
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_reshape(sharc_builder* builder, sharc_value operand, int32_t rank,
                                   const int64_t* dims, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    if (!x->shape().is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": cannot reshape the tuple ", x->shape().ToString()));
    }
    ASSIGN_OR_RETURN(Shape shape,
                     sharc::c_api::ShapeFromC(sharc::c_api::ToDtype(x->shape().type()), rank,
                                              dims, absl::StrCat(function, ": dims")));
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder,
                                      Instruction::Create(Opcode::kReshape,
                                                          FreshName(*builder, "reshape"), shape,
                                                          {x}),
                                      function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_transpose(sharc_builder* builder, sharc_value operand,
                                     const int64_t* permutation, int32_t rank, sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    ASSIGN_OR_RETURN(sharc::hlo::IntList dimensions,
                     IntListFromC(permutation, rank, function, "permutation"));
    auto transpose = Instruction::Create(Opcode::kTranspose, FreshName(*builder, "transpose"),
                                         x->shape(), {x});
    transpose->set_attr("dimensions", dimensions);
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder, std::move(transpose), function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_broadcast(sharc_builder* builder, sharc_value operand, int32_t rank,
                                     const int64_t* dims, const int64_t* operand_dims_in_result,
                                     sharc_value* out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, operand, function, "operand"));
    if (!x->shape().is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": cannot broadcast the tuple ", x->shape().ToString()));
    }
    ASSIGN_OR_RETURN(Shape shape,
                     sharc::c_api::ShapeFromC(sharc::c_api::ToDtype(x->shape().type()), rank,
                                              dims, absl::StrCat(function, ": dims")));
    ASSIGN_OR_RETURN(sharc::hlo::IntList mapping,
                     IntListFromC(operand_dims_in_result, static_cast<int32_t>(x->shape().rank()),
                                  function, "operand_dims_in_result"));
    auto broadcast = Instruction::Create(Opcode::kBroadcast, FreshName(*builder, "broadcast"),
                                         shape, {x});
    broadcast->set_attr("dimensions", mapping);
    ASSIGN_OR_RETURN(*out, AddToEntry(*builder, std::move(broadcast), function));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_value_name(const sharc_builder* builder, sharc_value value,
                                      const char** out_name) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(out_name, function, "out_name"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, value, function, "value"));
    *out_name = x->name().c_str();
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_value_shape(const sharc_builder* builder, sharc_value value,
                                       sharc_dtype* out_dtype, int32_t* out_rank, int64_t* dims,
                                       int32_t dims_capacity) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, value, function, "value"));
    sharc::c_api::ReportShape(x->shape(), out_dtype, out_rank, dims, dims_capacity);
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_set_mesh(sharc_builder* builder, const char* mesh) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(mesh, function, "mesh"));
    absl::Status set = sharc::driver::SetModuleMesh(*builder->module, mesh);
    if (!set.ok()) return absl::InvalidArgumentError(absl::StrCat(function, ": ", set.message()));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_set_sharding(sharc_builder* builder, sharc_value value,
                                        const char* sharding) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(sharding, function, "sharding"));
    ASSIGN_OR_RETURN(Instruction * x, BuilderValue(*builder, value, function, "value"));
    ASSIGN_OR_RETURN(sharc::hlo::Sharding parsed,
                     sharc::driver::ParseShardingForValue(
                         sharding, *builder->module, x->shape(),
                         absl::StrCat(function, ": %", x->name(), " (", x->shape().ToString(),
                                      ")")));
    x->set_sharding(std::move(parsed));
    return absl::OkStatus();
  });
}

sharc_error* sharc_builder_finish(const sharc_builder* builder, const sharc_value* outputs,
                                  int32_t num_outputs, sharc_module** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(builder, function, "builder"));
    RETURN_IF_ERROR(CheckNotNull(outputs, function, "outputs"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    if (num_outputs < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(function, ": a module needs at least one output, got ", num_outputs));
    }
    std::vector<std::string> names;
    for (int32_t i = 0; i < num_outputs; ++i) {
      ASSIGN_OR_RETURN(Instruction * x,
                       BuilderValue(*builder, outputs[i], function,
                                    absl::StrCat("outputs[", i, "]").c_str()));
      names.push_back(x->name());
    }
    std::unique_ptr<sharc::hlo::Module> module = builder->module->Clone();
    sharc::hlo::Computation* entry = module->entry();
    if (num_outputs == 1) {
      entry->set_root(entry->FindInstruction(names[0]));
    } else {
      std::vector<Instruction*> leaves;
      std::vector<Shape> shapes;
      for (const std::string& name : names) {
        leaves.push_back(entry->FindInstruction(name));
        shapes.push_back(leaves.back()->shape());
      }
      std::string tuple_name = "tuple";
      for (int n = 0; entry->FindInstruction(tuple_name) != nullptr; ++n) {
        tuple_name = absl::StrCat("tuple.", n);
      }
      entry->set_root(entry->AddInstruction(Instruction::Create(
          Opcode::kTuple, tuple_name, Shape::Tuple(std::move(shapes)), std::move(leaves))));
    }
    module->SortCalleesFirst();
    absl::Status verified = sharc::hlo::VerifyModule(*module);
    if (!verified.ok()) {
      return absl::Status(verified.code(), absl::StrCat(function, ": ", verified.message()));
    }
    *out = new sharc_module{std::move(module)};
    return absl::OkStatus();
  });
}

}  // extern "C"

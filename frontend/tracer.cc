#include "frontend/tracer.h"

#include <atomic>
#include <exception>

#include "absl/strings/str_cat.h"
#include "hlo/ir/scalar_reducer.h"
#include "hlo/ops/op_def.h"

namespace sharc::frontend {
namespace {

// One function being traced: its computation (owned until the trace ends and
// it joins the module) and what it captured from the enclosing function.
struct Frame {
  uint64_t id = 0;
  Tracer* tracer = nullptr;
  Frame* parent = nullptr;  // the enclosing function of the same tracer
  std::unique_ptr<hlo::Computation> owned;
  hlo::Computation* computation = nullptr;
  int64_t next_parameter = 0;
  std::vector<Tensor> captures;
  absl::flat_hash_map<const hlo::Instruction*, hlo::Instruction*> capture_parameters;
};

thread_local std::vector<Frame*> frame_stack;
std::atomic<uint64_t> next_frame_id{1};

Frame* CurrentFrame(const std::source_location& loc) {
  if (frame_stack.empty()) {
    ThrowTraceError(loc,
                    "Tensor operation outside of a traced function (trace it with jit, "
                    "TraceModule or TraceComputation)");
  }
  return frame_stack.back();
}

// Pops the frame however the trace ends (return or exception).
class FrameScope {
 public:
  explicit FrameScope(Frame* frame) { frame_stack.push_back(frame); }
  ~FrameScope() { frame_stack.pop_back(); }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;
};

// Makes `outer` (a value of frame->parent) available in `frame` as a new
// trailing parameter, once per value.
hlo::Instruction* CaptureInto(Frame* frame, hlo::Instruction* outer, const std::source_location& loc) {
  auto it = frame->capture_parameters.find(outer);
  if (it != frame->capture_parameters.end()) return it->second;
  auto parameter = hlo::Instruction::CreateParameter(
      frame->next_parameter++, frame->tracer->UniqueName("capture"), outer->shape());
  frame->tracer->Annotate(*parameter, loc);
  hlo::Instruction* inner = frame->computation->AddInstruction(std::move(parameter));
  frame->captures.push_back(Tensor(frame->parent->id, outer));
  frame->capture_parameters[outer] = inner;
  return inner;
}

hlo::Instruction* ResolveIn(Frame* frame, const Tensor& tensor, const std::source_location& loc) {
  if (tensor.frame_id() == frame->id) return tensor.instruction();
  if (frame->parent == nullptr) {
    // Frames of other tracers or finished traces are never dereferenced: the
    // check compares ids only.
    ThrowTraceError(loc, absl::StrCat("a ", tensor.ToString(),
                                      " Tensor from another trace was used here: a traced "
                                      "value escaped the function it was traced in (kept in "
                                      "a variable that outlived the trace, or from another "
                                      "jit's trace)"));
  }
  hlo::Instruction* outer = ResolveIn(frame->parent, tensor, loc);
  return CaptureInto(frame, outer, loc);
}

}  // namespace

Tracer::Tracer(std::string module_name, TraceOptions options)
    : module_(std::make_unique<hlo::Module>(std::move(module_name))), options_(options) {}

Tracer::~Tracer() = default;

Tracer* Tracer::Current() { return frame_stack.empty() ? nullptr : frame_stack.back()->tracer; }

std::string Tracer::UniqueName(std::string_view prefix) {
  std::string base(prefix);
  int64_t& count = name_counts_[base];
  std::string name = count == 0 ? base : absl::StrCat(base, ".", count);
  ++count;
  return name;
}

absl::Status Tracer::UseMesh(const spmd::Mesh& mesh) {
  if (!mesh_.has_value()) {
    mesh_ = mesh;
    return absl::OkStatus();
  }
  if (*mesh_ == mesh) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("the mesh ", mesh.ToString(),
                                                 " differs from the mesh ", mesh_->ToString(),
                                                 " already used by this trace"));
}

void Tracer::Annotate(hlo::Instruction& instruction, const std::source_location& loc) const {
  instruction.set_location(
      hlo::SourceLocation{loc.file_name(), static_cast<int>(loc.line()), static_cast<int>(loc.column())});
  if (options_.source_metadata) {
    instruction.mutable_metadata().source_file = loc.file_name();
    instruction.mutable_metadata().source_line = loc.line();
  }
}

hlo::Computation* Tracer::ScalarComputation(hlo::Opcode op, hlo::PrimitiveType type) {
  return hlo::BinaryReducer(*module_, op, type);
}

absl::StatusOr<TracedFunction> Tracer::TraceFunction(const TreeFunction& fn,
                                                     const ShapeTree& params,
                                                     std::string_view name, bool tuple_root,
                                                     std::source_location loc) {
  Frame frame;
  frame.id = next_frame_id++;
  frame.tracer = this;
  if (!frame_stack.empty() && frame_stack.back()->tracer == this) frame.parent = frame_stack.back();
  frame.owned = std::make_unique<hlo::Computation>(UniqueName(name));
  frame.computation = frame.owned.get();

  TracedFunction traced;
  auto [param_shapes, param_structure] = Flatten(params);
  traced.params = param_structure;
  const std::vector<std::string> paths = param_structure.LeafPaths();
  std::vector<Tensor> arguments;
  for (const hlo::Shape& shape : param_shapes) {
    if (!shape.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          FormatLocation(loc), ": parameters must be arrays, got ", shape.ToString()));
    }
    auto parameter = hlo::Instruction::CreateParameter(
        frame.next_parameter++, UniqueName(absl::StrCat("arg", arguments.size())), shape);
    Annotate(*parameter, loc);
    if (options_.source_metadata) {
      // Which argument leaf this is ("args.params.w", "args[0]").
      parameter->mutable_metadata().op_name = absl::StrCat("args", paths[arguments.size()]);
    }
    arguments.push_back(Tensor(frame.id, frame.computation->AddInstruction(std::move(parameter))));
  }

  FrameScope scope(&frame);
  try {
    Tree args = *Unflatten(param_structure, std::move(arguments));
    Tree out = fn(args);
    auto [results, result_structure] = Flatten(out);
    traced.results = result_structure;
    std::vector<Tensor> resolved;
    for (const Tensor& result : results) {
      resolved.push_back(Tensor(frame.id, Resolve(result, loc)));
      traced.result_shapes.push_back(result.shape());
    }
    hlo::Instruction* root;
    if (resolved.size() == 1 && !tuple_root) {
      root = resolved[0].instruction();
    } else {
      root = Emit(hlo::Opcode::kTuple, resolved, {}, std::nullopt, loc).instruction();
    }
    frame.computation->set_root(root);
  } catch (const TraceError& e) {
    return e.status();
  } catch (const std::exception& e) {
    // Pytree accessors and user code report misuse with standard exceptions.
    return absl::InvalidArgumentError(
        absl::StrCat(FormatLocation(loc), ": while tracing ", std::string(name), ": ", e.what()));
  }
  traced.captures = std::move(frame.captures);
  traced.computation = module_->AddComputation(std::move(frame.owned));
  return traced;
}

hlo::Instruction* Resolve(const Tensor& tensor, std::source_location loc) {
  if (!tensor.valid()) ThrowTraceError(loc, "an empty (default-constructed) Tensor was used");
  return ResolveIn(CurrentFrame(loc), tensor, loc);
}

Tensor Emit(hlo::Opcode opcode, absl::Span<const Tensor> operands,
            std::vector<hlo::Attribute> attributes, std::optional<hlo::Shape> shape,
            std::source_location loc) {
  Frame* frame = CurrentFrame(loc);
  std::vector<hlo::Instruction*> resolved;
  for (const Tensor& operand : operands) resolved.push_back(Resolve(operand, loc));
  auto instruction = hlo::Instruction::Create(
      opcode, frame->tracer->UniqueName(hlo::OpcodeName(opcode)),
      shape.value_or(hlo::Shape()), resolved);
  for (hlo::Attribute& attribute : attributes) {
    instruction->set_attr(std::move(attribute.name), std::move(attribute.value));
  }
  frame->tracer->Annotate(*instruction, loc);
  const hlo::OpDef& def = hlo::GetOpDef(opcode);
  absl::StatusOr<hlo::Shape> inferred = def.infer_shape(*instruction);
  absl::Status status = inferred.status();
  if (status.ok()) {
    instruction->set_shape(*inferred);
    if (def.verify) status = def.verify(*instruction);
  }
  if (!status.ok()) {
    instruction->DetachFromOperands();
    ThrowTraceError(loc, std::string(status.message()), status.code());
  }
  return Tensor(frame->id, frame->computation->AddInstruction(std::move(instruction)));
}

Tensor Constant(hlo::Literal value, std::source_location loc) {
  Frame* frame = CurrentFrame(loc);
  auto instruction =
      hlo::Instruction::CreateConstant(frame->tracer->UniqueName("constant"), std::move(value));
  frame->tracer->Annotate(*instruction, loc);
  return Tensor(frame->id, frame->computation->AddInstruction(std::move(instruction)));
}

Tensor TupleElement(const Tensor& tuple, int64_t index, std::source_location loc) {
  return Emit(hlo::Opcode::kGetTupleElement, {tuple}, {{"index", index}}, std::nullopt, loc);
}

absl::StatusOr<TracedFunction> TraceComputation(const TreeFunction& fn, const ShapeTree& params,
                                                std::string_view name, bool tuple_root,
                                                std::source_location loc) {
  Tracer* tracer = Tracer::Current();
  if (tracer == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        FormatLocation(loc), ": TraceComputation needs an enclosing trace (call it from a "
                             "function being traced)"));
  }
  return tracer->TraceFunction(fn, params, name, tuple_root, loc);
}

Tree Call(const TracedFunction& function, const Tree& args, std::source_location loc) {
  auto [leaves, structure] = Flatten(args);
  if (!(structure == function.params)) {
    ThrowTraceError(loc, absl::StrCat("call of ", function.computation->name(), " with arguments ",
                                      structure.ToString(), " but it was traced with ",
                                      function.params.ToString()));
  }
  leaves.insert(leaves.end(), function.captures.begin(), function.captures.end());
  Tensor result = Emit(hlo::Opcode::kCall, leaves, {{"to_apply", function.computation}},
                       std::nullopt, loc);
  std::vector<Tensor> results;
  if (result.shape().is_tuple()) {
    for (int64_t i = 0; i < result.shape().tuple_size(); ++i) {
      results.push_back(TupleElement(result, i, loc));
    }
  } else {
    results.push_back(result);
  }
  absl::StatusOr<Tree> tree = Unflatten(function.results, std::move(results));
  if (!tree.ok()) ThrowTraceError(loc, std::string(tree.status().message()));
  return *std::move(tree);
}

}  // namespace sharc::frontend

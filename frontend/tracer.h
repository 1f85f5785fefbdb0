// Tracer: builds one hlo::Module from C++ functions of Tensors. A function
// trace is a frame on a per-thread stack; operations emit into the innermost
// frame. Functions traced while another is being traced (loop bodies,
// reducers, vmap's and map_fn's bodies) become separate computations of the
// same module, and Tensors of the enclosing function that they read become
// extra trailing parameters ("captures") the caller passes in.
//
// Emit is the one door into the IR: every Tensor operation, and any new op
// (the MapReduce blocks), goes through it, and shape inference is the op
// table's (hlo/ops/op_def.h), never repeated here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "frontend/trace_error.h"
#include "frontend/trees.h"
#include "hlo/ir/module.h"
#include "spmd/mesh.h"

namespace sharc::frontend {

struct TraceOptions {
  // Record each op's call site as XLA metadata (source_file, source_line),
  // so it prints with the module; the location for error messages is kept
  // either way.
  bool source_metadata = true;
};

// A function traced into a computation of the module.
struct TracedFunction {
  hlo::Computation* computation = nullptr;
  TreeStructure params;   // the structure of the declared parameters
  TreeStructure results;  // the structure of what the function returned
  std::vector<hlo::Shape> result_shapes;  // one per result leaf
  // Values of the enclosing function the body read; they are the
  // computation's parameters after the declared ones, in this order.
  std::vector<Tensor> captures;
};

class Tracer {
 public:
  explicit Tracer(std::string module_name, TraceOptions options = {});
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  hlo::Module& module() { return *module_; }
  std::unique_ptr<hlo::Module> ReleaseModule() { return std::move(module_); }

  // The tracer of the innermost function being traced on this thread, or null.
  static Tracer* Current();

  // Traces `fn` on parameters of `params`' shapes into a new computation
  // added to the module. If called while this tracer traces another function,
  // the new computation is nested in it (it may capture its Tensors). The
  // root is a tuple of the result leaves, except that a single-leaf result
  // is the root itself unless `tuple_root`. Errors inside `fn` come back as
  // the status (they start with the user's file:line).
  absl::StatusOr<TracedFunction> TraceFunction(const TreeFunction& fn, const ShapeTree& params,
                                               std::string_view name, bool tuple_root,
                                               std::source_location loc);

  // The mesh the trace's shardings refer to. The first mesh used wins; a
  // different one later is an error.
  absl::Status UseMesh(const spmd::Mesh& mesh);
  const std::optional<spmd::Mesh>& mesh() const { return mesh_; }

  // A fresh instruction or computation name: `prefix`, then `prefix.1`, ...
  std::string UniqueName(std::string_view prefix);

  // The computation (a, b) -> op(a, b) on scalars of `type` (reducers),
  // created once per module (hlo::BinaryReducer).
  hlo::Computation* ScalarComputation(hlo::Opcode op, hlo::PrimitiveType type);

  // Sets the instruction's location (and metadata if enabled) to `loc`.
  void Annotate(hlo::Instruction& instruction, const std::source_location& loc) const;

 private:
  std::unique_ptr<hlo::Module> module_;
  TraceOptions options_;
  std::optional<spmd::Mesh> mesh_;
  absl::flat_hash_map<std::string, int64_t> name_counts_;
};

// Appends `opcode(operands)` to the innermost function being traced and
// returns its value. `shape` is the declared result shape, needed only by ops
// whose result the op table cannot infer (reshape, broadcast, convert, iota,
// custom-call); otherwise the inferred shape is used. Called computations are
// attributes (to_apply=...). Throws TraceError naming `loc` if the op table
// rejects the operands.
Tensor Emit(hlo::Opcode opcode, absl::Span<const Tensor> operands,
            std::vector<hlo::Attribute> attributes = {},
            std::optional<hlo::Shape> shape = std::nullopt,
            std::source_location loc = std::source_location::current());

// A constant in the innermost trace.
Tensor Constant(hlo::Literal value, std::source_location loc = std::source_location::current());

// Element `index` of a tuple-shaped value.
Tensor TupleElement(const Tensor& tuple, int64_t index,
                    std::source_location loc = std::source_location::current());

// Traces `fn` into a computation nested in the function being traced (see
// Tracer::TraceFunction). Errors: called outside a trace, or `fn` failed.
absl::StatusOr<TracedFunction> TraceComputation(
    const TreeFunction& fn, const ShapeTree& params, std::string_view name = "body",
    bool tuple_root = false, std::source_location loc = std::source_location::current());

// Emits a `call` of a traced function on `args` (a tree of its parameter
// structure) plus its captures; returns its results as a tree.
Tree Call(const TracedFunction& function, const Tree& args,
          std::source_location loc = std::source_location::current());

// The IR instruction of `tensor` in the innermost trace. A Tensor of an
// enclosing function is captured; one whose trace has ended is an error.
hlo::Instruction* Resolve(const Tensor& tensor,
                          std::source_location loc = std::source_location::current());

}  // namespace sharc::frontend

// reduce and reduce-window: fold the elements of N inputs with a called
// reducer computation, starting from N init values (XLA's variadic forms).
// The reducer takes (acc_0..acc_{N-1}, x_0..x_{N-1}) and returns one scalar
// (N == 1) or an N-tuple of scalars.
//
// select-and-scatter (max-pool's gradient): for each window of reduce-window
// over the operand, `select` picks one element, and the source value of that
// window is folded into the result there with `scatter`, starting from init.
#include <optional>
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// Window attribute values are bounded so that every intermediate of the
// output-size and position arithmetic fits comfortably in int64.
constexpr int64_t kMaxWindowValue = kMaxElements;
constexpr __int128 kMaxPaddedSize = __int128{1} << 62;

// Number of inputs N of a reduce/reduce-window with 2N operands.
absl::StatusOr<int64_t> InputCount(const Instruction& inst) {
  int64_t count = inst.operand_count();
  if (count < 2 || count % 2 != 0) {
    return OpError(inst, "expects N inputs followed by N init values, got ", count, " operands");
  }
  return count / 2;
}

// Inputs must be arrays of one set of dims; init i a scalar of input i's type.
// Returns N.
absl::StatusOr<int64_t> CheckInputsAndInits(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t n, InputCount(inst));
  for (int64_t i = 0; i < 2 * n; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = inst.operand(i)->shape();
    if (input.dims() != first.dims()) {
      return OpError(inst, "input ", i, " is ", input.ToString(), " but input 0 is ",
                     first.ToString(), "; all inputs must have the same dimensions");
    }
    const Shape& init = inst.operand(n + i)->shape();
    if (!init.is_scalar() || init.type() != input.type()) {
      return OpError(inst, "init value ", i, " must be a ", PrimitiveTypeName(input.type()),
                     " scalar to match input ", i, ", got ", init.ToString());
    }
  }
  return n;
}

// Result shape from per-input result dims: an array for N == 1, else a tuple.
Shape ResultShape(const Instruction& inst, int64_t n, const std::vector<int64_t>& dims) {
  if (n == 1) return Shape(inst.operand(n)->shape().type(), dims);
  std::vector<Shape> elements;
  for (int64_t i = 0; i < n; ++i) elements.emplace_back(inst.operand(n + i)->shape().type(), dims);
  return Shape::Tuple(std::move(elements));
}

// The reducer takes 2N scalars (accumulators, then inputs) and returns a
// scalar (N == 1) or an N-tuple of scalars of the init types.
absl::Status CheckReducer(const Instruction& inst, int64_t n) {
  std::vector<Shape> params;
  for (int64_t k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < n; ++i)
      params.push_back(Shape::Scalar(inst.operand(n + i)->shape().type()));
  }
  Shape result =
      n == 1 ? params[0] : Shape::Tuple(std::vector<Shape>(params.begin(), params.begin() + n));
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", params,
                                    &result);
}

// Output buffers filled with the init values.
std::vector<Literal> InitializedOutputs(absl::Span<const Literal* const> operands, int64_t n,
                                        const std::vector<int64_t>& dims) {
  std::vector<Literal> outs;
  for (int64_t i = 0; i < n; ++i) {
    const Literal& init = *operands[n + i];
    Literal out(Shape(init.shape().type(), dims));
    for (int64_t j = 0; j < out.num_elements(); ++j) CopyElement(init, 0, out, j);
    outs.push_back(std::move(out));
  }
  return outs;
}

Literal PackResults(std::vector<Literal> outs) {
  if (outs.size() == 1) return std::move(outs[0]);
  return Literal::Tuple(std::move(outs));
}

// Folds element `in_index` of every input into element `out_index` of every
// output, with the fast path when the reducer is a plain binary op.
class Folder {
 public:
  Folder(const Computation& reducer, EvalContext& ctx, int64_t n)
      : reducer_(reducer), ctx_(ctx), n_(n) {
    if (n == 1) fast_op_ = MatchBinaryReducer(reducer);
  }

  absl::Status Fold(std::vector<Literal>& outs, int64_t out_index,
                    absl::Span<const Literal* const> inputs, int64_t in_index) {
    if (fast_op_.has_value()) {
      ApplyBinaryReducer(*fast_op_, outs[0], out_index, *inputs[0], in_index);
      return absl::OkStatus();
    }
    acc_.clear();
    xs_.clear();
    for (int64_t i = 0; i < n_; ++i) {
      acc_.push_back(ScalarAt(outs[i], out_index));
      xs_.push_back(ScalarAt(*inputs[i], in_index));
    }
    RETURN_IF_ERROR(CallScalarReducer(ctx_, reducer_, acc_, xs_));
    for (int64_t i = 0; i < n_; ++i) CopyElement(acc_[i], 0, outs[i], out_index);
    return absl::OkStatus();
  }

 private:
  const Computation& reducer_;
  EvalContext& ctx_;
  int64_t n_;
  std::optional<Opcode> fast_op_;
  std::vector<Literal> acc_;
  std::vector<Literal> xs_;
};

// ----------------------------------------------------------------- reduce --

absl::StatusOr<Shape> InferReduce(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(inst));
  const Shape& input = inst.operand(0)->shape();
  const IntList& dims = inst.attr_ints("dimensions");
  RETURN_IF_ERROR(ExpectValidDims(inst, dims, input.rank(), "reduced"));
  std::vector<bool> reduced(static_cast<size_t>(input.rank()), false);
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) out_dims.push_back(input.dim(d));
  }
  return ResultShape(inst, n, out_dims);
}

absl::Status VerifyReduce(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(inst));
  return CheckReducer(inst, n);
}

absl::StatusOr<Literal> EvaluateReduce(const Instruction& inst,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape result_shape, InferReduce(inst));
  RETURN_IF_ERROR(VerifyReduce(inst));
  int64_t n = inst.operand_count() / 2;
  const Shape& input = inst.operand(0)->shape();
  std::vector<int64_t> out_dims =
      result_shape.is_tuple() ? result_shape.tuple_shape(0).dims() : result_shape.dims();
  std::vector<Literal> outs = InitializedOutputs(operands, n, out_dims);

  // Visiting the input in row-major order visits, for each output element,
  // the reduced dims in row-major order: the order XLA's evaluator uses.
  const IntList& reduce_dims = inst.attr_ints("dimensions");
  std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> stride_of_input_dim(static_cast<size_t>(input.rank()), 0);
  for (int64_t d = 0, k = 0; d < input.rank(); ++d) {
    bool is_reduced = false;
    for (int64_t r : reduce_dims) is_reduced |= r == d;
    if (!is_reduced)
      stride_of_input_dim[static_cast<size_t>(d)] = out_strides[static_cast<size_t>(k++)];
  }
  Folder folder(*inst.attr_computation("to_apply"), ctx, n);
  int64_t count = input.num_elements();
  std::vector<int64_t> index(static_cast<size_t>(input.rank()), 0);
  int64_t out_index = 0;
  for (int64_t i = 0; i < count; ++i) {
    RETURN_IF_ERROR(folder.Fold(outs, out_index, operands.subspan(0, static_cast<size_t>(n)), i));
    for (int64_t d = input.rank() - 1; d >= 0; --d) {
      size_t ud = static_cast<size_t>(d);
      ++index[ud];
      out_index += stride_of_input_dim[ud];
      if (index[ud] < input.dim(d)) break;
      out_index -= stride_of_input_dim[ud] * index[ud];
      index[ud] = 0;
    }
  }
  return PackResults(std::move(outs));
}

// ---------------------------------------------------------- reduce-window --

// One dimension of the window attribute.
struct WindowDim {
  int64_t size, stride, pad_lo, pad_hi, base_dilation, window_dilation;
};

absl::StatusOr<std::vector<WindowDim>> ParseWindow(const Instruction& inst, int64_t rank) {
  const IntListList& window = inst.attr_int_lists("window");
  // Field counts first, and not via OpError: printing the instruction formats
  // the window, which needs six fields per dimension.
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d].size() == 7) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce-window does not take rhs_reversal (window dimension ", d, "), in %",
          inst.name()));
    }
    if (window[d].size() != 6) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce-window window dimension ", d, " has ", window[d].size(),
          " fields, expected 6 (size, stride, pad_lo, pad_hi, base and window dilation), in %",
          inst.name(), inst.location().known() ? " at " + inst.location().ToString() : ""));
    }
  }
  if (static_cast<int64_t>(window.size()) != rank) {
    return OpError(inst, "window has ", window.size(), " dimensions but the inputs have rank ",
                   rank);
  }
  std::vector<WindowDim> dims;
  for (size_t d = 0; d < window.size(); ++d) {
    const std::vector<int64_t>& w = window[d];
    for (int64_t v : w) {
      if (v > kMaxWindowValue || v < -kMaxWindowValue) {
        return OpError(inst, "window dimension ", d, " has out-of-range value ", v);
      }
    }
    WindowDim wd{w[0], w[1], w[2], w[3], w[4], w[5]};
    if (wd.size < 1)
      return OpError(inst, "window dimension ", d, " has size ", wd.size, ", must be >= 1");
    if (wd.stride < 1) {
      return OpError(inst, "window dimension ", d, " has stride ", wd.stride, ", must be >= 1");
    }
    if (wd.base_dilation < 1 || wd.window_dilation < 1) {
      return OpError(inst, "window dimension ", d, " has dilation ", wd.base_dilation, "/",
                     wd.window_dilation, ", must be >= 1");
    }
    dims.push_back(wd);
  }
  return dims;
}

// The dims of reduce-window's result over `input`.
absl::StatusOr<std::vector<int64_t>> WindowedDims(const Instruction& inst, const Shape& input,
                                                  const std::vector<WindowDim>& window) {
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const WindowDim& w = window[static_cast<size_t>(d)];
    __int128 base = input.dim(d) == 0 ? 0 : (__int128{input.dim(d)} - 1) * w.base_dilation + 1;
    __int128 padded = base + w.pad_lo + w.pad_hi;
    __int128 span = (__int128{w.size} - 1) * w.window_dilation + 1;
    if (padded < 0 || padded > kMaxPaddedSize) {
      return OpError(inst, "window dimension ", d, " gives a padded input size of ",
                     static_cast<int64_t>(padded < 0 ? -1 : padded),
                     " (must be non-negative and below 2^62)");
    }
    out_dims.push_back(padded < span ? 0 : static_cast<int64_t>((padded - span) / w.stride + 1));
  }
  return out_dims;
}

// The input element window position `w` of output `out` reads, or -1 for
// padding and dilation holes, which hold no element.
int64_t WindowElement(const std::vector<WindowDim>& window, const Shape& input,
                      const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out,
                      const std::vector<int64_t>& w) {
  int64_t in_index = 0;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& wd = window[d];
    int64_t p = out[d] * wd.stride + w[d] * wd.window_dilation - wd.pad_lo;
    if (p < 0 || p % wd.base_dilation != 0) return -1;
    int64_t b = p / wd.base_dilation;
    if (b >= input.dim(static_cast<int64_t>(d))) return -1;
    in_index += b * in_strides[d];
  }
  return in_index;
}

absl::StatusOr<Shape> InferReduceWindow(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(inst));
  const Shape& input = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(std::vector<WindowDim> window, ParseWindow(inst, input.rank()));
  ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, WindowedDims(inst, input, window));
  Shape result = ResultShape(inst, n, out_dims);
  RETURN_IF_ERROR(ValidateShape(result)) << " (reduce-window result, in " << inst.Describe() << ")";
  return result;
}

absl::Status VerifyReduceWindow(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(inst));
  return CheckReducer(inst, n);
}

absl::StatusOr<Literal> EvaluateReduceWindow(const Instruction& inst,
                                             absl::Span<const Literal* const> operands,
                                             EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape result_shape, InferReduceWindow(inst));
  RETURN_IF_ERROR(VerifyReduceWindow(inst));
  int64_t n = inst.operand_count() / 2;
  const Shape& input = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(std::vector<WindowDim> window, ParseWindow(inst, input.rank()));
  std::vector<int64_t> out_dims =
      result_shape.is_tuple() ? result_shape.tuple_shape(0).dims() : result_shape.dims();
  std::vector<Literal> outs = InitializedOutputs(operands, n, out_dims);
  std::vector<int64_t> window_sizes;
  for (const WindowDim& w : window) window_sizes.push_back(w.size);
  std::vector<int64_t> in_strides = RowMajorStrides(input.dims());

  Folder folder(*inst.attr_computation("to_apply"), ctx, n);
  absl::Status status;
  int64_t out_index = 0;
  ForEachIndex(out_dims, [&](const std::vector<int64_t>& out) {
    if (!status.ok()) return;
    ForEachIndex(window_sizes, [&](const std::vector<int64_t>& w) {
      if (!status.ok()) return;
      // Padding and dilation holes are skipped (they would contribute init).
      const int64_t in_index = WindowElement(window, input, in_strides, out, w);
      if (in_index < 0) return;
      status = folder.Fold(outs, out_index, operands.subspan(0, static_cast<size_t>(n)), in_index);
    });
    ++out_index;
  });
  RETURN_IF_ERROR(status);
  return PackResults(std::move(outs));
}

// ----------------------------------------------------- select-and-scatter --

// Operands (operand, source, init): source has reduce-window's result dims
// over operand, init is a scalar of operand's type; the result is operand's
// shape.
absl::StatusOr<Shape> InferSelectAndScatter(const Instruction& inst) {
  if (inst.operand_count() != 3) {
    return OpError(inst, "takes 3 operands (operand, source, init), got ", inst.operand_count());
  }
  for (int64_t i = 0; i < 3; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& input = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  ASSIGN_OR_RETURN(std::vector<WindowDim> window, ParseWindow(inst, input.rank()));
  ASSIGN_OR_RETURN(std::vector<int64_t> windows, WindowedDims(inst, input, window));
  if (source.dims() != windows) {
    return OpError(inst, "source ", source.ToString(), " must have the dims of the windows [",
                   absl::StrJoin(windows, ","), "]");
  }
  if (!init.is_scalar() || init.type() != source.type()) {
    return OpError(inst, "init value must be a ", PrimitiveTypeName(source.type()),
                   " scalar to match the source, got ", init.ToString());
  }
  return Shape(source.type(), input.dims());
}

absl::Status VerifySelectAndScatter(const Instruction& inst) {
  RETURN_IF_ERROR(InferSelectAndScatter(inst).status());
  const Shape x = Shape::Scalar(inst.operand(0)->shape().type());
  const Shape s = Shape::Scalar(inst.operand(1)->shape().type());
  const Shape pred = Shape::Scalar(PrimitiveType::kPred);
  RETURN_IF_ERROR(ExpectComputationSignature(inst, inst.attr_computation("select"), "select",
                                             {x, x}, &pred));
  return ExpectComputationSignature(inst, inst.attr_computation("scatter"), "scatter", {s, s},
                                    &s);
}

absl::StatusOr<Literal> EvaluateSelectAndScatter(const Instruction& inst,
                                                 absl::Span<const Literal* const> operands,
                                                 EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifySelectAndScatter(inst));
  const Literal& input = *operands[0];
  const Literal& source = *operands[1];
  const Shape& shape = input.shape();
  ASSIGN_OR_RETURN(std::vector<WindowDim> window, ParseWindow(inst, shape.rank()));
  std::vector<Literal> outs = InitializedOutputs(operands.subspan(1), 1, shape.dims());
  std::vector<int64_t> window_sizes;
  for (const WindowDim& w : window) window_sizes.push_back(w.size);
  const std::vector<int64_t> in_strides = RowMajorStrides(shape.dims());
  const Computation& select = *inst.attr_computation("select");
  Folder scatter(*inst.attr_computation("scatter"), ctx, 1);
  const Literal* source_span[] = {&source};
  absl::Status status;
  int64_t source_index = 0;
  ForEachIndex(source.shape().dims(), [&](const std::vector<int64_t>& out) {
    if (!status.ok()) return;
    // The first element of the window is selected until `select(selected,
    // candidate)` is false for a later one, which then is.
    int64_t selected = -1;
    ForEachIndex(window_sizes, [&](const std::vector<int64_t>& w) {
      if (!status.ok()) return;
      const int64_t candidate = WindowElement(window, shape, in_strides, out, w);
      if (candidate < 0) return;
      if (selected < 0) {
        selected = candidate;
        return;
      }
      Literal a = ScalarAt(input, selected);
      Literal b = ScalarAt(input, candidate);
      const Literal* args[] = {&a, &b};
      absl::StatusOr<Literal> keep = ctx.Call(select, args);
      if (!keep.ok()) {
        status = keep.status();
        return;
      }
      if (!keep->data<bool>()[0]) selected = candidate;
    });
    if (status.ok() && selected >= 0) {
      status = scatter.Fold(outs, selected, source_span, source_index);
    }
    ++source_index;
  });
  RETURN_IF_ERROR(status);
  return std::move(outs[0]);
}

}  // namespace

void RegisterReductionOps(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kSelectAndScatter;
    def.min_operands = 3;
    def.max_operands = 3;
    // Scalars' windows may be left out (XLA writes none for rank 0).
    def.attributes = {{"window", AttrKind::kWindow},
                      {"select", AttrKind::kComputation, true},
                      {"scatter", AttrKind::kComputation, true}};
    def.infer_shape = InferSelectAndScatter;
    def.verify = VerifySelectAndScatter;
    def.evaluate = EvaluateSelectAndScatter;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kReduce;
    def.min_operands = 2;
    def.max_operands = -1;
    def.attributes = {{"dimensions", AttrKind::kIntList, true},
                      {"to_apply", AttrKind::kComputation, true}};
    def.infer_shape = InferReduce;
    def.verify = VerifyReduce;
    def.evaluate = EvaluateReduce;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kReduceWindow;
    def.min_operands = 2;
    def.max_operands = -1;
    def.attributes = {{"window", AttrKind::kWindow},
                      {"to_apply", AttrKind::kComputation, true}};
    def.infer_shape = InferReduceWindow;
    def.verify = VerifyReduceWindow;
    def.evaluate = EvaluateReduceWindow;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

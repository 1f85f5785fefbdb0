// sort(x_0, ..., x_{n-1}), dimensions={d}, is_stable=b, to_apply=%cmp:
// sorts every row along dimension d of all operands together (they have the
// same dims; their types may differ). The comparator takes 2n scalars
// (lhs_0, rhs_0, lhs_1, rhs_1, ...) and says whether lhs comes before rhs.
// The result is the sorted operand, or a tuple of them when n > 1.
//
// Rows are always sorted stably (a valid order for is_stable=false too), so
// the result never depends on the sorting algorithm. Comparators that are
// one compare LT/GT of an operand's two parameters (what JAX and XLA emit for
// sort, argsort and top-k) sort natively: one operand by its values
// (std::sort on the row, SortRowsByValue), several with std::sort on
// (key, index) pairs giving each row's permutation; a comparator that
// compares the same elementwise function of both elements (JAX's total-order
// float comparison, sort_key_function.h) sorts by that function's values,
// computed once per element, and so does one that breaks such a key's ties
// with a second key (XLA's TopK comparators); any other comparator is called through the
// interpreter once per comparison, which gives the same order (std::
// stable_sort sees the same answers) but is much slower.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/sort_key_function.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<int64_t> SortDimension(const Instruction& inst) {
  const IntList& dims = inst.attr_ints("dimensions");
  if (dims.size() != 1) {
    return OpError(inst, "needs exactly one dimension in 'dimensions', got ", dims.size());
  }
  const int64_t rank = inst.operand(0)->shape().rank();
  if (dims[0] < 0 || dims[0] >= rank) {
    return OpError(inst, "dimension ", dims[0], " is out of range for rank ", rank);
  }
  return dims[0];
}

absl::StatusOr<Shape> InferSort(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape first, ExpectSameDimsOperands(inst));
  RETURN_IF_ERROR(SortDimension(inst).status());
  if (inst.operand_count() == 1) return first;
  std::vector<Shape> results;
  for (const Instruction* op : inst.operands()) results.push_back(op->shape());
  return Shape::Tuple(std::move(results));
}

absl::Status VerifySort(const Instruction& inst) {
  std::vector<Shape> params;
  for (const Instruction* op : inst.operands()) {
    params.push_back(Shape::Scalar(op->shape().type()));
    params.push_back(Shape::Scalar(op->shape().type()));
  }
  const Shape pred = Shape::Scalar(PrimitiveType::kPred);
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", params,
                                    &pred);
}

// ------------------------------------------------------------ native path --

// A comparator that is `compare(p_{2i}, p_{2i+1})` with direction LT or GT
// (or the parameters swapped): sort by operand i, ascending or descending.
struct KeyComparator {
  int64_t operand = 0;
  bool descending = false;
  bool total_order = false;
};

std::optional<KeyComparator> MatchKeyComparator(const Computation& comparator) {
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter) return std::nullopt;
  const int64_t pa = a->parameter_number();
  const int64_t pb = b->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb) return std::nullopt;
  const std::string& direction = root->attr_string("direction");
  if (direction != "LT" && direction != "GT") return std::nullopt;
  const AttrValue* type = root->attr("type");
  const std::string* type_name = type ? std::get_if<std::string>(type) : nullptr;
  KeyComparator match;
  match.operand = pa / 2;
  // compare(lhs, rhs) LT is ascending; compare(rhs, lhs) LT is descending.
  match.descending = (direction == "GT") == (pa % 2 == 0);
  match.total_order = type_name != nullptr && *type_name == "TOTALORDER";
  return match;
}

// XLA's TOTALORDER for floats: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN
// (the bits as a signed integer, magnitudes of negatives flipped).
template <typename T>
int64_t TotalOrderKey(T v) {
  using Bits = std::conditional_t<sizeof(T) == 2, int16_t,
                                  std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>;
  Bits bits;
  std::memcpy(&bits, &v, sizeof(T));
  return bits < 0 ? static_cast<Bits>(bits ^ std::numeric_limits<Bits>::max()) : bits;
}

// The stable permutation that sorts one row's `keys`. The keys are sorted
// with their indices as pairs (contiguous, no indirection), which gives the
// order sorting the indices by key would.
template <typename K>
void SortRow(const std::vector<K>& keys, bool descending,
             std::vector<std::pair<K, int64_t>>& pairs, std::vector<int64_t>& perm) {
  pairs.resize(keys.size());
  for (size_t j = 0; j < keys.size(); ++j) pairs[j] = {keys[j], static_cast<int64_t>(j)};
  using P = std::pair<K, int64_t>;
  // Ties broken by index give the stable order with std::sort, which is
  // faster than std::stable_sort; only NaN keys (which compare neither way,
  // so that order would not be a strict weak one) keep std::stable_sort.
  bool has_nan = false;
  if constexpr (std::is_floating_point_v<K>) {
    for (const K& k : keys) has_nan = has_nan || k != k;
  }
  if (!has_nan) {
    if (descending) {
      std::sort(pairs.begin(), pairs.end(), [](const P& x, const P& y) {
        return x.first > y.first || (x.first == y.first && x.second < y.second);
      });
    } else {
      std::sort(pairs.begin(), pairs.end(), [](const P& x, const P& y) {
        return x.first < y.first || (x.first == y.first && x.second < y.second);
      });
    }
  } else if (descending) {
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const P& x, const P& y) { return x.first > y.first; });
  } else {
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const P& x, const P& y) { return x.first < y.first; });
  }
  perm.resize(pairs.size());
  for (size_t j = 0; j < pairs.size(); ++j) perm[j] = pairs[j].second;
}

// Calls fn(base, stride) for every row along `dim` of `dims`.
template <typename Fn>
void ForEachRow(const std::vector<int64_t>& dims, int64_t dim, Fn&& fn) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> outer = dims;
  outer[static_cast<size_t>(dim)] = 1;
  ForEachIndex(outer, [&](const std::vector<int64_t>& index) {
    fn(LinearIndex(dims, index), strides[static_cast<size_t>(dim)]);
  });
}

// Sorts every row natively; fills `perms` (row-major rows, each a
// permutation of 0..n-1).
void NativePermutations(const Literal& key_operand, int64_t dim, const KeyComparator& cmp,
                        std::vector<std::vector<int64_t>>& perms) {
  const std::vector<int64_t>& dims = key_operand.shape().dims();
  const int64_t n = dims[static_cast<size_t>(dim)];
  DispatchPrimitiveType(key_operand.shape().type(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = key_operand.data<T>().data();
    if constexpr (kIsFloat<T>) {
      if (cmp.total_order) {
        std::vector<int64_t> keys(static_cast<size_t>(n));
        std::vector<std::pair<int64_t, int64_t>> pairs;
        ForEachRow(dims, dim, [&](int64_t base, int64_t stride) {
          for (int64_t j = 0; j < n; ++j) keys[j] = TotalOrderKey(data[base + j * stride]);
          std::vector<int64_t> perm;
          SortRow(keys, cmp.descending, pairs, perm);
          perms.push_back(std::move(perm));
        });
        return;
      }
    }
    // The comparison compare itself makes: f16/bf16 in float, the others
    // in their own type.
    using K = std::conditional_t<kIsLowPrecisionFloat<T>, float, T>;
    std::vector<K> keys(static_cast<size_t>(n));
    std::vector<std::pair<K, int64_t>> pairs;
    ForEachRow(dims, dim, [&](int64_t base, int64_t stride) {
      for (int64_t j = 0; j < n; ++j) keys[j] = static_cast<K>(data[base + j * stride]);
      std::vector<int64_t> perm;
      SortRow(keys, cmp.descending, pairs, perm);
      perms.push_back(std::move(perm));
    });
  });
}

// One operand sorted by its own values with a plain LT/GT comparator: the
// row's values are sorted as they are (std::sort; no permutation, no
// gather), which is the stable order as long as equal keys are equal
// values. Floats break that in two ways: NaNs compare neither way (a NaN
// anywhere sends the whole sort down the permutation path) and -0 == +0,
// so after sorting the run of
// zeros gets back its signs in their original order. f16/bf16 (compared
// in float) and TOTALORDER keys take the permutation path. False if this
// path does not apply.
template <typename T>
bool SortRowsByValue(const Literal& operand, int64_t dim, const KeyComparator& cmp,
                     Literal& out) {
  const std::vector<int64_t>& dims = operand.shape().dims();
  const int64_t n = dims[static_cast<size_t>(dim)];
  const T* src = operand.data<T>().data();
  T* dst = out.data<T>().data();
  std::vector<T> row(static_cast<size_t>(n));
  std::vector<bool> zero_signs;
  bool ok = true;
  ForEachRow(dims, dim, [&](int64_t base, int64_t stride) {
    if (!ok) return;
    for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = src[base + j * stride];
    if constexpr (std::is_floating_point_v<T>) {
      zero_signs.clear();
      for (const T& v : row) {
        if (v != v) ok = false;
        if (v == T(0)) zero_signs.push_back(std::signbit(v));
      }
      if (!ok) return;
    }
    if (cmp.descending) {
      std::sort(row.begin(), row.end(), [](T a, T b) { return a > b; });
    } else {
      std::sort(row.begin(), row.end());
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (!zero_signs.empty()) {
        auto first_zero = std::find(row.begin(), row.end(), T(0));
        for (size_t z = 0; z < zero_signs.size(); ++z) {
          first_zero[static_cast<std::ptrdiff_t>(z)] = zero_signs[z] ? -T(0) : T(0);
        }
      }
    }
    for (int64_t j = 0; j < n; ++j) dst[base + j * stride] = row[static_cast<size_t>(j)];
  });
  return ok;
}

std::optional<Literal> SortByValue(const Literal& operand, int64_t dim, const KeyComparator& cmp) {
  if (cmp.total_order) return std::nullopt;
  Literal out(operand.shape());
  bool sorted = false;
  DispatchPrimitiveType(operand.shape().type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      sorted = SortRowsByValue<T>(operand, dim, cmp, out);
    }
  });
  if (!sorted) return std::nullopt;
  return out;
}

// Rows ordered by two keys (each ascending or descending), then by index:
// the stable order of a lexicographic comparator. False (nothing sorted)
// when a key is NaN, which would not be a strict weak order.
bool LexicographicPermutations(const Literal& first, const Literal& second, int64_t dim,
                               const LexicographicKeys& keys,
                               std::vector<std::vector<int64_t>>& perms) {
  const std::vector<int64_t>& dims = first.shape().dims();
  const int64_t n = dims[static_cast<size_t>(dim)];
  struct Entry {
    double a, b;
    int64_t index;
  };
  std::vector<Entry> row(static_cast<size_t>(n));
  bool ok = true;
  ForEachRow(dims, dim, [&](int64_t base, int64_t stride) {
    if (!ok) return;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t at = base + j * stride;
      row[static_cast<size_t>(j)] = {first.GetAsDouble(at), second.GetAsDouble(at), j};
      ok = ok && row[static_cast<size_t>(j)].a == row[static_cast<size_t>(j)].a &&
           row[static_cast<size_t>(j)].b == row[static_cast<size_t>(j)].b;
    }
    if (!ok) return;
    const bool da = keys.first.descending, db = keys.second.descending;
    std::sort(row.begin(), row.end(), [&](const Entry& x, const Entry& y) {
      if (x.a != y.a) return da ? x.a > y.a : x.a < y.a;
      if (x.b != y.b) return db ? x.b > y.b : x.b < y.b;
      return x.index < y.index;
    });
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) perm[static_cast<size_t>(j)] = row[static_cast<size_t>(j)].index;
    perms.push_back(std::move(perm));
  });
  if (!ok) perms.clear();
  return ok;
}

// ----------------------------------------------------------- general path --

absl::Status GeneralPermutations(const Instruction& inst,
                                 absl::Span<const Literal* const> operands, int64_t dim,
                                 EvalContext& ctx, std::vector<std::vector<int64_t>>& perms) {
  const Computation& comparator = *inst.attr_computation("to_apply");
  const std::vector<int64_t>& dims = operands[0]->shape().dims();
  const int64_t n = dims[static_cast<size_t>(dim)];
  const size_t k = operands.size();
  absl::Status status;
  std::vector<Literal> args(2 * k);
  std::vector<const Literal*> arg_ptrs(2 * k);
  for (size_t i = 0; i < 2 * k; ++i) arg_ptrs[i] = &args[i];
  ForEachRow(dims, dim, [&](int64_t base, int64_t stride) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    // After the first error every answer is "no": stable_sort still ends
    // (on a consistent order), and the error is returned.
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
      if (!status.ok()) return false;
      for (size_t i = 0; i < k; ++i) {
        args[2 * i] = ScalarAt(*operands[i], base + x * stride);
        args[2 * i + 1] = ScalarAt(*operands[i], base + y * stride);
      }
      absl::StatusOr<Literal> less = ctx.Call(comparator, arg_ptrs);
      if (!less.ok()) {
        status = less.status();
        return false;
      }
      return less->data<bool>()[0];
    });
    perms.push_back(std::move(perm));
  });
  return status;
}

// out's row = op's row moved by `perm`, elements of `W` bytes.
template <int W>
void PermuteRow(const Literal& op, Literal& out, int64_t base, int64_t stride,
                const std::vector<int64_t>& perm) {
  const uint8_t* src = op.untyped_data();
  uint8_t* dst = out.untyped_data();
  for (size_t j = 0; j < perm.size(); ++j) {
    std::memcpy(dst + (base + static_cast<int64_t>(j) * stride) * W,
                src + (base + perm[j] * stride) * W, W);
  }
}

absl::StatusOr<Literal> EvaluateSort(const Instruction& inst,
                                     absl::Span<const Literal* const> operands,
                                     EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(InferSort(inst).status());
  RETURN_IF_ERROR(VerifySort(inst));
  ASSIGN_OR_RETURN(int64_t dim, SortDimension(inst));
  std::vector<std::vector<int64_t>> perms;
  std::optional<KeyComparator> cmp = MatchKeyComparator(*inst.attr_computation("to_apply"));
  if (cmp && operands.size() == 1) {
    if (std::optional<Literal> sorted = SortByValue(*operands[0], dim, *cmp)) return *std::move(sorted);
  }
  std::optional<KeyFunction> key =
      cmp ? std::nullopt : MatchKeyFunction(*inst.attr_computation("to_apply"));
  if (cmp) {
    NativePermutations(*operands[static_cast<size_t>(cmp->operand)], dim, *cmp, perms);
  } else if (key) {
    // The comparator compares keys f(x): sort by the keys, computed once.
    const Literal& keyed = *operands[static_cast<size_t>(key->operand)];
    ASSIGN_OR_RETURN(Literal keys, EvaluateKeys(*key, keyed));
    NativePermutations(keys, dim, KeyComparator{0, key->descending, key->total_order}, perms);
  } else if (std::optional<LexicographicKeys> lex =
                 MatchLexicographic(*inst.attr_computation("to_apply"))) {
    const Literal& a = *operands[static_cast<size_t>(lex->first.operand)];
    const Literal& b = *operands[static_cast<size_t>(lex->second.operand)];
    ASSIGN_OR_RETURN(Literal first, EvaluateKeys(lex->first, a));
    ASSIGN_OR_RETURN(Literal second, EvaluateKeys(lex->second, b));
    if (!LexicographicPermutations(first, second, dim, *lex, perms)) {
      RETURN_IF_ERROR(GeneralPermutations(inst, operands, dim, ctx, perms));
    }
  } else {
    RETURN_IF_ERROR(GeneralPermutations(inst, operands, dim, ctx, perms));
  }
  // Apply each row's permutation to every operand.
  std::vector<Literal> results;
  for (const Literal* op : operands) {
    Literal out(op->shape());
    size_t row = 0;
    const int64_t width = ByteWidth(op->shape().type());
    ForEachRow(op->shape().dims(), dim, [&](int64_t base, int64_t stride) {
      const std::vector<int64_t>& perm = perms[row++];
      switch (width) {
        case 1: PermuteRow<1>(*op, out, base, stride, perm); break;
        case 2: PermuteRow<2>(*op, out, base, stride, perm); break;
        case 4: PermuteRow<4>(*op, out, base, stride, perm); break;
        case 8: PermuteRow<8>(*op, out, base, stride, perm); break;
        default: PermuteRow<16>(*op, out, base, stride, perm); break;  // c128
      }
    });
    results.push_back(std::move(out));
  }
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace

void RegisterSortOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kSort;
  def.min_operands = 1;
  def.max_operands = -1;
  def.attributes = {{"dimensions", AttrKind::kIntList, /*required=*/true},
                    {"is_stable", AttrKind::kBool},
                    {"to_apply", AttrKind::kComputation, /*required=*/true}};
  def.infer_shape = InferSort;
  def.verify = VerifySort;
  def.evaluate = EvaluateSort;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo

#include "arrays.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::python {
namespace {

namespace py = pybind11;
using hlo::PrimitiveType;

std::string DescribeDims(const py::array& array) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  return absl::StrCat("(", absl::StrJoin(dims, ", "), array.ndim() == 1 ? ",)" : ")");
}

std::string DtypeName(const py::dtype& dtype) {
  return dtype.attr("name").cast<std::string>();
}

// bf16 parameters also take arrays whose dtype is named "bfloat16" (the
// ml_dtypes package's), which share the uint16 layout.
bool SameElementType(const py::dtype& given, PrimitiveType type) {
  if (given.is(DtypeFor(type)) || given.equal(DtypeFor(type))) return true;
  return type == PrimitiveType::kBF16 && DtypeName(given) == "bfloat16";
}

// NumPy's bool is one byte holding 0 or 1 already; anything else that
// reached a pred (a view of other bytes) is made 0 or 1 like the C API does.
void NormalizePred(uint8_t* bytes, size_t size) {
  for (uint8_t& b : absl::Span<uint8_t>(bytes, size)) b = b != 0;
}

bool Overlaps(const void* data, int64_t size, const py::array& array) {
  const auto* begin = static_cast<const uint8_t*>(array.data());
  const auto* p = static_cast<const uint8_t*>(data);
  return size > 0 && p < begin + array.nbytes() && begin < p + size;
}

}  // namespace

py::dtype DtypeFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: return py::dtype::of<bool>();
    case PrimitiveType::kS8: return py::dtype::of<int8_t>();
    case PrimitiveType::kS16: return py::dtype::of<int16_t>();
    case PrimitiveType::kS32: return py::dtype::of<int32_t>();
    case PrimitiveType::kS64: return py::dtype::of<int64_t>();
    case PrimitiveType::kU8: return py::dtype::of<uint8_t>();
    case PrimitiveType::kU16: return py::dtype::of<uint16_t>();
    case PrimitiveType::kU32: return py::dtype::of<uint32_t>();
    case PrimitiveType::kU64: return py::dtype::of<uint64_t>();
    case PrimitiveType::kF16: return py::dtype("float16");
    case PrimitiveType::kBF16: return py::dtype::of<uint16_t>();
    case PrimitiveType::kF32: return py::dtype::of<float>();
    case PrimitiveType::kF64: return py::dtype::of<double>();
    case PrimitiveType::kC64: return py::dtype("complex64");
    case PrimitiveType::kC128: return py::dtype("complex128");
    case PrimitiveType::kInvalid: break;
  }
  throw py::type_error(absl::StrCat("element type ", hlo::PrimitiveTypeName(type),
                                    " has no NumPy dtype"));
}

py::array CheckedArgument(const py::handle& value, const hlo::Instruction& parameter,
                          int64_t index) {
  const hlo::Shape& shape = parameter.shape();
  const std::string what = absl::StrCat("input ", index, " for parameter %", parameter.name(), " (",
                                        shape.ToString(), ")");
  if (!shape.is_array()) {
    throw py::type_error(
        absl::StrCat(what, ": tuple-shaped parameters cannot be passed from Python"));
  }
  const py::dtype expected = DtypeFor(shape.type());
  py::array array;
  if (py::isinstance<py::array>(value)) {
    array = py::reinterpret_borrow<py::array>(value);
    if (!SameElementType(array.dtype(), shape.type())) {
      throw py::type_error(absl::StrCat(what, ": the array has dtype ",
                                        DtypeName(array.dtype()), " but ",
                                        hlo::PrimitiveTypeName(shape.type()), " (NumPy ",
                                        DtypeName(expected), ") is expected"));
    }
  } else {
    // A Python scalar or nested list: converted like jnp.asarray(x, dtype).
    try {
      array = py::module_::import("numpy").attr("asarray")(value, expected);
    } catch (py::error_already_set& e) {
      throw py::type_error(absl::StrCat(what, ": cannot convert ",
                                        py::str(value.get_type().attr("__name__")).cast<std::string>(),
                                        " to an array: ", e.what()));
    }
  }
  const bool dims_match =
      array.ndim() == shape.rank() &&
      std::equal(shape.dims().begin(), shape.dims().end(), array.shape(),
                 [](int64_t want, py::ssize_t got) { return want == static_cast<int64_t>(got); });
  if (!dims_match) {
    throw py::value_error(absl::StrCat(what, ": the array has shape ", DescribeDims(array),
                                       " but ", shape.ToString(), " is expected"));
  }
  // A non-contiguous array is made contiguous here (one copy).
  return py::array::ensure(array, py::array::c_style);
}

hlo::Literal ArgumentLiteral(const py::array& array, const hlo::Shape& shape) {
  hlo::Literal literal(shape);
  const size_t bytes = static_cast<size_t>(literal.size_bytes());
  if (bytes > 0) std::memcpy(literal.untyped_data(), array.data(), bytes);
  if (shape.type() == PrimitiveType::kPred) NormalizePred(literal.untyped_data(), bytes);
  return literal;
}

runtime::Buffer BorrowedArgument(const py::array& array, const hlo::Shape& shape) {
  // The owner drops its reference to the array under the GIL, from
  // whichever thread releases the last handle.
  PyObject* object = array.ptr();
  Py_INCREF(object);
  std::shared_ptr<void> owner(object, [](void* p) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
  absl::StatusOr<runtime::Buffer> buffer =
      runtime::Buffer::Borrow(shape, const_cast<void*>(array.data()), std::move(owner));
  if (!buffer.ok()) throw py::value_error(std::string(buffer.status().message()));
  return *std::move(buffer);
}

py::object ToPython(hlo::Literal literal) {
  const hlo::Shape shape = literal.shape();
  if (shape.is_tuple()) {
    py::tuple elements(literal.elements().size());
    for (size_t i = 0; i < literal.elements().size(); ++i) {
      elements[i] = ToPython(std::move(literal.elements()[i]));
    }
    return std::move(elements);
  }
  const py::dtype dtype = DtypeFor(shape.type());
  std::vector<py::ssize_t> dims(shape.dims().begin(), shape.dims().end());
  // The literal moves to the heap and the array's base owns it.
  auto* owned = new hlo::Literal(std::move(literal));
  py::capsule base(owned, [](void* p) { delete static_cast<hlo::Literal*>(p); });
  return py::array(dtype, dims, {}, owned->untyped_data(), base);
}


py::object ToPython(const runtime::Buffer& result, const std::vector<py::array>& arguments) {
  if (result.is_tuple()) {
    py::tuple elements(static_cast<size_t>(result.tuple_size()));
    for (int64_t i = 0; i < result.tuple_size(); ++i) {
      elements[static_cast<size_t>(i)] = ToPython(result.element(i), arguments);
    }
    return std::move(elements);
  }
  const hlo::Shape& shape = result.shape();
  std::vector<py::ssize_t> dims(shape.dims().begin(), shape.dims().end());
  for (const py::array& argument : arguments) {
    if (Overlaps(result.data(), result.size_bytes(), argument)) {
      return py::array(DtypeFor(shape.type()), dims, {}, result.data());  // a copy
    }
  }
  auto* owned = new runtime::Buffer(result);
  py::capsule base(owned, [](void* p) { delete static_cast<runtime::Buffer*>(p); });
  return py::array(DtypeFor(shape.type()), dims, {}, owned->data(), base);
}

}  // namespace sharc::python

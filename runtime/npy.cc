#include "runtime/npy.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"

namespace sharc::runtime {
namespace {

using hlo::PrimitiveType;

// The data section is copied byte for byte into Literal storage, which is
// host order; every supported host is little-endian like the files we accept.
static_assert(std::endian::native == std::endian::little,
              "npy I/O assumes a little-endian host");

constexpr absl::string_view kMagic = "\x93NUMPY";
// NumPy itself refuses headers above 10000 bytes by default; we allow more
// but still bound it so a corrupt length cannot make us scan gigabytes.
constexpr int64_t kMaxHeaderBytes = int64_t{1} << 20;
// Files are refused above this size before anything is read.
constexpr int64_t kMaxFileBytes = int64_t{1} << 40;

struct DtypeEntry {
  PrimitiveType type;
  absl::string_view kind_and_size;  // descr without the byte-order character
};

constexpr DtypeEntry kDtypes[] = {
    {PrimitiveType::kPred, "b1"}, {PrimitiveType::kS8, "i1"},  {PrimitiveType::kS16, "i2"},
    {PrimitiveType::kS32, "i4"},  {PrimitiveType::kS64, "i8"},  {PrimitiveType::kU8, "u1"},
    {PrimitiveType::kU16, "u2"},  {PrimitiveType::kU32, "u4"},  {PrimitiveType::kU64, "u8"},
    {PrimitiveType::kF16, "f2"},  {PrimitiveType::kF32, "f4"},  {PrimitiveType::kF64, "f8"},
    // Complex values are (real, imaginary) pairs, as NumPy stores them.
    {PrimitiveType::kC64, "c8"},  {PrimitiveType::kC128, "c16"},
};

absl::Status Error(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", what));
}

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This is a small recursive-descent reader for exactly the value forms NumPy
// writes (strings, True/False, tuples of integers); anything else is refused.
class HeaderReader {
 public:
  HeaderReader(absl::string_view text, absl::string_view name) : text_(text), name_(name) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<int64_t>> shape;
  };

  absl::StatusOr<Header> Read() {
    Header header;
    SkipSpace();
    if (!Consume('{')) return Fail("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      ASSIGN_OR_RETURN(std::string key, ReadString());
      SkipSpace();
      if (!Consume(':')) return Fail(absl::StrCat("expected ':' after '", key, "'"));
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') {
          return Fail("structured (record) dtypes are not supported; save a plain array");
        }
        ASSIGN_OR_RETURN(std::string descr, ReadString());
        header.descr = descr;
      } else if (key == "fortran_order") {
        ASSIGN_OR_RETURN(bool value, ReadBool());
        header.fortran_order = value;
      } else if (key == "shape") {
        ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadIntTuple());
        header.shape = std::move(dims);
      } else {
        return Fail(absl::StrCat("unknown header key '", key, "'"));
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Fail("expected ',' or '}' in header dict");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the header dict");
    if (!header.descr) return Fail("header has no 'descr'");
    if (!header.fortran_order) return Fail("header has no 'fortran_order'");
    if (!header.shape) return Fail("header has no 'shape'");
    return header;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  absl::Status Fail(absl::string_view what) const {
    return Error(name_, absl::StrCat("malformed .npy header (at byte ", pos_, " of '",
                                     absl::CEscape(text_.substr(0, 200)), "'): ", what));
  }

  absl::StatusOr<std::string> ReadString() {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a quoted string");
    ++pos_;
    size_t end = text_.find(quote, pos_);
    if (end == absl::string_view::npos) return Fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  absl::StatusOr<bool> ReadBool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Fail("expected True or False");
  }

  absl::StatusOr<std::vector<int64_t>> ReadIntTuple() {
    if (!Consume('(')) return Fail("expected '(' for the shape tuple");
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Consume(')')) break;
      size_t start = pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      int64_t dim = 0;
      if (pos_ == start || !absl::SimpleAtoi(text_.substr(start, pos_ - start), &dim)) {
        return Fail("expected a non-negative integer dimension");
      }
      Consume('L');  // Python 2 wrote long integers as 2L.
      if (dims.size() >= 64) return Fail("more than 64 dimensions");
      dims.push_back(dim);
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume(')')) break;
      return Fail("expected ',' or ')' in the shape tuple");
    }
    return dims;
  }

  absl::string_view text_;
  absl::string_view name_;
  size_t pos_ = 0;
};

std::string DimsToTuple(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

uint32_t ReadLittleEndian(absl::string_view bytes, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

}  // namespace

absl::StatusOr<std::string> NpyDescrFor(PrimitiveType type) {
  if (type == PrimitiveType::kBF16) {
    return absl::InvalidArgumentError(
        "bf16 has no NumPy dtype; convert the value to f32 in the program before writing it");
  }
  for (const DtypeEntry& e : kDtypes) {
    if (e.type == type) {
      char order = hlo::ByteWidth(type) == 1 ? '|' : '<';
      return absl::StrCat(std::string(1, order), e.kind_and_size);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("element type ", hlo::PrimitiveTypeName(type), " has no NumPy dtype"));
}

PrimitiveType NpyWrittenType(PrimitiveType type) {
  if (type == PrimitiveType::kBF16 || hlo::IsNarrowFloat(type)) return PrimitiveType::kF32;
  if (hlo::IsSubByteInteger(type)) {
    return hlo::IsSignedInteger(type) ? PrimitiveType::kS8 : PrimitiveType::kU8;
  }
  return type;
}

absl::StatusOr<PrimitiveType> PrimitiveTypeForNpyDescr(absl::string_view descr) {
  if (descr.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported dtype '", descr, "'"));
  }
  char order = descr[0];
  absl::string_view rest = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    // NumPy always writes a byte-order character; tolerate its absence.
    order = '=';
    rest = descr;
  }
  for (const DtypeEntry& e : kDtypes) {
    if (e.kind_and_size != rest) continue;
    bool one_byte = hlo::ByteWidth(e.type) == 1;
    if (order == '>' && !one_byte) {
      return absl::InvalidArgumentError(absl::StrCat(
          "big-endian dtype '", descr, "' is not supported; save with a little-endian dtype ('<",
          rest, "')"));
    }
    if (order == '|' && !one_byte) {
      return absl::InvalidArgumentError(absl::StrCat("dtype '", descr, "' needs a byte order"));
    }
    return e.type;
  }
  if (rest == "V2") {
    return absl::InvalidArgumentError(absl::StrCat(
        "dtype '", descr,
        "' is a raw 2-byte void type (how bfloat16 arrays are often saved); bf16 is not a NumPy "
        "dtype: save the array as float32"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported dtype '", descr,
      "' (supported: bool, int8/16/32/64, uint8/16/32/64, float16/32/64)"));
}

absl::StatusOr<std::string> EncodeNpy(const hlo::Literal& literal, absl::string_view name) {
  if (!literal.shape().is_array()) {
    return Error(name, absl::StrCat("cannot write ", literal.shape().ToString(),
                                    " to .npy: only arrays (not tuples) have a NumPy form"));
  }
  const PrimitiveType written = NpyWrittenType(literal.shape().type());
  if (written != literal.shape().type()) {
    hlo::Literal wide(hlo::Shape(written, literal.shape().dims()));
    for (int64_t i = 0; i < literal.num_elements(); ++i) {
      if (hlo::IsFloatingPoint(written)) {
        wide.SetFromDouble(i, literal.GetAsDouble(i));
      } else {
        wide.SetFromInt64(i, literal.GetAsInt64(i));
      }
    }
    return EncodeNpy(wide, name);
  }
  auto descr = NpyDescrFor(literal.shape().type());
  if (!descr.ok()) return Error(name, descr.status().message());

  std::string dict = absl::StrCat("{'descr': '", *descr, "', 'fortran_order': False, 'shape': ",
                                  DimsToTuple(literal.shape().dims()), ", }");
  // Pad with spaces and a final newline so that the data starts at a
  // multiple of 64 bytes, as NumPy does.
  int version = 1;
  size_t prefix = kMagic.size() + 2 + 2;
  if (dict.size() + 1 + prefix > 65535) {
    version = 2;
    prefix = kMagic.size() + 2 + 4;
  }
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');

  std::string out;
  out.reserve(padded + static_cast<size_t>(literal.size_bytes()));
  out.append(kMagic.data(), kMagic.size());
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  uint32_t header_len = static_cast<uint32_t>(dict.size());
  int len_width = version == 1 ? 2 : 4;
  for (int i = 0; i < len_width; ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  out.append(dict);
  out.append(reinterpret_cast<const char*>(literal.untyped_data()),
             static_cast<size_t>(literal.size_bytes()));
  return out;
}

absl::StatusOr<hlo::Literal> DecodeNpy(absl::string_view bytes, absl::string_view name,
                                       const std::optional<hlo::Shape>& expected) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    return Error(name, "not a NumPy .npy file (bad magic; expected \\x93NUMPY)");
  }
  int major = static_cast<uint8_t>(bytes[6]);
  int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return Error(name, absl::StrCat("unsupported .npy format version ", major, ".", minor,
                                    " (supported: 1.0, 2.0, 3.0)"));
  }
  size_t len_width = major == 1 ? 2 : 4;
  size_t header_start = kMagic.size() + 2 + len_width;
  if (bytes.size() < header_start) return Error(name, "truncated .npy header");
  uint64_t header_len = ReadLittleEndian(bytes.substr(8), static_cast<int>(len_width));
  if (header_len > static_cast<uint64_t>(kMaxHeaderBytes)) {
    return Error(name, absl::StrCat(".npy header too long (", header_len, " bytes; limit ",
                                    kMaxHeaderBytes, ")"));
  }
  if (bytes.size() - header_start < header_len) {
    return Error(name, absl::StrCat("truncated .npy header: it claims ", header_len,
                                    " bytes but the file has ", bytes.size() - header_start,
                                    " after the preamble"));
  }
  absl::string_view header_text = bytes.substr(header_start, header_len);
  ASSIGN_OR_RETURN(HeaderReader::Header header, HeaderReader(header_text, name).Read());

  if (*header.fortran_order) {
    return Error(name,
                 "fortran_order is True; sharc reads C-order arrays only (save "
                 "numpy.ascontiguousarray(x))");
  }
  auto type = PrimitiveTypeForNpyDescr(*header.descr);
  // A type NumPy lacks, expected: its raw bytes, or its widened values.
  const bool lacked = expected.has_value() && expected->is_array() &&
                      NpyWrittenType(expected->type()) != expected->type();
  if (!type.ok() && lacked) {
    const std::string width = absl::StrCat("V", hlo::ByteWidth(expected->type()));
    absl::string_view d = *header.descr;
    if (d.size() > 1 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) d.remove_prefix(1);
    if (d == width) type = expected->type();
  }
  if (!type.ok()) return Error(name, type.status().message());
  if (lacked && *type == NpyWrittenType(expected->type()) &&
      *header.shape == std::vector<int64_t>(expected->dims().begin(), expected->dims().end())) {
    ASSIGN_OR_RETURN(hlo::Literal wide,
                     DecodeNpy(bytes, name, hlo::Shape(*type, expected->dims())));
    hlo::Literal narrow(*expected);
    for (int64_t i = 0; i < wide.num_elements(); ++i) {
      if (hlo::IsFloatingPoint(*type)) {
        const double value = wide.GetAsDouble(i);
        narrow.SetFromDouble(i, value);
        if (std::isfinite(value) && !std::isfinite(narrow.GetAsDouble(i))) {
          return Error(name, absl::StrCat("element ", i, " (", value, ") is beyond the range of ",
                                          hlo::PrimitiveTypeName(expected->type())));
        }
        continue;
      }
      narrow.SetFromInt64(i, wide.GetAsInt64(i));
      if (narrow.GetAsInt64(i) != wide.GetAsInt64(i)) {
        return Error(name, absl::StrCat("element ", i, " (", wide.GetAsInt64(i), ") does not fit ",
                                        hlo::PrimitiveTypeName(expected->type())));
      }
    }
    return narrow;
  }
  hlo::Shape shape(*type, *header.shape);
  if (absl::Status valid = hlo::ValidateShape(shape); !valid.ok()) {
    return Error(name, valid.message());
  }
  if (expected.has_value() && shape != *expected) {
    return Error(name, absl::StrCat("holds ", shape.ToString(), " (dtype '", *header.descr,
                                    "', shape ", DimsToTuple(shape.dims()),
                                    ") but ", expected->ToString(), " is expected"));
  }

  // ValidateShape bounds the element count, so this product cannot overflow.
  uint64_t data_bytes = static_cast<uint64_t>(shape.num_elements()) *
                        static_cast<uint64_t>(hlo::ByteWidth(*type));
  uint64_t available = bytes.size() - header_start - header_len;
  if (available < data_bytes) {
    return Error(name, absl::StrCat("truncated data: ", shape.ToString(), " needs ", data_bytes,
                                    " bytes but the file has ", available));
  }
  if (available > data_bytes) {
    return Error(name, absl::StrCat(available - data_bytes, " unexpected bytes after the data of ",
                                    shape.ToString()));
  }
  hlo::Literal literal(shape);
  const char* data = bytes.data() + header_start + header_len;
  if (*type == PrimitiveType::kPred) {
    // A bool byte other than 0/1 would be undefined behaviour in C++.
    auto out = literal.data<bool>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = data[i] != 0;
  } else if (data_bytes > 0) {
    std::memcpy(literal.untyped_data(), data, data_bytes);
  }
  if (hlo::IsSubByteInteger(*type) || *type == PrimitiveType::kF4E2M1FN) {
    // Raw bytes of a type narrower than a byte (ml_dtypes leaves the upper
    // bits unspecified): keep its own bits, stored as sharc stores them
    // (hlo/ir/narrow_types.h: integers extended, floats in the low bits).
    uint8_t* bytes_out = literal.untyped_data();
    for (int64_t i = 0; i < literal.num_elements(); ++i) {
      bytes_out[i] = hlo::IsSubByteInteger(*type)
                         ? hlo::SubByteFromInt64(*type, bytes_out[i])
                         : static_cast<uint8_t>(bytes_out[i] & 0x0f);
    }
  }
  return literal;
}

absl::StatusOr<hlo::Literal> ReadNpyFile(const std::string& path,
                                         const std::optional<hlo::Shape>& expected) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::streamoff size = in.tellg();
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read file size"));
  if (size > kMaxFileBytes) {
    return Error(path, absl::StrCat("file is too large (", size, " bytes)"));
  }
  // Memory for the file is bounded by its real size; the (possibly bogus)
  // size the header announces is checked against it in DecodeNpy before the
  // Literal is allocated.
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": read failed"));
  }
  return DecodeNpy(bytes, path, expected);
}

absl::Status WriteNpyFile(const std::string& path, const hlo::Literal& literal) {
  ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(literal, path));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot create file"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace sharc::runtime

// Tests for runtime/npy.h: round trips for every dtype, NumPy interop (with
// the system python3's numpy), and malformed files that must be refused
// cleanly (no crash, no large allocation).
#include "runtime/npy.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/ir/primitive_type.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using ::sharc::testing::StatusIs;
using ::testing::HasSubstr;

// Deterministic values that exercise sign, zero and magnitude per type.
Literal MakeSample(PrimitiveType type, std::vector<int64_t> dims) {
  Literal literal(Shape(type, std::move(dims)));
  for (int64_t i = 0; i < literal.num_elements(); ++i) {
    if (hlo::IsFloatingPoint(type)) {
      literal.SetFromDouble(i, (i % 7 - 3) * 0.5);
    } else if (hlo::IsSignedInteger(type)) {
      literal.SetFromInt64(i, i % 9 - 4);
    } else {
      literal.SetFromInt64(i, i % 3 == 0 ? 0 : i % 200);
    }
  }
  return literal;
}

// One scratch directory per test process, removed when the process exits.
std::string TempDir() {
  struct Scratch {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 absl::StrCat("sharc_npy_test_", ::getpid());
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Scratch scratch;
  return scratch.path.string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A header dict wrapped in a version 1.0 preamble, followed by `data`.
std::string MakeFile(const std::string& dict, const std::string& data, int version = 1) {
  std::string header = dict;
  size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return out + header + data;
}

TEST(NpyTest, DescriptorsMatchNumpy) {
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kPred), "|b1");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kS8), "|i1");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kU8), "|u1");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kS16), "<i2");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kS64), "<i8");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kU32), "<u4");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kF16), "<f2");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kF32), "<f4");
  EXPECT_EQ(*NpyDescrFor(PrimitiveType::kF64), "<f8");
  EXPECT_THAT(NpyDescrFor(PrimitiveType::kBF16),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bf16 has no NumPy dtype")));
  EXPECT_EQ(*PrimitiveTypeForNpyDescr("=f4"), PrimitiveType::kF32);
  EXPECT_EQ(*PrimitiveTypeForNpyDescr(">i1"), PrimitiveType::kS8);
}

TEST(NpyTest, RoundTripsEveryDtypeAndRank) {
  int count = 0;
  const PrimitiveType* types = hlo::AllArrayTypes(&count);
  ASSERT_GT(count, 0);
  for (int t = 0; t < count; ++t) {
    PrimitiveType type = types[t];
    for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{
             {}, {0}, {5}, {2, 3}, {2, 3, 4}, {1, 1, 1, 7}}) {
      Literal original = MakeSample(type, dims);
      // bf16 is written as f32 and read back exactly (NpyWrittenType).
      auto bytes = EncodeNpy(original);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      // NumPy aligns the data to 64 bytes; the header length says where.
      size_t header_len = static_cast<uint8_t>((*bytes)[8]) |
                          (static_cast<size_t>(static_cast<uint8_t>((*bytes)[9])) << 8);
      EXPECT_EQ((10 + header_len) % 64, 0u);
      EXPECT_EQ((*bytes)[10 + header_len - 1], '\n');
      auto decoded = DecodeNpy(*bytes, "mem.npy", original.shape());
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(*decoded, original) << original.shape().ToString();
    }
  }
}

// Types NumPy lacks are written widened, and read from the widened dtype
// (rounding to nearest even), or from the raw void bytes ml_dtypes saves;
// an integer that does not fit is an error.
TEST(NpyTest, TypesNumpyLacksAreWrittenWidenedAndReadBack) {
  Literal bf16 = MakeSample(PrimitiveType::kBF16, {3});
  ASSERT_OK_AND_ASSIGN(std::string bytes, EncodeNpy(bf16));
  EXPECT_THAT(bytes, HasSubstr("'descr': '<f4'"));
  ASSERT_OK_AND_ASSIGN(Literal f32, DecodeNpy(bytes, "wide.npy"));
  EXPECT_EQ(f32.shape().type(), PrimitiveType::kF32);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(f32.GetAsDouble(i), bf16.GetAsDouble(i));

  const Shape expected(PrimitiveType::kBF16, {2});
  // 1 + 2^-8 is a tie between bf16's 1 and 1 + 2^-7: to even, 1.
  const float values[2] = {1.00390625f, -2.5f};
  ASSERT_OK_AND_ASSIGN(
      Literal rounded,
      DecodeNpy(MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                         std::string(reinterpret_cast<const char*>(values), sizeof(values))),
                "f32.npy", expected));
  EXPECT_EQ(rounded.shape(), expected);
  EXPECT_EQ(rounded.GetAsDouble(0), 1.0);
  EXPECT_EQ(rounded.GetAsDouble(1), -2.5);
  // bf16 bit patterns 0x3fc0 (1.5) and 0xbf80 (-1), little-endian.
  ASSERT_OK_AND_ASSIGN(
      Literal raw, DecodeNpy(MakeFile("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }",
                                      std::string("\xc0\x3f\x80\xbf", 4)),
                             "void.npy", expected));
  EXPECT_EQ(raw.GetAsDouble(0), 1.5);
  EXPECT_EQ(raw.GetAsDouble(1), -1.0);

  // ml_dtypes' int4 bytes may leave the upper bits unset: -3 arrives as 0x0d.
  ASSERT_OK_AND_ASSIGN(
      Literal s4, DecodeNpy(MakeFile("{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x0d\x07", 2)),
                            "int4.npy", Shape(PrimitiveType::kS4, {2})));
  EXPECT_EQ(s4.GetAsInt64(0), -3);
  EXPECT_EQ(s4.GetAsInt64(1), 7);
  // A finite value beyond a narrow float's range is an error, not a NaN.
  const float big[1] = {1000.0f};
  EXPECT_THAT(DecodeNpy(MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                 std::string(reinterpret_cast<const char*>(big), sizeof(big))),
                        "big.npy", Shape(PrimitiveType::kF8E4M3FN, {1})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("big.npy: element 0 (1000) is beyond the range of f8e4m3fn")));

  EXPECT_EQ(NpyWrittenType(PrimitiveType::kS4), PrimitiveType::kS8);
  EXPECT_EQ(NpyWrittenType(PrimitiveType::kF32), PrimitiveType::kF32);
  EXPECT_THAT(DecodeNpy(MakeFile("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }",
                                 std::string("\x07\x09", 2)),
                        "s8.npy", Shape(PrimitiveType::kS4, {2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("s8.npy: element 1 (9) does not fit s4")));
}

TEST(NpyTest, RoundTripsThroughFiles) {
  std::string path = TempDir() + "/round_trip.npy";
  Literal original = MakeSample(PrimitiveType::kF32, {3, 4});
  ASSERT_OK(WriteNpyFile(path, original));
  ASSERT_OK_AND_ASSIGN(Literal read, ReadNpyFile(path));
  EXPECT_EQ(read, original);
}

TEST(NpyTest, TuplesCannotBeWritten) {
  Literal tuple = Literal::Tuple({MakeSample(PrimitiveType::kF32, {2})});
  EXPECT_THAT(EncodeNpy(tuple, "t.npy"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("t.npy")));
}

TEST(NpyTest, ReadsVersions2And3AndPythonStyleHeaders) {
  std::string data(8, '\0');
  data[0] = 1;  // int32 {1, 0}
  for (int version : {2, 3}) {
    auto lit = DecodeNpy(MakeFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                                  data, version),
                         "v.npy");
    ASSERT_TRUE(lit.ok()) << lit.status();
    EXPECT_EQ(lit->shape(), Shape(PrimitiveType::kS32, {2}));
    EXPECT_EQ(lit->data<int32_t>()[0], 1);
  }
  // Double quotes, no trailing comma, other key order, Python 2 longs.
  auto lit = DecodeNpy(
      MakeFile("{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<i4\"}", data),
      "py2.npy");
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_EQ(lit->shape(), Shape(PrimitiveType::kS32, {2, 1}));
  // A 0-d array.
  auto scalar = DecodeNpy(
      MakeFile("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", data.substr(0, 4)),
      "scalar.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->shape().is_scalar());
}

TEST(NpyTest, BoolBytesAreNormalised) {
  auto lit = DecodeNpy(
      MakeFile("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\0\1\7", 3)),
      "b.npy");
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_FALSE(lit->data<bool>()[0]);
  EXPECT_TRUE(lit->data<bool>()[1]);
  EXPECT_TRUE(lit->data<bool>()[2]);
}

struct MalformedCase {
  std::string label;
  std::string bytes;
  std::string expected_message;
};

TEST(NpyTest, MalformedFilesGiveErrors) {
  const std::string f4x2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight(8, '\0');
  std::string huge_header = "\x93NUMPY";
  huge_header += std::string("\x02\x00\xff\xff\xff\x7f", 6);
  std::vector<MalformedCase> cases = {
      {"empty", "", "bad magic"},
      {"text", "HloModule m\n", "bad magic"},
      {"magic only", "\x93NUMPY", "bad magic"},
      {"version 4", MakeFile(f4x2, eight).replace(6, 1, "\x04"), "version 4.0"},
      {"truncated header", MakeFile(f4x2, eight).substr(0, 30), "truncated .npy header"},
      {"header too long", huge_header, "header too long"},
      {"fortran", MakeFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", eight),
       "fortran_order is True"},
      {"big endian", MakeFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", eight),
       "big-endian"},
      {"bfloat16 as void", MakeFile("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }",
                                    std::string(4, '\0')),
       "bf16 is not a NumPy dtype"},
      {"complex", MakeFile("{'descr': '<c4', 'fortran_order': False, 'shape': (2,), }", eight),
       "unsupported dtype '<c4'"},
      {"truncated complex",
       MakeFile("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", eight),
       "c64[2] needs 16 bytes"},
      {"structured", MakeFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                              eight),
       "structured"},
      {"negative dim", MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", eight),
       "non-negative integer"},
      {"missing shape", MakeFile("{'descr': '<f4', 'fortran_order': False, }", eight),
       "no 'shape'"},
      {"unknown key", MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                               eight),
       "unknown header key 'x'"},
      {"garbage header", MakeFile("\x01\x02\x03", eight), "does not start with '{'"},
      {"truncated data", MakeFile(f4x2, eight.substr(0, 5)), "truncated data"},
      {"trailing data", MakeFile(f4x2, eight + "xx"), "2 unexpected bytes"},
      {"absurd shape", MakeFile("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                "(1099511627776, 1099511627776), }",
                                eight),
       ""},
      {"overflowing dim", MakeFile("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                   "(99999999999999999999999,), }",
                                   eight),
       "non-negative integer"},
  };
  for (const MalformedCase& c : cases) {
    auto result = DecodeNpy(c.bytes, "bad.npy");
    EXPECT_FALSE(result.ok()) << c.label;
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("bad.npy")) << c.label;
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.expected_message))
        << c.label;
  }
}

TEST(NpyTest, EveryPrefixAndByteFlipIsHandled) {
  Literal original = MakeSample(PrimitiveType::kS16, {3, 5});
  ASSERT_OK_AND_ASSIGN(std::string bytes, EncodeNpy(original));
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeNpy(bytes.substr(0, n), "prefix.npy").ok()) << n;
  }
  // Corrupting any single header byte must give an error or a valid literal,
  // never a crash (the sanitizer build checks for silent memory errors).
  for (size_t i = 0; i < 128 && i < bytes.size(); ++i) {
    for (char value : {'\0', '\xff', '9', '(', '\''}) {
      std::string corrupt = bytes;
      corrupt[i] = value;
      (void)DecodeNpy(corrupt, "flip.npy");
    }
  }
}

TEST(NpyTest, ExpectedShapeMismatchNamesBoth) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, EncodeNpy(MakeSample(PrimitiveType::kF64, {2, 4})));
  EXPECT_THAT(DecodeNpy(bytes, "x.npy", Shape(PrimitiveType::kF32, {2, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("x.npy: holds f64[2,4] (dtype '<f8', shape (2, 4)) but f32[2,4] "
                                 "is expected")));
  EXPECT_THAT(DecodeNpy(bytes, "x.npy", Shape(PrimitiveType::kF64, {4, 2})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("f64[4,2] is expected")));
}

TEST(NpyTest, MissingFileNamesThePath) {
  EXPECT_THAT(ReadNpyFile("/nonexistent/dir/x.npy"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/dir/x.npy")));
}

// --- Interop with NumPy itself -------------------------------------------

bool PythonHasNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

int RunPython(const std::string& script) {
  std::string path = TempDir() + "/script.py";
  WriteBytes(path, script);
  int status = std::system(("/usr/bin/python3 " + path).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(NpyInteropTest, NumpyLoadsWhatWeWrite) {
  if (!PythonHasNumpy()) FAIL() << "/usr/bin/python3 cannot import numpy (install python3-numpy)";
  std::string dir = TempDir();
  int count = 0;
  const PrimitiveType* types = hlo::AllArrayTypes(&count);
  std::string checks = "import numpy as np\n";
  for (int t = 0; t < count; ++t) {
    Literal lit = MakeSample(types[t], {2, 3});
    std::string name = std::string(hlo::PrimitiveTypeName(types[t]));
    std::string path = absl::StrCat(dir, "/ours_", name, ".npy");
    ASSERT_OK(WriteNpyFile(path, lit));
    std::string values;
    for (int64_t i = 0; i < lit.num_elements(); ++i) {
      absl::StrAppend(&values, i ? ", " : "",
                      hlo::IsFloatingPoint(types[t]) ? absl::StrCat(lit.GetAsDouble(i))
                                                     : absl::StrCat(lit.GetAsInt64(i)));
    }
    ASSERT_OK_AND_ASSIGN(std::string descr, NpyDescrFor(NpyWrittenType(types[t])));
    absl::StrAppend(&checks, "a = np.load('", path, "')\n",
                    "assert a.dtype == np.dtype('", descr, "'), a.dtype\n",
                    "assert a.shape == (2, 3), a.shape\n",
                    "assert a.flags['C_CONTIGUOUS']\n",
                    "assert (a.reshape(-1).astype(np.float64) == np.array([", values,
                    "])).all(), a\n");
  }
  EXPECT_EQ(RunPython(checks), 0) << checks;
}

TEST(NpyInteropTest, WeLoadWhatNumpyWrites) {
  if (!PythonHasNumpy()) FAIL() << "/usr/bin/python3 cannot import numpy (install python3-numpy)";
  std::string dir = TempDir();
  std::string script = absl::StrCat(
      "import numpy as np\n"
      "d = '", dir, "'\n",
      "np.save(d + '/np_f32.npy', np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)\n"
      "np.save(d + '/np_i64.npy', np.arange(-3, 3, dtype=np.int64))\n"
      "np.save(d + '/np_bool.npy', np.array([[True, False], [False, True]]))\n"
      "np.save(d + '/np_f16.npy', np.array([0.5, -2.0, 65504.0], dtype=np.float16))\n"
      "np.save(d + '/np_scalar.npy', np.float64(3.25))\n"
      "np.save(d + '/np_fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32)))\n"
      "np.save(d + '/np_big.npy', np.arange(4, dtype='>f4'))\n"
      "with open(d + '/np_v2.npy', 'wb') as f:\n"
      "    np.lib.format.write_array(f, np.arange(4, dtype=np.uint16), version=(2, 0))\n"
      "with open(d + '/np_v3.npy', 'wb') as f:\n"
      "    np.lib.format.write_array(f, np.arange(4, dtype=np.int8), version=(3, 0))\n");
  ASSERT_EQ(RunPython(script), 0) << script;

  ASSERT_OK_AND_ASSIGN(Literal f32, ReadNpyFile(dir + "/np_f32.npy",
                                                Shape(PrimitiveType::kF32, {2, 3})));
  EXPECT_EQ(f32.data<float>()[0], -2.5f);
  EXPECT_EQ(f32.data<float>()[5], 2.5f);
  ASSERT_OK_AND_ASSIGN(Literal i64, ReadNpyFile(dir + "/np_i64.npy"));
  EXPECT_EQ(i64.shape(), Shape(PrimitiveType::kS64, {6}));
  EXPECT_EQ(i64.data<int64_t>()[0], -3);
  ASSERT_OK_AND_ASSIGN(Literal pred, ReadNpyFile(dir + "/np_bool.npy"));
  EXPECT_EQ(pred.shape(), Shape(PrimitiveType::kPred, {2, 2}));
  EXPECT_TRUE(pred.data<bool>()[3]);
  EXPECT_FALSE(pred.data<bool>()[1]);
  ASSERT_OK_AND_ASSIGN(Literal f16, ReadNpyFile(dir + "/np_f16.npy"));
  EXPECT_EQ(f16.GetAsDouble(0), 0.5);
  EXPECT_EQ(f16.GetAsDouble(2), 65504.0);
  ASSERT_OK_AND_ASSIGN(Literal scalar, ReadNpyFile(dir + "/np_scalar.npy"));
  EXPECT_TRUE(scalar.shape().is_scalar());
  EXPECT_EQ(scalar.data<double>()[0], 3.25);
  ASSERT_OK_AND_ASSIGN(Literal v2, ReadNpyFile(dir + "/np_v2.npy"));
  EXPECT_EQ(v2.shape(), Shape(PrimitiveType::kU16, {4}));
  EXPECT_EQ(v2.data<uint16_t>()[3], 3);
  ASSERT_OK_AND_ASSIGN(Literal v3, ReadNpyFile(dir + "/np_v3.npy"));
  EXPECT_EQ(v3.shape(), Shape(PrimitiveType::kS8, {4}));
  EXPECT_THAT(ReadNpyFile(dir + "/np_fortran.npy"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fortran_order")));
  EXPECT_THAT(ReadNpyFile(dir + "/np_big.npy"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("big-endian")));
}

}  // namespace
}  // namespace sharc::runtime

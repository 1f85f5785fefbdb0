// sharc's in-process linker (codegen/object_loader.h) on objects the system C
// compiler writes: code, constants, zeroed and initialised data, a table of
// function pointers, calls into libc and libm; and on what it must refuse.
// Halide's kernel objects go through it in every other codegen test.
#include "codegen/object_loader.h"

#include <elf.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

constexpr const char* kSource = R"(
#include <math.h>
#include <string.h>
static const double table[4] = {1.5, 2.5, 3.5, 4.5};
int zeroed[16];
int initialized = 7;
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
int (*const ops[2])(int, int) = {add, sub};
size_t call_strlen(const char* s) { return strlen(s); }
double call_cos(double x) { return cos(x); }
double lookup(int i) { return table[i & 3]; }
int bump(void) { zeroed[3] += initialized; return zeroed[3]; }
int apply(int which, int a, int b) { return ops[which & 1](a, b); }
)";

// Compiles C `source` to a relocatable object with the system compiler, as
// position-independent code (what LLVM writes for Halide), and returns its
// bytes.
std::string CompileC(const std::string& source) {
  char dir[] = "/tmp/sharc_loader_test_XXXXXX";
  if (mkdtemp(dir) == nullptr) return "";
  const std::string c = absl::StrCat(dir, "/t.c"), o = absl::StrCat(dir, "/t.o");
  std::ofstream(c) << source;
  std::string bytes;
  if (std::system(absl::StrCat("cc -c -O2 -fPIC -o ", o, " ", c).c_str()) == 0) {
    std::ifstream in(o, std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    bytes = contents.str();
  }
  std::filesystem::remove_all(dir);
  return bytes;
}

class ObjectLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!LinksObjectsInProcess()) GTEST_SKIP() << "no in-process linker on this platform";
  }
};

TEST_F(ObjectLoaderTest, LinksCodeDataAndCallsIntoTheProcess) {
  const std::string object = CompileC(kSource);
  ASSERT_FALSE(object.empty()) << "cc failed";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LoadedObject> loaded, LoadedObject::Link(object, "t.o"));
  auto call_strlen = reinterpret_cast<size_t (*)(const char*)>(loaded->Symbol("call_strlen"));
  auto call_cos = reinterpret_cast<double (*)(double)>(loaded->Symbol("call_cos"));
  auto lookup = reinterpret_cast<double (*)(int)>(loaded->Symbol("lookup"));
  auto bump = reinterpret_cast<int (*)()>(loaded->Symbol("bump"));
  auto apply = reinterpret_cast<int (*)(int, int, int)>(loaded->Symbol("apply"));
  ASSERT_NE(call_strlen, nullptr);
  ASSERT_NE(call_cos, nullptr);
  ASSERT_NE(lookup, nullptr);
  ASSERT_NE(bump, nullptr);
  ASSERT_NE(apply, nullptr);
  EXPECT_EQ(call_strlen("sharded"), 7u);
  volatile double x = 0.25;
  EXPECT_EQ(call_cos(x), std::cos(x));
  EXPECT_EQ(lookup(2), 3.5);
  EXPECT_EQ(lookup(7), 4.5);
  EXPECT_EQ(bump(), 7);  // .bss starts zeroed; .data keeps its value
  EXPECT_EQ(bump(), 14);
  EXPECT_EQ(apply(0, 5, 3), 8);
  EXPECT_EQ(apply(1, 5, 3), 2);
  // Globals are exported, statics and undefined names are not.
  EXPECT_NE(loaded->Symbol("zeroed"), nullptr);
  EXPECT_EQ(*static_cast<int*>(loaded->Symbol("initialized")), 7);
  EXPECT_EQ(loaded->Symbol("add"), nullptr);
  EXPECT_EQ(loaded->Symbol("strlen"), nullptr);
  EXPECT_EQ(loaded->Symbol("no_such_symbol"), nullptr);
  EXPECT_GT(loaded->mapped_bytes(), 0u);
  // Every function, local ones too, is listed where it landed (for
  // SHARC_PERF_MAP).
  bool found_apply = false, found_add = false;
  for (const LoadedObject::Function& f : loaded->functions()) {
    EXPECT_GT(f.size, 0u) << f.name;
    if (f.name == "apply") found_apply = f.address == reinterpret_cast<const void*>(apply);
    if (f.name == "add") found_add = true;
  }
  EXPECT_TRUE(found_apply);
  EXPECT_TRUE(found_add);
}

TEST_F(ObjectLoaderTest, UndefinedSymbolIsNamed) {
  const std::string object =
      CompileC("int sharc_no_such_function(int);\nint f(int x) { return sharc_no_such_function(x) + 1; }\n");
  ASSERT_FALSE(object.empty());
  absl::StatusOr<std::unique_ptr<LoadedObject>> loaded = LoadedObject::Link(object, "missing.o");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("undefined symbol sharc_no_such_function"),
            std::string::npos)
      << loaded.status();
  EXPECT_NE(loaded.status().message().find("missing.o"), std::string::npos) << loaded.status();
}

TEST_F(ObjectLoaderTest, RefusesWhatIsNotAnX86RelocatableObject) {
  const std::string object = CompileC(kSource);
  ASSERT_FALSE(object.empty());
  auto error_of = [](const std::string& bytes) {
    absl::StatusOr<std::unique_ptr<LoadedObject>> loaded = LoadedObject::Link(bytes, "x.o");
    return loaded.ok() ? std::string("linked") : std::string(loaded.status().message());
  };
  EXPECT_NE(error_of("HloModule m").find("not an ELF file"), std::string::npos);
  EXPECT_NE(error_of("").find("not an ELF file"), std::string::npos);
  std::string arm = object;
  arm[18] = static_cast<char>(183);  // e_machine = EM_AARCH64
  arm[19] = 0;
  EXPECT_NE(error_of(arm).find("not x86-64"), std::string::npos) << error_of(arm);
  std::string shared = object;
  shared[16] = 3;  // e_type = ET_DYN
  EXPECT_NE(error_of(shared).find("not a relocatable object"), std::string::npos);
  // Every truncation is an error (the section headers sit at the end).
  for (size_t n = 0; n < object.size(); n += 61) {
    EXPECT_NE(error_of(object.substr(0, n)), "linked") << n;
  }
}

// Rewrites the header of the first section `pick` accepts with `edit`;
// the object is returned unchanged if none is picked (the test then fails
// on its expectation).
std::string EditSection(std::string object, const std::function<bool(const Elf64_Shdr&)>& pick,
                        const std::function<void(Elf64_Shdr&)>& edit) {
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  for (int i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    const size_t at = header.e_shoff + static_cast<size_t>(i) * sizeof(Elf64_Shdr);
    std::memcpy(&section, object.data() + at, sizeof(section));
    if (!pick(section)) continue;
    edit(section);
    std::memcpy(object.data() + at, &section, sizeof(section));
    break;
  }
  return object;
}

// Fields a damaged file could hold that would send the copy, a stub or a
// relocation outside the image (found by review, not by the byte flips
// below): each is refused as DataLoss, the code on which the kernel cache
// compiles the entry again.
TEST_F(ObjectLoaderTest, MalformedHeadersAreDataLoss) {
  const std::string object = CompileC(kSource);
  ASSERT_FALSE(object.empty());
  auto nobits = [](const Elf64_Shdr& s) { return s.sh_type == SHT_NOBITS; };
  auto text = [](const Elf64_Shdr& s) { return (s.sh_flags & SHF_EXECINSTR) != 0; };
  auto rela = [](const Elf64_Shdr& s) { return s.sh_type == SHT_RELA; };
  const std::pair<const char*, std::string> cases[] = {
      // A .bss whose size wraps the image's total to nothing.
      {"huge .bss", EditSection(object, nobits, [](Elf64_Shdr& s) { s.sh_size = ~uint64_t{0} - 0x1000 - 15; })},
      {"allocated NULL section",
       EditSection(object, text, [](Elf64_Shdr& s) { s.sh_type = SHT_NULL; s.sh_offset = ~uint64_t{0} - 8; })},
      {"alignment beyond a page", EditSection(object, text, [](Elf64_Shdr& s) { s.sh_addralign = 8192; })},
      {"relocations for a missing section", EditSection(object, rela, [](Elf64_Shdr& s) { s.sh_info = 999; })},
      {"section past the end of the file",
       EditSection(object, text, [](Elf64_Shdr& s) { s.sh_offset = ~uint64_t{0} - 4; })},
  };
  for (const auto& [what, bytes] : cases) {
    ASSERT_NE(bytes, object) << what;
    absl::StatusOr<std::unique_ptr<LoadedObject>> loaded = LoadedObject::Link(bytes, "bad.o");
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << what << ": " << loaded.status();
  }
  // A relocation at the very end of its section, with too few bytes left.
  std::string late = object;
  Elf64_Ehdr header;
  std::memcpy(&header, late.data(), sizeof(header));
  for (int i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr r;
    std::memcpy(&r, late.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof(r));
    if (r.sh_type != SHT_RELA) continue;
    Elf64_Shdr target;
    std::memcpy(&target, late.data() + header.e_shoff + r.sh_info * sizeof(Elf64_Shdr), sizeof(target));
    Elf64_Rela first;
    std::memcpy(&first, late.data() + r.sh_offset, sizeof(first));
    first.r_offset = target.sh_size - 3;
    std::memcpy(late.data() + r.sh_offset, &first, sizeof(first));
    break;
  }
  ASSERT_NE(late, object);
  EXPECT_EQ(LoadedObject::Link(late, "late.o").status().code(), absl::StatusCode::kDataLoss);
  // Alignments of 0 and 3 are odd but harmless: the object still links.
  EXPECT_OK(LoadedObject::Link(EditSection(object, text, [](Elf64_Shdr& s) { s.sh_addralign = 0; }), "a0.o")
                .status());
  EXPECT_OK(LoadedObject::Link(EditSection(object, text, [](Elf64_Shdr& s) { s.sh_addralign = 3; }), "a3.o")
                .status());
}

// Damaged bytes either link or are refused; they never crash the loader
// (the fuzz target tests/fuzz/object_loader_fuzzer.cc searches further).
// Nothing linked from damaged bytes is run.
TEST_F(ObjectLoaderTest, DamagedObjectsNeverCrashTheLoader) {
  const std::string object = CompileC(kSource);
  ASSERT_FALSE(object.empty());
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = object;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    refused += LoadedObject::Link(bytes, "damaged.o").ok() ? 0 : 1;
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace sharc::codegen

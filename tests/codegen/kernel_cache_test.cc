// The kernel cache: one compile per distinct kernel, a memory hit for the
// same kernel in the same process, and a disk hit (no LLVM) after the
// in-memory cache is gone, as in a second `sharc run`.
#include <elf.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "codegen/kernel_compiler.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

constexpr const char* kText = R"(
HloModule cached
ENTRY main {
  a = f32[19,33] parameter(0)
  b = f32[19,33] parameter(1)
  m = f32[19,33] multiply(a, b)
  ROOT r = f32[19,33] tanh(m)
}
)";

TEST(KernelCacheTest, SecondCompileDoesNotInvokeLlvm) {
  char dir[] = "/tmp/sharc_cache_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  KernelCompiler& compiler = KernelCompiler::Global();
  const std::string saved = compiler.cache_dir();
  compiler.set_cache_dir(dir);
  // Whatever ran before in this process must not be found in memory.
  compiler.ClearMemoryCache();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph, GraphForComputation(*module->entry()));

  const CompileStats s0 = compiler.stats();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const CompiledKernel> first, compiler.Compile(graph));
  const CompileStats s1 = compiler.stats();
  EXPECT_GE(s1.llvm_compiles - s0.llvm_compiles, 1);  // the kernel (and the runtime, once)

  // Same process: found in memory.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const CompiledKernel> again, compiler.Compile(graph));
  EXPECT_EQ(again.get(), first.get());
  EXPECT_EQ(compiler.stats().memory_hits, s1.memory_hits + 1);

  // A "new process": memory cache gone, disk cache kept. The same program
  // parsed again (new instruction objects, same text) loads without LLVM.
  compiler.ClearMemoryCache();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> reparsed, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph2, GraphForComputation(*reparsed->entry()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const CompiledKernel> loaded, compiler.Compile(graph2));
  const CompileStats s2 = compiler.stats();
  EXPECT_EQ(s2.llvm_compiles, s1.llvm_compiles);
  EXPECT_EQ(s2.disk_hits, s1.disk_hits + 1);

  // One cache file, a shared object.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("k_", 0) != 0) continue;
    ++entries;
    EXPECT_EQ(e.path().extension().string(), ".so") << name;
  }
  EXPECT_EQ(entries, 1);

  // The cold compile's time went to lowering, LLVM and the link; the disk
  // hit spent none there, only in loading.
  EXPECT_GT(s1.lower_us, s0.lower_us);
  EXPECT_GT(s1.llvm_ir_us, s0.llvm_ir_us);
  EXPECT_GT(s1.object_us, s0.object_us);
  EXPECT_GT(s1.link_us, s0.link_us);
  EXPECT_EQ(s2.build_us, s1.build_us);
  EXPECT_EQ(s2.lower_us, s1.lower_us);
  EXPECT_EQ(s2.llvm_ir_us, s1.llvm_ir_us);
  EXPECT_EQ(s2.object_us, s1.object_us);
  EXPECT_EQ(s2.link_us, s1.link_us);
  EXPECT_GT(s2.load_us, s1.load_us);

  // The loaded kernel computes the right thing.
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*reparsed, 9);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*reparsed, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*reparsed, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-6, 1e-6));

  // A different kernel is a new compile.
  std::string other = kText;
  other.replace(other.find("tanh"), 4, "sine");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> m3, hlo::ParseAndVerifyModule(other));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph3, GraphForComputation(*m3->entry()));
  EXPECT_NE(compiler.Key(graph3), compiler.Key(graph2));
  ASSERT_OK(compiler.Compile(graph3).status());
  EXPECT_EQ(compiler.stats().llvm_compiles, s2.llvm_compiles + 1);
  compiler.set_cache_dir(saved);
  std::filesystem::remove_all(dir);
}

// A damaged cache library (a truncated file, as a full disk or a killed
// writer can leave, or a changed byte) is compiled again and replaced, not
// an error, and never loaded.
TEST(KernelCacheTest, DamagedEntryIsCompiledAgain) {
  testing_util::UseFreshCacheDir();
  KernelCompiler& compiler = KernelCompiler::Global();
  compiler.ClearMemoryCache();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph, GraphForComputation(*module->entry()));
  ASSERT_OK(compiler.Compile(graph).status());
  const std::string file = absl::StrCat(compiler.cache_dir(), "/k_", compiler.Key(graph), ".so");
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  const auto full = std::filesystem::file_size(file);
  // Where the kernel's code is in the file: a byte changed there still
  // loads (checked below), so only the seal can catch it.
  std::streamoff code_byte = 0;
  {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Elf64_Ehdr header;
    std::memcpy(&header, bytes.data(), sizeof(header));
    for (int i = 0; i < header.e_shnum && code_byte == 0; ++i) {
      Elf64_Shdr section;
      std::memcpy(&section, bytes.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof(section));
      if ((section.sh_flags & SHF_EXECINSTR) != 0 && section.sh_size > 16) {
        code_byte = static_cast<std::streamoff>(section.sh_offset + section.sh_size / 2);
      }
    }
    ASSERT_GT(code_byte, 0);
    std::string changed = bytes.substr(0, bytes.size() - 24);  // without the trailer
    changed[static_cast<size_t>(code_byte)] ^= 0x10;
    const std::string copy = absl::StrCat(compiler.cache_dir(), "/changed.so");
    std::ofstream(copy, std::ios::binary) << changed;
    void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle, nullptr) << dlerror();
    if (handle != nullptr) dlclose(handle);
    std::filesystem::remove(copy);
  }
  // Two damages: the tail lost, and one byte of code changed. The damaged
  // file replaces the entry as a new file, as another process's would: this
  // process still has the good one mapped, and changing a mapped library in
  // place would fault here, not test the cache.
  for (const bool truncate : {true, false}) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    if (truncate) {
      bytes.resize(bytes.size() / 3);
    } else {
      bytes[static_cast<size_t>(code_byte)] ^= 0x10;
    }
    const std::string damaged = file + ".damaged";
    std::ofstream(damaged, std::ios::binary) << bytes;
    std::filesystem::rename(damaged, file);
    compiler.ClearMemoryCache();
    const CompileStats before = compiler.stats();
    ASSERT_OK(compiler.Compile(graph).status()) << (truncate ? "truncated" : "changed byte");
    EXPECT_EQ(compiler.stats().llvm_compiles, before.llvm_compiles + 1);
    EXPECT_EQ(compiler.stats().disk_hits, before.disk_hits);
    EXPECT_EQ(std::filesystem::file_size(file), full);
  }

  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 3);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-6, 1e-6));
}

// A reducer's `call` prints only the callee's name: two modules that give
// the same name different bodies must still get different kernels.
TEST(KernelCacheTest, KeyCoversComputationsAReducerCalls) {
  testing_util::UseFreshCacheDir();
  KernelCompiler& compiler = KernelCompiler::Global();
  std::vector<std::string> keys;
  for (const char* op : {"add", "multiply"}) {
    const std::string text = absl::StrCat(R"(
HloModule calls
helper { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] )", op, R"((x, y) }
calls { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = f32[] call(x, y), to_apply=helper }
ENTRY main {
  a = f32[6,5] parameter(0)
  one = f32[] constant(1)
  ROOT r = f32[5] reduce(a, one), dimensions={0}, to_apply=calls
}
)");
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
    ASSERT_OK_AND_ASSIGN(KernelGraph graph, GraphForComputation(*module->entry()));
    keys.push_back(compiler.Key(graph));
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 4);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-6, 1e-6)) << op;
  }
  EXPECT_NE(keys[0], keys[1]);
}

TEST(KernelCacheTest, UnsupportedOpIsAClearError) {
  // A reducer that branches (conditional) has no Halide lowering.
  const std::string window = absl::StrCat("HloModule g\n", testing_util::kBranchingReducer, R"(
ENTRY main {
  x = f32[5,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,3] reduce-window(x, z), window={size=2x1}, to_apply=picks
}
)");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(window));
  absl::Status st = CheckHalideSupports(*module);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("reduce-window"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("%r"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace sharc::codegen

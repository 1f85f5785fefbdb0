#include "codegen/kernel_compiler.h"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "HalideRuntime.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "codegen/cache_seal.h"
#include "hlo/base/status_macros.h"
#include "codegen/cpu_tuning.h"
#include "codegen/halide_status.h"
#include "codegen/host_caches.h"
#include "codegen/host_target.h"
#include "codegen/lowering.h"
#include "codegen/object_writer.h"
#include "codegen/pipeline_builder.h"
#include "runtime/kernel_loop_pool.h"
#include "runtime/kernel_scratch.h"

#include "codegen_source_hash.h"

namespace sharc::codegen {
namespace {

// The cache format's version (53: every entry a sealed k_KEY.so) and a hash
// of codegen's sources, generated at build time (source_hash.cmake): a
// change to any lowering or schedule misses every entry an older build
// wrote, so a stale kernel is never loaded.
constexpr const char* kCodegenVersion = "sharc-codegen-54-" SHARC_CODEGEN_SOURCE_HASH;

uint64_t Fnv1a(const std::string& text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string HashHex(const std::string& text) {
  return absl::StrFormat("%016x%016x", Fnv1a(text, 14695981039346656037ull),
                         Fnv1a(text, 0x9e3779b97f4a7c15ull));
}

// Buffers at least this large are streamed (codegen/object_writer.h):
// outputs written with non-temporal stores, as they cannot stay in the cache
// for the next kernel anyway and a store through the cache would first read
// every line; inputs prefetched ahead of their loads.
constexpr int64_t kStreamedBytes = int64_t{16} << 20;

// When the outputs together reach kStreamedBytes, each output of at least a
// quarter of that (a small side output stays in the cache for its reader);
// each input that reaches kStreamedBytes. Output k is the pipeline's Func
// outputs()[k], input k its argument k.
//
// A kernel whose schedule is not a linear walk (one with a dot:
// BuiltPipeline::linear_walk) streams nothing. A prefetch ahead of a
// panel's load lands further along the same rhs row, not on the row the
// packing reads next, and AVX2's 24x4 register tile writes rows of 96
// bytes, which leave non-temporal stores half a cache line to combine.
// Compared in one process with the streaming on (`bm_codegen_kernel --vs`,
// k loop unrolled by 4 on both sides), 1 thread: 2048^3 1.045,
// 4096x1024x1024 1.030, 1024x1024x4096 1.051, 1024x4096x1024 0.995 (where
// only the inputs' prefetches differ); 2 threads: 2048^3 1.020. Without the
// prefetches alone, 2048^3 read 1.026. These gains are inside the spread
// that same-kernel pairings showed (docs/performance_log.md, session 16), so
// the rule rests as much on the reasons above. Measured only on f32 GEMMs
// with AVX2; it also covers a kernel whose large output is a broadcast of a
// dot's result, which the elementwise walk would have streamed.
StreamedBuffers StreamedBuffersOf(const KernelGraph& graph, const BuiltPipeline& built) {
  StreamedBuffers streamed;
  if (!built.linear_walk) return streamed;
  int64_t output_bytes = 0;
  for (size_t k = 0; k < graph.outputs.size(); ++k) output_bytes += OutputShape(graph, k).byte_size();
  const std::vector<Halide::Func> outputs = built.pipeline.outputs();
  for (size_t k = 0; k < graph.outputs.size() && output_bytes >= kStreamedBytes; ++k) {
    if (k < outputs.size() && OutputShape(graph, k).byte_size() >= kStreamedBytes / 4) {
      streamed.outputs.push_back(outputs[k].name());
    }
  }
  for (size_t k = 0; k < graph.inputs.size() && k < built.arguments.size(); ++k) {
    if (graph.inputs[k]->shape().byte_size() >= kStreamedBytes) {
      streamed.inputs.push_back(built.arguments[k].name);
    }
  }
  streamed.prefetch_elements = built.prefetch_elements;
  return streamed;
}

// The kernel's function in its object; Halide adds `_argv` for the entry
// point the loader looks up.
std::string KernelFunctionName(const std::string& key) { return absl::StrCat("sharc_k_", key); }

// Halide's lowering of a built kernel for the host target (no LLVM yet).
// Throws Halide::Error.
Halide::Module LowerKernel(BuiltPipeline& built, const std::string& key) {
  return built.pipeline.compile_to_module(built.arguments, KernelFunctionName(key), KernelTarget());
}

thread_local std::string last_halide_error;

extern "C" void SharcHalideErrorHandler(void*, const char* message) {
  last_halide_error = message != nullptr ? message : "";
}

absl::Status RunCommand(const std::string& command) {
  int rc = std::system(command.c_str());
  if (rc != 0) return absl::InternalError(absl::StrCat("`", command, "` failed (status ", rc, ")"));
  return absl::OkStatus();
}

// Links a kernel's object into a shared library. `ld -shared` directly:
// the `cc` driver (through a shell) costs about 10 ms more per kernel, a
// quarter of an elementwise kernel's cold compile. A kernel object needs no
// start files, and its libm calls resolve against the process at dlopen.
// Falls back to `cc -shared` where `ld` is missing or fails.
absl::Status LinkKernelLibrary(const std::string& obj, const std::string& so) {
  std::vector<std::string> args = {"ld", "-shared", "-o", so, obj};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "ld", nullptr, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  }
  return RunCommand(absl::StrCat("cc -shared -o '", so, "' '", obj, "' -lm"));
}

// A unique temporary path next to `final_path` (same filesystem, for rename).
std::string TempPath(const std::string& final_path, const std::string& suffix) {
  static std::atomic<int64_t> counter{0};
  return absl::StrCat(final_path, ".tmp", getpid(), "_", counter++, suffix);
}

alignas(64) uint8_t empty_storage[64];

void FillBuffer(const hlo::Shape& shape, void* data, halide_buffer_t* b, halide_dimension_t* dims) {
  *b = halide_buffer_t{};
  b->host = static_cast<uint8_t*>(data != nullptr ? data : empty_storage);
  b->type = StorageType(shape.type());
  b->dimensions = static_cast<int32_t>(shape.rank());
  b->dim = dims;
  std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    halide_dimension_t& hd = dims[shape.rank() - 1 - d];
    hd = halide_dimension_t{};
    hd.min = 0;
    hd.extent = static_cast<int32_t>(shape.dim(d));
    hd.stride = static_cast<int32_t>(strides[static_cast<size_t>(d)]);
  }
}

}  // namespace

CompiledKernel::CompiledKernel(std::string name, std::string key,
                               std::shared_ptr<const void> code, int (*entry)(void**),
                               std::vector<hlo::Shape> inputs, std::vector<hlo::Shape> outputs,
                               bool tuple_output)
    : name_(std::move(name)), key_(std::move(key)), code_(std::move(code)), entry_(entry),
      inputs_(std::move(inputs)), outputs_(std::move(outputs)), tuple_output_(tuple_output) {}

CompiledKernel::~CompiledKernel() = default;

absl::Status CompiledKernel::Run(absl::Span<const runtime::Buffer* const> inputs,
                                 runtime::Buffer* output) const {
  if (inputs.size() != inputs_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", name_, " got ", inputs.size(),
                                                   " inputs, expected ", inputs_.size()));
  }
  std::vector<runtime::Buffer*> outs;
  if (tuple_output_) {
    if (!output->is_tuple() || output->tuple_size() != static_cast<int64_t>(outputs_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", name_, " needs a tuple output"));
    }
    for (int64_t i = 0; i < output->tuple_size(); ++i) outs.push_back(&output->mutable_element(i));
  } else {
    outs.push_back(output);
  }
  bool any_work = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i]->shape() != outputs_[i]) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", name_, " output ", i, " is ",
                                                     outs[i]->shape().ToString(), ", expected ",
                                                     outputs_[i].ToString()));
    }
    any_work = any_work || outputs_[i].num_elements() > 0;
  }
  if (!any_work) return absl::OkStatus();
  const size_t n = inputs_.size() + outputs_.size();
  std::vector<halide_buffer_t> buffers(n);
  std::vector<halide_dimension_t> dims(n * 8);
  std::vector<void*> args(n);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs[i]->shape() != inputs_[i]) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", name_, " input ", i, " is ",
                                                     inputs[i]->shape().ToString(), ", expected ",
                                                     inputs_[i].ToString()));
    }
    FillBuffer(inputs_[i], const_cast<void*>(inputs[i]->data()), &buffers[i], &dims[i * 8]);
    args[i] = &buffers[i];
  }
  for (size_t k = 0; k < outputs_.size(); ++k) {
    size_t i = inputs_.size() + k;
    FillBuffer(outputs_[k], outs[k]->data(), &buffers[i], &dims[i * 8]);
    args[i] = &buffers[i];
  }
  int rc = entry_(args.data());
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("Halide kernel ", name_, " failed (", rc,
                                            "): ", last_halide_error));
  }
  return absl::OkStatus();
}

KernelCompiler& KernelCompiler::Global() {
  static KernelCompiler* compiler = new KernelCompiler();
  return *compiler;
}

KernelCompiler::KernelCompiler() {
  if (const char* dir = std::getenv("SHARC_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    cache_dir_ = dir;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache_dir_ = absl::StrCat(home, "/.cache/sharc");
  } else {
    cache_dir_ = "/tmp/sharc-cache";
  }
  // The core kind, the L2's size and the core count join the target:
  // schedules follow them (cpu_tuning.h, host_caches.h, dot_lowering.cc's
  // MinGemmTasks).
  target_ = absl::StrCat(KernelTarget().to_string(), " tune=", CoreKindName(HostCpuTuning().core),
                         " l2=", HostCacheSizes().l2_bytes, " cores=",
                         std::thread::hardware_concurrency());
  reciprocal_division_pays_ =
      ReciprocalDivisionPays(KernelTarget(), HostCpuTuning().vector_division_is_slow);
  if (const char* linker = std::getenv("SHARC_KERNEL_LINKER"); linker != nullptr && *linker != '\0') {
    // The in-process loader is gone (docs/performance.md, compile time);
    // every kernel is a shared object now.
    if (std::string_view(linker) != "system") {
      std::fprintf(stderr, "sharc: ignoring SHARC_KERNEL_LINKER=%s: kernels are always linked "
                   "with ld and loaded with dlopen\n", linker);
    }
  }
}

std::string KernelCompiler::cache_dir() const {
  absl::MutexLock lock(&mu_);
  return cache_dir_;
}

void KernelCompiler::set_cache_dir(std::string dir) {
  absl::MutexLock lock(&mu_);
  cache_dir_ = std::move(dir);
}

void KernelCompiler::ClearMemoryCache() {
  absl::MutexLock lock(&mu_);
  loaded_.clear();
}

CompileStats KernelCompiler::stats() const {
  return CompileStats{llvm_compiles_.load(), disk_hits_.load(), memory_hits_.load(),
                      nontemporal_stores_.load(), prefetches_.load(),
                      reciprocal_divisions_.load(), build_us_.load(), lower_us_.load(),
                      llvm_ir_us_.load(), object_us_.load(), link_us_.load(), load_us_.load()};
}

void KernelCompiler::set_reciprocal_division(ReciprocalDivision policy) {
  absl::MutexLock lock(&mu_);
  reciprocal_division_ = policy;
}

bool KernelCompiler::DividesThroughReciprocals() const {
  absl::MutexLock lock(&mu_);
  return reciprocal_division_ == ReciprocalDivision::kAlways ||
         (reciprocal_division_ == ReciprocalDivision::kAuto && reciprocal_division_pays_);
}

std::string KernelCompiler::Key(const KernelGraph& graph) const {
  return KeyFor(graph, DividesThroughReciprocals());
}

// The policy is resolved once per compile and passed here and to the object
// writer, so a concurrent set_reciprocal_division cannot file a kernel
// under the other policy's key.
std::string KernelCompiler::KeyFor(const KernelGraph& graph, bool reciprocal_division) const {
  return HashHex(absl::StrCat(kCodegenVersion, "\n", target_,
                              reciprocal_division ? "\nreciprocal-division" : "", "\n",
                              CanonicalText(graph)));
}

absl::StatusOr<std::string> KernelCompiler::LoweringText(const KernelGraph& graph) const {
  ASSIGN_OR_RETURN(BuiltPipeline built, BuildPipeline(graph));
  return built.lowered_text;
}

absl::StatusOr<KernelDump> KernelCompiler::Dump(const KernelGraph& graph) const {
  ASSIGN_OR_RETURN(BuiltPipeline built, BuildPipeline(graph));
  KernelDump dump;
  dump.funcs = built.lowered_text;
  // Lowering only: the module's statements are printed, never handed to LLVM.
  dump.loop_nest = CallHalide(absl::StrCat("lower kernel '", graph.name, "'"), [&] {
    std::ostringstream text;
    text << LowerKernel(built, Key(graph));
    return text.str();
  });
  return dump;
}

absl::Status KernelCompiler::EnsureRuntime() {
  absl::MutexLock lock(&mu_);
  if (runtime_ != nullptr) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(cache_dir_, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create kernel cache directory ", cache_dir_,
                                            ": ", ec.message()));
  }
  Halide::Target rt_target = Halide::Target(HostTargetName()).with_feature(Halide::Target::NoAsserts);
  const std::string path = absl::StrCat(cache_dir_, "/halide_runtime_",
                                        HashHex(absl::StrCat(kCodegenVersion, rt_target.to_string())),
                                        ".so");
  // The runtime is sealed as kernels are (cache_seal.h), and checked before
  // every dlopen: a damaged one (a killed writer, a full disk) is built
  // again rather than mapped into the process.
  absl::Status sealed = CheckSealedFile(path);
  if (sealed.code() == absl::StatusCode::kDataLoss || sealed.code() == absl::StatusCode::kNotFound) {
    const std::string obj = TempPath(path, ".o"), so = TempPath(path, ".so");
    RETURN_IF_ERROR(CallHalide("compile the Halide runtime",
                               [&] { Halide::compile_standalone_runtime(obj, rt_target); }));
    ++llvm_compiles_;
    absl::Status st = RunCommand(absl::StrCat("cc -shared -o '", so, "' '", obj, "' -lpthread -ldl -lm"));
    std::filesystem::remove(obj, ec);
    if (st.ok()) st = SealFile(so);
    if (!st.ok()) {
      std::filesystem::remove(so, ec);
      return st;
    }
    std::filesystem::rename(so, path, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot store ", path, ": ", ec.message()));
    sealed = CheckSealedFile(path);
  }
  RETURN_IF_ERROR(sealed);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) return absl::InternalError(absl::StrCat("dlopen ", path, ": ", dlerror()));
  using SetHandler = void* (*)(void (*)(void*, const char*));
  if (auto set = reinterpret_cast<SetHandler>(dlsym(handle, "halide_set_error_handler"))) {
    set(&SharcHalideErrorHandler);
  }
  // Kernels' parallel loops go through the runtime, which keeps them within
  // the launching device's share of the cores (runtime/kernel_loop_pool.h).
  using SetParFor = runtime::KernelLoopRunner (*)(runtime::KernelLoopRunner);
  if (auto set = reinterpret_cast<SetParFor>(dlsym(handle, "halide_set_custom_do_par_for"))) {
    runtime::SetLibraryKernelLoopRunner(set(&runtime::RunKernelParallelLoop));
  }
  // Kernels' scratch (packed GEMM panels, padded inputs) is reused across
  // calls instead of faulted in afresh each time (runtime/kernel_scratch.h).
  using MallocFn = void* (*)(void*, size_t);
  using FreeFn = void (*)(void*, void*);
  using SetMalloc = MallocFn (*)(MallocFn);
  using SetFree = FreeFn (*)(FreeFn);
  auto set_malloc = reinterpret_cast<SetMalloc>(dlsym(handle, "halide_set_custom_malloc"));
  auto set_free = reinterpret_cast<SetFree>(dlsym(handle, "halide_set_custom_free"));
  if (set_malloc != nullptr && set_free != nullptr) {
    set_malloc(&runtime::KernelScratchAllocate);
    set_free(&runtime::KernelScratchFree);
  }
  runtime_ = handle;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const CompiledKernel>> KernelCompiler::Load(
    const KernelGraph& graph, const std::string& key, const std::string& file) {
  const std::string symbol = absl::StrCat(KernelFunctionName(key), "_argv");
  const absl::Time start = absl::Now();
  // The seal first: dlopen of a damaged library could map and run anything.
  RETURN_IF_ERROR(CheckSealedFile(file));
  // The library stays loaded: kernels are few and a process may reload them.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return absl::InternalError(absl::StrCat("dlopen ", file, ": ", dlerror()));
  void* entry_address = dlsym(handle, symbol.c_str());
  std::shared_ptr<const void> code(handle, [](const void*) {});
  load_us_ += absl::ToInt64Microseconds(absl::Now() - start);
  auto entry = reinterpret_cast<int (*)(void**)>(entry_address);
  if (entry == nullptr) return absl::InternalError(absl::StrCat(file, " has no symbol ", symbol));
  std::vector<hlo::Shape> inputs, outputs;
  for (const hlo::Instruction* i : graph.inputs) inputs.push_back(i->shape());
  for (size_t k = 0; k < graph.outputs.size(); ++k) outputs.push_back(OutputShape(graph, k));
  auto kernel = std::make_shared<const CompiledKernel>(graph.name, key, std::move(code), entry,
                                                       std::move(inputs), std::move(outputs),
                                                       graph.tuple_output);
  absl::MutexLock lock(&mu_);
  loaded_[key] = kernel;
  return std::shared_ptr<const CompiledKernel>(kernel);
}

absl::StatusOr<std::shared_ptr<const CompiledKernel>> KernelCompiler::Compile(
    const KernelGraph& graph) {
  RETURN_IF_ERROR(CheckLowerable(graph));
  const bool reciprocal_division = DividesThroughReciprocals();
  const std::string key = KeyFor(graph, reciprocal_division);
  std::shared_ptr<absl::Mutex> key_mu;
  {
    absl::MutexLock lock(&mu_);
    auto it = loaded_.find(key);
    if (it != loaded_.end()) {
      ++memory_hits_;
      return it->second;
    }
    auto& slot = in_flight_[key];
    if (slot == nullptr) slot = std::make_shared<absl::Mutex>();
    key_mu = slot;
  }
  absl::MutexLock key_lock(key_mu.get());
  {
    absl::MutexLock lock(&mu_);
    auto it = loaded_.find(key);
    if (it != loaded_.end()) {
      ++memory_hits_;
      return it->second;
    }
  }
  RETURN_IF_ERROR(EnsureRuntime());
  const std::string cached = absl::StrCat(cache_dir(), "/k_", key, ".so");
  if (std::filesystem::exists(cached)) {
    absl::StatusOr<std::shared_ptr<const CompiledKernel>> hit = Load(graph, key, cached);
    if (hit.ok()) {
      ++disk_hits_;
      return hit;
    }
    // A damaged entry (a killed writer, a full disk) is compiled again, as
    // is one another process removed since (NotFound: it found it damaged).
    // Any other failure (an undefined symbol, no memory) would recur, and
    // is the caller's error.
    const absl::StatusCode code = hit.status().code();
    if (code != absl::StatusCode::kDataLoss && code != absl::StatusCode::kNotFound) {
      return hit.status();
    }
    if (code == absl::StatusCode::kDataLoss) {
      std::fprintf(stderr, "sharc: recompiling a damaged kernel cache entry: %s\n",
                   std::string(hit.status().message()).c_str());
      std::error_code ec;
      std::filesystem::remove(cached, ec);
    }
  }
  absl::Time phase_start = absl::Now();
  // Adds the time since the previous phase ended to `total`.
  auto phase_done = [&phase_start](std::atomic<int64_t>& total) {
    const absl::Time now = absl::Now();
    total += absl::ToInt64Microseconds(now - phase_start);
    phase_start = now;
  };
  ASSIGN_OR_RETURN(BuiltPipeline built, BuildPipeline(graph));
  phase_done(build_us_);
  std::string object;
  RETURN_IF_ERROR(CallHalide(absl::StrCat("compile kernel '", graph.name, "'"), [&] {
    Halide::Module module = LowerKernel(built, key);
    phase_done(lower_us_);
    const ObjectWriteStats written =
        WriteKernelObject(module, &object, StreamedBuffersOf(graph, built), reciprocal_division);
    llvm_ir_us_ += written.llvm_ir_us;
    object_us_ += written.object_us;
    phase_start = absl::Now();
    nontemporal_stores_ += written.nontemporal_stores;
    prefetches_ += written.prefetches;
    reciprocal_divisions_ += written.reciprocal_divisions;
  }));
  ++llvm_compiles_;
  std::error_code ec;
  // The directory may have changed since the runtime created it (tests).
  std::filesystem::create_directories(cache_dir(), ec);
  const std::string obj = TempPath(cached, ".o");
  const std::string so = TempPath(cached, ".so");
  absl::Status st = WriteUnsealedFile(obj, object);
  if (st.ok()) st = LinkKernelLibrary(obj, so);
  std::filesystem::remove(obj, ec);
  // The seal covers the library as `ld` wrote it.
  if (st.ok()) st = SealFile(so);
  if (!st.ok()) {
    std::filesystem::remove(so, ec);
    return st;
  }
  phase_done(link_us_);
  std::filesystem::rename(so, cached, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot store ", cached, ": ", ec.message()));
  return Load(graph, key, cached);
}

}  // namespace sharc::codegen

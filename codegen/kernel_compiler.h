// Compiling kernels once and caching them: in memory (per process) and on
// disk as shared objects of Halide AOT code (`ld -shared`, loaded with
// dlopen), so a second `sharc run` of an unchanged program never invokes
// LLVM. The key is a hash of the kernel's canonical text (kernel_graph.h)
// and the target.
//
// The disk cache lives in $SHARC_CACHE_DIR, else ~/.cache/sharc. Entries are
// written to a temporary name and renamed, so concurrent processes at worst
// compile the same kernel twice. Each entry (k_KEY.so) ends in a trailer
// with its length and checksum (cache_seal.h), checked before dlopen, so a
// damaged one is compiled again rather than loaded.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/container/flat_hash_map.h"
#include "codegen/kernel_graph.h"
#include "runtime/buffer.h"

namespace sharc::codegen {

// A loaded kernel: an entry point taking one halide_buffer_t* per input and
// output. Shared by every device and every Executable that uses it.
class CompiledKernel {
 public:
  // `code` keeps the kernel's library loaded for as long as the kernel lives.
  CompiledKernel(std::string name, std::string key, std::shared_ptr<const void> code,
                 int (*entry)(void**),
                 std::vector<hlo::Shape> inputs, std::vector<hlo::Shape> outputs, bool tuple_output);
  ~CompiledKernel();
  CompiledKernel(const CompiledKernel&) = delete;
  CompiledKernel& operator=(const CompiledKernel&) = delete;

  // Runs on `inputs` into `output` (a tuple buffer when the kernel has a tuple
  // output). Safe to call from several threads at once.
  absl::Status Run(absl::Span<const runtime::Buffer* const> inputs, runtime::Buffer* output) const;
  const std::string& key() const { return key_; }

 private:
  std::string name_;
  std::string key_;
  std::shared_ptr<const void> code_;
  int (*entry_)(void**);
  std::vector<hlo::Shape> inputs_;
  std::vector<hlo::Shape> outputs_;
  bool tuple_output_;
};

struct CompileStats {
  int64_t llvm_compiles = 0;  // kernels compiled with Halide/LLVM
  int64_t disk_hits = 0;      // kernels loaded from the disk cache
  int64_t memory_hits = 0;    // kernels found already loaded
  // Vector stores compiled as non-temporal, into outputs too large to stay
  // in the cache (codegen/object_writer.h).
  int64_t nontemporal_stores = 0;
  int64_t prefetches = 0;  // loads from large inputs given a prefetch ahead
  int64_t reciprocal_divisions = 0;  // vector divisions by a splat, via its reciprocal
  // Where cold compiles spent their time, summed over kernels, in
  // microseconds: HLO to scheduled Halide Funcs; Halide's lowering to a
  // module; Halide's LLVM IR with LLVM's optimisation passes; sharc's IR
  // edits and LLVM's instruction selection to an object; `ld -shared`;
  // checking the cache entry's seal and dlopen (also counted for kernels
  // found in the disk cache).
  int64_t build_us = 0, lower_us = 0, llvm_ir_us = 0, object_us = 0, link_us = 0, load_us = 0;
};

// Whether vector divisions by one value (softmax's row sum, a constant) go
// through the divisor's reciprocal (object_writer.h). kAuto: where the
// target's vector division is slow against its FMAs (ReciprocalDivisionPays
// in object_writer.h).
enum class ReciprocalDivision { kAuto, kAlways, kNever };

// A kernel as text (KernelCompiler::Dump).
struct KernelDump {
  // One Halide Func per instruction, and where each stored value is computed.
  std::string funcs;
  // The loop nest as Halide lowers it for this target, before LLVM: which
  // loops are parallel, vectorised or unrolled, and where each stage
  // (accumulators, packed operands, stored row values) is allocated and
  // produced. The object writer's LLVM-level edits (streaming stores,
  // prefetches, FMA contraction) are not in it.
  absl::StatusOr<std::string> loop_nest;
};

class KernelCompiler {
 public:
  // The process-wide compiler (the in-memory cache is per process).
  static KernelCompiler& Global();

  // Compiles (or finds) the kernel for `graph`.
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Compile(const KernelGraph& graph);
  // The cache key `graph` would use.
  std::string Key(const KernelGraph& graph) const;
  // The Halide lowering of `graph` as text (for `sharc compile --dump-dir`).
  absl::StatusOr<std::string> LoweringText(const KernelGraph& graph) const;
  // `graph` as text for `sharc compile --dump-dir` and for tests that check
  // a schedule's shape: its Funcs (as LoweringText) and its loop nest, both
  // from one pipeline, so the names agree. Fails only if the pipeline cannot
  // be built; a failure to lower is kept in `loop_nest`.
  absl::StatusOr<KernelDump> Dump(const KernelGraph& graph) const;
  CompileStats stats() const;
  // Where compiled kernels are kept; overridable for tests.
  std::string cache_dir() const;
  void set_cache_dir(std::string dir);
  // Forgets the in-memory cache (the disk cache stays), for tests.
  void ClearMemoryCache();
  // The reciprocal-division policy of later compiles (part of the cache
  // key); kAuto unless changed, as tests of the rewrite do.
  void set_reciprocal_division(ReciprocalDivision policy);
  // Whether later compiles rewrite such divisions (the policy resolved for
  // the target).
  bool DividesThroughReciprocals() const;

 private:
  KernelCompiler();
  absl::Status EnsureRuntime();
  std::string KeyFor(const KernelGraph& graph, bool reciprocal_division) const;
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Load(const KernelGraph& graph,
                                                             const std::string& key,
                                                             const std::string& file);

  mutable absl::Mutex mu_;
  std::string cache_dir_;
  std::string target_;
  void* runtime_ = nullptr;
  ReciprocalDivision reciprocal_division_ = ReciprocalDivision::kAuto;
  bool reciprocal_division_pays_ = false;  // on the target, for kAuto
  absl::flat_hash_map<std::string, std::shared_ptr<const CompiledKernel>> loaded_;
  // Keys being compiled right now, so two threads never compile one kernel.
  absl::flat_hash_map<std::string, std::shared_ptr<absl::Mutex>> in_flight_;
  std::atomic<int64_t> llvm_compiles_{0}, disk_hits_{0}, memory_hits_{0}, nontemporal_stores_{0},
      prefetches_{0}, reciprocal_divisions_{0};
  std::atomic<int64_t> build_us_{0}, lower_us_{0}, llvm_ir_us_{0}, object_us_{0}, link_us_{0},
      load_us_{0};
};

}  // namespace sharc::codegen

// Where the kernels' own parallel loops run, so that device threads and
// kernel loops share one budget of cores (issue 5): mesh_runtime.h gives
// every device thread max(1, cores / devices) OpenMP threads, its "share".
// Without this a Halide kernel would run its loops on Halide's own thread
// pool, sized to the cores again: 8 devices on 2 cores would then keep 8 + 2
// threads runnable.
//
// The loader of a kernel library that brings its own pool points the
// library at RunKernelParallelLoop (codegen/kernel_compiler.cc does it with
// halide_set_custom_do_par_for) and hands over the runner it replaced, which
// stays selectable for comparison (SetKernelLoopPool). The signatures are
// Halide's halide_task_t / halide_do_par_for_t, restated so that runtime/
// needs no Halide header.
#pragma once

#include <cstdint>

namespace sharc::runtime {

// One loop iteration: returns 0, or an error code that ends the loop.
using KernelLoopTask = int (*)(void* user_context, int index, uint8_t* closure);
// Runs task(index) for index in [min, min + size); returns 0 or the first
// error code a task returned.
using KernelLoopRunner = int (*)(void* user_context, KernelLoopTask task, int min, int size,
                                 uint8_t* closure);

// The runner kernels are pointed at. On a device thread whose share of the
// cores is one thread (as many devices as cores or more: mesh_runtime.h),
// the loop runs right there, serially, so 8 devices on 2 cores keep 8
// threads and no pool on top. A device with a larger share (fewer devices
// than cores) hands the loop to the selected pool (below). Inside an OpenMP
// parallel region, and on the shared executor's own threads, loops run
// serially, so nested kernel loops never multiply threads; HL_NUM_THREADS,
// if set, caps the threads of a loop as it capped Halide's pool.
// HL_NUM_THREADS as a cap on a kernel loop's threads; 0 when unset.
int KernelLoopThreadCap();

int RunKernelParallelLoop(void* user_context, KernelLoopTask task, int min, int size,
                          uint8_t* closure);

// The values are the `pool` argument of benchmarks/bm_kernel_threads.
enum class KernelLoopPool {
  // Serial at a share of one, else the runner the library came with
  // (Halide's pool). The default until the OpenMP executor below.
  kDeviceThreads = 0,
  // Always an OpenMP team (`omp parallel for`) of the device's share on the
  // device thread. Its closing barrier waits for every helper to be
  // scheduled: on a loaded host 10x slower (docs/performance_log.md).
  kOpenMpTeams = 1,
  // Always the runner the library came with (Halide's pool), whatever the
  // share: what the runtime did before kernel_loop_pool existed.
  kLibraryPool = 2,
  // Serial at a share of one, else the process-wide OpenMP executor: one
  // OpenMP team of cores - 1 threads, started once, whose threads sleep
  // (futex, no OpenMP barrier spinning) until a loop needs them. A loop
  // takes at most share - 1 of them, so devices x share threads never exceed
  // the cores; the device thread claims iterations itself and waits only for
  // iterations a helper has already started, never for a helper that has
  // not been scheduled yet.
  kOpenMpExecutor = 3,
  // Always serially on the calling thread (for comparison).
  kSerial = 4,
};

// What SetKernelLoopPool starts as (see the .cc for the measurements).
extern const KernelLoopPool kDefaultKernelLoopPool;

// Process-wide; for benchmarks that compare the pools.
void SetKernelLoopPool(KernelLoopPool pool);
KernelLoopPool GetKernelLoopPool();

// Called by a loader with the runner RunKernelParallelLoop replaced.
void SetLibraryKernelLoopRunner(KernelLoopRunner runner);

// Threads of the shared OpenMP executor started so far (0 until a loop
// first needs it; then cores - 1, at least 1). For tests.
int OpenMpExecutorThreads();

// Test hook: called on the executing thread before every task of every
// loop RunKernelParallelLoop runs, in any pool; nullptr = none.
using KernelLoopTaskObserver = void (*)(int index);
void SetKernelLoopTaskObserver(KernelLoopTaskObserver observer);

}  // namespace sharc::runtime

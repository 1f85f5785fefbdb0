// Where the kernels' own parallel loops run: on the OpenMP threads of the
// device thread that launched the kernel, so that device threads and kernel
// loops share one budget of cores (mesh_runtime.h gives every device thread
// max(1, cores / devices) OpenMP threads). Without this a Halide kernel
// would run its loops on Halide's own thread pool, sized to the cores again:
// 8 devices on 2 cores would then keep 8 + 2 threads runnable.
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
// than cores) hands the loop to the library's pool, whose caller runs tasks
// itself and waits only for tasks already started: an OpenMP team instead
// ends with a barrier at which the device thread spins until every helper
// has been scheduled, which on a loaded host made a 1-device run of a
// parallel kernel 10x slower (docs/performance.md, Collectives). Without a
// library pool such loops use an OpenMP team of the device's share. Inside
// an OpenMP parallel region loops run serially, so nested kernel loops never
// multiply threads; HL_NUM_THREADS, if set, caps a team as it capped
// Halide's pool.
int RunKernelParallelLoop(void* user_context, KernelLoopTask task, int min, int size,
                          uint8_t* closure);

enum class KernelLoopPool {
  kDeviceThreads,  // as above (the default)
  kOpenMpTeams,    // always an OpenMP team of the device's share (for comparison)
  kLibraryPool,    // always the runner the library came with (Halide's pool; before)
};

// Process-wide; for benchmarks that compare the two pools.
void SetKernelLoopPool(KernelLoopPool pool);
KernelLoopPool GetKernelLoopPool();

// Called by a loader with the runner RunKernelParallelLoop replaced.
void SetLibraryKernelLoopRunner(KernelLoopRunner runner);

// Test hook: called on the executing thread before every task of every
// loop RunKernelParallelLoop runs, in any pool; nullptr = none.
using KernelLoopTaskObserver = void (*)(int index);
void SetKernelLoopTaskObserver(KernelLoopTaskObserver observer);

}  // namespace sharc::runtime

#include "interruptible.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace sharc::python {
namespace {

namespace py = pybind11;

struct WorkState {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  absl::Status status;
};

// Workers still running after their caller was interrupted.
std::mutex g_abandoned_mutex;
std::condition_variable g_abandoned_cv;
int g_abandoned = 0;

}  // namespace

absl::Status RunInterruptibly(std::function<absl::Status()> work) {
  auto state = std::make_shared<WorkState>();
  std::thread worker([state, work = std::move(work)] {
    absl::Status status = work();
    std::lock_guard<std::mutex> lock(state->mutex);
    state->status = std::move(status);
    state->done = true;
    state->done_cv.notify_all();
  });
  while (true) {
    bool done = false;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(state->mutex);
      done = state->done_cv.wait_for(lock, std::chrono::milliseconds(50),
                                     [&] { return state->done; });
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {
      {
        std::lock_guard<std::mutex> lock(g_abandoned_mutex);
        ++g_abandoned;
      }
      // The worker owns copies of everything it uses; it reports to the
      // abandoned count instead of its (gone) caller.
      std::thread([state, thread = std::move(worker)]() mutable {
        thread.join();
        std::lock_guard<std::mutex> lock(g_abandoned_mutex);
        --g_abandoned;
        g_abandoned_cv.notify_all();
      }).detach();
      throw py::error_already_set();
    }
  }
  worker.join();
  return state->status;
}

void WaitForAbandonedWork() {
  py::gil_scoped_release release;
  std::unique_lock<std::mutex> lock(g_abandoned_mutex);
  g_abandoned_cv.wait(lock, [] { return g_abandoned == 0; });
}

}  // namespace sharc::python

#include "runtime/mpi_watchdog.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/mpi_session.h"

namespace sharc::runtime {
namespace {

using Clock = std::chrono::steady_clock;

struct Armed {
  Clock::time_point deadline;
  std::string message;
};

// One thread per process, started on first use and never joined: it sleeps
// until the earliest deadline and lives as long as the process.
class Watchdog {
 public:
  static Watchdog& Get() {
    static Watchdog* watchdog = new Watchdog();
    return *watchdog;
  }

  int64_t Arm(absl::Duration timeout, std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t id = next_id_++;
    armed_[id] = Armed{Clock::now() + absl::ToChronoNanoseconds(timeout), std::move(message)};
    if (!started_) {
      started_ = true;
      std::thread([this] { Loop(); }).detach();
    }
    cv_.notify_all();
    return id;
  }

  void Disarm(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_.erase(id);
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (armed_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto earliest = armed_.begin();
      for (auto it = armed_.begin(); it != armed_.end(); ++it) {
        if (it->second.deadline < earliest->second.deadline) earliest = it;
      }
      if (Clock::now() >= earliest->second.deadline) {
        std::fprintf(stderr, "sharc: error: %s\n", earliest->second.message.c_str());
        std::fflush(stderr);
        AbortMpiJob(kWatchdogExitCode);
      }
      cv_.wait_until(lock, earliest->second.deadline);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Armed> armed_;
  int64_t next_id_ = 0;
  bool started_ = false;
};

}  // namespace

MpiWatchdogGuard::MpiWatchdogGuard(absl::Duration timeout, std::string message)
    : id_(Watchdog::Get().Arm(timeout, std::move(message))) {}

MpiWatchdogGuard::~MpiWatchdogGuard() { Watchdog::Get().Disarm(id_); }

}  // namespace sharc::runtime

#include "runtime/raised_errors.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>

namespace mcrp {

std::atomic<bool> g_handlers_wrapped{false};

namespace {

thread_local int t_raised_code = MPI_SUCCESS;

constexpr std::size_t kSlots = 64;

// The program's handler of each slot; a slot once filled keeps its function until exit, since a
// communicator may keep using an error handler after the program has freed its handle.
std::array<std::atomic<MPI_Comm_errhandler_function*>, kSlots> g_user_handlers{};

// Recorded before the call too: a handler that never returns (one that longjmps) still leaves it.
template <std::size_t Slot>
void recording_handler(MPI_Comm* comm, int* code, ...) {
  t_raised_code = *code;
  g_user_handlers[Slot].load(std::memory_order_acquire)(comm, code);
  t_raised_code = *code;
}

template <std::size_t... Slot>
constexpr std::array<MPI_Comm_errhandler_function*, kSlots> make_recording_handlers(std::index_sequence<Slot...>) {
  return {&recording_handler<Slot>...};
}
constexpr std::array<MPI_Comm_errhandler_function*, kSlots> kRecordingHandlers =
    make_recording_handlers(std::make_index_sequence<kSlots>{});

std::mutex g_slots_mutex;

}  // namespace

MPI_Comm_errhandler_function* recording_comm_handler(MPI_Comm_errhandler_function* user) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    MPI_Comm_errhandler_function* held = g_user_handlers[slot].load(std::memory_order_relaxed);
    if (held == user) return kRecordingHandlers[slot];
    if (held == nullptr) {
      g_user_handlers[slot].store(user, std::memory_order_release);
      g_handlers_wrapped.store(true, std::memory_order_relaxed);
      return kRecordingHandlers[slot];
    }
  }
  return user;
}

int take_recorded_code() { return std::exchange(t_raised_code, MPI_SUCCESS); }

}  // namespace mcrp

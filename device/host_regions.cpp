#include "device/host_regions.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mcrp::device {
namespace {

// Field 47 of /proc/self/stat (start_brk, Linux >= 3.3): where the brk heap begins. Fields are
// counted after the command name, which may itself contain spaces and parentheses.
std::uintptr_t read_start_brk() {
  std::FILE* file = std::fopen("/proc/self/stat", "r");
  if (file == nullptr) return 0;
  char text[2048] = "";
  const std::size_t length = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[length] = '\0';
  const char* cursor = std::strrchr(text, ')');
  if (cursor == nullptr) return 0;
  ++cursor;  // now before field 3
  for (int field = 3; field < 47; ++field) {
    cursor = std::strchr(cursor + 1, ' ');
    if (cursor == nullptr) return 0;
  }
  return static_cast<std::uintptr_t>(std::strtoull(cursor + 1, nullptr, 10));
}

struct ProgramData {
  static constexpr int kMaxSegments = 4;
  AddressRange segments[kMaxSegments];
  int count = 0;
};

// The main program is the first object dl_iterate_phdr reports; it is never unloaded.
int collect_main_program(dl_phdr_info* info, std::size_t, void* out) {
  auto* data = static_cast<ProgramData*>(out);
  for (int i = 0; i < info->dlpi_phnum && data->count < ProgramData::kMaxSegments; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_W) == 0) continue;
    const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    data->segments[data->count++] = AddressRange{begin, begin + header.p_memsz};
  }
  return 1;  // stop after the first object
}

// Where the brk heap starts and the program's writable segments. Found once, at the first lookup of
// any thread, on the cold path each thread takes before its first heap or data check
// (stack_bounds_from_thread_local), not by a function-local static, whose guard every lookup would
// test, nor when the library is loaded, which would read /proc in processes that never look.
ProgramData g_main_program_data;
std::uintptr_t g_heap_start = 0;
std::once_flag g_regions_found;

void find_lasting_regions() {
  std::call_once(g_regions_found, [] {
    dl_iterate_phdr(collect_main_program, &g_main_program_data);
    g_heap_start = read_start_brk();
  });
}

// [lowest address, top) of this thread's stack as the threads library knows it, at most the top
// 256 MiB. For the main thread glibc reports the stack's size limit, and with `ulimit -s unlimited`
// that reaches down to the next mapping below, a gap where a fiber's stack could later be mapped
// (and device memory between it and the stack): a frame there would claim everything above it.
// No real stack is that deep; a frame below the cap is merely not claimed.
AddressRange thread_stack_bounds() {
  constexpr std::size_t kDeepest = std::size_t{256} << 20;
  AddressRange bounds;
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return bounds;
  void* lowest = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attributes, &lowest, &size) == 0 && lowest != nullptr) {
    bounds.end = reinterpret_cast<std::uintptr_t>(lowest) + size;
    bounds.begin = bounds.end - (size < kDeepest ? size : kDeepest);
  }
  pthread_attr_destroy(&attributes);
  return bounds;
}

// The program break. glibc keeps it in __curbrk, which every brk and sbrk updates (its own, and
// UCX's memory hooks, which replace them: a probe under Debian's MPICH with UCX found __curbrk equal
// to the kernel's break after heap growth, malloc_trim and sbrk both ways). Read directly, since
// sbrk(0) is not free everywhere: under UCX's hooks it is a brk system call behind a lock, 115 ns
// here and 150 ns on the H200 machine, more than the driver query this check exists to avoid.
// Elsewhere (another C library) sbrk(0) answers.
extern "C" void* __curbrk __attribute__((weak));

void* current_break() {
  if (&__curbrk != nullptr && __curbrk != nullptr) return __atomic_load_n(&__curbrk, __ATOMIC_RELAXED);
  return sbrk(0);
}

// Per thread, found on first use. The default TLS model: initial-exec would save a few ns but makes
// dlopen of the library fail ("cannot allocate memory in static TLS block"), and Python loads it so.
struct StackCache {
  AddressRange bounds;
  bool known = false;
};
thread_local StackCache t_stack;

// The main thread's bounds again, in globals: with the default TLS model every thread_local access
// is a call into the dynamic linker (__tls_get_addr), about half of this whole check's instructions,
// and the main thread makes most MPI calls. It publishes them at its first lookup (after
// find_lasting_regions, so a reader of g_main_thread sees those too); a thread is
// recognised by its thread pointer (what pthread_self returns), which no other thread can have
// while the main thread lives, nor after (its control block is not on a stack the threads library
// reuses).
std::uintptr_t thread_identity() {
#if defined(__x86_64__) || defined(__aarch64__)
  return reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
#else
  return static_cast<std::uintptr_t>(pthread_self());
#endif
}

AddressRange g_main_stack;  // written before g_main_thread (again in a child forked by another thread)
std::atomic<std::uintptr_t> g_main_thread{0};  // 0 until the main thread has looked

bool is_main_thread() { return syscall(SYS_gettid) == getpid(); }

// Every thread but the published main thread, and the main thread until it has published.
[[gnu::noinline]] const AddressRange& stack_bounds_from_thread_local() {
  if (!t_stack.known) {
    find_lasting_regions();
    t_stack.bounds = thread_stack_bounds();
    t_stack.known = true;
    if (is_main_thread()) {
      g_main_stack = t_stack.bounds;
      g_main_thread.store(thread_identity(), std::memory_order_release);
    }
  }
  return t_stack.bounds;
}

// The pieces below are inline here, so that in_lasting_host_memory is one call for its callers.
inline const AddressRange& stack_bounds_of_this_thread() {
  if (thread_identity() == g_main_thread.load(std::memory_order_acquire)) return g_main_stack;
  return stack_bounds_from_thread_local();
}

// Only frames from `frame` (one of the caller's) up are live. On a stack the threads library does
// not know (a fiber, a signal stack) the frame lies outside the bounds, and nothing is claimed.
inline AddressRange live_stack_above(std::uintptr_t frame) {
  const AddressRange& bounds = stack_bounds_of_this_thread();
  if (!bounds.contains(frame)) return {};
  return AddressRange{frame, bounds.end};
}

inline AddressRange heap_below_break() {
  void* current = current_break();
  if (g_heap_start == 0 || current == nullptr || current == reinterpret_cast<void*>(-1)) return {};
  return AddressRange{g_heap_start, reinterpret_cast<std::uintptr_t>(current)};
}

inline bool in_program_data(std::uintptr_t address) {
  for (int i = 0; i < g_main_program_data.count; ++i) {
    if (g_main_program_data.segments[i].contains(address)) return true;
  }
  return false;
}

}  // namespace

AddressRange brk_heap() {
  find_lasting_regions();
  return heap_below_break();
}

AddressRange live_stack_of_this_thread() {
  return live_stack_above(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
}

bool in_main_program_data(std::uintptr_t address) {
  find_lasting_regions();
  return in_program_data(address);
}

// The stack check comes first: it finds the other regions on a thread's first lookup.
bool in_lasting_host_memory(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  return live_stack_above(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0))).contains(address) ||
         heap_below_break().contains(address) || in_program_data(address);
}

}  // namespace mcrp::device

// The kernel's id of the calling thread (what `ps -L`, gdb and cuda-gdb call its LWP), read once per
// thread: the timeout report names threads by it, so that it can be set beside host stacks.
#pragma once
#include <sys/syscall.h>
#include <unistd.h>

namespace mcrp {

// Zero-initialised, so that an access needs no guard of a thread-local initialiser.
inline thread_local int t_thread_id = 0;

inline int this_thread_id() {
  if (t_thread_id == 0) t_thread_id = static_cast<int>(syscall(SYS_gettid));
  return t_thread_id;
}

}  // namespace mcrp

// Memory that is host memory for as long as the process lives, recognised without asking CUDA.
//
// Asking the driver where a pointer lives (cudaPointerGetAttributes) costs 200-250 ns on the H100
// machine, more than a whole small host collective's overhead budget. Most small host buffers sit in
// places that can never hold device memory, because their addresses are ordinary process mappings
// that stay mapped: the brk heap below the current program break, the calling thread's live stack
// (from its stack pointer up), and the writable segments of the main program. A pointer there is
// host; everything else (mmap'd host buffers, other threads' stacks, shared libraries' data, pinned,
// device and managed memory) is left to the driver.
//
// Why no cache of device ranges: without hooks on every free function (which static cudart, the
// default of nvcc, makes impossible: see docs/routing.md "How memory kinds are detected"), a cached device
// range cannot be trusted after cudaFree -- its addresses may come back as another device's memory
// or as pinned host memory, and a wrong answer on one rank splits a collective's path across ranks.
#pragma once
#include <cstdint>

namespace mcrp::device {

// True only for addresses that are certainly host memory (see above). Never calls CUDA; costs a few
// nanoseconds. False means "not known here", not "device".
bool in_lasting_host_memory(const void* pointer);

// The pieces, for tests and the detection benchmark. [begin, end) ranges; empty when unknown.
struct AddressRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  bool contains(std::uintptr_t address) const { return address >= begin && address < end; }
};
AddressRange brk_heap();                     // [start of the brk heap, current program break)
AddressRange live_stack_of_this_thread();    // [current stack pointer, top of this thread's stack)
bool in_main_program_data(std::uintptr_t address);

}  // namespace mcrp::device

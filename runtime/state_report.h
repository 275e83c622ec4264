// What the library was doing when MCRPMPI_NCCL_TIMEOUT first expired in this process, on stderr:
// each NCCL communicator (its setup, queue, enqueue, side thread, whether work is on its stream),
// who holds the NCCL launch lock, which threads wait for what and since when, and the library's
// requests in flight. A run stopped by the timeout then says where it stood, beside (or without) the
// host stacks of the GPU suite's watcher (tests/gpu/stacks-after.sh), whose thread ids it uses.
#pragma once
#include <string>

namespace mcrp {

// The process's rank in MPI_COMM_WORLD, kept at MPI_Init for the report's first line: the report
// calls no MPI (it may run inside the base MPI's progress, polling a request of the library).
void remember_world_rank(int rank);

// Prints the report once per process, headed by `why`; later calls print nothing. Called where a
// timeout is found, by a thread that holds none of the library's locks.
void report_library_state(const std::string& why);

}  // namespace mcrp

// The same report now, headed by `why`, whenever asked: for a test's or an application's own
// watchdog (test_thread_stress prints it with its stall report). Any thread that holds none of the
// library's locks, MPI initialised or not; it calls no MPI.
extern "C" void mcrpmpi_report_state(const char* why);

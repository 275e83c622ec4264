// The memory spaces a test can put its buffers in, chosen by name on the command line:
//   host         ordinary host memory
//   fake-device  the library's fake device memory (MCRPMPI_FAKE_DEVICE=1, device/fake_device.h):
//                host memory the library treats as device memory, so CPU CI runs its device paths
//   fake-device-legacy  the same, filled through the fake legacy default stream: an upload waits
//                there until the library orders its work after that stream (or a download, or a
//                free), so a path that forgets to is caught (device/fake_device.h)
//   device       CUDA device memory of this rank's GPU
//   device-legacy  the same, uploads issued late on the legacy default stream (tests/gpu/device_memory.h)
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "tests/mpi/memory_space.h"

namespace mcrp_test {

constexpr int kSkipExitCode = 77;  // ctest reports it as skipped

// The space, or null when it cannot be had on every rank of `comm` (no GPU, no fake device): rank 0
// has then printed "SKIPPED: <why>" and the caller exits with kSkipExitCode after MPI_Finalize.
std::unique_ptr<MemorySpace> make_memory_space(const std::string& name, MPI_Comm comm);

// make_memory_space on MPI_COMM_WORLD for the space `--space <name>` names, else `fallback`.
std::unique_ptr<MemorySpace> space_option(int argc, char** argv, const char* fallback);

// For the device-buffer programs (tests/gpu) that take a flag instead of `--space <name>`: `--host`,
// `--fake-device`, `--fake-device-legacy` or `--device-legacy` anywhere among the arguments, else
// CUDA device memory;
// then make_memory_space on MPI_COMM_WORLD (null: skip). Two flags at once is a usage error:
// message and MPI_Abort.
std::unique_ptr<MemorySpace> space_from_arguments(int argc, char** argv);

// The two sides of the point-to-point programs: `--space S` for both, `--send-space S` and
// `--recv-space S` for one each (default host), made on MPI_COMM_WORLD. `ready()` is false when
// either cannot be had (skip, as make_memory_space says).
struct SendReceiveSpaces {
  std::string send_name;
  std::string recv_name;
  std::unique_ptr<MemorySpace> send;
  std::unique_ptr<MemorySpace> recv;
  bool ready() const { return send && recv; }
};
SendReceiveSpaces send_receive_spaces_from_arguments(int argc, char** argv);

}  // namespace mcrp_test

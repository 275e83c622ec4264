#include "p2p/attached_buffer.h"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/errors.h"
#include "runtime/host_only.h"

namespace mcrp {
namespace {

// The host buffers attached in place of device memory, by their address, each with the caller's.
// A map, not one slot: a detach on one thread and an attach on another may overlap, and each
// detach must find the substitute its own base call returned. No base-MPI call is made under the
// lock.
struct Substitutes {
  std::mutex mutex;
  std::map<void*, std::pair<void*, std::unique_ptr<char[]>>> by_address;
};

Substitutes& substitutes() {
  static Substitutes* instance = new Substitutes;  // never destroyed: detaches may come at exit
  return *instance;
}

bool needs_substitute(const void* buffer, MPI_Count size) {
  return !host_only_process() && buffer != nullptr && size > 0 && !base_mpi_cuda_aware() &&
         device::locate(buffer).kind == device::MemoryKind::device;
}

}  // namespace

int attach_buffer(void* buffer, MPI_Count size, const std::function<int(void* address)>& attach) {
  if (!needs_substitute(buffer, size)) return attach(buffer);
  std::unique_ptr<char[]> host(new (std::nothrow) char[static_cast<std::size_t>(size)]);
  if (!host) {
    return raise_error(MPI_COMM_WORLD, "MPI_Buffer_attach", 0,
                       Status(MPI_ERR_NO_MEM, "no host memory to attach in place of the device buffer"));
  }
  void* const address = host.get();
  const int rc = attach(address);  // refused (a buffer already attached): the substitute goes
  if (rc != MPI_SUCCESS) return rc;
  Substitutes& all = substitutes();
  const std::lock_guard<std::mutex> lock(all.mutex);
  all.by_address[address] = {buffer, std::move(host)};
  return MPI_SUCCESS;
}

int detach_buffer(void* buffer_addr, const std::function<int(void** address)>& detach) {
  void* address = nullptr;
  const int rc = detach(&address);
  std::unique_ptr<char[]> substitute;  // freed after the lock, once its messages are delivered
  if (rc == MPI_SUCCESS && address != nullptr) {
    Substitutes& all = substitutes();
    const std::lock_guard<std::mutex> lock(all.mutex);
    const auto found = all.by_address.find(address);
    if (found != all.by_address.end()) {
      address = found->second.first;
      substitute = std::move(found->second.second);
      all.by_address.erase(found);
    }
  }
  if (rc == MPI_SUCCESS && buffer_addr != nullptr) *static_cast<void**>(buffer_addr) = address;
  return rc;
}

}  // namespace mcrp

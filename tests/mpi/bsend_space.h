// Host memory attached for buffered sends (MPI_Buffer_attach) while the object lives; the
// destructor detaches it, which waits until every buffered message has left.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mcrp_test {

class BsendSpace {
 public:
  // Room for `messages` buffered sends of up to `bytes` each (at most 1 GiB in all: an int).
  BsendSpace(MPI_Count bytes, int messages)
      : space_(static_cast<std::size_t>(
            std::min<MPI_Count>((bytes + MPI_BSEND_OVERHEAD + 64) * messages, MPI_Count{1} << 30))) {
    MPI_Buffer_attach(space_.data(), static_cast<int>(space_.size()));
  }
  ~BsendSpace() {
    void* detached = nullptr;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
  }
  BsendSpace(const BsendSpace&) = delete;
  BsendSpace& operator=(const BsendSpace&) = delete;

 private:
  std::vector<char> space_;
};

}  // namespace mcrp_test

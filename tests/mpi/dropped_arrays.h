// What mpi4py 4.1 does to the counts, displacements and datatypes arrays of several nonblocking and
// persistent collectives (Iallgatherv, Ireduce_scatter, Allgatherv_init, Reduce_scatter_init, ...):
// it frees them as soon as the call has returned. The base MPI reads them during the call (a
// persistent init builds its schedule then), so such programs work without the library, and must
// with it. Tests drop their arrays so: overwritten with values no buffer fits, then freed.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <vector>

namespace mcrp_test {

inline constexpr int kDroppedCount = 0x3ffffff1;  // a count or displacement no test buffer fits

template <class T>
void drop_array(std::vector<T>& array, T garbage) {
  std::fill(array.begin(), array.end(), garbage);
  std::vector<T>().swap(array);
}

}  // namespace mcrp_test

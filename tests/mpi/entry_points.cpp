#include "tests/mpi/entry_points.h"

#include <vector>

#include "tests/mpi/dropped_arrays.h"

namespace mcrp_test {

const char* coll_name(Coll coll) {
  static const char* const names[] = {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) #Name,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
  };
  return names[static_cast<int>(coll)];
}

bool is_rooted(Coll coll) {
  return coll == Coll::Reduce || coll == Coll::Bcast || coll == Coll::Gather || coll == Coll::Gatherv ||
         coll == Coll::Scatter || coll == Coll::Scatterv;
}

bool is_reduction(Coll coll) {
  return coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::Reduce_scatter ||
         coll == Coll::Reduce_scatter_block || coll == Coll::Scan || coll == Coll::Exscan;
}

const char* call_form_name(CallForm form) {
  switch (form) {
    case CallForm::blocking: return "blocking";
    case CallForm::nonblocking: return "nonblocking";
    case CallForm::persistent: return "persistent";
  }
  return "?";
}

namespace {

// The counts and displacements arrays one call is given, private to it in both widths, and dropped
// as soon as the call that takes them returns (a nonblocking call, a persistent init), as mpi4py
// drops them (tests/mpi/dropped_arrays.h). Null stays null (an ignored array).
class CallArrays {
 public:
  CallArrays(const CollArgs& a, int n) {
    const MPI_Count* given[kArrays] = {a.sendcounts, a.sdispls, a.recvcounts, a.rdispls};
    for (int k = 0; k < kArrays; ++k) {
      if (given[k] == nullptr) continue;
      wide_[k].assign(given[k], given[k] + n);
      narrow_[k].assign(given[k], given[k] + n);
      present_[k] = true;
    }
  }
  enum Which { sendcounts, sdispls, recvcounts, rdispls, kArrays };
  const MPI_Count* wide(Which k) const { return present_[k] ? wide_[k].data() : nullptr; }
  const int* narrow(Which k) const { return present_[k] ? narrow_[k].data() : nullptr; }

  void drop() {
    for (int k = 0; k < kArrays; ++k) {
      drop_array<MPI_Count>(wide_[k], kDroppedCount);
      drop_array(narrow_[k], kDroppedCount);
    }
  }

 private:
  std::vector<MPI_Count> wide_[kArrays];
  std::vector<int> narrow_[kArrays];
  bool present_[kArrays] = {};
};

// A nonblocking call or a persistent init has returned: its arrays go; a persistent request is
// started (once they are gone).
int after_start(int rc, CallForm form, MPI_Request* request, CallArrays& arrays) {
  arrays.drop();
  return rc == MPI_SUCCESS && form == CallForm::persistent ? MPI_Start(request) : rc;
}

// The names collectives.def's ARGS lists use, bound to the record's scalar fields in the count type
// of one form (the arrays are bound by the caller). Ignored fields are passed unchanged: what the
// library does with them is the point.
#define MCRP_TEST_BIND_SCALARS(COUNT)                                  \
  [[maybe_unused]] const void* sendbuf = a.sendbuf;                    \
  [[maybe_unused]] void* recvbuf = a.recvbuf;                          \
  [[maybe_unused]] COUNT count = static_cast<COUNT>(a.count);          \
  [[maybe_unused]] MPI_Datatype datatype = a.datatype;                 \
  [[maybe_unused]] COUNT sendcount = static_cast<COUNT>(a.sendcount);  \
  [[maybe_unused]] MPI_Datatype sendtype = a.sendtype;                 \
  [[maybe_unused]] COUNT recvcount = static_cast<COUNT>(a.recvcount);  \
  [[maybe_unused]] MPI_Datatype recvtype = a.recvtype;                 \
  [[maybe_unused]] MPI_Op op = a.op;                                   \
  [[maybe_unused]] int root = a.root;                                  \
  [[maybe_unused]] MPI_Comm comm = a.comm;

#define MCRP_UNPAREN(...) __VA_ARGS__

// One case per collective: blocking, nonblocking, persistent. `displs` is the one displacement
// array of allgatherv, gatherv (receive side) and scatterv (send side).
#define MCRP_TEST_CASE(Name, NonblockingName, SUFFIX, ARGS)                                                  \
  case Coll::Name: {                                                                                         \
    [[maybe_unused]] const auto* displs = coll == Coll::Scatterv ? sdispls : rdispls;                        \
    switch (form) {                                                                                          \
      case CallForm::blocking: return MPI_##Name##SUFFIX ARGS;                                               \
      case CallForm::nonblocking:                                                                            \
        return after_start(MPI_##NonblockingName##SUFFIX(MCRP_UNPAREN ARGS, request), form, request, arrays); \
      case CallForm::persistent:                                                                             \
        return after_start(MPI_##Name##_init##SUFFIX(MCRP_UNPAREN ARGS, MPI_INFO_NULL, request), form, request, \
                           arrays);                                                                          \
    }                                                                                                        \
    break;                                                                                                   \
  }

#define MCRP_IF_LARGE_0(...)
#define MCRP_IF_LARGE_1(...) __VA_ARGS__

int start_narrow(Coll coll, CallForm form, const CollArgs& a, int n, MPI_Request* request) {
  CallArrays arrays(a, n);
  [[maybe_unused]] const int* sendcounts = arrays.narrow(CallArrays::sendcounts);
  [[maybe_unused]] const int* sdispls = arrays.narrow(CallArrays::sdispls);
  [[maybe_unused]] const int* recvcounts = arrays.narrow(CallArrays::recvcounts);
  [[maybe_unused]] const int* rdispls = arrays.narrow(CallArrays::rdispls);
  MCRP_TEST_BIND_SCALARS(int)
  switch (coll) {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
    MCRP_TEST_CASE(Name, NonblockingName, , ARGS)
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
  }
  return MPI_ERR_INTERN;
}

int start_large(Coll coll, CallForm form, const CollArgs& a, int n, MPI_Request* request) {
  CallArrays arrays(a, n);
  [[maybe_unused]] const MPI_Count* sendcounts = arrays.wide(CallArrays::sendcounts);
  [[maybe_unused]] const MPI_Aint* sdispls = arrays.wide(CallArrays::sdispls);
  [[maybe_unused]] const MPI_Count* recvcounts = arrays.wide(CallArrays::recvcounts);
  [[maybe_unused]] const MPI_Aint* rdispls = arrays.wide(CallArrays::rdispls);
  MCRP_TEST_BIND_SCALARS(MPI_Count)
  switch (coll) {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
    MCRP_IF_LARGE_##large(MCRP_TEST_CASE(Name, NonblockingName, _c, ARGS))
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
    default:  // no large-count form (barrier): the int form is the only one
      return start_narrow(coll, form, a, n, request);
  }
  return MPI_ERR_INTERN;
}

}  // namespace

int start_collective(Coll coll, CallForm form, CountForm counts, const CollArgs& args, int array_size,
                     MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return counts == CountForm::large ? start_large(coll, form, args, array_size, request)
                                    : start_narrow(coll, form, args, array_size, request);
}

int invoke(Coll coll, CallForm form, CountForm counts, const CollArgs& args, int array_size) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = start_collective(coll, form, counts, args, array_size, &request);
  if (rc == MPI_SUCCESS && form != CallForm::blocking) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (form == CallForm::persistent && request != MPI_REQUEST_NULL) {
    const int freed = MPI_Request_free(&request);
    if (rc == MPI_SUCCESS) rc = freed;
  }
  return rc;
}

}  // namespace mcrp_test

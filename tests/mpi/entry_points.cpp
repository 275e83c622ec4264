#include "tests/mpi/entry_points.h"

#include <vector>

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

// A nonblocking call's request, completed.
int complete(int rc, MPI_Request* request) { return rc != MPI_SUCCESS ? rc : MPI_Wait(request, MPI_STATUS_IGNORE); }

// A persistent request, run once and freed.
int run_persistent(int rc, MPI_Request* request) {
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Start(request);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(request, MPI_STATUS_IGNORE);
  const int freed = MPI_Request_free(request);
  return rc != MPI_SUCCESS ? rc : freed;
}

// Arrays as the int form takes them; null stays null (an ignored array).
struct NarrowArray {
  explicit NarrowArray(const MPI_Count* wide, int n) {
    if (wide == nullptr) return;
    values.assign(wide, wide + n);
    data = values.data();
  }
  std::vector<int> values;
  const int* data = nullptr;
};

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
    MPI_Request request = MPI_REQUEST_NULL;                                                                  \
    switch (form) {                                                                                          \
      case CallForm::blocking: return MPI_##Name##SUFFIX ARGS;                                               \
      case CallForm::nonblocking:                                                                            \
        return complete(MPI_##NonblockingName##SUFFIX(MCRP_UNPAREN ARGS, &request), &request);               \
      case CallForm::persistent:                                                                             \
        return run_persistent(MPI_##Name##_init##SUFFIX(MCRP_UNPAREN ARGS, MPI_INFO_NULL, &request), &request); \
    }                                                                                                        \
    break;                                                                                                   \
  }

#define MCRP_IF_LARGE_0(...)
#define MCRP_IF_LARGE_1(...) __VA_ARGS__

int invoke_narrow(Coll coll, CallForm form, const CollArgs& a, int n) {
  const NarrowArray narrow_sendcounts(a.sendcounts, n), narrow_sdispls(a.sdispls, n),
      narrow_recvcounts(a.recvcounts, n), narrow_rdispls(a.rdispls, n);
  [[maybe_unused]] const int* sendcounts = narrow_sendcounts.data;
  [[maybe_unused]] const int* sdispls = narrow_sdispls.data;
  [[maybe_unused]] const int* recvcounts = narrow_recvcounts.data;
  [[maybe_unused]] const int* rdispls = narrow_rdispls.data;
  MCRP_TEST_BIND_SCALARS(int)
  switch (coll) {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
    MCRP_TEST_CASE(Name, NonblockingName, , ARGS)
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
  }
  return MPI_ERR_INTERN;
}

int invoke_large(Coll coll, CallForm form, const CollArgs& a, int n) {  // n: for the int fallback
  [[maybe_unused]] const MPI_Count* sendcounts = a.sendcounts;
  [[maybe_unused]] const MPI_Aint* sdispls = a.sdispls;
  [[maybe_unused]] const MPI_Count* recvcounts = a.recvcounts;
  [[maybe_unused]] const MPI_Aint* rdispls = a.rdispls;
  MCRP_TEST_BIND_SCALARS(MPI_Count)
  switch (coll) {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
    MCRP_IF_LARGE_##large(MCRP_TEST_CASE(Name, NonblockingName, _c, ARGS))
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
    default:  // no large-count form (barrier): the int form is the only one
      return invoke_narrow(coll, form, a, n);
  }
  return MPI_ERR_INTERN;
}

}  // namespace

int invoke(Coll coll, CallForm form, CountForm counts, const CollArgs& args, int array_size) {
  return counts == CountForm::large ? invoke_large(coll, form, args, array_size)
                                    : invoke_narrow(coll, form, args, array_size);
}

}  // namespace mcrp_test

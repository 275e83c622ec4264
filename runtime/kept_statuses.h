// What MPI_Request_get_status found complete, kept until the request's completion call, so that
// the completion returns the request and its status even where the base MPI has lost them.
//
// Why: MPICH 4.2 to 5.0 and Intel MPI 2021.18 take a persistent request (point-to-point or
// collective) that MPI_Request_get_status has seen complete for inactive. From then on a second
// MPI_Request_get_status, MPI_Wait, MPI_Test, MPI_Waitall and MPI_Testall give the empty status
// (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0) though the data arrived, and MPI_Waitany,
// MPI_Testany, MPI_Waitsome and MPI_Testsome never return its index (docs/base-mpi-defects.md;
// MPICH 4.0 and 4.1 are right). A program that polls a persistent receive with
// MPI_Request_get_status (mpi4py's Request.Get_status, tools) then loses what a wildcard receive
// matched, or waits for ever in MPI_Waitany. The library itself polls with it, in MPI_Testall over
// arrays that hold its registered requests (runtime/wait_family.cpp), and so did that to programs
// that never call it.
//
// What is kept, for a request MPI_Request_get_status (the program's or the library's) found
// complete: the base MPI's status where it is not empty (a receive's); and, for a request the
// library registers (runtime/persistent.h; only active ones reach the base MPI's call), the fact
// alone, their statuses being the library's own. A base-MPI request with an empty status (a send's,
// or an inactive persistent request's, which cannot be told apart here) is not kept.
//
// Use: later MPI_Request_get_status calls report a kept request complete, with its status; a
// completion call that returns a kept request with the empty status gets the kept one back (the
// MPI_ERROR field stays the completion's); Waitany and Testany complete a kept request first,
// Waitsome and Testsome every kept request of the array, each by MPI_Wait. A kept request is
// forgotten at its completion, MPI_Start (a new round) and MPI_Request_free (the handle may then be
// reused). Nothing changes where the base MPI keeps the status: the completion then returns it.
//
// Cost: one atomic load per completion call while nothing is kept; none for programs that never
// call MPI_Request_get_status on a request that is complete.
#pragma once
#include <mpi.h>

#include <vector>

namespace mcrp {

// What MPI reports for an inactive request, and for a round that completed at once (a receive of
// nothing): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not cancelled.
void set_empty_status(MPI_Status* status);
// Whether the status names source MPI_ANY_SOURCE and tag MPI_ANY_TAG, as the empty status does and
// a completed receive's never does.
bool is_empty_status(const MPI_Status& status);

// PMPI_Request_get_status, keeping what it finds complete (above), or answering for a request kept
// already. `status` may be MPI_STATUS_IGNORE; for a registered request it is left to the caller.
int get_status_kept(MPI_Request request, int* flag, MPI_Status* status);

// Drops what is kept for `request`, if anything: at MPI_Start and MPI_Request_free.
void forget_kept_status(MPI_Request request);

// One atomic load: whether anything is kept.
bool statuses_kept();

// Completes one request as MPI_Wait does (the library's own MPI_Wait, for its registered requests).
using CompleteOne = int (*)(MPI_Request* request, MPI_Status* status);

// The kept requests of a completion call's array, looked up before the base MPI's call: once it has
// completed a request that is not persistent, the base MPI frees the handle, and another thread may
// get the same value for a new request. Then each element the call completed gets its kept status
// back where the call left it empty, and is forgotten.
class KeptStatuses {
 public:
  KeptStatuses(int count, const MPI_Request requests[]);
  // Element `index` completed with *status (MPI_STATUS_IGNORE: only forgotten).
  void completed(int index, MPI_Status* status);
  // Every element completed (Waitall, a Testall whose flag is set); `statuses` may be
  // MPI_STATUSES_IGNORE.
  void all_completed(MPI_Status statuses[]);
  // The *outcount elements in `indices` completed (Waitsome, Testsome).
  void some_completed(const int* outcount, const int indices[], MPI_Status statuses[]);

  // For Waitany/Testany and Waitsome/Testsome, which may return any completed elements: whether the
  // array holds a kept request, and completing it (the first, or each) by `complete`.
  bool any() const { return !elements_.empty(); }
  int complete_first(MPI_Request requests[], int* index, MPI_Status* status, CompleteOne complete_one);
  int complete_each(MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[],
                    CompleteOne complete_one);

  struct Kept {
    MPI_Status status;
    bool has_status;  // false: a registered request, whose status is the library's
  };

 private:
  struct Element {
    int index;
    MPI_Request request;
    Kept kept;
  };
  static void give(const Element& element, MPI_Status* status);
  // Completes the element's request by `complete_one` into *completion, its kept status given back.
  static int complete(const Element& element, MPI_Request requests[], CompleteOne complete_one, MPI_Status* completion);
  std::vector<Element> elements_;
};

}  // namespace mcrp

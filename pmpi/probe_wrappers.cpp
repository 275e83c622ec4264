// The probes: the base MPI's own, except on communicators asserted device-only, where the messages
// are the library's headers and a probe must report the payload's size (p2p/rendezvous.h).
#include <mpi.h>

#include "p2p/dispatch.h"

namespace {

// The base call for run_probe, as a function of its captured arguments.
template <class Fn>
int call_base(void* context) {
  return (*static_cast<Fn*>(context))();
}

template <class Fn>
int probe(const char* entry, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
          Fn base) {
  return mcrp::run_probe(entry, source, tag, comm, flag, message, status, &call_base<Fn>, &base);
}

}  // namespace

extern "C" {

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return probe("MPI_Probe", source, tag, comm, nullptr, nullptr, status,
               [&] { return PMPI_Probe(source, tag, comm, status); });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return probe("MPI_Iprobe", source, tag, comm, flag, nullptr, status,
               [&] { return PMPI_Iprobe(source, tag, comm, flag, status); });
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return probe("MPI_Mprobe", source, tag, comm, nullptr, message, status,
               [&] { return PMPI_Mprobe(source, tag, comm, message, status); });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return probe("MPI_Improbe", source, tag, comm, flag, message, status,
               [&] { return PMPI_Improbe(source, tag, comm, flag, message, status); });
}

}  // extern "C"

// Point-to-point on a communicator asserted device-only: the operations of the protocol in
// p2p/engine.h (headers matched by the base MPI, small payloads inline, large ones on the
// channel), as blocking calls, library requests, probes and message handles.
#pragma once
#include <mpi.h>

#include <memory>

#include "p2p/engine.h"
#include "p2p/prepared.h"
#include "runtime/requests.h"

namespace mcrp {

// Runs or starts `p` (a call on an asserted communicator, or an Mrecv of a library message) in
// `mode`; blocking receives fill *status (unless MPI_STATUS_IGNORE).
Status run_asserted(const std::shared_ptr<Engine>& engine, const P2PPrepared& p, Mode mode, MPI_Request* request,
                    MPI_Status* status);

// MPI_Probe / MPI_Iprobe (flag == nullptr: blocking) and MPI_Mprobe / MPI_Improbe (message != nullptr)
// on an asserted communicator: the status reports the payload's size.
Status probe_asserted(const std::shared_ptr<Engine>& engine, int source, int tag, int* flag, MPI_Message* message,
                      MPI_Status* status);

// Message handles made by probe_asserted are the library's: MPI_Mrecv/MPI_Imrecv hand them back here.
bool is_library_message(MPI_Message message);
// The engine a library message belongs to (null when unknown).
std::shared_ptr<Engine> engine_of_message(MPI_Message message);

}  // namespace mcrp

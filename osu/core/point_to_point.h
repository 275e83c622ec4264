// The point-to-point benchmarks between ranks 0 and 1 (other ranks wait at the final barrier, so the
// suite runs unchanged on any rank count): ping-pong latency, and streaming bandwidth one way or both;
// and the many-pairs latency, where rank i and rank i + n/2 ping-pong at the same time for every i.
#pragma once
#include <cstddef>
#include <memory>

#include "osu/core/options.h"

namespace osu {

enum class PointToPoint {
  latency,        // osu_latency: half the round trip of a ping-pong
  bandwidth,      // osu_bw: a window of sends from rank 0, one acknowledgement from rank 1
  bidirectional,  // osu_bibw: both ranks send a window at once
  multi_latency,  // osu_multi_lat: every pair (i, i + n/2) ping-pongs at once; the mean over pairs
};

// What moves the bytes between the two ranks of a pair (peers are MPI_COMM_WORLD ranks): MPI for
// the osu_* programs, NCCL for the raw-NCCL reference. Every call completes before it returns.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer) = 0;
  // `sends` messages from `out` and `recvs` into `in`, all in flight at once, then all completed.
  virtual void window(const void* out, void* in, std::size_t bytes, int sends, int recvs, int peer) = 0;
  // A one-byte message closing a window (receiver to initiator).
  virtual void acknowledge(bool initiator, int peer) = 0;
};

// Makes the transport once options are read and the device is chosen (collective over WORLD).
using TransportFactory = std::unique_ptr<Transport> (*)(const Options& options);

// The MPI transport: on MPI_COMM_WORLD, or with -A on a duplicate asserted device-only
// (mpi_assert_memory_alloc_kinds=cuda:device, which sends libmcrpmpi's point-to-point over NCCL).
std::unique_ptr<Transport> mpi_transport(const Options& options);

// `title` prefixes the OSU title ("NCCL" for the reference); `device_only` forces -d cuda.
int run_point_to_point(int argc, char** argv, PointToPoint kind, TransportFactory make = mpi_transport,
                       const char* title = nullptr, bool device_only = false);

}  // namespace osu

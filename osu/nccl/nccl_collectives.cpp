#include "nccl_collectives.h"

#include <string>

#include "nccl_session.h"

namespace osu::nccl {
namespace {

Session& s() { return session(); }


ncclDataType_t nccl_type(MPI_Datatype t) {
  if (t == MPI_INT) return ncclInt32;
  if (t == MPI_FLOAT) return ncclFloat32;
  if (t == MPI_DOUBLE) return ncclFloat64;
  return ncclInt8;  // MPI_CHAR: bytes
}

std::size_t at(const void* base, const CallArgs& a, int block) {
  int size = 1;
  MPI_Type_size(a.type, &size);
  return reinterpret_cast<std::size_t>(base) + static_cast<std::size_t>(block) * a.count * size;
}

// Point-to-point rounds in one group, for the collectives NCCL builds from send/recv.
void alltoall(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  const cudaStream_t stream = launch_stream();
  check(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < s().ranks; ++r) {
    check(ncclSend(reinterpret_cast<const void*>(at(a.send, a, r)), a.count, t, r, s().comm, stream), "ncclSend");
    check(ncclRecv(reinterpret_cast<void*>(at(a.recv, a, r)), a.count, t, r, s().comm, stream), "ncclRecv");
  }
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

void gather(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  const cudaStream_t stream = launch_stream();
  check(ncclGroupStart(), "ncclGroupStart");
  if (s().rank == a.root)
    for (int r = 0; r < s().ranks; ++r)
      check(ncclRecv(reinterpret_cast<void*>(at(a.recv, a, r)), a.count, t, r, s().comm, stream), "ncclRecv");
  check(ncclSend(a.send, a.count, t, a.root, s().comm, stream), "ncclSend");
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

void scatter(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  const cudaStream_t stream = launch_stream();
  check(ncclGroupStart(), "ncclGroupStart");
  if (s().rank == a.root)
    for (int r = 0; r < s().ranks; ++r)
      check(ncclSend(reinterpret_cast<const void*>(at(a.send, a, r)), a.count, t, r, s().comm, stream), "ncclSend");
  check(ncclRecv(a.recv, a.count, t, a.root, s().comm, stream), "ncclRecv");
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

CollectiveSpec spec(const char* name, Shape shape, void (*call)(const CallArgs&)) {
  CollectiveSpec s{name, shape, call, nullptr};
  s.device_only = true;
  s.bandwidth = true;
  s.setup = setup;
  s.teardown = teardown;
  return s;
}

struct Entry {
  const char* option;
  CollectiveSpec spec;
};

const Entry kEntries[] = {
    {"allreduce", spec("NCCL AllReduce", Shape::all_reduce, [](const CallArgs& a) {
       finish(ncclAllReduce(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, s().comm, launch_stream()),
              "ncclAllReduce");
     })},
    {"reduce", spec("NCCL Reduce", Shape::root_reduce, [](const CallArgs& a) {
       finish(ncclReduce(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, a.root, s().comm, launch_stream()),
              "ncclReduce");
     })},
    {"bcast", spec("NCCL Broadcast", Shape::broadcast, [](const CallArgs& a) {
       finish(ncclBroadcast(a.recv, a.recv, a.count, nccl_type(a.type), a.root, s().comm, launch_stream()),
              "ncclBroadcast");
     })},
    {"allgather", spec("NCCL AllGather", Shape::all_gather, [](const CallArgs& a) {
       finish(ncclAllGather(a.send, a.recv, a.count, nccl_type(a.type), s().comm, launch_stream()),
              "ncclAllGather");
     })},
    {"reduce_scatter", spec("NCCL ReduceScatter", Shape::reduce_scatter, [](const CallArgs& a) {
       finish(ncclReduceScatter(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, s().comm, launch_stream()),
              "ncclReduceScatter");
     })},
    {"alltoall", spec("NCCL AlltoAll (send/recv)", Shape::all_to_all, alltoall)},
    {"gather", spec("NCCL Gather (send/recv)", Shape::root_gather, gather)},
    {"scatter", spec("NCCL Scatter (send/recv)", Shape::root_scatter, scatter)},
};

}  // namespace

const CollectiveSpec* find_collective(const std::string& name) {
  for (const Entry& e : kEntries)
    if (name == e.option) return &e.spec;
  return nullptr;
}

const char* collective_names() {
  return "allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter";
}

}  // namespace osu::nccl

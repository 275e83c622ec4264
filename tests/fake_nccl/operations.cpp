#include "tests/fake_nccl/operations.h"

#include <cstring>
#include <memory>
#include <vector>

#include "tests/fake_nccl/reduction.h"

namespace fake_nccl {
namespace {

using Bytes = std::shared_ptr<std::vector<char>>;

void move_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes > 0 && to != from) std::memmove(to, from, bytes);
}

// The contributions of every rank to one reduction, gathered in rank order: the peers' arrive in
// `inputs`, this rank's own is read from `own` when the reduction runs (it may be the output too).
struct Contributions {
  Bytes inputs;
  std::size_t bytes;

  Contributions(Place at, std::size_t block_bytes)
      : inputs(std::make_shared<std::vector<char>>(block_bytes * static_cast<std::size_t>(at.nranks))),
        bytes(block_bytes) {}
  char* of(int rank) const { return inputs->data() + bytes * static_cast<std::size_t>(rank); }
};

// out = contributions folded in rank order (the same order on every rank, so every rank's result
// is bitwise alike), averaged for ncclAvg.
std::function<void()> fold(Place at, Contributions c, const void* own, void* out, std::size_t count,
                           ncclDataType_t type, ncclRedOp_t op) {
  return [=] {
    std::vector<char> accumulator(c.bytes);
    move_bytes(accumulator.data(), at.rank == 0 ? own : c.of(0), c.bytes);
    for (int r = 1; r < at.nranks; ++r) reduce_into(accumulator.data(), r == at.rank ? own : c.of(r), count, type, op);
    if (op == ncclAvg) divide_for_average(accumulator.data(), count, type, at.nranks);
    move_bytes(out, accumulator.data(), c.bytes);
  };
}

char* block(const void* base, std::size_t bytes, int index) {
  return static_cast<char*>(const_cast<void*>(base)) + bytes * static_cast<std::size_t>(index);
}

}  // namespace

Work all_reduce(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op) {
  Work work;
  const Contributions c(at, count * type_size(type));
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer == at.rank) continue;
    work.send(peer, send, c.bytes);
    work.receive(peer, c.of(peer), c.bytes);
  }
  work.finishes.push_back(fold(at, c, send, recv, count, type, op));
  return work;
}

Work reduce(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root) {
  Work work;
  const std::size_t bytes = count * type_size(type);
  if (at.rank != root) {
    work.send(root, send, bytes);
    return work;
  }
  const Contributions c(at, bytes);
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer != at.rank) work.receive(peer, c.of(peer), bytes);
  }
  work.finishes.push_back(fold(at, c, send, recv, count, type, op));
  return work;
}

Work reduce_scatter(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op) {
  Work work;
  const Contributions c(at, count * type_size(type));
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer == at.rank) continue;
    work.send(peer, block(send, c.bytes, peer), c.bytes);
    work.receive(peer, c.of(peer), c.bytes);
  }
  work.finishes.push_back(fold(at, c, block(send, c.bytes, at.rank), recv, count, type, op));
  return work;
}

Work broadcast(Place at, const void* send, void* recv, std::size_t bytes, int root) {
  Work work;
  if (at.rank != root) {
    work.receive(root, recv, bytes);
    return work;
  }
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer != at.rank) work.send(peer, send, bytes);
  }
  work.finishes.push_back([=] { move_bytes(recv, send, bytes); });
  return work;
}

Work all_gather(Place at, const void* send, void* recv, std::size_t bytes) {
  Work work;
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer == at.rank) continue;
    work.send(peer, send, bytes);
    work.receive(peer, block(recv, bytes, peer), bytes);
  }
  work.finishes.push_back([=] { move_bytes(block(recv, bytes, at.rank), send, bytes); });
  return work;
}

Work all_to_all(Place at, const void* send, void* recv, std::size_t bytes) {
  Work work;
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer == at.rank) continue;
    work.send(peer, block(send, bytes, peer), bytes);
    work.receive(peer, block(recv, bytes, peer), bytes);
  }
  work.finishes.push_back([=] { move_bytes(block(recv, bytes, at.rank), block(send, bytes, at.rank), bytes); });
  return work;
}

Work gather(Place at, const void* send, void* recv, std::size_t bytes, int root) {
  Work work;
  if (at.rank != root) {
    work.send(root, send, bytes);
    return work;
  }
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer != at.rank) work.receive(peer, block(recv, bytes, peer), bytes);
  }
  work.finishes.push_back([=] { move_bytes(block(recv, bytes, root), send, bytes); });
  return work;
}

Work scatter(Place at, const void* send, void* recv, std::size_t bytes, int root) {
  Work work;
  if (at.rank != root) {
    work.receive(root, recv, bytes);
    return work;
  }
  for (int peer = 0; peer < at.nranks; ++peer) {
    if (peer != at.rank) work.send(peer, block(send, bytes, peer), bytes);
  }
  work.finishes.push_back([=] { move_bytes(recv, block(send, bytes, root), bytes); });
  return work;
}

}  // namespace fake_nccl

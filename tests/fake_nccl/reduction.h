// Element-wise reductions on host memory for every NCCL datatype and built-in op the fake supports.
#pragma once
#include <nccl.h>

#include <cstddef>

namespace fake_nccl {

std::size_t type_size(ncclDataType_t type);  // 0: a type the fake does not support
bool supported(ncclDataType_t type, ncclRedOp_t op);

// accumulator[i] = accumulator[i] (op) input[i]. For ncclAvg this sums; divide_for_average() then
// divides by the rank count, as NCCL's average does.
void reduce_into(void* accumulator, const void* input, std::size_t count, ncclDataType_t type, ncclRedOp_t op);
void divide_for_average(void* accumulator, std::size_t count, ncclDataType_t type, int nranks);

}  // namespace fake_nccl

// osu_staging_copy: what the staged path's copies cost alone, the bound a pipelined staged
// collective is judged against (osu-compare's "copy" way): per message, every rank copies its
// buffer to pinned host memory and a pinned image back, at once on two streams as the pipeline
// does (-o allreduce, the default; also reduce_scatter, allgather), or for -o bcast the root only
// to the host and the others only back. -o latency: one copy to the host, then one back, each
// waited for, as a staged message pays them one after the other (the sender's before the base
// MPI's send, the receiver's after it): osu_latency's staged bound is host latency plus this.
// -d cuda: cudaMemcpyAsync on two streams and both waited for; -d fake: the fake device's memcpy
// (what the library does there); -d host: memcpy as well.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "osu/core/gpu.h"
#include "osu/core/report.h"
#include "osu/core/session.h"
#include "osu/core/stats.h"

namespace {

constexpr double kMicro = 1e6;

void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "osu_staging_copy: %s failed: %s\n", what, cudaGetErrorString(err));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// The pinned images and streams of -d cuda, or plain host images otherwise.
class Copier {
 public:
  Copier(osu::Memory memory, std::size_t bytes) : cuda_(memory == osu::Memory::cuda) {
    if (!cuda_) {
      to_host_image_.reset(new char[bytes ? bytes : 1]);
      from_host_image_.reset(new char[bytes ? bytes : 1]);
      to_host_ = to_host_image_.get();
      from_host_ = from_host_image_.get();
      return;
    }
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&to_host_), bytes ? bytes : 1), "cudaMallocHost");
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&from_host_), bytes ? bytes : 1), "cudaMallocHost");
    check_cuda(cudaStreamCreate(&out_), "cudaStreamCreate");
    check_cuda(cudaStreamCreate(&back_), "cudaStreamCreate");
  }
  ~Copier() {
    if (!cuda_) return;
    cudaFreeHost(to_host_);
    cudaFreeHost(from_host_);
    cudaStreamDestroy(out_);
    cudaStreamDestroy(back_);
  }
  Copier(const Copier&) = delete;
  Copier& operator=(const Copier&) = delete;

  // One message's copies: to the host (`out`), back to the buffer (`in`), or both at once.
  void copy(void* buffer, std::size_t bytes, bool out, bool in) {
    if (!cuda_) {
      if (out) std::memcpy(to_host_, buffer, bytes);
      if (in) std::memcpy(buffer, from_host_, bytes);
      return;
    }
    if (out) check_cuda(cudaMemcpyAsync(to_host_, buffer, bytes, cudaMemcpyDefault, out_), "cudaMemcpyAsync");
    if (in) check_cuda(cudaMemcpyAsync(buffer, from_host_, bytes, cudaMemcpyDefault, back_), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(out_), "cudaStreamSynchronize");
    check_cuda(cudaStreamSynchronize(back_), "cudaStreamSynchronize");
  }

 private:
  bool cuda_;
  std::unique_ptr<char[]> to_host_image_, from_host_image_;
  char* to_host_ = nullptr;
  char* from_host_ = nullptr;
  cudaStream_t out_ = nullptr;
  cudaStream_t back_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  osu::MpiSession mpi(&argc, &argv);
  osu::Options opt;
  if (int code = mpi.prepare(argc, argv, &opt); code >= 0) return code;
  const std::string shape = opt.operation.empty() ? "allreduce" : opt.operation;
  const bool bcast = shape == "bcast";
  const bool out = !bcast || mpi.rank() == 0;
  const bool in = !bcast || mpi.rank() != 0;
  const bool serial = shape == "latency";
  osu::print_title(mpi.rank(), "Staging Copies (" + shape + ") Latency Test", opt.memory, nullptr);
  osu::print_columns(mpi.rank(), true, {"Avg Latency(us)"}, opt);
  osu::Buffer buffer(opt.memory, opt.max_size);
  Copier copier(opt.memory, opt.max_size);
  for (std::size_t size = opt.min_given ? opt.min_size : 1; size <= opt.max_size; size = size ? size * 2 : 1) {
    const int iterations = opt.iterations_for(size), warmup = opt.warmup_for(size);
    double total = 0;
    for (int i = 0; i < warmup + iterations; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);  // every rank copies at once, as in a collective
      const double t0 = MPI_Wtime();
      if (serial) {
        copier.copy(buffer.data(), size, true, false);
        copier.copy(buffer.data(), size, false, true);
      } else {
        copier.copy(buffer.data(), size, out, in);
      }
      if (i >= warmup) total += MPI_Wtime() - t0;
    }
    osu::Row row;
    row.size = size;
    row.figures = {osu::spread(kMicro * total / iterations, MPI_COMM_WORLD).avg};
    row.iterations = iterations;
    osu::print_row(mpi.rank(), row, opt);
  }
  return 0;
}

// Status: how a failure travels from CUDA, NCCL or argument checks up to the MPI error handler.
// The library never throws across the C ABI; every internal step returns a Status instead.
#pragma once
#include <mpi.h>
#include <string>
#include <utility>

namespace mcrp {

class Status {
 public:
  Status() = default;
  Status(int mpi_error_class, std::string message)
      : error_class_(mpi_error_class), message_(std::move(message)) {}

  bool ok() const { return error_class_ == MPI_SUCCESS; }
  int error_class() const { return error_class_; }
  const std::string& message() const { return message_; }

 private:
  int error_class_ = MPI_SUCCESS;
  std::string message_;
};

// Evaluates a Status-returning expression and returns it from the caller when it failed.
#define MCRP_TRY(expr)                         \
  do {                                         \
    ::mcrp::Status mcrp_status_ = (expr);      \
    if (!mcrp_status_.ok()) return mcrp_status_; \
  } while (0)

}  // namespace mcrp

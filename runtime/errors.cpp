#include "runtime/errors.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace mcrp {
namespace {

constexpr const char* kAlreadyRaised = "\x01raised";

// One library error code per MPI error class, its string replaced by the latest message: codes are
// a limited resource in MPI, so none is created per failure.
int code_for(int error_class, const std::string& message) {
  static std::mutex mutex;
  static std::map<int, int> codes;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = codes.find(error_class);
  if (it == codes.end()) {
    int code = error_class;
    if (PMPI_Add_error_code(error_class, &code) != MPI_SUCCESS) return error_class;
    it = codes.emplace(error_class, code).first;
  }
  PMPI_Add_error_string(it->second, message.c_str());
  return it->second;
}

}  // namespace

Status already_raised(int mpi_code) { return Status(mpi_code, kAlreadyRaised); }

int raise_error(MPI_Comm comm, const char* call, int comm_size, const Status& status) {
  if (status.message() == kAlreadyRaised) return status.error_class();
  const std::string where = comm_size > 0 ? " on a communicator of " + std::to_string(comm_size) + " ranks" : "";
  const std::string message = std::string("mcrpmpi: ") + call + where + ": " + status.message();
  const int code = code_for(status.error_class(), message);
  // MPICH 4.0.2's abort message shows an unrelated string for added error codes, so a fatal handler
  // would end the job without the reason: print it first.
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(comm, &handler) == MPI_SUCCESS) {
    if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_ABORT) std::fprintf(stderr, "%s\n", message.c_str());
    PMPI_Errhandler_free(&handler);
  }
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace mcrp

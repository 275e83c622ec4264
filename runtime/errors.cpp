#include "runtime/errors.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace mcrp {
namespace {

constexpr const char* kAlreadyRaised = "\x01raised";

// One library error code per MPI error class, its string replaced by the latest message: codes are
// a limited resource in MPI, so none is created per failure. The codes are the base MPI's (added
// with MPI_Add_error_code), so its error handlers take them; their strings and classes are kept
// here as well, for the MPI_Error_string and MPI_Error_class wrappers.
struct LibraryCode {
  int error_class;
  std::string message;
};
std::mutex g_codes_mutex;
std::map<int, int> g_code_of_class;
std::map<int, LibraryCode> g_codes;

int code_for(int error_class, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_codes_mutex);
  auto it = g_code_of_class.find(error_class);
  if (it == g_code_of_class.end()) {
    int code = error_class;
    if (PMPI_Add_error_code(error_class, &code) != MPI_SUCCESS) return error_class;
    it = g_code_of_class.emplace(error_class, code).first;
  }
  PMPI_Add_error_string(it->second, message.c_str());
  g_codes[it->second] = LibraryCode{error_class, message};
  return it->second;
}

}  // namespace

bool library_error_string(int code, char* text, int* length) {
  std::lock_guard<std::mutex> lock(g_codes_mutex);
  const auto it = g_codes.find(code);
  if (it == g_codes.end()) return false;
  const std::string& message = it->second.message;
  const std::size_t n = std::min<std::size_t>(message.size(), MPI_MAX_ERROR_STRING - 1);
  message.copy(text, n);
  text[n] = '\0';
  *length = static_cast<int>(n);
  return true;
}

bool library_error_class(int code, int* error_class) {
  std::lock_guard<std::mutex> lock(g_codes_mutex);
  const auto it = g_codes.find(code);
  if (it == g_codes.end()) return false;
  *error_class = it->second.error_class;
  return true;
}

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
  forget_raised_code();  // the program's handler recorded the library's own code just now
  return code;
}

}  // namespace mcrp

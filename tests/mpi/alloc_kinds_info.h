// Reading MPI 4.1's memory allocation kinds back from an info object (MPI_Comm_get_info,
// MPI_Session_get_info): the value of `mpi_memory_alloc_kinds` as a list, and the device-only
// assertion key, for the tests that check what the library reports.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mcrp_test {

// The value of `key` in `info`, or `absent` when it has none.
inline std::string info_string(MPI_Info info, const char* key, const std::string& absent = "") {
  char value[MPI_MAX_INFO_VAL + 1] = "";
  int found = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &found);
  return found ? std::string(value) : absent;
}

// The comma-separated kinds of `mpi_memory_alloc_kinds` in `info`, as written (empty when absent).
inline std::vector<std::string> listed_alloc_kinds(MPI_Info info) {
  const std::string value = info_string(info, "mpi_memory_alloc_kinds");
  std::vector<std::string> kinds;
  std::size_t start = 0;
  while (start < value.size()) {
    std::size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    kinds.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  return kinds;
}

inline int times_listed(const std::vector<std::string>& kinds, const std::string& kind) {
  return static_cast<int>(std::count(kinds.begin(), kinds.end(), kind));
}

// `kinds` as one string, for check messages.
inline std::string shown(const std::vector<std::string>& kinds) {
  std::string text;
  for (const std::string& kind : kinds) text += (text.empty() ? "" : ",") + kind;
  return "\"" + text + "\"";
}

// The kinds of MPI_Comm_get_info(comm).
inline std::vector<std::string> comm_alloc_kinds(MPI_Comm comm) {
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Comm_get_info(comm, &info) != MPI_SUCCESS) return {};
  std::vector<std::string> kinds = listed_alloc_kinds(info);
  MPI_Info_free(&info);
  return kinds;
}

// The value of mpi_assert_memory_alloc_kinds in MPI_Comm_get_info(comm) ("" when absent).
inline std::string comm_alloc_kinds_assertion(MPI_Comm comm) {
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Comm_get_info(comm, &info) != MPI_SUCCESS) return "(MPI_Comm_get_info failed)";
  const std::string value = info_string(info, "mpi_assert_memory_alloc_kinds");
  MPI_Info_free(&info);
  return value;
}

}  // namespace mcrp_test

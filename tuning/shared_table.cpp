#include "tuning/shared_table.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "tuning/tuning_file.h"

#ifndef MCRPMPI_DEFAULT_TUNING_FILE
#define MCRPMPI_DEFAULT_TUNING_FILE "/usr/local/share/mcrpmpi/tuning.json"
#endif

namespace mcrp::tuning {
namespace {

// Files larger than this are refused: a table has a few hundred ranges, never megabytes.
constexpr long long kMaxFileBytes = 16 << 20;

enum class ReadStatus : int { ok = 0, missing = 1, unreadable = 2 };

constexpr const char* kChunkVariable = "MCRPMPI_STAGED_CHUNK_BYTES";

// Rank 0's MCRPMPI_STAGED_CHUNK_BYTES: the bytes, or -1 when unset or not a number (then *why says
// so). Only rank 0's counts: every rank must chunk a pipelined collective alike.
long long chunk_override(std::string* why) {
  const char* value = std::getenv(kChunkVariable);
  if (value == nullptr || value[0] == '\0') return -1;
  char* end = nullptr;
  const long long bytes = std::strtoll(value, &end, 10);
  if (*end != '\0' || bytes < 0) {
    *why = std::string("ignoring ") + kChunkVariable + "=" + value + " (expected a number of bytes)";
    return -1;
  }
  return bytes;
}

void install_with_override(Table table, long long chunk_bytes) {
  if (chunk_bytes >= 0) table.staged_chunk_bytes = static_cast<std::uint64_t>(chunk_bytes);
  install_table(std::move(table));
}

ReadStatus read_file(const char* path, std::string* text, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::string(path) + ": cannot open";
    return ReadStatus::missing;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    *why = std::string(path) + ": read error";
    return ReadStatus::unreadable;
  }
  *text = buffer.str();
  if (static_cast<long long>(text->size()) > kMaxFileBytes) {
    *why = std::string(path) + ": larger than 16 MiB, not a tuning file";
    return ReadStatus::unreadable;
  }
  return ReadStatus::ok;
}

}  // namespace

const char* default_tuning_file() { return MCRPMPI_DEFAULT_TUNING_FILE; }

SharedLoad load_shared_table(MPI_Comm comm, const char* path, bool must_exist) {
  SharedLoad result;
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  // Rank 0 sends [status, origin length, text length, chunk override], then origin + text (the text
  // is the reason there is no table when status is not ok). Every rank then holds the same origin,
  // text and chunk size.
  long long header[4] = {0, 0, 0, -1};
  std::string payload;
  std::string chunk_warning;
  if (rank == 0) {
    header[3] = chunk_override(&chunk_warning);
    std::string text, why;
    ReadStatus status = read_file(path, &text, &why);
    if (status == ReadStatus::missing && !must_exist) {
      text.clear();
    } else if (status != ReadStatus::ok) {
      text = why;
    }
    payload = std::string(path) + text;
    header[0] = static_cast<long long>(status);
    header[1] = static_cast<long long>(std::string(path).size());
    header[2] = static_cast<long long>(text.size());
  }
  if ((result.mpi_error = PMPI_Bcast(header, 4, MPI_LONG_LONG, 0, comm)) != MPI_SUCCESS) return result;
  payload.resize(static_cast<std::size_t>(header[1] + header[2]));
  if ((result.mpi_error = PMPI_Bcast(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, comm)) !=
      MPI_SUCCESS) {
    return result;
  }
  const std::string origin = payload.substr(0, static_cast<std::size_t>(header[1]));
  const std::string text = payload.substr(static_cast<std::size_t>(header[1]));
  ParsedTable parsed;
  if (static_cast<ReadStatus>(header[0]) != ReadStatus::ok) {
    if (!text.empty()) result.message = text + "; using the built-in table";
  } else {
    parsed = parse_tuning_file(text, origin);
    if (!parsed.table) result.message = parsed.error + "; using the built-in table";
  }
  if (!chunk_warning.empty()) result.message += (result.message.empty() ? "" : "; ") + chunk_warning;
  if (!parsed.table) {
    install_with_override(builtin_table(), header[3]);
    return result;
  }
  install_with_override(std::move(*parsed.table), header[3]);
  result.installed = true;
  return result;
}

int initialize(MPI_Comm world) noexcept {
  try {
    load_settings();
    const char* named = std::getenv("MCRPMPI_TUNING_FILE");
    const bool user_named = named != nullptr && named[0] != '\0';
    SharedLoad load = load_shared_table(world, user_named ? named : default_tuning_file(), user_named);
    int rank = 0;
    PMPI_Comm_rank(world, &rank);
    if (rank == 0 && !load.message.empty()) std::fprintf(stderr, "mcrpmpi: %s\n", load.message.c_str());
    return load.mpi_error;
  } catch (...) {
    std::fprintf(stderr, "mcrpmpi: out of memory while loading the tuning file; using the built-in table\n");
    return MPI_SUCCESS;
  }
}

}  // namespace mcrp::tuning

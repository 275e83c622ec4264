#include "tuning/shared_table.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "env/byte_count.h"
#include "tuning/tuning_file.h"

#ifndef MCRPMPI_DEFAULT_TUNING_FILE
#define MCRPMPI_DEFAULT_TUNING_FILE "/usr/local/share/mcrpmpi/tuning.json"
#endif

namespace mcrp::tuning {
namespace {

// Files larger than this are refused: a table has a few hundred ranges, never megabytes.
constexpr long long kMaxFileBytes = 16 << 20;

enum class ReadStatus : int { ok = 0, missing = 1, unreadable = 2 };

constexpr int kSettingCount = static_cast<int>(std::size(kByteSettings));
constexpr int kHeaderCount = 3 + kSettingCount;

// Rank 0's environment overrides of the table's byte counts (kByteSettings), one slot each: the
// bytes, or -1 where unset or bad (a bad one is added to *warnings). Only rank 0's count: every rank
// must chunk a pipelined collective alike and agree on the largest inline point-to-point message.
void read_overrides(long long* slots, std::string* warnings) {
  for (int i = 0; i < kSettingCount; ++i) {
    const env::ByteCountSetting value = env::byte_count_from_env(kByteSettings[i].variable, kByteSettings[i].max_bytes);
    slots[i] = value.bytes ? static_cast<long long>(*value.bytes) : -1;
    if (!value.problem.empty()) *warnings += (warnings->empty() ? "" : "; ") + value.problem;
  }
}

void install_with_overrides(Table table, const long long* slots) {
  for (int i = 0; i < kSettingCount; ++i) {
    if (slots[i] < 0) continue;
    table.*kByteSettings[i].field = static_cast<std::uint64_t>(slots[i]);
    // MCRPMPI_STAGED_CHUNK_BYTES is every collective's chunk: a tuned collective's own gives way too.
    if (kByteSettings[i].field == &Table::staged_chunk_bytes) table.own_staged_chunk.fill(kNoOwnChunk);
  }
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
  // Rank 0 sends [status, origin length, text length, overrides...], then origin + text (the text
  // is the reason there is no table when status is not ok). Every rank then holds the same origin,
  // text and overrides.
  long long header[kHeaderCount] = {0, 0, 0};
  long long* const overrides = header + 3;
  std::string payload;
  std::string override_warnings;
  if (rank == 0) {
    read_overrides(overrides, &override_warnings);
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
  if ((result.mpi_error = PMPI_Bcast(header, kHeaderCount, MPI_LONG_LONG, 0, comm)) != MPI_SUCCESS) return result;
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
  if (!override_warnings.empty()) result.message += (result.message.empty() ? "" : "; ") + override_warnings;
  if (!parsed.table) {
    install_with_overrides(builtin_table(), overrides);
    return result;
  }
  install_with_overrides(std::move(*parsed.table), overrides);
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

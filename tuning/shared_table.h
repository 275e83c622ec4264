// Loading one tuning table for all ranks: rank 0 reads the file, broadcasts its text, and every rank
// parses the same text, so either every rank installs the same table or every rank keeps the
// built-in one. Used by initialize(); separate so tests can load from a chosen path.
#pragma once
#include <mpi.h>

#include <string>

#include "tuning/table.h"

namespace mcrp::tuning {

// The file read when MCRPMPI_TUNING_FILE is unset: ${prefix}/share/mcrpmpi/tuning.json.
MCRPMPI_TUNING_API const char* default_tuning_file();

struct SharedLoad {
  int mpi_error = MPI_SUCCESS;  // a failed broadcast; the table is then left alone
  bool installed = false;       // a tuning file's table is now in force
  std::string message;          // what rank 0 reported (identical on every rank, except that rank 0 alone
                                // adds a bad environment override), empty when silent
};

// Collective over `comm`. `path` and the environment overrides of kByteSettings (table.h:
// MCRPMPI_STAGED_CHUNK_BYTES, MCRPMPI_P2P_EAGER_LIMIT, which replace the table's values) matter on
// rank 0 only; a missing file is an error when
// `must_exist` (the user named it) and silent otherwise (the default location). Whenever no file
// table results, the built-in table is installed (on every rank alike).
MCRPMPI_TUNING_API SharedLoad load_shared_table(MPI_Comm comm, const char* path, bool must_exist);

}  // namespace mcrp::tuning

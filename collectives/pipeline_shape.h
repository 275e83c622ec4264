// What a pipelined staged collective moves, per buffer side, in terms of rows and chunks
// (collectives/staged_pipeline.h runs it). Each side is `rows` rows of row_bytes bytes at a regular
// pitch in the user's buffer (an uneven reduce_scatter's rows have their own lengths and places);
// chunk k is the same byte range of every row (short rows run out). Its pinned host image
// holds the chunks one after another, each chunk's rows together: exactly the layout the base MPI
// wants for one chunk's per-rank blocks (reduce_scatter_block's input, allgather's output).
//
// MPI_IN_PLACE never reaches the base MPI here: the in-place input (part of the receive buffer) is
// its own input side, so the base MPI always gets separate send and receive images (which also keeps
// MPICH 4.0.2's in-place reduce defect at roots other than 0 out of the way).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "runtime/chunk_plan.h"
#include "collectives/paths.h"
#include "device/buffer_pool.h"
#include "runtime/buffer.h"

namespace mcrp {

struct ChunkedSide {
  bool active = false;
  bool copy_in = false;   // the chunk's bytes go to the image before its collective (an input)
  bool copy_out = false;  // and from the image back to the buffer after it (an output)
  char* rows_at = nullptr;  // row 0: in the user's buffer, or in `packed_rows` once packed
  int rows = 1;
  std::size_t pitch = 0;      // bytes from one row to the next at rows_at
  std::size_t row_bytes = 0;  // the longest row
  // Rows of their own lengths and places (an uneven reduce_scatter's blocks): row r is
  // row_lengths[r] bytes at rows_at + row_offsets[r]. Empty: every row is row_bytes at r * pitch.
  std::vector<std::size_t> row_offsets;
  std::vector<std::size_t> row_lengths;

  // A non-contiguous datatype of a data-movement collective travels as its packed bytes (a rank's
  // datatype may differ from its peers', the byte stream may not): the user's span goes to
  // `span_image`, is packed into `packed_rows` (rows back to back), and the reverse at the end.
  bool packed = false;
  BufferSide user;
  TypeInfo type;
  Span span;
  device::Buffer span_image;
  device::Buffer packed_rows;

  device::Buffer image;  // pinned, every row's bytes, chunk-major

  // The first byte of the user's buffer this side reads or writes.
  const char* user_memory() const { return packed ? user.base + span.lo : rows_at; }
  bool uneven() const { return !row_lengths.empty(); }
  std::size_t row_offset(int r) const { return uneven() ? row_offsets[static_cast<std::size_t>(r)] : r * pitch; }
  std::size_t row_length(int r) const { return uneven() ? row_lengths[static_cast<std::size_t>(r)] : row_bytes; }
  // The bytes of row r that fall in `range` (a short row has none in later chunks).
  std::size_t piece(int r, const ByteRange& range) const;
  std::size_t total_bytes() const;
  // Where the chunk's pieces start in the image: after every row's bytes before range.lo.
  char* chunk_image(const ByteRange& range) const;
};

struct PipelineShape {
  ChunkedSide send;     // the input (from sendbuf, or the in-place part of recvbuf)
  ChunkedSide recv;     // the output
  ChunkPlan plan;
  MPI_Datatype type = MPI_BYTE;  // of the base calls: the reduction's (fp16 substituted), else MPI_BYTE
  MPI_Op op = MPI_OP_NULL;
  std::size_t element_bytes = 1;  // count of a chunk = its bytes / element_bytes
};

// Fills *shape and returns true when the call is pipelined: an intracommunicator of 2 or more ranks;
// allreduce, reduce, reduce_scatter_block or reduce_scatter on a contiguous datatype (the datatype
// and the counts are the same on every rank; an uneven reduce_scatter's chunks cut every block at
// the same element offsets, so short blocks run out early), or bcast or allgather on any datatype (chunked as bytes; a rank's datatype may
// differ from its peers'); and more than one chunk of `setting_bytes`. Every input to that
// decision is one all ranks agree on. Allocates nothing when it returns false.
bool shape_pipeline(const Prepared& prepared, std::uint64_t setting_bytes, PipelineShape* shape);

}  // namespace mcrp

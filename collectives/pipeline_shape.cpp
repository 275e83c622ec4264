#include "collectives/pipeline_shape.h"

#include <algorithm>

#include "collectives/half_reduction.h"

namespace mcrp {

std::size_t ChunkedSide::piece(int r, const ByteRange& range) const {
  const std::size_t length = row_length(r);
  return length > range.lo ? std::min(length, range.hi) - range.lo : 0;
}

std::size_t ChunkedSide::total_bytes() const {
  std::size_t total = 0;
  for (int r = 0; r < rows; ++r) total += row_length(r);
  return total;
}

char* ChunkedSide::chunk_image(const ByteRange& range) const {
  if (!uneven()) return image.data() + rows * range.lo;
  std::size_t before = 0;
  for (int r = 0; r < rows; ++r) before += std::min(row_length(r), range.lo);
  return image.data() + before;
}

namespace {

// Where one side's rows lie in the user's buffer: `rows` rows of `per_row` elements, the first at
// element `first`, each `stride` elements after the previous one.
struct RowsOf {
  const BufferSide* side;
  const TypeInfo* type;
  MPI_Count first;
  MPI_Count per_row;
  int rows;
  MPI_Count stride;
};

ChunkedSide chunked(const RowsOf& r, bool input) {
  ChunkedSide c;
  c.active = true;
  c.copy_in = input;
  c.copy_out = !input;
  c.rows = r.rows;
  c.row_bytes = static_cast<std::size_t>(r.per_row * r.type->size);
  c.type = *r.type;
  if (r.type->contiguous()) {
    c.rows_at = r.side->base + r.first * r.type->extent;
    c.pitch = static_cast<std::size_t>(r.stride * r.type->extent);
    return c;
  }
  c.packed = true;
  c.pitch = c.row_bytes;  // packed rows lie back to back
  c.user.base = r.side->base;
  c.user.type = r.side->type;
  c.user.read = input;
  c.user.written = !input;
  for (int row = 0; row < r.rows; ++row) c.user.blocks.push_back(Block{r.first + row * r.stride, r.per_row});
  return c;
}

// An uneven reduce_scatter's blocks as rows of their own lengths: the input's row r is block r,
// the output's one row this rank's block.
void uneven_rows(const CollCall& call, const Participant& self, std::size_t element, PipelineShape* s) {
  std::size_t offset = 0;
  for (int r = 0; r < self.size; ++r) {
    const std::size_t length = static_cast<std::size_t>(call.recvcounts[r]) * element;
    s->send.row_offsets.push_back(offset);
    s->send.row_lengths.push_back(length);
    offset += length;
  }
  s->recv.row_offsets = {0};
  s->recv.row_lengths = {s->send.row_lengths[static_cast<std::size_t>(self.rank)]};
}

bool shape_reduction(const Prepared& p, std::uint64_t setting, PipelineShape* s) {
  const CollCall& call = *p.call;
  const Layout& l = p.layout;
  // The one datatype of a reduction, significant on every rank, on whichever side carries it.
  const TypeInfo& type = l.recv.significant() ? p.recv_type : p.send_type;
  if (!type.contiguous() || type.size <= 0) return false;
  const bool uneven = call.kind == CollKind::reduce_scatter;
  const bool scatter = uneven || call.kind == CollKind::reduce_scatter_block;
  MPI_Count per_row = call.recvcount;  // uneven: the longest block
  if (uneven) {
    per_row = 0;
    for (int r = 0; r < p.self.size; ++r) per_row = std::max(per_row, call.recvcounts[r]);
  }
  s->plan = plan_chunks(static_cast<std::uint64_t>(per_row * type.size), static_cast<std::uint64_t>(type.size), setting);
  if (!s->plan.pipelined()) return false;
  s->element_bytes = static_cast<std::size_t>(type.size);
  s->type = call.recvtype;
  s->op = call.op;
  half_substitute(call.kind, call.recvtype, call.op, &s->type, &s->op);
  const int rows = scatter ? p.self.size : 1;
  // In place, the input is the receive buffer (reduce: at the root only).
  const BufferSide& input = l.send.significant() ? l.send : l.recv;
  s->send = chunked(RowsOf{&input, &type, 0, per_row, rows, per_row}, true);
  if (l.recv.significant()) s->recv = chunked(RowsOf{&l.recv, &type, 0, per_row, 1, per_row}, false);
  if (uneven) uneven_rows(call, p.self, s->element_bytes, s);
  return true;
}

bool shape_movement(const Prepared& p, std::uint64_t setting, PipelineShape* s) {
  const CollCall& call = *p.call;
  const Layout& l = p.layout;
  const MPI_Count per_row = call.recvcount;  // bcast: the count; allgather: one rank's block
  s->plan = plan_chunks(static_cast<std::uint64_t>(per_row * p.recv_type.size), kMovementUnit, setting);
  if (!s->plan.pipelined()) return false;
  if (call.kind == CollKind::bcast) {
    // The root's buffer is read (an input), the others' written; it is the base call's one buffer.
    const bool root = l.recv.read;
    (root ? s->send : s->recv) = chunked(RowsOf{&l.recv, &p.recv_type, 0, per_row, 1, per_row}, root);
    return true;
  }
  const int ranks = p.self.size;
  if (l.send.significant()) {
    s->send = chunked(RowsOf{&l.send, &p.send_type, 0, call.sendcount, 1, call.sendcount}, true);
    // Erroneous (the signatures differ in size); chunks of the receive rows would overrun the send
    // buffer, so this rank stays unpipelined rather than read past it.
    if (s->send.row_bytes != s->plan.row_bytes) return false;
  } else {  // in place: this rank's block of the receive buffer
    s->send = chunked(RowsOf{&l.recv, &p.recv_type, p.self.rank * per_row, per_row, 1, per_row}, true);
  }
  s->recv = chunked(RowsOf{&l.recv, &p.recv_type, 0, per_row, ranks, per_row}, false);
  return true;
}

}  // namespace

bool shape_pipeline(const Prepared& p, std::uint64_t setting_bytes, PipelineShape* shape) {
  if (p.self.inter || p.self.size < 2 || setting_bytes == 0 || !has_staged_pipeline(p.call->kind)) return false;
  return is_reduction(p.call->kind) ? shape_reduction(p, setting_bytes, shape)
                                    : shape_movement(p, setting_bytes, shape);
}

}  // namespace mcrp

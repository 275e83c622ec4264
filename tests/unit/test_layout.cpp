// Which buffers each collective touches on a rank, including MPI_IN_PLACE and root-only buffers:
// the staged path copies exactly these, so a wrong rule here means lost or clobbered data.
#include <gtest/gtest.h>

#include <string>

#include "collectives/call.h"
#include "collectives/layout.h"

namespace mcrp {
namespace {

char send_storage[64];
char recv_storage[64];
void* const S = send_storage;
void* const R = recv_storage;

std::vector<std::pair<MPI_Count, MPI_Count>> blocks(const BufferSide& side) {
  std::vector<std::pair<MPI_Count, MPI_Count>> out;
  for (const Block& b : side.blocks) out.emplace_back(b.displacement, b.count);
  return out;
}
using Blocks = std::vector<std::pair<MPI_Count, MPI_Count>>;

TEST(Layout, AllreduceInPlaceReadsAndWritesTheReceiveBuffer) {
  const Layout plain = layout_of(describe::allreduce(S, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_TRUE(plain.send.read);
  EXPECT_FALSE(plain.recv.read);
  EXPECT_TRUE(plain.recv.written);
  const Layout in_place = layout_of(describe::allreduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_FALSE(in_place.send.significant());
  EXPECT_TRUE(in_place.recv.read);
  EXPECT_TRUE(in_place.recv.written);
}

TEST(Layout, ReduceReceiveBufferMattersOnlyAtTheRoot) {
  const CollCall call = describe::reduce(S, R, 5, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
  EXPECT_TRUE(layout_of(call, 2, 3).recv.significant());
  EXPECT_FALSE(layout_of(call, 0, 3).recv.significant());
  const CollCall in_place = describe::reduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
  EXPECT_FALSE(layout_of(in_place, 2, 3).send.significant());
}

TEST(Layout, BcastReadsAtRootAndWritesElsewhere) {
  const CollCall call = describe::bcast(R, 7, MPI_INT, 1, MPI_COMM_WORLD);
  const Layout root = layout_of(call, 1, 3);
  const Layout other = layout_of(call, 0, 3);
  EXPECT_TRUE(root.recv.read);
  EXPECT_FALSE(root.recv.written);
  EXPECT_TRUE(other.recv.written);
  EXPECT_FALSE(other.recv.read);
}

TEST(Layout, AllgatherHasOneBlockPerRank) {
  const Layout l = layout_of(describe::allgather(S, 4, MPI_INT, R, 4, MPI_INT, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(l.recv), (Blocks{{0, 4}, {4, 4}, {8, 4}}));
  EXPECT_EQ(blocks(l.send), (Blocks{{0, 4}}));
}

TEST(Layout, VectorFormsUseCountsAndDisplacements) {
  const int counts[] = {1, 0, 3};
  const int displs[] = {5, 0, 1};
  const Layout l = layout_of(describe::allgatherv(S, 3, MPI_INT, R, counts, displs, MPI_INT, MPI_COMM_WORLD), 2, 3);
  EXPECT_EQ(blocks(l.recv), (Blocks{{5, 1}, {0, 0}, {1, 3}}));
  const MPI_Count wide_counts[] = {1, 0, 3};
  const MPI_Aint wide_displs[] = {5, 0, 1};
  const Layout wide =
      layout_of(describe::allgatherv(S, 3, MPI_INT, R, wide_counts, wide_displs, MPI_INT, MPI_COMM_WORLD), 2, 3);
  EXPECT_EQ(blocks(wide.recv), blocks(l.recv));  // int and large-count forms describe the same call
}

TEST(Layout, ScatterInPlaceIsOnTheReceiveBufferAtTheRoot) {
  const CollCall call = describe::scatter(S, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, 0, MPI_COMM_WORLD);
  const Layout root = layout_of(call, 0, 3);
  EXPECT_FALSE(root.recv.significant());
  EXPECT_EQ(blocks(root.send), (Blocks{{0, 2}, {2, 2}, {4, 2}}));
  EXPECT_FALSE(layout_of(call, 1, 3).send.significant());
}

TEST(Layout, ReduceScatterInPlaceCoversTheWholeInput) {
  const int counts[] = {2, 3, 4};
  const Layout in_place = layout_of(describe::reduce_scatter(MPI_IN_PLACE, R, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(in_place.recv), (Blocks{{0, 9}}));
  const Layout plain = layout_of(describe::reduce_scatter(S, R, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(plain.send), (Blocks{{0, 9}}));
  EXPECT_EQ(blocks(plain.recv), (Blocks{{0, 3}}));
  const Layout block = layout_of(describe::reduce_scatter_block(MPI_IN_PLACE, R, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_EQ(blocks(block.recv), (Blocks{{0, 6}}));
}

TEST(Layout, SpanFollowsExtentAndTrueBounds) {
  BufferSide side;
  side.base = recv_storage;
  side.blocks = {{2, 3}, {0, 1}};
  TypeInfo strided;
  strided.size = 4;
  strided.extent = 12;
  strided.true_lb = 0;
  strided.true_extent = 4;
  const Span span = span_of(side, strided);
  EXPECT_EQ(span.lo, 0);
  EXPECT_EQ(span.hi, 4 * 12 + 4);
  EXPECT_FALSE(strided.contiguous());
  side.blocks = {{0, 0}};
  EXPECT_EQ(span_of(side, strided).bytes(), 0u);
}

// Issue 16: an argument MPI ignores on this rank is not part of its layout, whatever it holds.
TEST(Layout, IgnoredArgumentsAreNotSignificant) {
  // Non-root gather: the receive side (buffer, count, type) is garbage.
  const CollCall gather = describe::gather(S, 4, MPI_INT, reinterpret_cast<void*>(1), -1, MPI_DATATYPE_NULL, 0,
                                           MPI_COMM_WORLD);
  const Layout member = layout_of(gather, 1, 3);
  EXPECT_FALSE(member.recv.significant());
  EXPECT_EQ(blocks(member.send), (Blocks{{0, 4}}));
  EXPECT_TRUE(check_counts(member).ok());
  // In-place allgather: sendcount and sendtype are garbage.
  const CollCall allgather = describe::allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, R, 2, MPI_INT, MPI_COMM_WORLD);
  const Layout in_place = layout_of(allgather, 0, 2);
  EXPECT_FALSE(in_place.send.significant());
  EXPECT_TRUE(check_counts(in_place).ok());
  // Non-root scatterv: null counts and displacements are never read.
  const CollCall scatterv = describe::scatterv(reinterpret_cast<void*>(1), static_cast<const int*>(nullptr),
                                               static_cast<const int*>(nullptr), MPI_DATATYPE_NULL, R, 3, MPI_INT, 0,
                                               MPI_COMM_WORLD);
  EXPECT_FALSE(layout_of(scatterv, 2, 3).send.significant());
  // A negative count that is significant is still one.
  const Layout root = layout_of(describe::gather(S, 4, MPI_INT, R, -1, MPI_INT, 0, MPI_COMM_WORLD), 0, 3);
  EXPECT_EQ(check_counts(root).error_class(), MPI_ERR_COUNT);
}

// Issue 13: MPI_IN_PLACE where MPI forbids it leaves a significant side based at MPI_IN_PLACE;
// where MPI allows it, no side is.
TEST(Layout, ForbiddenInPlaceIsReported) {
  auto in_place_error = [](const Layout& l) { return check_in_place(l).error_class(); };
  // Allowed: allreduce, the gather root's send buffer, the scatter root's receive buffer.
  EXPECT_TRUE(check_in_place(layout_of(describe::allreduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3)).ok());
  EXPECT_TRUE(check_in_place(layout_of(describe::gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, R, 2, MPI_INT, 0,
                                                        MPI_COMM_WORLD), 0, 3)).ok());
  EXPECT_TRUE(check_in_place(layout_of(describe::scatter(S, 2, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, 0,
                                                         MPI_COMM_WORLD), 0, 3)).ok());
  // Forbidden: both buffers, bcast's buffer, off the root, on an intercommunicator.
  EXPECT_EQ(in_place_error(layout_of(describe::allreduce(MPI_IN_PLACE, MPI_IN_PLACE, 5, MPI_INT, MPI_SUM,
                                                         MPI_COMM_WORLD), 0, 3)), MPI_ERR_BUFFER);
  EXPECT_EQ(in_place_error(layout_of(describe::bcast(MPI_IN_PLACE, 5, MPI_INT, 0, MPI_COMM_WORLD), 1, 3)), MPI_ERR_BUFFER);
  EXPECT_EQ(in_place_error(layout_of(describe::gather(MPI_IN_PLACE, 2, MPI_INT, R, 2, MPI_INT, 0, MPI_COMM_WORLD), 1, 3)),
            MPI_ERR_BUFFER);
  EXPECT_EQ(in_place_error(layout_of(describe::reduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), 2, 3)),
            MPI_ERR_BUFFER);
  EXPECT_EQ(in_place_error(layout_of(describe::scatter(S, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, 0, MPI_COMM_WORLD), 1, 3)),
            MPI_ERR_BUFFER);
  const Participant inter{0, 2, 3, true};
  EXPECT_EQ(in_place_error(layout_of(describe::allgather(MPI_IN_PLACE, 2, MPI_INT, R, 2, MPI_INT, MPI_COMM_WORLD), inter)),
            MPI_ERR_BUFFER);
  // ... but not where the rank's arguments are all ignored (MPI_PROC_NULL in the root's group).
  EXPECT_TRUE(check_in_place(layout_of(describe::gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, MPI_IN_PLACE, -1,
                                                        MPI_DATATYPE_NULL, MPI_PROC_NULL, MPI_COMM_WORLD), inter)).ok());
}

// Issue 13: a NULL counts array that is significant is reported (MPICH 4.0.2 dereferences it),
// never read.
TEST(Layout, NullSignificantCountsArrayIsReported) {
  const int* none = nullptr;
  const int counts[3] = {1, 1, 1};
  EXPECT_EQ(check_counts(layout_of(describe::allgatherv(S, 1, MPI_INT, R, none, counts, MPI_INT, MPI_COMM_WORLD), 0, 3))
                .error_class(),
            MPI_ERR_ARG);
  EXPECT_EQ(check_counts(layout_of(describe::reduce_scatter(S, R, none, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3))
                .error_class(),
            MPI_ERR_ARG);
  EXPECT_TRUE(check_counts(layout_of(describe::gatherv(S, 1, MPI_INT, R, none, none, MPI_INT, 0, MPI_COMM_WORLD), 1, 3))
                  .ok());  // off the root they are ignored
}

// Issue 13: sides that cannot exist -- bytes past 2^63, a NULL buffer with data -- are refused.
TEST(Layout, ImpossibleSidesAreReported) {
  TypeInfo ints;  // MPI_INT's geometry (no MPI_Init here to ask)
  ints.size = ints.extent = ints.true_extent = 4;
  const Layout ok = layout_of(describe::allreduce(S, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_TRUE(check_side(ok.send, ints).ok());
  const Layout huge =
      layout_of(describe::allreduce(S, R, (MPI_Count{1} << 61) + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_EQ(check_side(huge.send, ints).error_class(), MPI_ERR_COUNT);
  const Layout null_send = layout_of(describe::allreduce(nullptr, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_EQ(check_side(null_send.send, ints).error_class(), MPI_ERR_BUFFER);
  const Layout null_empty = layout_of(describe::allreduce(nullptr, R, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_TRUE(check_side(null_empty.send, ints).ok());
  TypeInfo none;
  EXPECT_EQ(type_info(MPI_DATATYPE_NULL, &none).error_class(), MPI_ERR_TYPE);  // no query, no handler
}

TEST(Layout, IntercommunicatorRolesFollowRootArgument) {
  const Participant inter{0, 2, 3, true};  // local group of 2, remote group of 3
  const CollCall at_root = describe::gather(reinterpret_cast<void*>(1), -1, MPI_DATATYPE_NULL, R, 2, MPI_INT,
                                            MPI_ROOT, MPI_COMM_WORLD);
  const Layout root = layout_of(at_root, inter);
  EXPECT_FALSE(root.send.significant());  // the root's group only receives
  EXPECT_EQ(blocks(root.recv), (Blocks{{0, 2}, {2, 2}, {4, 2}}));  // one block per remote rank
  const CollCall proc_null = describe::gather(reinterpret_cast<void*>(1), -1, MPI_DATATYPE_NULL,
                                              reinterpret_cast<void*>(1), -1, MPI_DATATYPE_NULL, MPI_PROC_NULL,
                                              MPI_COMM_WORLD);
  const Layout bystander = layout_of(proc_null, inter);
  EXPECT_FALSE(bystander.send.significant());
  EXPECT_FALSE(bystander.recv.significant());
  const Layout member = layout_of(describe::gather(S, 2, MPI_INT, nullptr, -1, MPI_DATATYPE_NULL, 1, MPI_COMM_WORLD), inter);
  EXPECT_TRUE(member.send.significant());
  EXPECT_FALSE(member.recv.significant());
  // Roots: MPI_ROOT, MPI_PROC_NULL and the remote group's ranks are valid; the local size is not the bound.
  EXPECT_TRUE(check_root(at_root, inter).ok());
  EXPECT_TRUE(check_root(proc_null, inter).ok());
  EXPECT_TRUE(check_root(describe::bcast(R, 1, MPI_INT, 2, MPI_COMM_WORLD), inter).ok());
  EXPECT_FALSE(check_root(describe::bcast(R, 1, MPI_INT, 3, MPI_COMM_WORLD), inter).ok());
  EXPECT_FALSE(check_root(describe::bcast(R, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD), Participant::intra(0, 3)).ok());
  // Exchanges size their blocks by the remote group.
  const Layout all = layout_of(describe::alltoall(S, 1, MPI_INT, R, 1, MPI_INT, MPI_COMM_WORLD), inter);
  EXPECT_EQ(blocks(all.send).size(), 3u);
  EXPECT_EQ(blocks(all.recv).size(), 3u);
}

TEST(Layout, AgreedBytesComeFromSignificantSidesOnly) {
  TypeInfo int4;
  int4.size = int4.extent = int4.true_extent = 4;
  const TypeInfo none;
  // Gather: the root sizes by its receive side, the others by their send side: both 4 x 3 bytes.
  const CollCall gather = describe::gather(S, 3, MPI_INT, nullptr, -1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
  const Participant member = Participant::intra(1, 2);
  EXPECT_EQ(agreed_bytes(gather, layout_of(gather, member), member, int4, none), 12u);
  const CollCall root_in_place = describe::gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, R, 3, MPI_INT, 0, MPI_COMM_WORLD);
  const Participant root = Participant::intra(0, 2);
  EXPECT_EQ(agreed_bytes(root_in_place, layout_of(root_in_place, root), root, none, int4), 12u);
  // Reduce off the root: only the send side exists, and carries the one datatype.
  const CollCall reduce = describe::reduce(S, nullptr, 5, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  EXPECT_EQ(agreed_bytes(reduce, layout_of(reduce, member), member, int4, none), 20u);
  // No agreed size for the v-forms with per-rank sizes, nor on intercommunicators.
  const int counts[] = {1, 2};
  const int displs[] = {0, 1};
  const CollCall gatherv = describe::gatherv(S, 1, MPI_INT, R, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_FALSE(agreed_bytes(gatherv, layout_of(gatherv, root), root, int4, int4).has_value());
  const CollCall bcast = describe::bcast(R, 2, MPI_INT, MPI_ROOT, MPI_COMM_WORLD);
  const Participant inter{0, 2, 2, true};
  EXPECT_FALSE(agreed_bytes(bcast, layout_of(bcast, inter), inter, int4, int4).has_value());
}

TEST(Layout, BarrierTouchesNothing) {
  const Layout l = layout_of(describe::barrier(MPI_COMM_WORLD), 0, 2);
  EXPECT_FALSE(l.send.significant());
  EXPECT_FALSE(l.recv.significant());
}

// Everything layout_of made of a call's arrays, for comparing two layouts.
struct Shape {
  Blocks send, recv;
  bool send_significant = false, recv_significant = false, missing = false;
  bool operator==(const Shape& o) const {
    return send == o.send && recv == o.recv && send_significant == o.send_significant &&
           recv_significant == o.recv_significant && missing == o.missing;
  }
};
Shape shape_of(const CollCall& call, const Participant& self) {
  const Layout l = layout_of(call, self);
  return Shape{blocks(l.send), blocks(l.recv), l.send.significant(), l.recv.significant(), l.missing_array};
}

// Four arrays of three entries in one width, for one call.
template <class T>
struct Arrays {
  T values[4][3] = {{1, 2, 3}, {9, 5, 0}, {4, 0, 2}, {0, 6, 8}};
  void scribble(int which) {
    for (T& v : values[which]) v = -77;
  }
  void bind(CollCall* c) {
    c->sendcounts = values[0];
    c->sdispls = values[1];
    c->recvcounts = values[2];
    c->rdispls = values[3];
  }
};

const void* array_pointer(const CountArray& a) {
  return a.wide() ? static_cast<const void*>(a.wide_data()) : static_cast<const void*>(a.narrow_data());
}

// keep_arrays copies exactly the arrays layout_of reads on the rank: once the caller's arrays hold
// garbage, the kept call still has the caller's layout, and an array that does not change the
// layout (MPI ignores it there) is passed on as it came, never read.
template <class T>
void check_kept_arrays(CollKind kind, const Participant& self, int root, bool in_place) {
  Arrays<T> arrays;
  CollCall call;
  call.kind = kind;
  call.sendbuf = in_place ? MPI_IN_PLACE : S;
  call.recvbuf = R;
  call.sendtype = call.recvtype = MPI_INT;
  call.op = MPI_SUM;
  call.root = root;
  call.comm = MPI_COMM_WORLD;
  arrays.bind(&call);
  const std::string where = std::string(mpi_name(kind)) + " rank " + std::to_string(self.rank) + " root " +
                            std::to_string(root) + (self.inter ? " inter" : "") + (in_place ? " in place" : "");
  const Shape before = shape_of(call, self);
  // Which arrays matter, by the layout alone: garbage in a significant one changes it.
  bool significant[4];
  for (int k = 0; k < 4; ++k) {
    Arrays<T> probe;
    probe.scribble(k);
    CollCall probed = call;
    probe.bind(&probed);
    significant[k] = !(shape_of(probed, self) == before);
  }
  ArrayCopies copies;
  const CollCall kept = keep_arrays(call, self, &copies);
  for (int k = 0; k < 4; ++k) arrays.scribble(k);
  EXPECT_TRUE(shape_of(kept, self) == before) << where;
  const CountArray* given[4] = {&call.sendcounts, &call.sdispls, &call.recvcounts, &call.rdispls};
  const CountArray* got[4] = {&kept.sendcounts, &kept.sdispls, &kept.recvcounts, &kept.rdispls};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(array_pointer(*got[k]) != array_pointer(*given[k]), significant[k]) << where << " array " << k;
    EXPECT_EQ(got[k]->wide(), given[k]->wide()) << where << " array " << k;
  }
}

TEST(Layout, KeptArraysOutliveTheCallersArrays) {
  const Participant intra_root = Participant::intra(0, 3), intra_other = Participant::intra(2, 3);
  const Participant inter{0, 2, 3, true};  // local group of 2, remote group of 3
  for (CollKind kind : {CollKind::allgatherv, CollKind::gatherv, CollKind::scatterv, CollKind::alltoallv,
                        CollKind::reduce_scatter}) {
    for (bool in_place : {false, true}) {
      for (const Participant& self : {intra_root, intra_other}) {
        check_kept_arrays<int>(kind, self, 0, in_place);
        check_kept_arrays<MPI_Count>(kind, self, 0, in_place);
      }
      for (int root : {MPI_ROOT, MPI_PROC_NULL, 1}) {
        check_kept_arrays<int>(kind, inter, root, in_place);
        check_kept_arrays<MPI_Count>(kind, inter, root, in_place);
      }
    }
  }
  // Collectives without arrays come back as they were.
  ArrayCopies copies;
  const CollCall allreduce = describe::allreduce(S, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(keep_arrays(allreduce, intra_root, &copies).sendbuf, S);
}

}  // namespace
}  // namespace mcrp

#include "tests/mpi/count_forms.h"

namespace mcrp_test {

const char* form_name(CountForm form) { return form == CountForm::narrow ? "int" : "_c"; }

namespace {

bool is_large(CountForm f) { return f == CountForm::large; }
int narrow(MPI_Count n) { return static_cast<int>(n); }

// int[] copy of a wide counts or displacements array, for the int form.
std::vector<int> narrow(const std::vector<MPI_Count>& wide) { return {wide.begin(), wide.end()}; }

}  // namespace

namespace call {

int allreduce(CountForm f, const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return is_large(f) ? MPI_Allreduce_c(s, r, n, t, op, c) : MPI_Allreduce(s, r, narrow(n), t, op, c);
}

int reduce(CountForm f, const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  return is_large(f) ? MPI_Reduce_c(s, r, n, t, op, root, c) : MPI_Reduce(s, r, narrow(n), t, op, root, c);
}

int bcast(CountForm f, void* buf, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c) {
  return is_large(f) ? MPI_Bcast_c(buf, n, t, root, c) : MPI_Bcast(buf, narrow(n), t, root, c);
}

int allgather(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn, MPI_Datatype rt,
              MPI_Comm c) {
  return is_large(f) ? MPI_Allgather_c(s, sn, st, r, rn, rt, c)
                     : MPI_Allgather(s, narrow(sn), st, r, narrow(rn), rt, c);
}

int allgatherv(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, const Counts& rn,
               const Displs& rd, MPI_Datatype rt, MPI_Comm c) {
  if (is_large(f)) return MPI_Allgatherv_c(s, sn, st, r, rn.data(), rd.data(), rt, c);
  return MPI_Allgatherv(s, narrow(sn), st, r, narrow(rn).data(), narrow(rd).data(), rt, c);
}

int reduce_scatter(CountForm f, const void* s, void* r, const Counts& rn, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return is_large(f) ? MPI_Reduce_scatter_c(s, r, rn.data(), t, op, c)
                     : MPI_Reduce_scatter(s, r, narrow(rn).data(), t, op, c);
}

int reduce_scatter_block(CountForm f, const void* s, void* r, MPI_Count rn, MPI_Datatype t, MPI_Op op,
                         MPI_Comm c) {
  return is_large(f) ? MPI_Reduce_scatter_block_c(s, r, rn, t, op, c)
                     : MPI_Reduce_scatter_block(s, r, narrow(rn), t, op, c);
}

int alltoall(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn, MPI_Datatype rt,
             MPI_Comm c) {
  return is_large(f) ? MPI_Alltoall_c(s, sn, st, r, rn, rt, c)
                     : MPI_Alltoall(s, narrow(sn), st, r, narrow(rn), rt, c);
}

int alltoallv(CountForm f, const void* s, const Counts& sn, const Displs& sd, MPI_Datatype st, void* r,
              const Counts& rn, const Displs& rd, MPI_Datatype rt, MPI_Comm c) {
  if (is_large(f)) return MPI_Alltoallv_c(s, sn.data(), sd.data(), st, r, rn.data(), rd.data(), rt, c);
  return MPI_Alltoallv(s, narrow(sn).data(), narrow(sd).data(), st, r, narrow(rn).data(), narrow(rd).data(), rt,
                       c);
}

int gather(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn, MPI_Datatype rt,
           int root, MPI_Comm c) {
  return is_large(f) ? MPI_Gather_c(s, sn, st, r, rn, rt, root, c)
                     : MPI_Gather(s, narrow(sn), st, r, narrow(rn), rt, root, c);
}

int gatherv(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, const Counts& rn,
            const Displs& rd, MPI_Datatype rt, int root, MPI_Comm c) {
  if (is_large(f)) return MPI_Gatherv_c(s, sn, st, r, rn.data(), rd.data(), rt, root, c);
  return MPI_Gatherv(s, narrow(sn), st, r, narrow(rn).data(), narrow(rd).data(), rt, root, c);
}

int scatter(CountForm f, const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn, MPI_Datatype rt,
            int root, MPI_Comm c) {
  return is_large(f) ? MPI_Scatter_c(s, sn, st, r, rn, rt, root, c)
                     : MPI_Scatter(s, narrow(sn), st, r, narrow(rn), rt, root, c);
}

int scatterv(CountForm f, const void* s, const Counts& sn, const Displs& sd, MPI_Datatype st, void* r,
             MPI_Count rn, MPI_Datatype rt, int root, MPI_Comm c) {
  if (is_large(f)) return MPI_Scatterv_c(s, sn.data(), sd.data(), st, r, rn, rt, root, c);
  return MPI_Scatterv(s, narrow(sn).data(), narrow(sd).data(), st, r, narrow(rn), rt, root, c);
}

int scan(CountForm f, const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return is_large(f) ? MPI_Scan_c(s, r, n, t, op, c) : MPI_Scan(s, r, narrow(n), t, op, c);
}

int exscan(CountForm f, const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return is_large(f) ? MPI_Exscan_c(s, r, n, t, op, c) : MPI_Exscan(s, r, narrow(n), t, op, c);
}

}  // namespace call
}  // namespace mcrp_test

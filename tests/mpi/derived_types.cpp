// Data the library must not treat as a plain contiguous array of a built-in type: a strided
// MPI_Type_vector (bcast, and allgather with different send and receive types) and MPIX_C_FLOAT16.
#include <cstdint>

#include "tests/mpi/suite.h"

namespace mcrp_test {

namespace {

constexpr int kRootFiller = 4242;  // the root's gap contents: must never reach another rank

// Owns a committed datatype.
class OwnedType {
 public:
  explicit OwnedType(MPI_Datatype t) : type_(t) { MPI_Type_commit(&type_); }
  ~OwnedType() { MPI_Type_free(&type_); }
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

// `count` ints every other element; resized so that consecutive items are back to back.
MPI_Datatype strided_ints(MPI_Count count, bool resized) {
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  MPI_Type_vector(static_cast<int>(count), 1, 2, MPI_INT, &vec);
  if (!resized) return vec;
  MPI_Datatype out = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(vec, 0, static_cast<MPI_Aint>(2 * count * sizeof(int)), &out);
  MPI_Type_free(&vec);
  return out;
}

// A strided buffer of `elements` data slots: data at even positions, `filler` at odd ones, and a
// trailing sentinel.
std::vector<int> strided_buffer(MPI_Count elements, int filler, int data_rank, bool with_data) {
  std::vector<int> buf(static_cast<size_t>(2 * elements) + 1, sentinel<int>());
  for (MPI_Count i = 0; i < elements; ++i) {
    buf[2 * i] = with_data ? value_of<int>(data_rank, i) : sentinel<int>();
    buf[2 * i + 1] = filler;
  }
  return buf;
}

void check_strided_bcast(const Env& env, const Case& c) {
  constexpr int kItems = 3;
  const TestComm& tc = env.comm;
  OwnedType type(strided_ints(c.count, true));
  const bool at_root = tc.rank == c.root;
  const std::vector<int> root_buf = strided_buffer(kItems * c.count, kRootFiller, c.root, true);
  std::vector<int> buf =
      at_root ? root_buf : strided_buffer(kItems * c.count, sentinel<int>(), c.root, false);
  const std::vector<int> expected =
      at_root ? root_buf : strided_buffer(kItems * c.count, sentinel<int>(), c.root, true);
  const int rc = call::bcast(c.form, buf.data(), kItems, type.get(), c.root, tc.comm);
  expect_buffer(env, env.describe("bcast", "3 x resized MPI_Type_vector of MPI_INT", c), rc, buf, expected);
}

void check_strided_allgather(const Env& env, const Case& c) {
  const TestComm& tc = env.comm;
  OwnedType type(strided_ints(c.count, false));
  const std::vector<int> send = strided_buffer(c.count, kRootFiller, tc.rank, true);
  const VLayout layout = contiguous_layout(c.count, tc.size);
  const std::vector<int> expected = fill_layout<int>(layout, value_of<int>);
  std::vector<int> recv(expected.size(), sentinel<int>());
  const int rc = call::allgather(c.form, send.data(), 1, type.get(), recv.data(), c.count, MPI_INT, tc.comm);
  expect_buffer(env, env.describe("allgather", "1 x MPI_Type_vector -> MPI_INT", c), rc, recv, expected);
}

void check_float16_bcast(const Env& env, const Case& c) {
  const TestComm& tc = env.comm;
  std::vector<std::uint16_t> expected(static_cast<size_t>(c.count) + 1, 0xFFFF);
  for (MPI_Count i = 0; i < c.count; ++i) expected[i] = static_cast<std::uint16_t>(0x3C00 + (i + c.root) % 977);
  std::vector<std::uint16_t> buf(expected.size(), 0xFFFF);
  if (tc.rank == c.root) buf = expected;
  const int rc = call::bcast(c.form, buf.data(), c.count, MPIX_C_FLOAT16, c.root, tc.comm);
  expect_buffer(env, env.describe("bcast", "MPIX_C_FLOAT16", c), rc, buf, expected);
}

}  // namespace

void run_derived_types(const Env& env) {
  for_each_case(env.comm, {false, true}, [&](const Case& c) {
    check_strided_bcast(env, c);
    check_float16_bcast(env, c);
    if (c.root == 0) check_strided_allgather(env, c);
  });
}

}  // namespace mcrp_test

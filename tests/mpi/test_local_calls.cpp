// The calls that move data between buffers of one process, on buffers in any memory space:
// MPI_Reduce_local (a predefined op, a user op, a strided datatype, count 0) and MPI_Pack /
// MPI_Unpack with their external32 forms, int and _c: packs of several datatypes one after the
// other into one packed buffer (strided ones with holes that must keep their bytes), compared byte
// for byte with the base MPI's own pack of host copies (PMPI_: the references do not go through the
// library); unpacks back; the bytes past a pack kept; packed buffers sent as MPI_PACKED to the next
// rank and unpacked there; packed buffers in the other memory kind. Options:
//   --space S     host, fake-device, fake-device-legacy, device, device-legacy
//   --bad-input   also the library's argument checks on the space's buffers (MPI_ERRORS_RETURN);
//                 --only, --trace, --run-base-defects: tests/mpi/case_filter.h
//   --verify      (with MCRPMPI_VERIFY=1) buffers at an unmapped address, and device allocations
//                 smaller than the call says, refused before any copy
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/mpi/case_filter.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/expect_error.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_messages.h"
#include "tests/mpi/strided_int.h"

namespace {

using namespace mcrp_test;

struct Env {
  Checker& checker;
  MemorySpace& space;
  int rank;
  int size;
};

// MPI_Reduce_local on the space's buffers: a predefined op, a user op (a host function, which the
// staging makes usable on device memory), count 0, and a strided datatype with a user op.
void user_sum_times_ten(void* in, void* inout, int* len, MPI_Datatype* type) {
  const int step = *type == MPI_INT ? 1 : 2;  // the strided int: every other int
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i * step] += 10 * static_cast<const int*>(in)[i * step];
}

void reduce_local(const Env& e) {
  MPI_Op user;
  MPI_Op_create(user_sum_times_ten, 1, &user);
  for (const int n : {0, 1, 1000, 70000}) {
    std::vector<int> in(n), inout(n + 1, kSentinel), sum(n + 1, kSentinel), user_result(n + 1, kSentinel);
    for (int i = 0; i < n; ++i) {
      in[i] = value(e.rank, 1, i);
      inout[i] = value(e.rank, 2, i);
      sum[i] = in[i] + inout[i];
      user_result[i] = inout[i] + 10 * in[i];
    }
    for (const bool wide : {false, true}) {
      for (const auto& [op, expected, name] : {std::tuple{MPI_SUM, &sum, "MPI_SUM"}, std::tuple{user, &user_result, "user op"}}) {
        SpaceBuffer<int> a(e.space, in), b(e.space, inout);
        const int rc = wide ? MPI_Reduce_local_c(a.data(), b.data(), n, MPI_INT, op)
                            : MPI_Reduce_local(a.data(), b.data(), n, MPI_INT, op);
        const std::vector<int> got = b.download();
        e.checker.expect_equal(std::string("MPI_Reduce_local") + (wide ? "_c " : " ") + name + " n " + std::to_string(n),
                               rc, got.data(), expected->data(), got.size());
      }
    }
  }
  // Every other int of a buffer of 2n: the holes keep their bytes.
  const int n = 500;
  std::vector<int> in(2 * n, kSentinel), inout(2 * n, kSentinel), expected(2 * n, kSentinel);
  for (int i = 0; i < n; ++i) {
    in[2 * i] = i;
    inout[2 * i] = 3 * i;
    expected[2 * i] = 3 * i + 10 * i;
  }
  SpaceBuffer<int> a(e.space, in), b(e.space, inout);
  const int rc = MPI_Reduce_local(a.data(), b.data(), n, strided_int(), user);
  const std::vector<int> got = b.download();
  e.checker.expect_equal("MPI_Reduce_local strided user op", rc, got.data(), expected.data(), got.size());
  MPI_Op_free(&user);
}

// What MPICH 4.0.2 gets wrong on host buffers (found with --trace, no library;
// docs/base-mpi-defects.md): those cases run with the library only (case_filter.h).
constexpr const char* kReduceLocalDefect = "MPICH 4.0.2 crashes on a negative count or a NULL buffer in MPI_Reduce_local";
constexpr const char* kPackedBoundsDefect = "MPICH 4.0.2 packs and unpacks past the packed buffer's end";

// MPI_Reduce_local has no communicator: MPICH raises its errors on MPI_COMM_WORLD, and so does the
// library.
void reduce_local_bad_input(const Env& e, CaseFilter& filter) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  SpaceBuffer<int> a(e.space, std::vector<int>(4, 1)), b(e.space, std::vector<int>(4, kSentinel));
  auto expect_class = [&](const char* what, int expected, const char* defect, const std::function<int()>& call) {
    expect_error_case(filter, e.checker, what, expected, defect, call, b, kSentinel);
  };
  expect_class("MPI_Reduce_local negative count", MPI_ERR_COUNT, kReduceLocalDefect,
               [&] { return MPI_Reduce_local(a.data(), b.data(), -1, MPI_INT, MPI_SUM); });
  expect_class("MPI_Reduce_local MPI_OP_NULL", MPI_ERR_OP, nullptr,
               [&] { return MPI_Reduce_local(a.data(), b.data(), 4, MPI_INT, MPI_OP_NULL); });
  expect_class("MPI_Reduce_local_c NULL inout buffer", MPI_ERR_BUFFER, kReduceLocalDefect,
               [&] { return MPI_Reduce_local_c(a.data(), nullptr, 4, MPI_INT, MPI_SUM); });
  expect_class("MPI_Reduce_local NULL input buffer", MPI_ERR_BUFFER, kReduceLocalDefect,
               [&] { return MPI_Reduce_local(nullptr, b.data(), 4, MPI_INT, MPI_SUM); });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

// ---- MPI_Pack / MPI_Unpack ------------------------------------------------------------------------

constexpr unsigned char kUnwritten = 0x5A;

// One piece of a pack: `count` elements of `type` from a buffer of `ints` ints whose values are known.
struct Piece {
  MPI_Datatype type;
  int count;
  std::vector<int> values;  // the whole source buffer, holes included (kSentinel there)
};

std::vector<Piece> pieces(int rank, int scale) {
  std::vector<Piece> out;
  out.push_back(Piece{MPI_INT, 5 * scale, {}});
  out.push_back(Piece{strided_int(), 7 * scale, {}});
  out.push_back(Piece{MPI_INT, 0, {}});
  out.push_back(Piece{MPI_INT, 3, {}});
  for (std::size_t p = 0; p < out.size(); ++p) {
    const int step = out[p].type == MPI_INT ? 1 : 2;
    out[p].values.assign(static_cast<std::size_t>(out[p].count * step + 1), kSentinel);
    for (int i = 0; i < out[p].count; ++i) out[p].values[static_cast<std::size_t>(i * step)] = value(rank, static_cast<int>(p), i);
  }
  return out;
}

// Packs every piece after the other with the base MPI itself on host memory: the reference bytes
// and final position.
std::vector<unsigned char> reference_pack(const std::vector<Piece>& parts, const char* datarep, MPI_Count bytes,
                                          MPI_Count* end) {
  std::vector<unsigned char> packed(static_cast<std::size_t>(bytes), kUnwritten);
  MPI_Aint position = 0;
  for (const Piece& p : parts) {
    if (datarep != nullptr) {
      PMPI_Pack_external(datarep, p.values.data(), p.count, p.type, packed.data(), bytes, &position);
    } else {
      int at = static_cast<int>(position);
      PMPI_Pack(p.values.data(), p.count, p.type, packed.data(), static_cast<int>(bytes), &at, MPI_COMM_WORLD);
      position = at;
    }
  }
  *end = position;
  return packed;
}

MPI_Count packed_bound(const std::vector<Piece>& parts, const char* datarep) {
  MPI_Count total = 16;  // and some bytes past the end, which must stay unwritten
  for (const Piece& p : parts) {
    MPI_Count size = 0;
    if (datarep != nullptr) PMPI_Pack_external_size_c(datarep, p.count, p.type, &size);
    else PMPI_Pack_size_c(p.count, p.type, MPI_COMM_WORLD, &size);
    total += size;
  }
  return total;
}

enum class PackForm { native, native_c, external, external_c };
const char* form_name(PackForm f) {
  switch (f) {
    case PackForm::native: return "MPI_Pack/MPI_Unpack";
    case PackForm::native_c: return "MPI_Pack_c/MPI_Unpack_c";
    case PackForm::external: return "MPI_Pack_external/MPI_Unpack_external";
    case PackForm::external_c: return "MPI_Pack_external_c/MPI_Unpack_external_c";
  }
  return "?";
}

// One pack of `p` at `*position` in the form's entry point.
int pack_one(PackForm f, const Piece& p, const void* in, void* packed, MPI_Count bytes, MPI_Count* position) {
  switch (f) {
    case PackForm::native: {
      int at = static_cast<int>(*position);
      const int rc = MPI_Pack(in, p.count, p.type, packed, static_cast<int>(bytes), &at, MPI_COMM_WORLD);
      *position = at;
      return rc;
    }
    case PackForm::native_c: return MPI_Pack_c(in, p.count, p.type, packed, bytes, position, MPI_COMM_WORLD);
    case PackForm::external: {
      MPI_Aint at = *position;
      const int rc = MPI_Pack_external("external32", in, p.count, p.type, packed, bytes, &at);
      *position = at;
      return rc;
    }
    case PackForm::external_c: return MPI_Pack_external_c("external32", in, p.count, p.type, packed, bytes, position);
  }
  return MPI_ERR_INTERN;
}

int unpack_one(PackForm f, const Piece& p, const void* packed, MPI_Count bytes, MPI_Count* position, void* out) {
  switch (f) {
    case PackForm::native: {
      int at = static_cast<int>(*position);
      const int rc = MPI_Unpack(packed, static_cast<int>(bytes), &at, out, p.count, p.type, MPI_COMM_WORLD);
      *position = at;
      return rc;
    }
    case PackForm::native_c: return MPI_Unpack_c(packed, bytes, position, out, p.count, p.type, MPI_COMM_WORLD);
    case PackForm::external: {
      MPI_Aint at = *position;
      const int rc = MPI_Unpack_external("external32", packed, bytes, &at, out, p.count, p.type);
      *position = at;
      return rc;
    }
    case PackForm::external_c: return MPI_Unpack_external_c("external32", packed, bytes, position, out, p.count, p.type);
  }
  return MPI_ERR_INTERN;
}

// Packs every piece from `data_space` into a packed buffer in `packed_space`, compares with the
// reference, unpacks into fresh buffers (holes kept), and sends the packed bytes to the next rank
// as MPI_PACKED, which unpacks them and checks the previous rank's values.
void pack_round_trip(const Env& e, PackForm f, MemorySpace& data_space, MemorySpace& packed_space, int scale) {
  const bool external = f == PackForm::external || f == PackForm::external_c;
  const char* datarep = external ? "external32" : nullptr;
  const std::string what = std::string(form_name(f)) + ", data in " + data_space.name() + ", packed in " +
                           packed_space.name() + ", scale " + std::to_string(scale);
  const std::vector<Piece> parts = pieces(e.rank, scale);
  const MPI_Count bytes = packed_bound(parts, datarep);
  MPI_Count end = 0;
  const std::vector<unsigned char> expected = reference_pack(parts, datarep, bytes, &end);

  SpaceBuffer<unsigned char> packed(packed_space, std::vector<unsigned char>(static_cast<std::size_t>(bytes), kUnwritten));
  MPI_Count position = 0;
  int rc = MPI_SUCCESS;
  for (const Piece& p : parts) {
    SpaceBuffer<int> in(data_space, p.values);
    if (rc == MPI_SUCCESS) rc = pack_one(f, p, in.data(), packed.data(), bytes, &position);
  }
  const std::vector<unsigned char> got = packed.download();
  e.checker.check(rc == MPI_SUCCESS && position == end, what + ": pack returned " + std::to_string(rc) +
                                                            ", position " + std::to_string(position) + " of " +
                                                            std::to_string(end));
  e.checker.expect_equal(what + ": packed bytes (and the bytes past them unwritten)", rc, got.data(), expected.data(),
                         got.size());

  // Unpack on this rank, then on the next one after an MPI_PACKED send.
  auto unpack_all = [&](const SpaceBuffer<unsigned char>& from, int source, const std::string& where) {
    const std::vector<Piece> sent = pieces(source, scale);
    MPI_Count at = 0;
    for (std::size_t k = 0; k < sent.size(); ++k) {
      SpaceBuffer<int> out(data_space, std::vector<int>(sent[k].values.size(), kSentinel));
      const int urc = unpack_one(f, sent[k], from.data(), bytes, &at, out.data());
      const std::vector<int> values = out.download();
      e.checker.expect_equal(what + ": " + where + " piece " + std::to_string(k), urc, values.data(),
                             sent[k].values.data(), values.size());
    }
    e.checker.check(at == end, what + ": " + where + " unpack position " + std::to_string(at) + " of " +
                                   std::to_string(end));
  };
  unpack_all(packed, e.rank, "unpacked here");
  SpaceBuffer<unsigned char> arrived(packed_space, std::vector<unsigned char>(static_cast<std::size_t>(bytes), kUnwritten));
  const int next = (e.rank + 1) % e.size, previous = (e.rank + e.size - 1) % e.size;
  rc = MPI_Sendrecv(packed.data(), static_cast<int>(end), MPI_PACKED, next, 7, arrived.data(), static_cast<int>(bytes),
                    MPI_PACKED, previous, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  e.checker.check(rc == MPI_SUCCESS, what + ": MPI_Sendrecv of MPI_PACKED returned " + std::to_string(rc));
  unpack_all(arrived, previous, "sent as MPI_PACKED and unpacked by the next rank,");
}

// The library's checks of pack and unpack arguments on the space's buffers; errors on
// MPI_COMM_WORLD (the communicator of these calls, and MPICH's choice for the external ones).
void pack_bad_input(const Env& e, CaseFilter& filter) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  SpaceBuffer<int> data(e.space, std::vector<int>(8, 1));
  SpaceBuffer<unsigned char> packed(e.space, std::vector<unsigned char>(64, kUnwritten));
  auto expect_class = [&](const char* what, int expected, const char* defect, const std::function<int()>& call) {
    expect_error_case(filter, e.checker, what, expected, defect, call, packed, kUnwritten);
  };
  int position = 0;
  MPI_Count wide = 0;
  expect_class("MPI_Pack negative count", MPI_ERR_COUNT, nullptr, [&] {
    return MPI_Pack(data.data(), -1, MPI_INT, packed.data(), 64, &position, MPI_COMM_WORLD);
  });
  expect_class("MPI_Pack_c NULL position", MPI_ERR_ARG, nullptr,
               [&] { return MPI_Pack_c(data.data(), 2, MPI_INT, packed.data(), 64, nullptr, MPI_COMM_WORLD); });
  expect_class("MPI_Pack_c position past the buffer", MPI_ERR_ARG, kPackedBoundsDefect, [&] {
    wide = 65;
    return MPI_Pack_c(data.data(), 2, MPI_INT, packed.data(), 64, &wide, MPI_COMM_WORLD);
  });
  expect_class("MPI_Pack past the buffer's end", MPI_ERR_ARG, kPackedBoundsDefect, [&] {
    position = 60;
    return MPI_Pack(data.data(), 2, MPI_INT, packed.data(), 64, &position, MPI_COMM_WORLD);
  });
  expect_class("MPI_Pack NULL input buffer", MPI_ERR_ARG, nullptr, [&] {
    position = 0;
    return MPI_Pack(nullptr, 2, MPI_INT, packed.data(), 64, &position, MPI_COMM_WORLD);
  });
  expect_class("MPI_Unpack NULL output buffer", MPI_ERR_ARG, nullptr, [&] {
    position = 0;
    return MPI_Unpack(packed.data(), 64, &position, nullptr, 2, MPI_INT, MPI_COMM_WORLD);
  });
  expect_class("MPI_Unpack position past the buffer", MPI_ERR_ARG, kPackedBoundsDefect, [&] {
    position = 65;
    return MPI_Unpack(packed.data(), 64, &position, data.data(), 2, MPI_INT, MPI_COMM_WORLD);
  });
  expect_class("MPI_Unpack past the buffer's end", MPI_ERR_ARG, kPackedBoundsDefect, [&] {
    position = 60;
    return MPI_Unpack(packed.data(), 64, &position, data.data(), 2, MPI_INT, MPI_COMM_WORLD);
  });
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  expect_class("MPI_Pack uncommitted datatype", MPI_ERR_TYPE, nullptr, [&] {
    position = 0;
    return MPI_Pack(data.data(), 1, uncommitted, packed.data(), 64, &position, MPI_COMM_WORLD);
  });
  MPI_Type_free(&uncommitted);
  MPI_Aint at = 0;
  expect_class("MPI_Unpack_external negative count", MPI_ERR_COUNT, nullptr,
               [&] { return MPI_Unpack_external("external32", packed.data(), 64, &at, data.data(), -1, MPI_INT); });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

// With MCRPMPI_VERIFY=1: the memory behind both buffers is checked before any copy or base call. A
// data buffer at an unmapped address, and on device memory a buffer whose allocation is smaller
// than the call says, give MPI_ERR_BUFFER (without it: a crash, or a copy past the allocation).
void verify_memory(const Env& e, bool device) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  // SpaceBuffer allocates one element more than it holds: 16 + 1 bytes here.
  SpaceBuffer<unsigned char> packed(e.space, std::vector<unsigned char>(16, kUnwritten));
  std::vector<int> host_data(8, 1);
  int position = 0;
  void* unmapped = reinterpret_cast<void*>(std::uintptr_t{64});  // in the never-mapped first page
  expect_error_class(e.checker, "MPI_Pack from an unmapped address (MCRPMPI_VERIFY)",
                     MPI_Pack(unmapped, 2, MPI_INT, packed.data(), 16, &position, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                     packed, kUnwritten);
  if (device) {
    SpaceBuffer<unsigned char> short_packed(e.space, std::vector<unsigned char>(16, kUnwritten));
    position = 0;
    expect_error_class(e.checker, "MPI_Pack into a device allocation smaller than outsize (MCRPMPI_VERIFY)",
                       MPI_Pack(host_data.data(), 8, MPI_INT, short_packed.data(), 64, &position, MPI_COMM_WORLD),
                       MPI_ERR_BUFFER, short_packed, kUnwritten);
    SpaceBuffer<int> a(e.space, std::vector<int>(4, 1)), b(e.space, std::vector<int>(16, kSentinel));
    expect_error_class(e.checker, "MPI_Reduce_local of a device buffer shorter than the count (MCRPMPI_VERIFY)",
                       MPI_Reduce_local(a.data(), b.data(), 16, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, b, kSentinel);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<MemorySpace> space = space_option(argc, argv, "host");
  if (!space) {
    MPI_Finalize();
    return kSkipExitCode;
  }
  Checker checker;
  const Env e{checker, *space, rank, size};
  HostMemory host;
  reduce_local(e);
  for (PackForm f : {PackForm::native, PackForm::native_c, PackForm::external, PackForm::external_c}) {
    for (int scale : {1, 4096}) {
      pack_round_trip(e, f, *space, *space, scale);
      pack_round_trip(e, f, *space, host, scale);
      pack_round_trip(e, f, host, *space, scale);
    }
  }
  if (flag(argc, argv, "--bad-input")) {
    CaseFilter filter(checker, argc, argv);
    reduce_local_bad_input(e, filter);
    pack_bad_input(e, filter);
  }
  if (flag(argc, argv, "--verify")) {
    verify_memory(e, option(argc, argv, "--space", "host").find("device") != std::string::npos);
  }
  const int code = checker.finish(MPI_COMM_WORLD, "test_local_calls");
  space.reset();
  MPI_Finalize();
  return code;
}

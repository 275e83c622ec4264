// Issue 10: point-to-point on any mix of memory kinds, every entry point, exact MPI semantics. The
// same checks run with host buffers (plain MPICH and the library), with the library's fake device
// (CPU CI: the staged path), and with CUDA device memory (GPU machine), and with the send and the
// receive side in different kinds:
//   --space S            both sides in S (host, fake-device, device)
//   --send-space S / --recv-space S   one side each
//   --max-bytes N        largest message (default 16 MiB)
//   --threads            also two threads on two communicators (needs MPI_THREAD_MULTIPLE)
//   --assert HOW         run on a communicator asserted device-only (the library's NCCL protocol,
//                        p2p/engine.h): `info` dups MPI_COMM_WORLD with the MPI 4.1 info key
//                        mpi_assert_memory_alloc_kinds=cuda:device; `env` expects
//                        MCRPMPI_P2P_DEVICE_ONLY=1 to have asserted MPI_COMM_WORLD. Adds the
//                        checks that host buffers there are refused with MPI_ERR_BUFFER, that
//                        MPI_Comm_get_info shows the assertion, and which constructors assert.
// Every received buffer is compared with values its sender computed, with one sentinel element
// after the message; every status's source, tag and count is checked.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/mpi/alloc_kinds_info.h"
#include "tests/mpi/bsend_space.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/cuda_aware_base.h"
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_entry_points.h"
#include "tests/mpi/p2p_messages.h"

namespace {

using namespace mcrp_test;


// MPICH 4.0.2: MPI_Isendrecv and MPI_Isendrecv_replace move the data right but complete with a
// status that does not describe the received message (source 0, tag 0, count 0). Probed with
// PMPI_ (the base MPI alone) on MPI_COMM_SELF; where it shows, only those statuses go unchecked.
bool base_isendrecv_status_broken() {
  static const bool broken = [] {
    int out[3] = {1, 2, 3}, in[3] = {0, 0, 0};
    MPI_Request request;
    MPI_Status status;
    PMPI_Isendrecv(out, 3, MPI_INT, 0, 7, in, 3, MPI_INT, 0, 7, MPI_COMM_SELF, &request);
    PMPI_Wait(&request, &status);
    int count = -1;
    PMPI_Get_count(&status, MPI_INT, &count);
    return status.MPI_SOURCE != 0 || status.MPI_TAG != 7 || count != 3;
  }();
  return broken;
}

// MPICH 5.0.2 and Intel MPI 2021.18: MPI_Waitsome and MPI_Testsome complete a truncated persistent
// receive with no error at all (MPICH 4.0.2 reports MPI_ERR_IN_STATUS and MPI_ERR_TRUNCATE). Probed
// with PMPI_ on MPI_COMM_SELF; where it shows, host receives (the base MPI's own) go unchecked.
bool base_waitsome_loses_persistent_errors() {
  static const bool loses = [] {
    MPI_Errhandler before;
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &before);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int out[2] = {1, 2}, in[1] = {0};
    MPI_Request receive, send;
    PMPI_Recv_init(in, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &receive);
    PMPI_Start(&receive);
    PMPI_Isend(out, 2, MPI_INT, 0, 7, MPI_COMM_SELF, &send);
    int outcount = 0, index = -1;
    MPI_Status status;
    status.MPI_ERROR = MPI_SUCCESS;
    const int rc = PMPI_Waitsome(1, &receive, &outcount, &index, &status);
    PMPI_Wait(&send, MPI_STATUS_IGNORE);
    PMPI_Request_free(&receive);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, before);
    PMPI_Errhandler_free(&before);
    return rc == MPI_SUCCESS || status.MPI_ERROR == MPI_SUCCESS;
  }();
  return loses;
}

// Whether the sections run on communicators asserted device-only (--assert).
bool g_asserted = false;

// Receives into this space go through the library's staged path or its device-only protocol
// (libmcrpmpi is loaded, the memory is device memory, fake or real, and the library does not hand
// it to a CUDA-aware base MPI as it is).
bool library_stages(const MemorySpace& space) {
  return MPIX_Query_cuda_support() == 1 && std::strcmp(space.name(), "host") != 0 &&
         (g_asserted || !mcrp_test::base_takes_device_buffers());
}

struct Env {
  Checker& checker;
  MemorySpace& send_space;
  MemorySpace& recv_space;
  MPI_Comm comm;
  int rank;
  int size;
  std::vector<MPI_Count> counts;  // message sizes in ints
  int right() const { return (rank + 1) % size; }
  int left() const { return (rank + size - 1) % size; }
};

// A send buffer holding message(src, tag, n), and a receive buffer of n + 1 sentinels.
std::unique_ptr<SpaceBuffer<int>> send_buffer(const Env& e, int src, int tag, MPI_Count n) {
  return std::make_unique<SpaceBuffer<int>>(e.send_space, message(src, tag, n));
}
std::unique_ptr<SpaceBuffer<int>> recv_buffer(const Env& e, MPI_Count n) {
  return std::make_unique<SpaceBuffer<int>>(e.recv_space, std::vector<int>(static_cast<std::size_t>(n) + 1, kSentinel));
}

// The received buffer holds message(src, tag, n) and then the untouched sentinel; the status names
// src and tag and counts n ints.
void expect_received(const Env& e, const std::string& what, int rc, const SpaceBuffer<int>& buffer, int src, int tag,
                     MPI_Count n, const MPI_Status* status) {
  std::vector<int> expected = message(src, tag, n);
  expected.push_back(kSentinel);
  const std::vector<int> got = buffer.download();
  e.checker.expect_equal(what, rc, got.data(), expected.data(), expected.size());
  if (status == nullptr) return;
  MPI_Count count = -1;
  MPI_Get_count_c(status, MPI_INT, &count);
  e.checker.check(status->MPI_SOURCE == src && status->MPI_TAG == tag && count == n,
                  what + " (status): expected source " + std::to_string(src) + " tag " + std::to_string(tag) +
                      " count " + std::to_string(n) + ", got " + std::to_string(status->MPI_SOURCE) + " " +
                      std::to_string(status->MPI_TAG) + " " + std::to_string(count));
}

std::string name(const char* op, CallForm form, CountForm counts, MPI_Count n) {
  std::string what = std::string(op) + " " + call_form_name(form) + " " + form_name(counts) + " n=" + std::to_string(n);
  static const bool trace = std::getenv("MCRP_TEST_TRACE") != nullptr;
  if (trace) std::fprintf(stderr, "trace: %s\n", what.c_str());
  return what;
}

// ---- every send-like entry point: a ring, the receive posted (and every rank past it) first ----
void send_forms(const Env& e) {
  for (P2POp op : {P2POp::Send, P2POp::Ssend, P2POp::Bsend, P2POp::Rsend})
    for (CallForm form : kCallForms)
      for (CountForm counts : kCountForms)
        for (MPI_Count n : e.counts) {
          if (n > (1 << 18) && counts == CountForm::narrow && op != P2POp::Send) continue;  // 16 MiB: a few forms
          const std::string what = name(p2p_op_name(op), form, counts, n);
          const int tag = 10 + static_cast<int>(op);
          auto out = send_buffer(e, e.rank, tag, n);
          auto in = recv_buffer(e, n);
          MPI_Request receive = MPI_REQUEST_NULL;
          MPI_Irecv_c(in->data(), n, MPI_INT, e.left(), tag, e.comm, &receive);
          MPI_Barrier(e.comm);  // every receive is posted: Rsend is legal
          P2PArgs a;
          a.sendbuf = out->data();
          a.count = n;
          a.dest = e.right();
          a.tag = tag;
          a.comm = e.comm;
          Started s = start_p2p(op, form, counts, a, MPI_STATUS_IGNORE);
          int rc = finish_p2p(s, MPI_STATUS_IGNORE);
          MPI_Status status;
          const int receive_rc = MPI_Wait(&receive, &status);
          e.checker.check(rc == MPI_SUCCESS, what + ": send returned " + std::to_string(rc));
          expect_received(e, what, receive_rc, *in, e.left(), tag, n, &status);
        }
}

// ---- every receive entry point: Isend to the right first, then the receive form ----
void receive_forms(const Env& e) {
  for (P2POp op : {P2POp::Recv, P2POp::Mrecv})
    for (CallForm form : kCallForms)
      for (CountForm counts : kCountForms)
        for (MPI_Count n : e.counts) {
          if (form == CallForm::persistent && !has_persistent_form(op)) continue;
          if (n > (1 << 18) && counts == CountForm::narrow) continue;
          const std::string what = name(p2p_op_name(op), form, counts, n);
          const int tag = 20 + static_cast<int>(op);
          auto out = send_buffer(e, e.rank, tag, n);
          auto in = recv_buffer(e, n);
          MPI_Request send = MPI_REQUEST_NULL;
          MPI_Isend_c(out->data(), n, MPI_INT, e.right(), tag, e.comm, &send);
          P2PArgs a;
          a.recvbuf = in->data();
          a.count = n;
          a.source = e.left();
          a.tag = tag;
          a.comm = e.comm;
          MPI_Message matched = MPI_MESSAGE_NULL;
          if (op == P2POp::Mrecv) {
            MPI_Mprobe(e.left(), tag, e.comm, &matched, MPI_STATUS_IGNORE);
            a.message = &matched;
          }
          MPI_Status status;
          Started s = start_p2p(op, form, counts, a, &status);
          const int rc = finish_p2p(s, &status);
          MPI_Wait(&send, MPI_STATUS_IGNORE);
          expect_received(e, what, rc, *in, e.left(), tag, n, &status);
          if (op == P2POp::Mrecv) e.checker.check(matched == MPI_MESSAGE_NULL, what + ": the message handle is consumed");
        }
}

// ---- Sendrecv and Sendrecv_replace, blocking and nonblocking: send right, receive from the left ----
void sendrecv_forms(const Env& e) {
  for (P2POp op : {P2POp::Sendrecv, P2POp::Sendrecv_replace})
    for (CallForm form : {CallForm::blocking, CallForm::nonblocking})
      for (CountForm counts : kCountForms)
        for (MPI_Count n : e.counts) {
          if (n > (1 << 18) && counts == CountForm::narrow) continue;
          const std::string what = name(p2p_op_name(op), form, counts, n);
          const int tag = 30 + static_cast<int>(op);
          P2PArgs a;
          a.comm = e.comm;
          a.dest = e.right();
          a.source = e.left();
          std::unique_ptr<SpaceBuffer<int>> out, in;
          if (op == P2POp::Sendrecv) {
            out = send_buffer(e, e.rank, tag, n);
            in = recv_buffer(e, n);
            a.sendbuf = out->data();
            a.sendcount = a.recvcount = n;
            a.sendtag = a.recvtag = tag;
            a.recvbuf = in->data();
          } else {
            // One buffer: the message out, then the neighbour's in its place (plus the sentinel).
            std::vector<int> initial = message(e.rank, tag, n);
            initial.push_back(kSentinel);
            in = std::make_unique<SpaceBuffer<int>>(e.recv_space, initial);
            a.recvbuf = in->data();
            a.count = n;
            a.sendtag = a.recvtag = tag;
          }
          MPI_Status status;
          Started s = start_p2p(op, form, counts, a, &status);
          const int rc = finish_p2p(s, &status);
          // The library's staged path reports the right status even where the base MPI does not.
          const bool base_wrong = form != CallForm::blocking && base_isendrecv_status_broken();
          const bool library_right = base_wrong && library_stages(e.recv_space);
          if (base_wrong && !library_right) e.checker.skip("status of Isendrecv(_replace): wrong in the base MPI itself");
          const Checker::BeyondBase beyond(e.checker, library_right);
          expect_received(e, what, rc, *in, e.left(), tag, n, base_wrong && !library_right ? nullptr : &status);
        }
}

// ---- matching: tags received opposite to their send order ----
void tags_out_of_order(const Env& e) {
  for (MPI_Count n : e.counts) {
    if (n > (1 << 18)) continue;
    auto first = send_buffer(e, e.rank, 1, n), second = send_buffer(e, e.rank, 2, n);
    MPI_Request sends[2];
    MPI_Isend_c(first->data(), n, MPI_INT, e.right(), 1, e.comm, &sends[0]);
    MPI_Isend_c(second->data(), n, MPI_INT, e.right(), 2, e.comm, &sends[1]);
    auto in2 = recv_buffer(e, n), in1 = recv_buffer(e, n);
    MPI_Status s2, s1;
    const int rc2 = MPI_Recv_c(in2->data(), n, MPI_INT, e.left(), 2, e.comm, &s2);
    const int rc1 = MPI_Recv_c(in1->data(), n, MPI_INT, e.left(), 1, e.comm, &s1);
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
    const std::string what = "tags in reverse order n=" + std::to_string(n);
    expect_received(e, what + " (tag 2 first)", rc2, *in2, e.left(), 2, n, &s2);
    expect_received(e, what + " (tag 1 second)", rc1, *in1, e.left(), 1, n, &s1);
  }
}

// ---- MPI_ANY_SOURCE + MPI_ANY_TAG: several messages per sender, non-overtaking per sender ----
// A sender's sends may complete before rank 0 has received them (eager and inline messages), so
// without a barrier at the end a sender could go on to the next section and send rank 0 a message
// that one of its wildcard receives, still waiting for another sender's message, then matches (as
// MPI allows): rank 1's head-to-head message of 16 MiB, taken here as "message 4" (truncated), and
// the head-to-head exchange then waited for it until the test's timeout (3 ranks on the device-only
// path, whose inline sends complete at once: mpi.fake_nccl.p2p_asserted.mixed_channels.np3 in the
// fresh-clone CI run of 2026-11-26, which printed that failure; two timeouts in a local run before).
// With rank 2's sends delayed by 300 ms (a temporary edit) that run hangs every time without the
// barrier and passes with it.
void section_end(const Env& e) { MPI_Barrier(e.comm); }

void wildcards_keep_order(const Env& e) {
  constexpr int kPerSender = 4;
  const MPI_Count n = 64;
  if (e.rank != 0) {
    std::vector<std::unique_ptr<SpaceBuffer<int>>> outs;
    std::vector<MPI_Request> sends(kPerSender);
    for (int k = 0; k < kPerSender; ++k) {
      outs.push_back(send_buffer(e, e.rank, 100 + k, n));
      MPI_Isend_c(outs.back()->data(), n, MPI_INT, 0, 100 + k, e.comm, &sends[k]);
    }
    MPI_Waitall(kPerSender, sends.data(), MPI_STATUSES_IGNORE);
    section_end(e);
    return;
  }
  std::vector<int> next(static_cast<std::size_t>(e.size), 100);  // per sender: the tag due next
  for (int m = 0; m < (e.size - 1) * kPerSender; ++m) {
    auto in = recv_buffer(e, n);
    MPI_Status status;
    const int rc = MPI_Recv_c(in->data(), n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, e.comm, &status);
    const int src = status.MPI_SOURCE;
    const bool known = src > 0 && src < e.size;
    const std::string what = "ANY_SOURCE/ANY_TAG message " + std::to_string(m);
    e.checker.check(known && status.MPI_TAG == next[src],
                    what + ": non-overtaking (from " + std::to_string(src) + " tag " + std::to_string(status.MPI_TAG) + ")");
    if (known) {
      expect_received(e, what, rc, *in, src, status.MPI_TAG, n, &status);
      ++next[src];
    }
  }
  section_end(e);
}

// ---- a head-to-head blocking exchange (Sendrecv) and a nonblocking one, largest size ----
void head_to_head(const Env& e) {
  const MPI_Count n = e.counts.back();
  const int partner = (e.rank ^ 1) < e.size ? (e.rank ^ 1) : e.rank;
  auto out = send_buffer(e, e.rank, 40, n);
  auto in = recv_buffer(e, n);
  MPI_Status status;
  int rc = MPI_Sendrecv_c(out->data(), n, MPI_INT, partner, 40, in->data(), n, MPI_INT, partner, 40, e.comm, &status);
  expect_received(e, "head-to-head Sendrecv n=" + std::to_string(n), rc, *in, partner, 40, n, &status);
  auto in2 = recv_buffer(e, n);
  MPI_Request requests[2];
  MPI_Irecv_c(in2->data(), n, MPI_INT, partner, 41, e.comm, &requests[0]);
  MPI_Isend_c(out->data(), n, MPI_INT, partner, 41, e.comm, &requests[1]);
  MPI_Status statuses[2];
  rc = MPI_Waitall(2, requests, statuses);
  std::vector<int> expected = message(e.rank, 40, n);  // what `out` holds (sent with tag 40's values)
  expected.push_back(kSentinel);
  const std::vector<int> got = in2->download();
  std::vector<int> from_partner = message(partner, 40, n);
  from_partner.push_back(kSentinel);
  e.checker.expect_equal("head-to-head Isend/Irecv n=" + std::to_string(n), rc, got.data(), from_partner.data(),
                         from_partner.size());
}

// ---- a ring of large transfers in flight across device collectives on this and another communicator ----
void interleaved_with_collectives(const Env& e) {
  const MPI_Count n = e.counts.back();
  auto out = send_buffer(e, e.rank, 45, n);
  auto in = recv_buffer(e, n);
  MPI_Request requests[2];
  MPI_Irecv_c(in->data(), n, MPI_INT, e.left(), 45, e.comm, &requests[0]);
  MPI_Isend_c(out->data(), n, MPI_INT, e.right(), 45, e.comm, &requests[1]);
  MPI_Comm other;
  MPI_Comm_dup(e.comm, &other);
  const std::vector<int> mine(64, e.rank + 1);
  const std::vector<int> expected(64, e.size * (e.size + 1) / 2);
  for (MPI_Comm comm : {e.comm, other, e.comm}) {
    SpaceBuffer<int> contribution(e.send_space, mine);
    SpaceBuffer<int> sum(e.send_space, std::vector<int>(64, 0));
    const int rc = MPI_Allreduce(contribution.data(), sum.data(), 64, MPI_INT, MPI_SUM, comm);
    const std::vector<int> got = sum.download();
    e.checker.expect_equal("allreduce while a ring of transfers is in flight", rc, got.data(), expected.data(), 64);
  }
  MPI_Comm_free(&other);
  MPI_Status statuses[2];
  const int rc = MPI_Waitall(2, requests, statuses);
  expect_received(e, "ring across collectives n=" + std::to_string(n), rc, *in, e.left(), 45, n, &statuses[0]);
}

// ---- a transfer that needs its sender's MPI calls while the sender polls another communicator ----
// Once its MPI_Isend is made, the sender (odd ranks) only polls a communicator the transfer is not
// on: MPI_Test on an MPI_Ibarrier its receiver joins after the receive, then MPI_Iprobe, then
// MPI_Probe, for a message the receiver sends after the receive. The device-only protocol answers
// the receiver's clear-to-send from the sender's MPI calls, so each of these must advance it (MPI's
// progress rule). Before 2026-11-28 none did, and each hung: test_p2p_random found it (seed 11,
// round 115: MPI_Testsome over the base MPI's requests while a buffered send waited).
void polling_elsewhere(const Env& e) {
  const MPI_Count n = e.counts.back();
  const bool sender = e.rank % 2 == 1;
  const bool receiver = e.rank % 2 == 0 && e.rank + 1 < e.size;
  const int partner = sender ? e.rank - 1 : e.rank + 1;
  MPI_Comm other;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  const auto join_barrier = [&] {
    MPI_Request request;
    MPI_Ibarrier(other, &request);
    return MPI_Wait(&request, MPI_STATUS_IGNORE);
  };
  for (const char* how : {"MPI_Test", "MPI_Iprobe", "MPI_Probe"}) {
    const std::string what = std::string("a transfer while its sender polls ") + how + " elsewhere";
    const bool barrier = std::strcmp(how, "MPI_Test") == 0;
    int rc = MPI_SUCCESS;
    if (sender) {
      auto out = send_buffer(e, e.rank, 46, n);
      MPI_Request send;
      MPI_Isend_c(out->data(), n, MPI_INT, partner, 46, e.comm, &send);
      if (barrier) {
        MPI_Request request;
        rc = MPI_Ibarrier(other, &request);
        for (int done = 0; rc == MPI_SUCCESS && !done;) rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      } else {
        MPI_Status probed;
        if (std::strcmp(how, "MPI_Probe") == 0) {
          rc = MPI_Probe(partner, 47, other, &probed);
        } else {
          for (int found = 0; rc == MPI_SUCCESS && !found;) rc = MPI_Iprobe(partner, 47, other, &found, &probed);
        }
        auto note = recv_buffer(e, 1);
        if (rc == MPI_SUCCESS) rc = MPI_Recv(note->data(), 1, MPI_INT, partner, 47, other, MPI_STATUS_IGNORE);
      }
      const int sent = MPI_Wait(&send, MPI_STATUS_IGNORE);
      e.checker.check(rc == MPI_SUCCESS && sent == MPI_SUCCESS, what + " (sender, rc " + std::to_string(rc) + ")");
    } else if (receiver) {
      auto in = recv_buffer(e, n);
      MPI_Status status;
      rc = MPI_Recv_c(in->data(), n, MPI_INT, partner, 46, e.comm, &status);
      expect_received(e, what, rc, *in, partner, 46, n, &status);
      auto note = send_buffer(e, e.rank, 47, 1);
      rc = barrier ? join_barrier() : MPI_Send(note->data(), 1, MPI_INT, partner, 47, other);
      e.checker.check(rc == MPI_SUCCESS, what + " (receiver's call on the other communicator)");
    } else if (barrier) {
      e.checker.check(join_barrier() == MPI_SUCCESS, what + " (the barrier of a rank without a partner)");
    }
  }
  MPI_Comm_free(&other);
}

// ---- all pairs: Isend to everyone, Irecv from everyone in reverse order, one Waitall ----
void all_pairs_reverse(const Env& e) {
  for (MPI_Count n : e.counts) {
    if (n > (1 << 18)) continue;
    std::vector<std::unique_ptr<SpaceBuffer<int>>> outs, ins;
    std::vector<MPI_Request> requests;
    for (int peer = e.size - 1; peer >= 0; --peer) {
      ins.push_back(recv_buffer(e, n));
      requests.emplace_back();
      MPI_Irecv_c(ins.back()->data(), n, MPI_INT, peer, 50, e.comm, &requests.back());
    }
    for (int peer = 0; peer < e.size; ++peer) {
      outs.push_back(send_buffer(e, e.rank, 50 + peer, n));  // distinct data per destination
      requests.emplace_back();
      MPI_Isend_c(outs.back()->data(), n, MPI_INT, peer, 50, e.comm, &requests.back());
    }
    std::vector<MPI_Status> statuses(requests.size());
    const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
    for (int k = 0; k < e.size; ++k) {
      const int peer = e.size - 1 - k;
      std::vector<int> expected = message(peer, 50 + e.rank, n);
      expected.push_back(kSentinel);
      const std::vector<int> got = ins[k]->download();
      e.checker.expect_equal("all pairs, receives reversed n=" + std::to_string(n) + " from " + std::to_string(peer), rc,
                             got.data(), expected.data(), expected.size());
    }
  }
}

// ---- probes: receive by the probed size (Probe, Iprobe, Mprobe, Improbe) ----
void probes(const Env& e) {
  const int kinds = 4;
  for (int how = 0; how < kinds; ++how) {
    const MPI_Count n = 5 + 3 * e.rank + how;  // the receiver learns it from the probe
    const int tag = 60 + how;
    auto out = send_buffer(e, e.rank, tag, n);
    MPI_Request send;
    MPI_Isend_c(out->data(), n, MPI_INT, e.right(), tag, e.comm, &send);
    MPI_Status status;
    MPI_Message matched = MPI_MESSAGE_NULL;
    int flag = 0;
    switch (how) {
      case 0: MPI_Probe(e.left(), tag, e.comm, &status); break;
      case 1: while (!flag) MPI_Iprobe(e.left(), tag, e.comm, &flag, &status); break;
      case 2: MPI_Mprobe(e.left(), tag, e.comm, &matched, &status); break;
      default: while (!flag) MPI_Improbe(e.left(), tag, e.comm, &flag, &matched, &status); break;
    }
    static const char* const names[] = {"Probe", "Iprobe", "Mprobe", "Improbe"};
    const std::string what = std::string(names[how]) + " then receive by the probed size";
    MPI_Count probed = -1;
    MPI_Get_count_c(&status, MPI_INT, &probed);
    const MPI_Count expected_n = 5 + 3 * e.left() + how;
    e.checker.check(probed == expected_n && status.MPI_SOURCE == e.left() && status.MPI_TAG == tag,
                    what + ": probe reports " + std::to_string(probed) + " ints, expected " + std::to_string(expected_n));
    auto in = recv_buffer(e, probed < 0 ? 0 : probed);
    int rc;
    if (how < 2) {
      rc = MPI_Recv_c(in->data(), probed, MPI_INT, e.left(), tag, e.comm, &status);
    } else {
      rc = MPI_Mrecv_c(in->data(), probed, MPI_INT, &matched, &status);
    }
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    expect_received(e, what, rc, *in, e.left(), tag, expected_n, &status);
  }
}

// How often the library gave up on device work (device/buffer_pool.h: the blocks then in use are not
// reused); 0 without the library.
std::uint64_t abandoned_work() {
  using Reader = std::uint64_t (*)();
  static const auto reader = reinterpret_cast<Reader>(dlsym(RTLD_DEFAULT, "mcrpmpi_abandoned_work_count"));
  return reader == nullptr ? 0 : reader();
}

// ---- truncation: a receive shorter than the message fails with MPI_ERR_TRUNCATE, which is an
// ordinary error: the library keeps its staging blocks pooled ----
void truncation(const Env& e) {
  const MPI_Count n = 32;
  for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
    const int tag = 70 + nonblocking;
    auto out = send_buffer(e, e.rank, tag, n + 3);
    MPI_Request send;
    MPI_Isend_c(out->data(), n + 3, MPI_INT, e.right(), tag, e.comm, &send);
    auto in = recv_buffer(e, n);
    const std::uint64_t abandoned_before = abandoned_work();
    MPI_Status status;
    int rc;
    if (nonblocking) {
      MPI_Request receive;
      MPI_Irecv_c(in->data(), n, MPI_INT, e.left(), tag, e.comm, &receive);
      rc = MPI_Wait(&receive, &status);
    } else {
      rc = MPI_Recv_c(in->data(), n, MPI_INT, e.left(), tag, e.comm, &status);
    }
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &error_class);
    e.checker.check(error_class == MPI_ERR_TRUNCATE, std::string(nonblocking ? "Irecv" : "Recv") +
                                                         " shorter than the message: expected MPI_ERR_TRUNCATE, got class " +
                                                         std::to_string(error_class));
    const std::vector<int> got = in->download();
    e.checker.check(got.back() == kSentinel, "truncated receive writes nothing past the buffer");
    e.checker.check(abandoned_work() == abandoned_before,
                    std::string(nonblocking ? "Irecv" : "Recv") + " truncated: no device work abandoned");
  }
}

// ---- a truncated receive completed among others by each Wait/Test form over an array, nonblocking
// and persistent: the call returns MPI_ERR_IN_STATUS (Waitany and Testany: the error itself), the
// truncated receive's status names MPI_ERR_TRUNCATE and the whole receive's MPI_SUCCESS (or
// MPI_ERR_PENDING, then a later call completes it), as the base MPI reports its own requests ----
enum class ArrayWait { waitall, testall, waitsome, testsome, waitany, testany };

const char* array_wait_name(ArrayWait how) {
  switch (how) {
    case ArrayWait::waitall: return "Waitall";
    case ArrayWait::testall: return "Testall";
    case ArrayWait::waitsome: return "Waitsome";
    case ArrayWait::testsome: return "Testsome";
    case ArrayWait::waitany: return "Waitany";
    case ArrayWait::testany: return "Testany";
  }
  return "?";
}

// One call of `how` over the two receives; `note(i, rc, status)` for each receive it completed.
template <class Note>
bool complete_some(ArrayWait how, MPI_Request receives[2], Note note) {
  MPI_Status statuses[2];
  int indices[2], flag = 0, outcount = 0, index = MPI_UNDEFINED, rc = MPI_SUCCESS;
  switch (how) {
    case ArrayWait::waitall:
    case ArrayWait::testall:
      rc = how == ArrayWait::waitall ? MPI_Waitall(2, receives, statuses) : MPI_Testall(2, receives, &flag, statuses);
      if (how == ArrayWait::waitall || flag || rc != MPI_SUCCESS)
        for (int i = 0; i < 2; ++i) note(i, rc, statuses[i]);
      return true;
    case ArrayWait::waitsome:
    case ArrayWait::testsome:
      rc = how == ArrayWait::waitsome ? MPI_Waitsome(2, receives, &outcount, indices, statuses)
                                      : MPI_Testsome(2, receives, &outcount, indices, statuses);
      if (outcount == MPI_UNDEFINED) return false;
      for (int k = 0; k < outcount; ++k) note(indices[k], rc, statuses[k]);
      return true;
    case ArrayWait::waitany:
    case ArrayWait::testany:
      flag = 1;
      rc = how == ArrayWait::waitany ? MPI_Waitany(2, receives, &index, &statuses[0])
                                     : MPI_Testany(2, receives, &index, &flag, &statuses[0]);
      if (flag && index == MPI_UNDEFINED) return false;
      if (flag) note(index, rc, statuses[0]);
      return true;
  }
  return false;
}

// Completes both receives with `how`. Per receive, the error it was reported with (its status's
// MPI_ERROR under MPI_ERR_IN_STATUS, else the call's code), or -1 if never; *call_rc: a code the
// calls returned other than MPI_SUCCESS.
std::vector<int> complete_receives(ArrayWait how, MPI_Request receives[2], int* call_rc) {
  std::vector<int> reported(2, -1);
  *call_rc = MPI_SUCCESS;
  auto note = [&](int i, int rc, const MPI_Status& status) {
    const int error = rc == MPI_ERR_IN_STATUS ? status.MPI_ERROR : rc;
    if (error == MPI_ERR_PENDING) return;  // neither failed nor completed: still active
    if (reported[i] == -1) reported[i] = error;
    if (rc != MPI_SUCCESS) *call_rc = rc;
  };
  for (int spins = 0; (reported[0] == -1 || reported[1] == -1) && spins < 10000000; ++spins) {
    if (!complete_some(how, receives, note)) break;
  }
  return reported;
}

void truncation_in_arrays(const Env& e) {
  const MPI_Count n = 64;
  for (int persistent = 0; persistent < 2; ++persistent)
    for (ArrayWait how : {ArrayWait::waitall, ArrayWait::testall, ArrayWait::waitsome, ArrayWait::testsome,
                          ArrayWait::waitany, ArrayWait::testany}) {
      const std::string what = std::string("a truncated ") + (persistent ? "persistent" : "nonblocking") +
                               " receive beside a whole one, completed by " + array_wait_name(how);
      const int long_tag = 120, whole_tag = 121;
      auto long_out = send_buffer(e, e.rank, long_tag, n + 3);
      auto whole_out = send_buffer(e, e.rank, whole_tag, n);
      auto short_in = recv_buffer(e, n);
      auto whole_in = recv_buffer(e, n);
      MPI_Request receives[2];
      if (persistent) {
        MPI_Recv_init_c(short_in->data(), n, MPI_INT, e.left(), long_tag, e.comm, &receives[0]);
        MPI_Recv_init_c(whole_in->data(), n, MPI_INT, e.left(), whole_tag, e.comm, &receives[1]);
        MPI_Startall(2, receives);
      } else {
        MPI_Irecv_c(short_in->data(), n, MPI_INT, e.left(), long_tag, e.comm, &receives[0]);
        MPI_Irecv_c(whole_in->data(), n, MPI_INT, e.left(), whole_tag, e.comm, &receives[1]);
      }
      MPI_Request sends[2];
      MPI_Isend_c(long_out->data(), n + 3, MPI_INT, e.right(), long_tag, e.comm, &sends[0]);
      MPI_Isend_c(whole_out->data(), n, MPI_INT, e.right(), whole_tag, e.comm, &sends[1]);
      int call_rc = MPI_SUCCESS;
      const std::vector<int> reported = complete_receives(how, receives, &call_rc);
      MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
      const bool some = how == ArrayWait::waitsome || how == ArrayWait::testsome;
      if (persistent && some && base_waitsome_loses_persistent_errors() && !library_stages(e.recv_space)) {
        e.checker.skip(what + ": the base MPI's own Waitsome/Testsome lose a persistent receive's error");
        MPI_Request_free(&receives[0]);
        MPI_Request_free(&receives[1]);
        continue;
      }
      int short_class = -1, call_class = MPI_SUCCESS;
      if (reported[0] >= 0) PMPI_Error_class(reported[0], &short_class);
      PMPI_Error_class(call_rc, &call_class);
      const bool single = how == ArrayWait::waitany || how == ArrayWait::testany;
      const int wanted_call = single ? MPI_ERR_TRUNCATE : MPI_ERR_IN_STATUS;
      e.checker.check(call_class == wanted_call, what + ": the call's class, expected " +
                                                     std::to_string(wanted_call) + ", got " + std::to_string(call_class));
      e.checker.check(short_class == MPI_ERR_TRUNCATE, what + ": the truncated receive's class, expected " +
                                                           std::to_string(MPI_ERR_TRUNCATE) + ", got " +
                                                           std::to_string(short_class));
      e.checker.check(short_in->download().back() == kSentinel, what + ": nothing written past the buffer");
      e.checker.check(reported[1] == MPI_SUCCESS, what + ": the whole receive reported " + std::to_string(reported[1]));
      expect_received(e, what + ": the whole receive", reported[1], *whole_in, e.left(), whole_tag, n, nullptr);
      if (persistent) {
        MPI_Request_free(&receives[0]);
        MPI_Request_free(&receives[1]);
      }
    }
}

// ---- a sendrecv whose receive is truncated still delivers its send: on even ranks the receive is
// shorter than the message (MPI_ERR_TRUNCATE), while their send, 1 MiB so that the base MPI may
// still be reading it when the receive fails, must reach the right neighbour whole; an exchange
// right after it (reusing whatever the failed call held) must be whole everywhere. ----
void sendrecv_truncation(const Env& e) {
  const MPI_Count n = std::min<MPI_Count>(e.counts.back(), 262144);
  if (n < 8) return;
  const bool short_receive = e.rank % 2 == 0;
  for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
    const std::string form = nonblocking ? "Isendrecv" : "Sendrecv";
    const int tag = 80 + nonblocking;
    auto out = send_buffer(e, e.rank, tag, n);
    const MPI_Count capacity = short_receive ? n - 5 : n;
    auto in = recv_buffer(e, capacity);
    MPI_Status status;
    int rc;
    if (nonblocking) {
      MPI_Request request;
      MPI_Isendrecv_c(out->data(), n, MPI_INT, e.right(), tag, in->data(), capacity, MPI_INT, e.left(), tag, e.comm,
                      &request);
      rc = MPI_Wait(&request, &status);
    } else {
      rc = MPI_Sendrecv_c(out->data(), n, MPI_INT, e.right(), tag, in->data(), capacity, MPI_INT, e.left(), tag, e.comm,
                          &status);
    }
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &error_class);
    const int wanted = short_receive ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    // MPICH 4.0.2's own MPI_Isendrecv completes a truncated receive without an error, as it completes
    // it with a wrong status; the library's staged path reports it.
    if (nonblocking && short_receive && base_isendrecv_status_broken() && !library_stages(e.recv_space)) {
      e.checker.skip("MPI_ERR_TRUNCATE of Isendrecv: not reported by the base MPI itself");
    } else {
      e.checker.check(error_class == wanted, form + " with a truncated receive on even ranks: expected class " +
                                                 std::to_string(wanted) + ", got " + std::to_string(error_class));
    }
    if (short_receive) {
      e.checker.check(in->download().back() == kSentinel, form + ": truncated receive writes nothing past the buffer");
    } else {
      expect_received(e, form + ": the whole message from a rank whose own receive was truncated", rc, *in, e.left(),
                      tag, n, nullptr);
    }
    // Right after, in the blocks the failed call may have held: a plain exchange, whole everywhere.
    auto again_out = send_buffer(e, e.rank, tag + 10, n);
    auto again_in = recv_buffer(e, n);
    rc = MPI_Sendrecv_c(again_out->data(), n, MPI_INT, e.right(), tag + 10, again_in->data(), n, MPI_INT, e.left(),
                        tag + 10, e.comm, &status);
    expect_received(e, form + ": the exchange after a truncated one", rc, *again_in, e.left(), tag + 10, n, &status);
  }
}

// ---- persistent send and receive started several times, new data each round ----
void persistent_rounds(const Env& e) {
  const MPI_Count n = 1000;
  auto out = std::make_unique<SpaceBuffer<int>>(e.send_space, static_cast<std::size_t>(n));
  auto in = recv_buffer(e, n);
  MPI_Request requests[2];
  MPI_Recv_init_c(in->data(), n, MPI_INT, e.left(), 80, e.comm, &requests[0]);
  MPI_Send_init_c(out->data(), n, MPI_INT, e.right(), 80, e.comm, &requests[1]);
  for (int round = 0; round < 5; ++round) {
    out->upload(message(e.rank, 80 + round, n));
    MPI_Startall(2, requests);
    MPI_Status statuses[2];
    const int rc = MPI_Waitall(2, requests, statuses);
    std::vector<int> expected = message(e.left(), 80 + round, n);
    expected.push_back(kSentinel);
    const std::vector<int> got = in->download();
    const std::string what = "persistent round " + std::to_string(round);
    e.checker.expect_equal(what, rc, got.data(), expected.data(), expected.size());
    MPI_Count count = -1;
    MPI_Get_count_c(&statuses[0], MPI_INT, &count);
    e.checker.check(statuses[0].MPI_SOURCE == e.left() && statuses[0].MPI_TAG == 80 && count == n,
                    what + " (status of the persistent receive)");
  }
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
}

// ---- Waitany over several receives ----
void waitany_receives(const Env& e) {
  constexpr int kMessages = 4;
  const MPI_Count n = 256;
  std::vector<std::unique_ptr<SpaceBuffer<int>>> outs, ins;
  std::vector<MPI_Request> sends(kMessages), receives(kMessages);
  for (int k = 0; k < kMessages; ++k) {
    ins.push_back(recv_buffer(e, n + k));
    MPI_Irecv_c(ins.back()->data(), n + k, MPI_INT, e.left(), 90 + k, e.comm, &receives[k]);
  }
  for (int k = kMessages - 1; k >= 0; --k) {
    outs.push_back(send_buffer(e, e.rank, 90 + k, n + k));
    MPI_Isend_c(outs.back()->data(), n + k, MPI_INT, e.right(), 90 + k, e.comm, &sends[k]);
  }
  std::vector<bool> seen(kMessages, false);
  for (int m = 0; m < kMessages; ++m) {
    int index = MPI_UNDEFINED;
    MPI_Status status;
    const int rc = MPI_Waitany(kMessages, receives.data(), &index, &status);
    const bool valid = index >= 0 && index < kMessages && !seen[index];
    e.checker.check(valid, "Waitany returns each receive once");
    if (!valid) break;
    seen[index] = true;
    expect_received(e, "Waitany receive " + std::to_string(index), rc, *ins[index], e.left(), 90 + index, n + index,
                    &status);
  }
  MPI_Waitall(kMessages, sends.data(), MPI_STATUSES_IGNORE);
}

// ---- cancel, free an active send, MPI_PROC_NULL ----
void cancel_free_proc_null(const Env& e) {
  // A receive no one sends to is cancelled; its buffer stays as it was.
  auto in = recv_buffer(e, 16);
  MPI_Request receive;
  MPI_Irecv_c(in->data(), 16, MPI_INT, e.left(), 999, e.comm, &receive);
  MPI_Cancel(&receive);
  MPI_Status status;
  const int rc = MPI_Wait(&receive, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  e.checker.check(rc == MPI_SUCCESS && cancelled == 1, "a cancelled receive reports cancelled");
  const std::vector<int> untouched = in->download();
  e.checker.check(std::all_of(untouched.begin(), untouched.end(), [](int v) { return v == kSentinel; }),
                  "a cancelled receive leaves its buffer alone");

  // An active send freed by the application still arrives.
  const MPI_Count n = 4096;
  auto out = send_buffer(e, e.rank, 110, n);
  MPI_Request send;
  MPI_Isend_c(out->data(), n, MPI_INT, e.right(), 110, e.comm, &send);
  MPI_Request_free(&send);
  auto in2 = recv_buffer(e, n);
  const int rc2 = MPI_Recv_c(in2->data(), n, MPI_INT, e.left(), 110, e.comm, &status);
  expect_received(e, "a freed active Isend still arrives", rc2, *in2, e.left(), 110, n, &status);
  MPI_Barrier(e.comm);  // every rank received: the freed sends are done with their buffers

  // MPI_PROC_NULL: nothing moves, the status says so.
  auto nothing = recv_buffer(e, 8);
  const int rc3 = MPI_Recv_c(nothing->data(), 8, MPI_INT, MPI_PROC_NULL, 5, e.comm, &status);
  MPI_Count count = -1;
  MPI_Get_count_c(&status, MPI_INT, &count);
  const std::vector<int> still = nothing->download();
  e.checker.check(rc3 == MPI_SUCCESS && status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG &&
                      count == 0 && still.front() == kSentinel,
                  "receive from MPI_PROC_NULL");
  e.checker.check(MPI_Send_c(out->data(), n, MPI_INT, MPI_PROC_NULL, 5, e.comm) == MPI_SUCCESS, "send to MPI_PROC_NULL");
}

// ---- a strided datatype: holes stay untouched, Get_elements counts basic elements ----
void strided_datatype(const Env& e) {
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);  // 4 ints at stride 2: extent 7 ints
  MPI_Type_commit(&every_other);
  const int elements = 3;  // 3 vectors, resized extent 7 ints each: 21 ints span, 12 ints of data
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(every_other, &lb, &extent);
  const std::size_t span = static_cast<std::size_t>((elements - 1) * (extent / 4) + 7);
  std::vector<int> source_data(span);
  for (std::size_t i = 0; i < span; ++i) source_data[i] = value(e.rank, 120, static_cast<MPI_Count>(i));
  SpaceBuffer<int> out(e.send_space, source_data);
  SpaceBuffer<int> in(e.recv_space, std::vector<int>(span + 1, kSentinel));
  MPI_Request send;
  MPI_Isend(out.data(), elements, every_other, e.right(), 120, e.comm, &send);
  MPI_Status status;
  const int rc = MPI_Recv(in.data(), elements, every_other, e.left(), 120, e.comm, &status);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  std::vector<int> expected(span + 1, kSentinel);
  for (int v = 0; v < elements; ++v)
    for (int k = 0; k < 4; ++k) {
      const std::size_t at = static_cast<std::size_t>(v * (extent / 4) + 2 * k);
      expected[at] = value(e.left(), 120, static_cast<MPI_Count>(at));
    }
  const std::vector<int> got = in.download();
  e.checker.expect_equal("strided datatype: data in place, holes untouched", rc, got.data(), expected.data(),
                         expected.size());
  int count = -1, basic = -1;
  MPI_Get_count(&status, every_other, &count);
  MPI_Get_elements(&status, MPI_INT, &basic);
  e.checker.check(count == elements && basic == 4 * elements, "strided datatype: Get_count and Get_elements");
  MPI_Type_free(&every_other);
}

// ---- on an asserted communicator, host buffers are refused (never sent as if device memory) ----
int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

void refuse_host_buffers(const Env& e, MPI_Comm asserted, const std::string& where) {
  std::vector<int> host(64, 1);
  std::vector<int> host_in(64, kSentinel);
  const std::string tail = " with a host buffer on " + where + ": MPI_ERR_BUFFER";
  const int send_rc = MPI_Send(host.data(), 64, MPI_INT, e.right(), 1, asserted);
  e.checker.check(error_class(send_rc) == MPI_ERR_BUFFER, "MPI_Send" + tail);
  // The library's code gives the library's text (MPICH alone answers it with an unrelated string).
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(send_rc, text, &length);
  e.checker.check(std::strstr(text, "mcrpmpi: MPI_Send") != nullptr && std::strstr(text, "device memory only") != nullptr &&
                      length == static_cast<int>(std::strlen(text)),
                  std::string("MPI_Error_string of the refusal names the library, call and cause: ") + text);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = MPI_Isend_c(host.data(), 64, MPI_INT, e.right(), 1, asserted, &request);
  e.checker.check(error_class(rc) == MPI_ERR_BUFFER && request == MPI_REQUEST_NULL, "MPI_Isend_c" + tail);
  e.checker.check(error_class(MPI_Recv(host_in.data(), 64, MPI_INT, e.left(), 1, asserted, MPI_STATUS_IGNORE)) ==
                      MPI_ERR_BUFFER,
                  "MPI_Recv" + tail);
  e.checker.check(error_class(MPI_Send_init(host.data(), 64, MPI_INT, e.right(), 1, asserted, &request)) ==
                      MPI_ERR_BUFFER,
                  "MPI_Send_init" + tail);
  e.checker.check(std::all_of(host_in.begin(), host_in.end(), [](int v) { return v == kSentinel; }),
                  "a refused receive leaves its buffer alone on " + where);
  // An empty host side is no breach: nothing is read or written.
  auto in = recv_buffer(e, 0);
  MPI_Status status;
  const int empty = MPI_Sendrecv(host.data(), 0, MPI_INT, e.right(), 2, in->data(), 0, MPI_INT, e.left(), 2,
                                 asserted, &status);
  e.checker.check(empty == MPI_SUCCESS && status.MPI_SOURCE == e.left(), "an empty host send on " + where);
  // A rank or tag the base MPI refuses gets its error, and the protocol stays in step afterwards
  // (a rank past the communicator once indexed past the engine's peers and corrupted the heap).
  auto device_data = send_buffer(e, e.rank, 5, 4);
  e.checker.check(error_class(MPI_Send(device_data->data(), 4, MPI_INT, e.size + 3, 1, asserted)) == MPI_ERR_RANK,
                  "a send to a rank past the communicator on " + where + ": MPI_ERR_RANK");
  e.checker.check(error_class(MPI_Send(device_data->data(), 4, MPI_INT, e.right(), -7, asserted)) == MPI_ERR_TAG,
                  "a send with a negative tag on " + where + ": MPI_ERR_TAG");
  auto received = recv_buffer(e, 4);
  const int after = MPI_Sendrecv(device_data->data(), 4, MPI_INT, e.right(), 5, received->data(), 4, MPI_INT,
                                 e.left(), 5, asserted, MPI_STATUS_IGNORE);
  e.checker.check(after == MPI_SUCCESS, "a good exchange after the refused envelopes on " + where);
}

// MCRPMPI_P2P_DEVICE_ONLY=1 asserts every new intracommunicator: each constructor's, made with the
// ranks in `e.comm`'s order so that `e`'s neighbours hold there too.
void constructors_assert(const Env& e) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(e.comm, &group);
  const int ring[] = {e.size};
  const int periodic[] = {1};
  const int column[] = {e.size, 1};
  const int keep_rows[] = {1, 0};
  std::vector<int> index, edges;  // a ring graph: rank r's neighbours are r - 1 and r + 1
  for (int r = 0; r < e.size; ++r) {
    edges.push_back((r + e.size - 1) % e.size);
    edges.push_back((r + 1) % e.size);
    index.push_back(static_cast<int>(edges.size()));
  }
  const int from[] = {e.left()}, to[] = {e.right()}, one[] = {1}, mine[] = {e.rank};
  const std::pair<const char*, std::function<int(MPI_Comm*)>> constructors[] = {
      {"MPI_Comm_split", [&](MPI_Comm* c) { return MPI_Comm_split(e.comm, 0, e.rank, c); }},
      {"MPI_Comm_split_type",
       [&](MPI_Comm* c) { return MPI_Comm_split_type(e.comm, MPI_COMM_TYPE_SHARED, e.rank, MPI_INFO_NULL, c); }},
      {"MPI_Comm_create", [&](MPI_Comm* c) { return MPI_Comm_create(e.comm, group, c); }},
      {"MPI_Comm_create_group", [&](MPI_Comm* c) { return MPI_Comm_create_group(e.comm, group, 3, c); }},
      {"MPI_Cart_create", [&](MPI_Comm* c) { return MPI_Cart_create(e.comm, 1, ring, periodic, 0, c); }},
      {"MPI_Cart_sub",
       [&](MPI_Comm* c) {
         MPI_Comm grid = MPI_COMM_NULL;
         const int rc = MPI_Cart_create(e.comm, 2, column, keep_rows, 0, &grid);
         const int sub = rc == MPI_SUCCESS ? MPI_Cart_sub(grid, keep_rows, c) : rc;
         if (grid != MPI_COMM_NULL) MPI_Comm_free(&grid);
         return sub;
       }},
      {"MPI_Graph_create",
       [&](MPI_Comm* c) { return MPI_Graph_create(e.comm, e.size, index.data(), edges.data(), 0, c); }},
      {"MPI_Dist_graph_create",
       [&](MPI_Comm* c) { return MPI_Dist_graph_create(e.comm, 1, mine, one, to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, c); }},
      {"MPI_Dist_graph_create_adjacent",
       [&](MPI_Comm* c) {
         return MPI_Dist_graph_create_adjacent(e.comm, 1, from, MPI_UNWEIGHTED, 1, to, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                               0, c);
       }},
      {"MPI_Intercomm_merge",
       [&](MPI_Comm* c) {
         // The lower half and the upper half, joined and merged back in rank order.
         if (e.size < 2) return MPI_Comm_dup(e.comm, c);
         const int upper = e.rank >= e.size / 2 ? 1 : 0;
         MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
         MPI_Comm_split(e.comm, upper, e.rank, &half);
         MPI_Intercomm_create(half, 0, e.comm, upper ? 0 : e.size / 2, 11, &inter);
         const int rc = MPI_Intercomm_merge(inter, upper, c);
         MPI_Comm_free(&inter);
         MPI_Comm_free(&half);
         return rc;
       }},
  };
  for (const auto& [name, make] : constructors) {
    MPI_Comm made = MPI_COMM_NULL;
    const int rc = make(&made);
    e.checker.check(rc == MPI_SUCCESS && made != MPI_COMM_NULL, std::string(name) + " under MCRPMPI_P2P_DEVICE_ONLY=1");
    if (made == MPI_COMM_NULL) continue;
    MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);  // not every constructor passes the parent's on
    refuse_host_buffers(e, made, std::string("a communicator of ") + name);
    MPI_Comm_free(&made);
  }
  MPI_Group_free(&group);
}

// The info key in a constructor's info: MPI_Comm_split_type and the distributed graph constructors
// take hints for the new communicator. When one rank does not assert, the communicator is asserted
// on none (and the agreement does not hang).
void constructor_info_asserts(const Env& e) {
  MPI_Info info = device_only_info();
  const int from[] = {e.left()}, to[] = {e.right()};
  MPI_Comm split = MPI_COMM_NULL, graph = MPI_COMM_NULL, partly = MPI_COMM_NULL;
  MPI_Comm_split_type(e.comm, MPI_COMM_TYPE_SHARED, e.rank, info, &split);
  MPI_Dist_graph_create_adjacent(e.comm, 1, from, MPI_UNWEIGHTED, 1, to, MPI_UNWEIGHTED, info, 0, &graph);
  MPI_Comm_split_type(e.comm, MPI_COMM_TYPE_SHARED, e.rank, e.rank == 0 ? info : MPI_INFO_NULL, &partly);
  MPI_Info_free(&info);
  const std::pair<const char*, MPI_Comm> asserted[] = {{"MPI_Comm_split_type with the key in its info", split},
                                                       {"MPI_Dist_graph_create_adjacent with it", graph}};
  for (const auto& [name, comm] : asserted) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    e.checker.check(comm_alloc_kinds_assertion(comm) == "cuda:device",
                    std::string("MPI_Comm_get_info shows the assertion of ") + name);
    refuse_host_buffers(e, comm, name);
  }
  std::vector<int> out(8, e.rank), in(8, -1);
  const int rc = MPI_Sendrecv(out.data(), 8, MPI_INT, e.right(), 6, in.data(), 8, MPI_INT, e.left(), 6, partly,
                              MPI_STATUS_IGNORE);
  e.checker.check(rc == MPI_SUCCESS && in == std::vector<int>(8, e.left()),
                  "host buffers on MPI_Comm_split_type where only rank 0 asserts");
  e.checker.check(comm_alloc_kinds_assertion(partly).empty(),
                  "MPI_Comm_get_info of that communicator shows no assertion, got \"" +
                      comm_alloc_kinds_assertion(partly) + "\"");
  // MPI_Comm_dup_with_info replaces the hints: a duplicate made with an info without the key is not
  // asserted, while an MPI_Comm_set_info without it leaves the protocol in place.
  MPI_Comm unasserted = MPI_COMM_NULL;
  MPI_Comm_dup_with_info(e.comm, MPI_INFO_NULL, &unasserted);
  const int dup_rc = MPI_Sendrecv(out.data(), 8, MPI_INT, e.right(), 7, in.data(), 8, MPI_INT, e.left(), 7,
                                  unasserted, MPI_STATUS_IGNORE);
  e.checker.check(dup_rc == MPI_SUCCESS && comm_alloc_kinds_assertion(unasserted).empty(),
                  "host buffers on MPI_Comm_dup_with_info of the asserted communicator without the key");
  MPI_Info empty;
  MPI_Info_create(&empty);
  const int set_rc = MPI_Comm_set_info(e.comm, empty);
  MPI_Info_free(&empty);
  e.checker.check(set_rc == MPI_SUCCESS && comm_alloc_kinds_assertion(e.comm) == "cuda:device",
                  "MPI_Comm_set_info without the key leaves the assertion, and MPI_Comm_get_info says so");
  for (MPI_Comm* comm : {&split, &graph, &partly, &unasserted}) MPI_Comm_free(comm);
}

void asserted_communicators(const Env& e, bool everywhere) {
  refuse_host_buffers(e, e.comm, "the asserted communicator");
  e.checker.check(comm_alloc_kinds_assertion(e.comm) == "cuda:device",
                  "MPI_Comm_get_info shows the assertion the library acts on");
  // MPI-4 copies a communicator's info hints to its duplicate: the assertion goes with it.
  MPI_Comm dup;
  MPI_Comm_dup(e.comm, &dup);
  refuse_host_buffers(e, dup, "its MPI_Comm_dup");
  e.checker.check(comm_alloc_kinds_assertion(dup) == "cuda:device", "MPI_Comm_get_info of its MPI_Comm_dup too");
  MPI_Comm_free(&dup);
  if (everywhere) constructors_assert(e);
  else constructor_info_asserts(e);
}

void run_all(const Env& e) {
  const std::pair<const char*, void (*)(const Env&)> sections[] = {
      {"send forms", send_forms},
      {"receive forms", receive_forms},
      {"sendrecv forms", sendrecv_forms},
      {"tags out of order", tags_out_of_order},
      {"wildcards keep order", wildcards_keep_order},
      {"head to head", head_to_head},
      {"all pairs reverse", all_pairs_reverse},
      {"interleaved with collectives", interleaved_with_collectives},
      {"polling elsewhere", polling_elsewhere},
      {"probes", probes},
      {"truncation", truncation},
      {"truncation in arrays", truncation_in_arrays},
      {"sendrecv truncation", sendrecv_truncation},
      {"persistent rounds", persistent_rounds},
      {"waitany receives", waitany_receives},
      {"cancel, free, MPI_PROC_NULL", cancel_free_proc_null},
      {"strided datatype", strided_datatype},
  };
  static const bool trace = std::getenv("MCRP_TEST_TRACE") != nullptr;
  for (const auto& [title, section] : sections) {
    if (trace) std::fprintf(stderr, "trace: [rank %d] section %s\n", e.rank, title);
    section(e);
  }
}

// Two threads, each with its own communicator, exchanging in rings at once.
void two_threads(const Env& e) {
  MPI_Comm comms[2];
  MPI_Comm_dup(e.comm, &comms[0]);
  MPI_Comm_dup(e.comm, &comms[1]);
  Checker checkers[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      Env mine{checkers[t], e.send_space, e.recv_space, comms[t], e.rank, e.size, {1, 1024, 65536}};
      for (int round = 0; round < 10; ++round) {
        tags_out_of_order(mine);
        sendrecv_forms(mine);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 2; ++t) {
    const int rc = checkers[t].finish(comms[t], ("thread " + std::to_string(t)).c_str());
    e.checker.check(rc == 0, "thread " + std::to_string(t) + " on its own communicator");
  }
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
}

// The communicator the sections run on: WORLD, or (--assert info) a duplicate carrying the
// device-only assertion in its info.
MPI_Comm communicator_for(const std::string& how) {
  return how == "info" ? dup_asserting_device_only(MPI_COMM_WORLD) : MPI_COMM_WORLD;
}

}  // namespace

int main(int argc, char** argv) {
  const bool threads = flag(argc, argv, "--threads");
  const std::string assert_how = option(argc, argv, "--assert", "none");
  const bool asserted = assert_how == "info" || assert_how == "env";
  g_asserted = asserted;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);  // MPI 4.1 raises a request's error there
  const MPI_Count max_bytes = std::atoll(option(argc, argv, "--max-bytes", "16777216").c_str());
  int exit_code = kSkipExitCode;
  {
    const SendReceiveSpaces spaces = send_receive_spaces_from_arguments(argc, argv);
    if (spaces.ready()) {
      Checker checker;
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      const BsendSpace bsend_space(max_bytes + 1024, 1);  // Bsend of the largest message
      std::vector<MPI_Count> counts;
      for (MPI_Count bytes : {MPI_Count{0}, MPI_Count{4}, MPI_Count{4096}, MPI_Count{1} << 20, MPI_Count{16} << 20}) {
        if (bytes <= max_bytes) counts.push_back(bytes / 4);
      }
      const MPI_Comm comm = communicator_for(option(argc, argv, "--assert", "none"));
      const Env env{checker, *spaces.send, *spaces.recv, comm, rank, size, counts};
      run_all(env);
      if (threads) {
        if (provided == MPI_THREAD_MULTIPLE) two_threads(env);
        else checker.skip("two threads: MPI_THREAD_MULTIPLE not provided");
      }
      if (comm != MPI_COMM_WORLD) {
        // A plain duplicate of WORLD is not asserted: host buffers still work there.
        MPI_Comm plain;
        MPI_Comm_dup(MPI_COMM_WORLD, &plain);
        std::vector<int> out(8, 3), in(8, 0);
        const int rc = MPI_Sendrecv(out.data(), 8, MPI_INT, rank, 4, in.data(), 8, MPI_INT, rank, 4, plain,
                                    MPI_STATUS_IGNORE);
        checker.check(rc == MPI_SUCCESS && in == out, "host buffers on a communicator without the assertion");
        checker.check(comm_alloc_kinds_assertion(plain).empty(), "MPI_Comm_get_info of it shows no assertion");
        MPI_Comm_free(&plain);
      }
      if (asserted) asserted_communicators(env, assert_how == "env");
      if (comm != MPI_COMM_WORLD) {
        MPI_Comm to_free = comm;
        MPI_Comm_free(&to_free);
      }
      const std::string program = "test_p2p --send-space " + spaces.send_name + " --recv-space " + spaces.recv_name;
      exit_code = checker.finish(MPI_COMM_WORLD, program.c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}

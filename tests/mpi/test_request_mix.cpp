// Mixed request arrays (issue 3): nonblocking collectives (Iallreduce, Ibcast, Iallgatherv) in one
// array with point-to-point requests (Isend/Irecv in both directions around a ring) and
// MPI_REQUEST_NULL entries, completed by every member of the Wait/Test family and by
// MPI_Request_get_status, with ignored and with real statuses. The point-to-point statuses must
// carry the right source, tag and element count; every result is checked against a reference.
// Host buffers; 1 rank sends to itself.
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/check.h"

namespace {

using mcrp_test::Checker;

enum class Method { waitall, waitall_ignore, waitany, waitsome, testall, testany, testsome, get_status, free_send };
constexpr Method kMethods[] = {Method::waitall, Method::waitall_ignore, Method::waitany,    Method::waitsome,
                               Method::testall, Method::testany,        Method::testsome,   Method::get_status,
                               Method::free_send};
const char* method_name(Method m) {
  switch (m) {
    case Method::waitall: return "Waitall";
    case Method::waitall_ignore: return "Waitall(STATUSES_IGNORE)";
    case Method::waitany: return "Waitany";
    case Method::waitsome: return "Waitsome";
    case Method::testall: return "Testall";
    case Method::testany: return "Testany";
    case Method::testsome: return "Testsome";
    case Method::get_status: return "Request_get_status";
    case Method::free_send: return "Request_free(Isend)+Waitall";
  }
  return "?";
}

// Slots of the request array. The gaps stay MPI_REQUEST_NULL.
enum Slot { kAllreduce, kRecvLeft, kNull1, kBcast, kSendRight, kAllgatherv, kNull2, kRecvRight, kSendLeft, kSlots };
bool is_null_slot(int s) { return s == kNull1 || s == kNull2; }

int value(int rank, int i, int salt) { return rank * 1000 + i * 3 + salt; }

// One round: issues the array, completes it with one method, checks statuses and results.
class Round {
 public:
  Round(Checker& checker, MPI_Comm comm, Method method, int n, int tag)
      : checker_(checker), comm_(comm), method_(method), n_(n), tag_(tag) {
    MPI_Comm_rank(comm, &me_);
    MPI_Comm_size(comm, &size_);
    left_ = (me_ + size_ - 1) % size_;
    right_ = (me_ + 1) % size_;
    what_ = std::string(method_name(method)) + " n=" + std::to_string(n);
  }

  void run() {
    issue();
    complete();
    verify_statuses();
    verify_results();
    // A freed Isend is known complete only once its receiver is done: keep the buffers until then.
    MPI_Barrier(comm_);
  }

 private:
  // Right-going messages have n + sender elements, left-going n + sender + 1 (tag + 1).
  int right_count(int sender) const { return n_ + sender; }
  int left_count(int sender) const { return n_ + sender + 1; }

  void issue() {
    const int root = size_ - 1;
    in_place_ = tag_ % 2 == 1;
    reduce_.resize(n_);
    reduce_send_.resize(n_);
    for (int i = 0; i < n_; ++i) reduce_send_[i] = reduce_[i] = value(me_, i, tag_);
    bcast_.assign(n_ + 1, -1);
    for (int i = 0; i < n_ && me_ == root; ++i) bcast_[i] = value(root, i, tag_);
    counts_.resize(size_);
    displs_.assign(size_, 0);
    for (int k = 0; k < size_; ++k) counts_[k] = n_ + k;
    for (int k = 1; k < size_; ++k) displs_[k] = displs_[k - 1] + counts_[k - 1];
    gathered_.assign(displs_[size_ - 1] + counts_[size_ - 1] + 1, -1);
    gather_send_.resize(counts_[me_]);
    for (int i = 0; i < counts_[me_]; ++i) gather_send_[i] = value(me_, i, tag_ + 7);
    to_right_.resize(right_count(me_));
    to_left_.resize(left_count(me_));
    for (int i = 0; i < right_count(me_); ++i) to_right_[i] = value(me_, i, tag_ + 1);
    for (int i = 0; i < left_count(me_); ++i) to_left_[i] = value(me_, i, tag_ + 2);
    // Receive buffers are larger than the messages, so the status count is what tells their size.
    from_left_.assign(n_ + size_ + 2, -1);
    from_right_.assign(n_ + size_ + 2, -1);

    requests_.assign(kSlots, MPI_REQUEST_NULL);
    const int big = static_cast<int>(from_left_.size());
    expect_ok(MPI_Irecv(from_left_.data(), big, MPI_INT, left_, tag_, comm_, &requests_[kRecvLeft]), "Irecv left");
    expect_ok(MPI_Iallreduce(in_place_ ? MPI_IN_PLACE : reduce_send_.data(), reduce_.data(), n_, MPI_INT, MPI_SUM, comm_,
                             &requests_[kAllreduce]),
              "Iallreduce");
    expect_ok(MPI_Isend(to_right_.data(), right_count(me_), MPI_INT, right_, tag_, comm_, &requests_[kSendRight]),
              "Isend right");
    expect_ok(MPI_Ibcast(bcast_.data(), n_, MPI_INT, root, comm_, &requests_[kBcast]), "Ibcast");
    expect_ok(MPI_Irecv(from_right_.data(), big, MPI_INT, right_, tag_ + 1, comm_, &requests_[kRecvRight]),
              "Irecv right");
    expect_ok(MPI_Iallgatherv(gather_send_.data(), counts_[me_], MPI_INT, gathered_.data(), counts_.data(),
                              displs_.data(), MPI_INT, comm_, &requests_[kAllgatherv]),
              "Iallgatherv");
    expect_ok(MPI_Isend(to_left_.data(), left_count(me_), MPI_INT, left_, tag_ + 1, comm_, &requests_[kSendLeft]),
              "Isend left");
    live_.assign(kSlots, false);
    for (int s = 0; s < kSlots; ++s) live_[s] = requests_[s] != MPI_REQUEST_NULL;
    statuses_.assign(kSlots, MPI_Status{});
    completions_.assign(kSlots, 0);
  }

  void expect_ok(int rc, const std::string& call) { checker_.check(rc == MPI_SUCCESS, what_ + ": " + call); }

  // Records the completion of slot s (with its status when the method gives one).
  void completed(int s, const MPI_Status* status) {
    if (s < 0 || s >= kSlots) {
      checker_.check(false, what_ + ": completion index " + std::to_string(s) + " out of range");
      return;
    }
    ++completions_[s];
    if (status != nullptr) statuses_[s] = *status;
  }

  void complete() {
    const int n = kSlots;
    MPI_Request* r = requests_.data();
    MPI_Status* st = statuses_.data();
    int rc = MPI_SUCCESS;
    switch (method_) {
      case Method::waitall:
        rc = MPI_Waitall(n, r, st);
        for (int s = 0; s < n; ++s) completions_[s] += live_[s] ? 1 : 0;
        break;
      case Method::free_send:
        rc = MPI_Request_free(&r[kSendRight]);
        checker_.check(rc == MPI_SUCCESS && r[kSendRight] == MPI_REQUEST_NULL, what_ + ": freed Isend is null");
        live_[kSendRight] = false;
        [[fallthrough]];
      case Method::waitall_ignore:
        rc = MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
        for (int s = 0; s < n; ++s) completions_[s] += live_[s] ? 1 : 0;
        break;
      case Method::waitany:
        for (;;) {
          int index = -1;
          MPI_Status status;
          rc = MPI_Waitany(n, r, &index, &status);
          if (rc != MPI_SUCCESS || index == MPI_UNDEFINED) break;
          completed(index, &status);
        }
        break;
      case Method::waitsome:
      case Method::testsome:
        for (;;) {
          int outcount = 0;
          std::vector<int> indices(n, -1);
          std::vector<MPI_Status> some(n);
          rc = method_ == Method::waitsome ? MPI_Waitsome(n, r, &outcount, indices.data(), some.data())
                                           : MPI_Testsome(n, r, &outcount, indices.data(), some.data());
          if (rc != MPI_SUCCESS || outcount == MPI_UNDEFINED) break;
          for (int k = 0; k < outcount; ++k) completed(indices[k], &some[k]);
        }
        break;
      case Method::testall: {
        int flag = 0;
        while (rc == MPI_SUCCESS && !flag) rc = MPI_Testall(n, r, &flag, st);
        for (int s = 0; s < n; ++s) completions_[s] += live_[s] ? 1 : 0;
        break;
      }
      case Method::testany:
        for (;;) {
          int index = -1, flag = 0;
          MPI_Status status;
          rc = MPI_Testany(n, r, &index, &flag, &status);
          if (rc != MPI_SUCCESS || (flag && index == MPI_UNDEFINED)) break;
          if (flag) completed(index, &status);
        }
        break;
      case Method::get_status:
        // Polls each entry (nulls included) without freeing it, then frees it with MPI_Wait.
        for (int s = 0; s < n && rc == MPI_SUCCESS; ++s) {
          int flag = 0;
          while (rc == MPI_SUCCESS && !flag) rc = MPI_Request_get_status(r[s], &flag, &st[s]);
          if (rc == MPI_SUCCESS) rc = MPI_Wait(&r[s], MPI_STATUS_IGNORE);
          completions_[s] += live_[s] ? 1 : 0;
        }
        break;
    }
    checker_.check(rc == MPI_SUCCESS, what_ + ": completion returned " + std::to_string(rc));
    for (int s = 0; s < n; ++s) {
      checker_.check(r[s] == MPI_REQUEST_NULL, what_ + ": slot " + std::to_string(s) + " freed");
      checker_.check(completions_[s] == (live_[s] ? 1 : 0),
                     what_ + ": slot " + std::to_string(s) + " completed " + std::to_string(completions_[s]) + " times");
    }
    check_all_null_array();
  }

  // An array of nothing but null handles completes at once, with MPI_UNDEFINED where an index is due.
  void check_all_null_array() {
    MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int index = 0, flag = 0, outcount = 0, indices[2];
    bool ok = MPI_Waitany(2, nulls, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS && index == MPI_UNDEFINED;
    ok = ok && MPI_Testany(2, nulls, &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag && index == MPI_UNDEFINED;
    ok = ok && MPI_Waitsome(2, nulls, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS && outcount == MPI_UNDEFINED;
    ok = ok && MPI_Testall(2, nulls, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag;
    checker_.check(ok, what_ + ": all-null array");
  }

  bool gives_statuses() const { return method_ != Method::waitall_ignore && method_ != Method::free_send; }

  void verify_statuses() {
    if (!gives_statuses()) return;
    check_receive_status(kRecvLeft, left_, tag_, right_count(left_));
    check_receive_status(kRecvRight, right_, tag_ + 1, left_count(right_));
    // Only the methods that fill a status for every entry say anything about the null ones: empty.
    if (method_ == Method::waitall || method_ == Method::testall || method_ == Method::get_status) {
      for (int s = 0; s < kSlots; ++s) {
        if (!is_null_slot(s)) continue;
        int count = -1;
        MPI_Get_count(&statuses_[s], MPI_INT, &count);
        checker_.check(statuses_[s].MPI_SOURCE == MPI_ANY_SOURCE && statuses_[s].MPI_TAG == MPI_ANY_TAG && count == 0,
                       what_ + ": empty status for a null entry");
      }
    }
  }

  void check_receive_status(int slot, int source, int tag, int count) {
    const MPI_Status& status = statuses_[slot];
    int got = -1;
    MPI_Get_count(&status, MPI_INT, &got);
    checker_.check(status.MPI_SOURCE == source, what_ + ": slot " + std::to_string(slot) + " MPI_SOURCE " +
                                                    std::to_string(status.MPI_SOURCE) + ", expected " + std::to_string(source));
    checker_.check(status.MPI_TAG == tag, what_ + ": slot " + std::to_string(slot) + " MPI_TAG " +
                                              std::to_string(status.MPI_TAG) + ", expected " + std::to_string(tag));
    checker_.check(got == count, what_ + ": slot " + std::to_string(slot) + " count " + std::to_string(got) +
                                     ", expected " + std::to_string(count));
  }

  void verify_results() {
    std::vector<int> sum(n_, 0), bcast(n_ + 1, -1), gathered(gathered_.size(), -1);
    for (int i = 0; i < n_; ++i) {
      for (int q = 0; q < size_; ++q) sum[i] += value(q, i, tag_);
      bcast[i] = value(size_ - 1, i, tag_);
    }
    for (int k = 0; k < size_; ++k) {
      for (int i = 0; i < counts_[k]; ++i) gathered[displs_[k] + i] = value(k, i, tag_ + 7);
    }
    std::vector<int> from_left(from_left_.size(), -1), from_right(from_right_.size(), -1);
    for (int i = 0; i < right_count(left_); ++i) from_left[i] = value(left_, i, tag_ + 1);
    for (int i = 0; i < left_count(right_); ++i) from_right[i] = value(right_, i, tag_ + 2);
    const std::string in_place = in_place_ ? " (in place)" : "";
    checker_.expect_equal(what_ + ": Iallreduce" + in_place, MPI_SUCCESS, reduce_.data(), sum.data(), sum.size());
    checker_.expect_equal(what_ + ": Ibcast", MPI_SUCCESS, bcast_.data(), bcast.data(), bcast.size());
    checker_.expect_equal(what_ + ": Iallgatherv", MPI_SUCCESS, gathered_.data(), gathered.data(), gathered.size());
    checker_.expect_equal(what_ + ": Irecv from left", MPI_SUCCESS, from_left_.data(), from_left.data(), from_left.size());
    checker_.expect_equal(what_ + ": Irecv from right", MPI_SUCCESS, from_right_.data(), from_right.data(),
                          from_right.size());
  }

  Checker& checker_;
  MPI_Comm comm_;
  Method method_;
  int n_;
  int tag_;
  int me_ = 0, size_ = 1, left_ = 0, right_ = 0;
  bool in_place_ = false;
  std::string what_;
  std::vector<int> reduce_, reduce_send_, bcast_, counts_, displs_, gathered_, gather_send_;
  std::vector<int> to_right_, to_left_, from_left_, from_right_;
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Status> statuses_;
  std::vector<int> completions_;
  std::vector<bool> live_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Checker checker;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int tag = 10;
  for (int n : {0, 1, 7}) {
    for (Method m : kMethods) {
      Round(checker, comm, m, n, tag).run();
      tag += 3;  // each round its own tags (and in place on odd ones)
    }
  }
  MPI_Comm_free(&comm);
  const int rc = checker.finish(MPI_COMM_WORLD, "test_request_mix");
  MPI_Finalize();
  return rc;
}

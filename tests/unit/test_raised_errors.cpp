// The program's error handlers wrapped to record the codes the base MPI gives them
// (runtime/raised_errors.h): what a wrapped handler passes on and records, and what base_result makes
// of a base call that returned MPI_SUCCESS after raising an error. No MPI calls: the handlers are
// called here as the base MPI would call them.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "runtime/raised_errors.h"

namespace mcrp {
namespace {

MPI_Comm g_seen_comm = MPI_COMM_NULL;
int g_seen_code = MPI_SUCCESS;
int g_calls = 0;

void counting_handler(MPI_Comm* comm, int* code, ...) {
  g_seen_comm = *comm;
  g_seen_code = *code;
  ++g_calls;
}

// A handler that changes the code it is given: MPI then returns the changed code.
void rewriting_handler(MPI_Comm*, int* code, ...) { *code = MPI_ERR_OTHER; }

template <int N>
void numbered_handler(MPI_Comm*, int*, ...) {}

template <int... N>
std::vector<MPI_Comm_errhandler_function*> numbered_handlers(std::integer_sequence<int, N...>) {
  return {&numbered_handler<N>...};
}

void raise_through(MPI_Comm_errhandler_function* handler, MPI_Comm comm, int code) { handler(&comm, &code); }

TEST(RaisedErrors, AWrappedHandlerIsCalledAndItsCodeRecorded) {
  forget_raised_code();
  MPI_Comm_errhandler_function* wrapped = recording_comm_handler(&counting_handler);
  ASSERT_NE(wrapped, &counting_handler);
  const int calls = g_calls;
  raise_through(wrapped, MPI_COMM_WORLD, MPI_ERR_COUNT);
  EXPECT_EQ(g_calls, calls + 1);
  EXPECT_EQ(g_seen_comm, MPI_COMM_WORLD);
  EXPECT_EQ(g_seen_code, MPI_ERR_COUNT);
  EXPECT_EQ(take_raised_code(), MPI_ERR_COUNT);
  EXPECT_EQ(take_raised_code(), MPI_SUCCESS) << "a code is taken once";
}

TEST(RaisedErrors, TheSameFunctionWrappedTwiceSharesItsSlot) {
  EXPECT_EQ(recording_comm_handler(&counting_handler), recording_comm_handler(&counting_handler));
  EXPECT_NE(recording_comm_handler(&counting_handler), recording_comm_handler(&rewriting_handler));
}

TEST(RaisedErrors, TheCodeRecordedIsTheOneTheHandlerLeft) {
  forget_raised_code();
  raise_through(recording_comm_handler(&rewriting_handler), MPI_COMM_SELF, MPI_ERR_TAG);
  EXPECT_EQ(take_raised_code(), MPI_ERR_OTHER);
}

TEST(RaisedErrors, BaseResultTakesACodeRaisedDuringTheCallOnly) {
  MPI_Comm_errhandler_function* wrapped = recording_comm_handler(&counting_handler);
  raise_through(wrapped, MPI_COMM_WORLD, MPI_ERR_RANK);  // before: a direct call's swallowed error
  EXPECT_EQ(base_result([] { return MPI_SUCCESS; }), MPI_SUCCESS);
  // The defect: the base MPI raises, then returns MPI_SUCCESS.
  EXPECT_EQ(base_result([&] {
              raise_through(wrapped, MPI_COMM_WORLD, MPI_ERR_TYPE);
              return MPI_SUCCESS;
            }),
            MPI_ERR_TYPE);
  EXPECT_EQ(take_raised_code(), MPI_SUCCESS);
  // An MPI that returns the code: returned as it is.
  EXPECT_EQ(base_result([&] {
              raise_through(wrapped, MPI_COMM_WORLD, MPI_ERR_TYPE);
              return MPI_ERR_TYPE;
            }),
            MPI_ERR_TYPE);
}

TEST(RaisedErrors, CodesArePerThread) {
  forget_raised_code();
  std::thread other([] { raise_through(recording_comm_handler(&counting_handler), MPI_COMM_WORLD, MPI_ERR_ARG); });
  other.join();
  EXPECT_EQ(take_raised_code(), MPI_SUCCESS);
}

TEST(RaisedErrors, PastTheSlotsAHandlerIsLeftUnwrapped) {
  const auto handlers = numbered_handlers(std::make_integer_sequence<int, 70>{});
  EXPECT_NE(recording_comm_handler(handlers.front()), handlers.front());
  for (auto* handler : handlers) recording_comm_handler(handler);
  EXPECT_EQ(recording_comm_handler(handlers.back()), handlers.back()) << "64 slots in all";
  EXPECT_NE(recording_comm_handler(handlers.front()), handlers.front()) << "a filled slot keeps its function";
}

}  // namespace
}  // namespace mcrp

# The report of the first MCRPMPI_NCCL_TIMEOUT in a process (runtime/state_report.h), judged by its
# lines (OUTPUT) and by the program's own checks (every call ends in bounded time;
# tests/mpi/test_timeout_report.cpp). Included from tests/CMakeLists.txt after the fake NCCL's tests.
# In the patterns a '.' stands for each ';' of a report line, on which CMake would split a pattern.

# mcrpmpi_add_timeout_report_test(<name> CASE stuck|setup KIND blocking|nonblocking SECONDS <timeout>
#                                 LABELS <labels...> ENV <env...> SPACE <memory space>)
# `stuck`: rank 0's report names its three communicators with work on their streams, the thread that
# timed out (the first, on communicator #1), the two other waits still under way (a thread's blocking
# call on #2 since 1 s later, the main thread's MPI_Wait on its MPI_Iallreduce on #3 since 1.5 s
# later) and that request; and the same report asked for at 2.5 s, before the timeout
# (mcrpmpi_report_state). `setup`: the last rank comes late to a fresh communicator's first call,
# and rank 0's report says that its NCCL setup timed out, with the call queued behind it.
function(mcrpmpi_add_timeout_report_test name)
  cmake_parse_arguments(R "" "CASE;KIND;SECONDS;SPACE" "LABELS;ENV" ${ARGN})
  set(head "^mcrpmpi: rank 0 \\(pid [0-9]+\\): ")
  set(state ". the library's state at this first timeout of the process:$")
  set(comm "rank 0 of 2, device 0, ${R_KIND}")
  set(waiting "waiting [0-9.]+ s for")
  if(R_CASE STREQUAL "stuck")
    set(lines "${head}no completion within MCRPMPI_NCCL_TIMEOUT=${R_SECONDS} s${state}"
              "^mcrpmpi: NCCL launch lock: free$"
              "^mcrpmpi: NCCL communicator #1: ${comm}. ready. work on its stream$"
              "^mcrpmpi: NCCL communicator #2: ${comm}. ready. work on its stream$"
              "^mcrpmpi: NCCL communicator #3: ${comm}. ready. work on its stream$"
              "^mcrpmpi: threads waiting in the library: 3 \\("
              "^mcrpmpi: thread [0-9]+ \\(this one\\): ${waiting} a blocking NCCL call on NCCL communicator #1$"
              "^mcrpmpi: thread [0-9]+: ${waiting} a blocking NCCL call on NCCL communicator #2$"
              "^mcrpmpi: thread [0-9]+: ${waiting} a wait of the MPI_Wait family, polling$"
              "^mcrpmpi: library requests in flight: 1 \\(MPI_Iallreduce 1\\)"
              "${head}test_timeout_report asked at 2.5 s. the library's state now:$")
  else()
    # A blocking communicator's setup call waits for the late rank on the communicator's thread; a
    # nonblocking one's has returned, and NCCL's own thread waits.
    set(setup_thread "")
    if(R_KIND STREQUAL "blocking")
      set(setup_thread ". its thread in NCCL's setup call")
    endif()
    set(lines "${head}NCCL communicator #1 not initialised within MCRPMPI_NCCL_TIMEOUT=${R_SECONDS} s${state}"
              "^mcrpmpi: NCCL communicator #1: ${comm}. failed${setup_thread}. queued launches: 1$"
              "^mcrpmpi: thread [0-9]+ \\(this one\\): ${waiting} a blocking NCCL call queued \\(behind the setup or earlier work\\) on NCCL communicator #1$")
  endif()
  mcrpmpi_add_mpi_test(NAME ${name} NPROCS 2 LABELS ${R_LABELS} reliability TIMEOUT 120
                       ENV ${R_ENV} MCRPMPI_NCCL_TIMEOUT=${R_SECONDS} OUTPUT ${lines}
                       COMMAND $<TARGET_FILE:test_timeout_report> --case ${R_CASE} --space ${R_SPACE})
endfunction()

foreach(case stuck setup)
  mcrpmpi_add_timeout_report_test(mpi.fake_nccl.timeout_report.${case}.np2 CASE ${case} KIND blocking SECONDS 3
                                  LABELS ${fake_nccl_labels} ENV ${fake_nccl_env} SPACE fake-device)
  mcrpmpi_add_timeout_report_test(mpi.fake_nccl.nbcomm.timeout_report.${case}.np2 CASE ${case} KIND nonblocking
                                  SECONDS 3 LABELS ${fake_nccl_labels} SPACE fake-device
                                  ENV ${fake_nccl_env} MCRPMPI_NCCL_INLINE_LAUNCH=0)
endforeach()
# On a GPU (the suite, tests/gpu/run-gpu-suite.sh): real streams and NCCL's own setup call.
foreach(case stuck setup)
  mcrpmpi_add_timeout_report_test(gpu.timeout_report.${case}.np2 CASE ${case} KIND blocking SECONDS 5 LABELS gpu
                                  ENV NCCL_SOCKET_IFNAME=lo NCCL_NET=Socket SPACE device)
endforeach()

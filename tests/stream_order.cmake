# The device-buffer programs with their buffers filled through the fake device's legacy default
# stream (`fake-device-legacy` memory, device/fake_device.h): an upload there runs only when the
# library orders its own (non-blocking) streams after that stream, so a path that reads or writes a
# user's buffer without ordering first gets stale bytes, or has its result overwritten, as it would
# on a GPU. Each run with copies completed when issued (MCRPMPI_FAKE_DEVICE=1) and queued (async).
# Without the ordering, 370 of test_p2p's 1194 checks and 90 of 120 collectives fail
# (label stream_order; `ctest -L stream_order`). Included from tests/CMakeLists.txt.
set(order_labels "host;fake_device;stream_order")
set(order_nccl MCRPMPI_NCCL_LIBRARY=$<TARGET_FILE:mcrpmpi_fake_nccl>)
set(order_p2p $<TARGET_FILE:test_p2p_linked> --space fake-device-legacy)
set(order_asserted MCRPMPI_P2P_DEVICE_ONLY=1)

# mcrpmpi_add_stream_order_test(<name> RANKS <n> ENV <env...> COMMAND <program and arguments>)
function(mcrpmpi_add_stream_order_test name)
  cmake_parse_arguments(A "" "RANKS" "ENV;COMMAND" ${ARGN})
  foreach(mode 1 async)
    set(tag sync)
    if(mode STREQUAL "async")
      set(tag async)
    endif()
    mcrpmpi_add_mpi_test(NAME mpi.stream_order.${name}.${tag}.np${A_RANKS} NPROCS ${A_RANKS} LABELS ${order_labels}
                         TIMEOUT 300 ENV MCRPMPI_FAKE_DEVICE=${mode} ${A_ENV} COMMAND ${A_COMMAND})
  endforeach()
endfunction()

mcrpmpi_add_stream_order_test(p2p RANKS 3 COMMAND ${order_p2p})
mcrpmpi_add_stream_order_test(p2p_asserted RANKS 2 ENV ${order_asserted} MCRPMPI_P2P_CHANNEL=mpi
                              COMMAND ${order_p2p} --assert env)
mcrpmpi_add_stream_order_test(p2p_asserted.nccl RANKS 2 ENV ${order_nccl} ${order_asserted} MCRPMPI_P2P_CHANNEL=nccl
                              COMMAND ${order_p2p} --assert env)
# With the helper thread of runtime/progress_thread.h (the base MPI raised to MPI_THREAD_MULTIPLE), which
# starts transfers, and so orders after the legacy stream, beside the program's thread: the fake
# legacy stream's flush returned while another thread still ran the writes it had taken, and a
# received payload was overwritten by its buffer's late sentinel (1 run in 5 failed, 2026-11-29).
mcrpmpi_add_stream_order_test(p2p_asserted.helper RANKS 2 ENV ${order_asserted} MCRPMPI_P2P_CHANNEL=mpi
                              MCRPMPI_PROGRESS_THREAD=1 COMMAND ${order_p2p} --assert env)
mcrpmpi_add_stream_order_test(collectives.staged RANKS 3
                              COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device-legacy --path mpi)
mcrpmpi_add_stream_order_test(collectives.one_rank RANKS 1
                              COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device-legacy --path mpi)
mcrpmpi_add_stream_order_test(collectives.nccl RANKS 2 ENV ${order_nccl}
                              COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device-legacy --path nccl)
mcrpmpi_add_stream_order_test(staged_pipeline RANKS 3 ENV MCRPMPI_STAGED_CHUNK_BYTES=64
                              COMMAND $<TARGET_FILE:test_staged_pipeline> --space fake-device-legacy --chunk 64)
mcrpmpi_add_stream_order_test(nonblocking.nccl RANKS 3 ENV ${order_nccl}
                              COMMAND $<TARGET_FILE:test_nonblocking_gpu> --fake-device-legacy)
mcrpmpi_add_stream_order_test(persistent RANKS 2 COMMAND $<TARGET_FILE:test_persistent_gpu> --fake-device-legacy)

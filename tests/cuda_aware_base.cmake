# The library on a base MPI with CUDA support, which no machine of the project has (Debian's MPICH
# and the ABI wheels have none; the GPU machine has no MPI of its own): MCRPMPI_FAKE_CUDA_AWARE_BASE=1
# on the fake device (device/fake_device.h) makes the library hand device buffers to the base MPI as
# it would to a CUDA-aware one, and fake device memory is host memory, so any base MPI reads it.
# Buffers are filled through the fake legacy default stream where the program allows it, so a path
# that hands a buffer over before the application's earlier device work is done fails, as in
# tests/stream_order.cmake. Before these runs existed the paths had never run: the device-only
# protocol's base-MPI channel handed buffers over unordered, and a blocking MPI_Sendrecv polled
# through MPICH 4.0.2's MPI_Isendrecv (wrong statuses; crashes with threads). Label cuda_aware_base
# (`ctest -L cuda_aware_base`). Included from tests/CMakeLists.txt.
set(aware_labels "host;fake_device;cuda_aware_base")
set(aware_env MCRPMPI_FAKE_CUDA_AWARE_BASE=1)

# mcrpmpi_add_cuda_aware_base_test(<name> RANKS <n> [MODES 1 async] ENV <env...> COMMAND <program and arguments>)
# One run per fake-device mode: copies completed when issued (1, named sync) or queued (async).
function(mcrpmpi_add_cuda_aware_base_test name)
  cmake_parse_arguments(A "" "RANKS" "MODES;ENV;COMMAND" ${ARGN})
  if(NOT A_MODES)
    set(A_MODES 1 async)
  endif()
  foreach(mode IN LISTS A_MODES)
    set(tag sync)
    if(mode STREQUAL "async")
      set(tag async)
    endif()
    mcrpmpi_add_mpi_test(NAME mpi.cuda_aware_base.${name}.${tag}.np${A_RANKS} NPROCS ${A_RANKS} LABELS ${aware_labels}
                         TIMEOUT 300 ENV MCRPMPI_FAKE_DEVICE=${mode} ${aware_env} ${A_ENV} COMMAND ${A_COMMAND})
  endforeach()
endfunction()

set(aware_p2p $<TARGET_FILE:test_p2p_linked>)
set(aware_random $<TARGET_FILE:test_p2p_random_linked>)
set(aware_partitioned $<TARGET_FILE:test_partitioned_linked>)
mcrpmpi_add_cuda_aware_base_test(p2p RANKS 3 COMMAND ${aware_p2p} --space fake-device-legacy --threads)
mcrpmpi_add_cuda_aware_base_test(p2p.host_to_device RANKS 2 MODES 1
                                 COMMAND ${aware_p2p} --send-space host --recv-space fake-device-legacy)
# The device-only protocol's base-MPI channel gets the device buffers.
mcrpmpi_add_cuda_aware_base_test(p2p_asserted RANKS 2 ENV MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=mpi
                                 COMMAND ${aware_p2p} --space fake-device-legacy --assert env)
mcrpmpi_add_cuda_aware_base_test(p2p_random.threads RANKS 2 MODES 1
                                 COMMAND ${aware_random} --space fake-device --threads 3 --rounds 100)
mcrpmpi_add_cuda_aware_base_test(p2p_random.asserted_comm.threads RANKS 3 MODES 1 ENV MCRPMPI_P2P_CHANNEL=mpi
                                 COMMAND ${aware_random} --space fake-device --asserted-comm --threads 3 --rounds 60)
mcrpmpi_add_cuda_aware_base_test(partitioned RANKS 2 COMMAND ${aware_partitioned} --space fake-device-legacy --threads)
mcrpmpi_add_cuda_aware_base_test(partitioned.host_to_device RANKS 2 MODES 1
                                 COMMAND ${aware_partitioned} --send-space host --recv-space fake-device-legacy)
mcrpmpi_add_cuda_aware_base_test(attached_buffer RANKS 2 MODES 1
                                 COMMAND $<TARGET_FILE:test_attached_buffer_linked> --space fake-device)
mcrpmpi_add_cuda_aware_base_test(freed_handles RANKS 3 MODES 1
                                 COMMAND $<TARGET_FILE:test_freed_handles_linked> --space fake-device)
mcrpmpi_add_cuda_aware_base_test(collectives RANKS 3
                                 COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device-legacy --path mpi)
mcrpmpi_add_cuda_aware_base_test(persistent RANKS 2 COMMAND $<TARGET_FILE:test_persistent_gpu> --fake-device-legacy)
# MPI_Alltoallw and the neighborhood collectives (collectives/block_dispatch.cpp).
mcrpmpi_add_cuda_aware_base_test(block_collectives RANKS 3 MODES async
                                 COMMAND $<TARGET_FILE:test_block_collectives_linked> --space fake-device-legacy)

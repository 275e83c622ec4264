# The device-buffer programs again with the fake device's copies asynchronous (MCRPMPI_FAKE_DEVICE=async,
# device/fake_device.h): a copy runs only once an event recorded after it has been queried a third
# time (or at a free, or at an NCCL launch), so host code that reads a pinned image or hands it to
# the base MPI before its copy completed sees stale bytes, and every wait polls library progress
# while copies are pending, as on a GPU. The default fake device completes copies when issued and
# hid two defects this found (label async_device; `ctest -L async_device`). Included from
# tests/CMakeLists.txt after the fake NCCL's tests.
set(async_env MCRPMPI_FAKE_DEVICE=async)
set(async_labels "host;fake_device;async_device")
set(async_nccl_env ${async_env} MCRPMPI_NCCL_LIBRARY=$<TARGET_FILE:mcrpmpi_fake_nccl>)
set(async_p2p $<TARGET_FILE:test_p2p_linked> --space fake-device)

# mcrpmpi_add_async_test(<name> RANKS <n...> ENV <env...> COMMAND <program and arguments>)
function(mcrpmpi_add_async_test name)
  cmake_parse_arguments(A "" "" "RANKS;ENV;COMMAND" ${ARGN})
  foreach(np IN LISTS A_RANKS)
    mcrpmpi_add_mpi_test(NAME mpi.async_device.${name}.np${np} NPROCS ${np} LABELS ${async_labels} TIMEOUT 300
                         ENV ${A_ENV} COMMAND ${A_COMMAND})
  endforeach()
endfunction()

# Point-to-point: the staged path, and the device-only protocol on the base-MPI channel (the receive
# that deadlocked on itself while its copy to the device was pending; chunks of pipelined staging,
# which reached the base MPI out of order across transfers).
mcrpmpi_add_async_test(p2p RANKS 2 3 ENV ${async_env} COMMAND ${async_p2p} --threads)
mcrpmpi_add_async_test(p2p_asserted RANKS 2 3 ENV ${async_env} MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=mpi
                       COMMAND ${async_p2p} --assert env --threads)
mcrpmpi_add_async_test(p2p_asserted.small_chunks RANKS 3
                       ENV ${async_env} MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=mpi
                           MCRPMPI_STAGED_CHUNK_BYTES=992 MCRPMPI_P2P_EAGER_LIMIT=0
                       COMMAND ${async_p2p} --assert env)
mcrpmpi_add_async_test(p2p_asserted.nccl RANKS 2 ENV ${async_nccl_env} MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl
                       COMMAND ${async_p2p} --assert env --threads)
# Collectives: staged (and its pipeline), NCCL, nonblocking and persistent.
mcrpmpi_add_async_test(collectives.staged RANKS 2 3 ENV ${async_env}
                       COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device --path mpi)
mcrpmpi_add_async_test(staged_pipeline RANKS 3 ENV ${async_env} MCRPMPI_STAGED_CHUNK_BYTES=64
                       COMMAND $<TARGET_FILE:test_staged_pipeline> --space fake-device --chunk 64)
mcrpmpi_add_async_test(collectives.nccl RANKS 2 3 ENV ${async_nccl_env}
                       COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device --path nccl)
mcrpmpi_add_async_test(nonblocking RANKS 2 ENV ${async_env} COMMAND $<TARGET_FILE:test_nonblocking_gpu> --fake-device)
mcrpmpi_add_async_test(nonblocking.nccl RANKS 3 ENV ${async_nccl_env}
                       COMMAND $<TARGET_FILE:test_nonblocking_gpu> --fake-device)
mcrpmpi_add_async_test(persistent RANKS 2 ENV ${async_env} COMMAND $<TARGET_FILE:test_persistent_gpu> --fake-device)

# ---- Request tests of issue 3 and the Horovod call pattern of issue 6 (owner: nbtests helper) -----
# Included from the end of tests/mpi/CMakeLists.txt. Every program links mcrpmpi before MPI, as users
# do. The device-buffer runs (test_nonblocking_gpu, test_horovod_pattern --device) are registered in
# tests/gpu/CMakeLists.txt; they share the checks and memory helpers built here.

# Harness (check.cpp), the cross-communicator patterns, and the memory spaces tests put their buffers
# in (memory_spaces.h: host, the library's fake device found with dlsym, CUDA device memory). The
# CUDA runtime is static and touched only for the CUDA space, so CPU runs need no CUDA at run time.
add_library(mcrpmpi_request_checks OBJECT check.cpp cross_comm_order.cpp)
target_link_libraries(mcrpmpi_request_checks PUBLIC mcrpmpi_build_options MPI::MPI_CXX)
add_library(mcrpmpi_test_device_memory OBJECT memory_spaces.cpp ${CMAKE_CURRENT_SOURCE_DIR}/../gpu/device_memory.cpp)
target_link_libraries(mcrpmpi_test_device_memory PUBLIC mcrpmpi_build_options MPI::MPI_CXX CUDA::cudart_static
                      ${CMAKE_DL_LIBS})

foreach(name request_mix cross_comm_order persistent_loop)
  add_executable(test_${name} test_${name}.cpp)
  target_link_libraries(test_${name} PRIVATE mcrpmpi mcrpmpi_request_checks MPI::MPI_CXX)
endforeach()
# One program for the host and --fake-device runs (here) and the --device run (tests/gpu): the CUDA
# runtime is linked statically and only touched with --device.
add_executable(test_horovod_pattern test_horovod_pattern.cpp)
target_link_libraries(test_horovod_pattern PRIVATE mcrpmpi mcrpmpi_request_checks mcrpmpi_test_device_memory
                                                   MPI::MPI_CXX Threads::Threads CUDA::cudart_static)

# Ranks 1..4 (1 rank: point-to-point goes to itself; 3: odd size). 4 oversubscribed ranks on a
# 2-core machine busy-poll, hence the generous timeouts; a deadlock still fails.
foreach(np 1 2 3 4)
  mcrpmpi_add_mpi_test(NAME mpi.request_mix.np${np} NPROCS ${np} TIMEOUT 120 LABELS "host;nonblocking"
                       COMMAND $<TARGET_FILE:test_request_mix>)
  mcrpmpi_add_mpi_test(NAME mpi.cross_comm_order.np${np} NPROCS ${np} TIMEOUT 120 LABELS "host;nonblocking"
                       COMMAND $<TARGET_FILE:test_cross_comm_order>)
  mcrpmpi_add_mpi_test(NAME mpi.persistent_loop.np${np} NPROCS ${np} TIMEOUT 120 LABELS "host;nonblocking"
                       COMMAND $<TARGET_FILE:test_persistent_loop>)
  mcrpmpi_add_mpi_test(NAME mpi.horovod_pattern.np${np} NPROCS ${np} TIMEOUT 300 LABELS "host;horovod"
                       COMMAND $<TARGET_FILE:test_horovod_pattern>)
endforeach()
# The data buffers on the fake device: the library routes them by kind and stages them.
foreach(np 2 3)
  mcrpmpi_add_mpi_test(NAME mpi.horovod_pattern.fake_device.np${np} NPROCS ${np} TIMEOUT 300
                       LABELS "host;fake_device;horovod" ENV MCRPMPI_FAKE_DEVICE=1
                       COMMAND $<TARGET_FILE:test_horovod_pattern> --fake-device)
endforeach()
# ---- end of the request tests -----------------------------------------------------------------------

# Builds without the library, for the comparison mode (tests/compare): the same programs, run once
# plain and once with libmcrpmpi preloaded, must have the same outcomes.
add_executable(test_nonblocking_plain test_nonblocking.cpp check.cpp base_mpi_quirks.cpp)
target_link_libraries(test_nonblocking_plain PRIVATE mcrpmpi_build_options MPI::MPI_CXX)
foreach(name request_mix cross_comm_order)
  add_executable(test_${name}_plain test_${name}.cpp)
  target_link_libraries(test_${name}_plain PRIVATE mcrpmpi_request_checks MPI::MPI_CXX)
endforeach()
add_executable(test_horovod_pattern_plain test_horovod_pattern.cpp)
target_link_libraries(test_horovod_pattern_plain PRIVATE mcrpmpi_request_checks mcrpmpi_test_device_memory
                                                         MPI::MPI_CXX Threads::Threads CUDA::cudart_static)

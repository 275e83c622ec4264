# Finds NCCL's header, and the shared library for the programs that link NCCL directly (the raw-NCCL
# benchmark). libmcrpmpi itself only needs the header: it loads libnccl.so.2 at run time, so it also
# loads on machines without NCCL. Searched: NCCL_HOME, the CUDA toolkit, a pip `nvidia-nccl` wheel.
set(_nccl_hints $ENV{NCCL_HOME} ${NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_ROOT})
if(NOT NCCL_INCLUDE_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
      "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])"
      OUTPUT_VARIABLE _nccl_pip OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND _nccl_hints ${_nccl_pip})
  endif()
endif()
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
             PATH_SUFFIXES lib lib64)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_INCLUDE_DIR)
if(NCCL_FOUND AND NOT TARGET NCCL::headers)
  add_library(NCCL::headers INTERFACE IMPORTED)
  target_include_directories(NCCL::headers INTERFACE ${NCCL_INCLUDE_DIR})
  if(NCCL_LIBRARY)
    add_library(NCCL::nccl UNKNOWN IMPORTED)
    set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
  endif()
endif()

# Installs the library, a pkg-config file and a CMake package config (find_package(mcrpmpi)).
install(TARGETS mcrpmpi EXPORT mcrpmpiTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT mcrpmpiTargets NAMESPACE mcrpmpi:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcrpmpi)
include(CMakePackageConfigHelpers)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mcrpmpiConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/mcrpmpiConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcrpmpi)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mcrpmpiConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mcrpmpiConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/mcrpmpiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcrpmpi)
configure_file(${CMAKE_CURRENT_LIST_DIR}/mcrpmpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/mcrpmpi.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mcrpmpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# The run wrapper finds the library in ../lib next to itself once installed.
install(PROGRAMS ${CMAKE_CURRENT_LIST_DIR}/../scripts/mcrpmpirun DESTINATION ${CMAKE_INSTALL_BINDIR})

# The Python package (pyproject.toml, scikit-build-core installs component "python" into the
# `mcrpmpi` package directory): one plain copy of the library (wheels cannot hold symlinks) and the
# wrapper, found by python/mcrpmpi/__init__.py.
install(FILES $<TARGET_FILE:mcrpmpi> DESTINATION lib RENAME libmcrpmpi.so COMPONENT python EXCLUDE_FROM_ALL)
install(PROGRAMS ${CMAKE_CURRENT_LIST_DIR}/../scripts/mcrpmpirun DESTINATION bin COMPONENT python
        EXCLUDE_FROM_ALL)

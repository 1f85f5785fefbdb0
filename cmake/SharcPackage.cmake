# Installation and the CMake package: `cmake --install build --prefix P`
# puts the `sharc` command in P/bin, libsharc_c.so in P/lib, its header as
# P/include/sharc/sharc_c.h and P/lib/cmake/sharc/ so that other projects can
# find_package(sharc) and link sharc::sharc_c. Components: `cli` (the
# command) and `c_api` (library, header, package files).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS sharc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)

set(SHARC_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sharc)
install(EXPORT sharcTargets NAMESPACE sharc:: DESTINATION ${SHARC_PACKAGE_DIR}
  COMPONENT c_api)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sharcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sharcConfig.cmake
  INSTALL_DESTINATION ${SHARC_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# 0.x releases may change the API between minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sharcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sharcConfig.cmake ${PROJECT_BINARY_DIR}/sharcConfigVersion.cmake
  DESTINATION ${SHARC_PACKAGE_DIR} COMPONENT c_api)

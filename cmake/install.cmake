# Install rules (included by the top-level CMakeLists.txt when GPUPRIMS_INSTALL is ON):
#
#   include/gpuprims.h, include/gpuprims.hpp
#   lib/libgpuprims.so.<version>, lib/libgpuprims.so.<major> -> it, lib/libgpuprims.so -> that
#   lib/libgpuprims.a
#   lib/cmake/gpuprims/gpuprimsConfig.cmake, gpuprimsConfigVersion.cmake
#                                     (targets gpuprims::gpuprims and gpuprims::static)
#   lib/pkgconfig/gpuprims.pc, gpuprims-static.pc
#
# The libraries are built by cargo, not by CMake, so they are installed as files and the
# package's targets are written by hand (cmake/gpuprimsConfig.cmake.in), as zenoh-c does.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES "${GPUPRIMS_INCLUDE_DIR}/gpuprims.h" "${GPUPRIMS_INCLUDE_DIR}/gpuprims.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# The versioned file and its two links (install(FILES) keeps symlinks as symlinks).
install(FILES "${GPUPRIMS_STAGE_DIR}/${GPUPRIMS_SHARED_FILE}"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(FILES "${GPUPRIMS_STAGE_DIR}/${GPUPRIMS_SONAME}" "${GPUPRIMS_STAGE_DIR}/libgpuprims.so"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES "${GPUPRIMS_LIB_DIR}/libgpuprims.a" DESTINATION "${CMAKE_INSTALL_LIBDIR}")

# CMake package. 0.x releases may change the ABI in a minor version; from 1.0 on, a major
# version keeps it (as the SONAME says).
set(GPUPRIMS_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/gpuprims")
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_gpuprims_compat SameMinorVersion)
else()
  set(_gpuprims_compat SameMajorVersion)
endif()
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/gpuprimsConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/package/gpuprimsConfig.cmake"
  INSTALL_DESTINATION "${GPUPRIMS_CMAKE_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/package/gpuprimsConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY ${_gpuprims_compat})
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/package/gpuprimsConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/package/gpuprimsConfigVersion.cmake"
        DESTINATION "${GPUPRIMS_CMAKE_DIR}")

# pkg-config. The prefix is the one given at install time (cmake --install --prefix), so
# the files are written by the install step itself.
set(GPUPRIMS_PC_STATIC_LIBS "")
foreach(_lib IN LISTS CMAKE_THREAD_LIBS_INIT GPUPRIMS_STATIC_SYSTEM_LIBS)
  if(_lib MATCHES "^-")
    string(APPEND GPUPRIMS_PC_STATIC_LIBS " ${_lib}")
  else()
    string(APPEND GPUPRIMS_PC_STATIC_LIBS " -l${_lib}")
  endif()
endforeach()
string(STRIP "${GPUPRIMS_PC_STATIC_LIBS}" GPUPRIMS_PC_STATIC_LIBS)
# Everything but the prefix now (the placeholder stays); the prefix at install time.
set(GPUPRIMS_PC_PREFIX "@GPUPRIMS_PC_PREFIX@")
foreach(_pc gpuprims gpuprims-static)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in" "${CMAKE_CURRENT_BINARY_DIR}/package/${_pc}.pc.in" @ONLY)
  install(CODE "
    set(GPUPRIMS_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/package/${_pc}.pc.in\"
                   \"${CMAKE_CURRENT_BINARY_DIR}/package/install/${_pc}.pc\" @ONLY)")
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/package/install/${_pc}.pc"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endforeach()

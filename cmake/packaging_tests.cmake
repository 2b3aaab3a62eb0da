# Packaging tests (top-level builds with GPUPRIMS_BUILD_TESTS and GPUPRIMS_INSTALL):
#   install_to_prefix        cmake --install into build/packaging/prefix, and check it
#   consumer_find_package    a project using find_package(gpuprims): C shared, C static,
#                            C++ through gpuprims.hpp (ctest --build-and-test)
#   consumer_pkg_config      a C program built with flags from pkg-config: shared, static
#   guest_add_subdirectory   a host project with its own `bench` target that adds
#                            gpuprims with add_subdirectory
# The consumers run on the host backend. Sources: ctests/packaging/.
set(_gp_pack_src "${CMAKE_CURRENT_SOURCE_DIR}/ctests/packaging")
set(_gp_pack_bin "${CMAKE_CURRENT_BINARY_DIR}/packaging")
set(_gp_prefix "${_gp_pack_bin}/prefix")
# --build-noclean: the guest shares the cargo target directory, whose libraries a clean
# would remove.
set(_gp_build_and_test "${CMAKE_CTEST_COMMAND}" --build-and-test)
set(_gp_noclean --build-noclean)
set(_gp_generator --build-generator "${CMAKE_GENERATOR}")
if(CMAKE_MAKE_PROGRAM)
  list(APPEND _gp_generator --build-makeprogram "${CMAKE_MAKE_PROGRAM}")
endif()
set(_gp_compilers "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")

add_test(NAME install_to_prefix
  COMMAND "${CMAKE_COMMAND}" "-DBUILD_DIR=${CMAKE_BINARY_DIR}" "-DPREFIX=${_gp_prefix}"
          "-DLIBDIR=${CMAKE_INSTALL_LIBDIR}" "-DVERSION=${PROJECT_VERSION}" "-DSONAME=${GPUPRIMS_SONAME}"
          "-DREADELF=${CMAKE_READELF}" -P "${_gp_pack_src}/install_check.cmake")
set_tests_properties(install_to_prefix PROPERTIES FIXTURES_SETUP gpuprims_prefix TIMEOUT 300)

add_test(NAME consumer_find_package
  COMMAND ${_gp_build_and_test} "${_gp_pack_src}/find_package" "${_gp_pack_bin}/find_package" ${_gp_generator}
          --build-options ${_gp_compilers} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${_gp_prefix}"
          --test-command "${CMAKE_CTEST_COMMAND}" --output-on-failure)
set_tests_properties(consumer_find_package PROPERTIES FIXTURES_REQUIRED gpuprims_prefix)

find_program(GPUPRIMS_PKG_CONFIG NAMES pkg-config pkgconf)
if(GPUPRIMS_PKG_CONFIG)
  add_test(NAME consumer_pkg_config
    COMMAND "${CMAKE_COMMAND}" "-DPKG_CONFIG=${GPUPRIMS_PKG_CONFIG}" "-DPREFIX=${_gp_prefix}"
            "-DLIBDIR=${CMAKE_INSTALL_LIBDIR}" "-DCC=${CMAKE_C_COMPILER}" "-DSOURCE=${_gp_pack_src}/consumer.c"
            "-DWORK=${_gp_pack_bin}/pkg_config" "-DREADELF=${CMAKE_READELF}" -P "${_gp_pack_src}/pkg_config_consumer.cmake")
  set_tests_properties(consumer_pkg_config PROPERTIES FIXTURES_REQUIRED gpuprims_prefix)
else()
  message(STATUS "gpuprims: pkg-config not found: the test consumer_pkg_config is not registered")
endif()

# The guest builds its library the way this build does: the same cargo target directory
# (so cargo finds everything up to date) or the same prebuilt folder.
if(GPUPRIMS_PREBUILT_DIR)
  set(_gp_guest_library "-DGPUPRIMS_PREBUILT_DIR=${GPUPRIMS_LIB_DIR}")
else()
  set(_gp_guest_library "-DGPUPRIMS_CARGO_TARGET_DIR=${GPUPRIMS_CARGO_TARGET_DIR}")
endif()
add_test(NAME guest_add_subdirectory
  COMMAND ${_gp_build_and_test} "${_gp_pack_src}/add_subdirectory" "${_gp_pack_bin}/add_subdirectory" ${_gp_generator} ${_gp_noclean}
          --build-options ${_gp_compilers} "-DGPUPRIMS_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}" ${_gp_guest_library}
          --test-command "${CMAKE_CTEST_COMMAND}" --output-on-failure)

set(_gp_packaging_tests install_to_prefix consumer_find_package guest_add_subdirectory)
if(TEST consumer_pkg_config)
  list(APPEND _gp_packaging_tests consumer_pkg_config)
endif()
# The host backend: these check packaging, not the GPU, so they need no GPU lock and run
# beside the other tests under ctest -j (the guest's cargo shares the cargo target
# directory, which cargo's own lock serializes).
set_tests_properties(${_gp_packaging_tests} PROPERTIES ENVIRONMENT "GPUPRIMS_BACKEND=host" LABELS full)

# install_check.cmake (cmake -P): installs the build tree to PREFIX and checks what is
# there: headers, the versioned shared library with its SONAME and links, the static
# library, the CMake package and the pkg-config files (with PREFIX as their prefix).
#   -DBUILD_DIR= -DPREFIX= -DLIBDIR= -DVERSION= -DSONAME= [-DREADELF=]
foreach(_v BUILD_DIR PREFIX LIBDIR VERSION SONAME)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "install_check.cmake: -D${_v}= is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${_rc})")
endif()

set(_lib "${PREFIX}/${LIBDIR}")
foreach(_file
    "${PREFIX}/include/gpuprims.h" "${PREFIX}/include/gpuprims.hpp"
    "${_lib}/libgpuprims.so.${VERSION}" "${_lib}/libgpuprims.a"
    "${_lib}/cmake/gpuprims/gpuprimsConfig.cmake" "${_lib}/cmake/gpuprims/gpuprimsConfigVersion.cmake"
    "${_lib}/pkgconfig/gpuprims.pc" "${_lib}/pkgconfig/gpuprims-static.pc")
  if(NOT EXISTS "${_file}" OR IS_SYMLINK "${_file}")
    message(FATAL_ERROR "not installed (or a link where a file belongs): ${_file}")
  endif()
endforeach()

# libgpuprims.so -> libgpuprims.so.<major> -> libgpuprims.so.<version>
foreach(_link_target "${SONAME}=libgpuprims.so.${VERSION}" "libgpuprims.so=${SONAME}")
  string(REPLACE "=" ";" _pair "${_link_target}")
  list(GET _pair 0 _link)
  list(GET _pair 1 _target)
  if(NOT IS_SYMLINK "${_lib}/${_link}")
    message(FATAL_ERROR "${_lib}/${_link} is not a symbolic link")
  endif()
  file(READ_SYMLINK "${_lib}/${_link}" _points_to)
  if(NOT _points_to STREQUAL _target)
    message(FATAL_ERROR "${_lib}/${_link} points to ${_points_to}, not ${_target}")
  endif()
endforeach()

if(READELF)
  execute_process(COMMAND "${READELF}" -d "${_lib}/libgpuprims.so.${VERSION}" OUTPUT_VARIABLE _dynamic RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _dynamic MATCHES "Library soname: \\[${SONAME}\\]")
    message(FATAL_ERROR "libgpuprims.so.${VERSION} has no SONAME ${SONAME}:\n${_dynamic}")
  endif()
endif()

file(STRINGS "${_lib}/pkgconfig/gpuprims.pc" _prefix_line LIMIT_COUNT 1)
if(NOT _prefix_line STREQUAL "prefix=${PREFIX}")
  message(FATAL_ERROR "gpuprims.pc says '${_prefix_line}', expected prefix=${PREFIX}")
endif()
message(STATUS "installed and checked: ${PREFIX}")

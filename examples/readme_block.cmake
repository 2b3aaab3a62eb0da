# cmake -DREADME=README.md -DEXAMPLE=examples/reduce_scan.c -P readme_block.cmake
# Fails unless the lines between "<!-- example: reduce_scan.c -->" + "```c" and the
# closing "```" in README equal the file EXAMPLE exactly.
get_filename_component(_name "${EXAMPLE}" NAME)
file(READ "${README}" _readme)
file(READ "${EXAMPLE}" _example)
set(_open "<!-- example: ${_name} -->\n```c\n")
string(FIND "${_readme}" "${_open}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "${README}: no block opened by '<!-- example: ${_name} -->' and ```c")
endif()
string(LENGTH "${_open}" _len)
math(EXPR _at "${_at} + ${_len}")
string(SUBSTRING "${_readme}" ${_at} -1 _rest)
string(FIND "${_rest}" "\n```\n" _end)
math(EXPR _end "${_end} + 1")
string(SUBSTRING "${_rest}" 0 ${_end} _block)
if(NOT _block STREQUAL _example)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_block.c" "${_block}")
  message(FATAL_ERROR "README.md's block of ${_name} differs from ${EXAMPLE} "
                      "(the block is in ${CMAKE_CURRENT_BINARY_DIR}/readme_block.c: diff it)")
endif()
message(STATUS "README.md shows ${_name} exactly")

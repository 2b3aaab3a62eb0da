# cmake/fuzz.cmake: fuzz_abi, the fuzzer of the C ABI (ctests/fuzz/, issue 37), built with
# AddressSanitizer and UndefinedBehaviorSanitizer where the compiler can link them (the
# flags go on this target only), and run by CTest for a minute on the host backend
# (label "fuzz": `ctest -L fuzz`, or `ctest -LE fuzz` to leave it out).
#
# The Rust library is not instrumented, but it allocates through the system malloc, so
# ASan (and its leak checker) sees its heap: an overrun of a buffer the library was given
# by the fuzzer, a use after free of one, or a leak of a handle's memory is reported.
# Replay a failure with the seed it prints: GPUPRIMS_FUZZ_SEED=... build/fuzz_abi.
if(GPUPRIMS_BUILD_TESTS)
  set(_gpuprims_fuzz_dir "${CMAKE_CURRENT_SOURCE_DIR}/ctests/fuzz")
  add_executable(gpuprims_fuzz_abi
    "${_gpuprims_fuzz_dir}/fuzz_abi.c"
    "${_gpuprims_fuzz_dir}/fuzz_log.c"
    "${_gpuprims_fuzz_dir}/fuzz_pool.c"
    "${_gpuprims_fuzz_dir}/fuzz_data.c"
    "${_gpuprims_fuzz_dir}/fuzz_ops_buf.c"
    "${_gpuprims_fuzz_dir}/fuzz_ops_prim.c"
    "${_gpuprims_fuzz_dir}/fuzz_ops_life.c"
    "${_gpuprims_fuzz_dir}/fuzz_ops_multi.c"
    "${_gpuprims_fuzz_dir}/fuzz_life_text.c")
  set_target_properties(gpuprims_fuzz_abi PROPERTIES
    OUTPUT_NAME fuzz_abi C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(gpuprims_fuzz_abi PRIVATE gpuprims::gpuprims Threads::Threads ${CMAKE_DL_LIBS} m)
  target_compile_options(gpuprims_fuzz_abi PRIVATE ${GPUPRIMS_TEST_WARNINGS})

  option(GPUPRIMS_FUZZ_SANITIZE "Build fuzz_abi with -fsanitize=address,undefined when the compiler can" ON)
  if(GPUPRIMS_FUZZ_SANITIZE AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-fsanitize=address,undefined")
    set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=address,undefined")
    check_c_source_compiles("int main(void) { return 0; }" GPUPRIMS_FUZZ_HAVE_SANITIZERS)
    unset(CMAKE_REQUIRED_FLAGS)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
  endif()
  if(GPUPRIMS_FUZZ_SANITIZE AND GPUPRIMS_FUZZ_HAVE_SANITIZERS)
    target_compile_options(gpuprims_fuzz_abi PRIVATE
      -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g)
    target_link_options(gpuprims_fuzz_abi PRIVATE -fsanitize=address,undefined)
  elseif(GPUPRIMS_FUZZ_SANITIZE)
    message(STATUS "gpuprims: ${CMAKE_C_COMPILER_ID} cannot link -fsanitize=address,undefined here "
                   "(no libasan/libubsan?): fuzz_abi is built without sanitizers")
  endif()

  # test_faults again with the sanitizers, on the host backend: every failure path it
  # walks must also leave no leak (LeakSanitizer at exit) and touch no freed memory.
  if(GPUPRIMS_FUZZ_SANITIZE AND GPUPRIMS_FUZZ_HAVE_SANITIZERS)
    add_executable(gpuprims_test_faults_asan "${CMAKE_CURRENT_SOURCE_DIR}/ctests/test_faults.c")
    set_target_properties(gpuprims_test_faults_asan PROPERTIES
      OUTPUT_NAME test_faults_asan C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    target_include_directories(gpuprims_test_faults_asan PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/ctests")
    target_link_libraries(gpuprims_test_faults_asan PRIVATE gpuprims::gpuprims Threads::Threads ${CMAKE_DL_LIBS} m)
    target_compile_options(gpuprims_test_faults_asan PRIVATE ${GPUPRIMS_TEST_WARNINGS}
      -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g)
    target_link_options(gpuprims_test_faults_asan PRIVATE -fsanitize=address,undefined)
    add_test(NAME test_faults_asan COMMAND gpuprims_test_faults_asan)
    set_tests_properties(test_faults_asan PROPERTIES
      ENVIRONMENT "GPUPRIMS_BACKEND=host;ASAN_OPTIONS=detect_leaks=1"
      SKIP_RETURN_CODE 77
      LABELS quick
      TIMEOUT 300)
  endif()

  add_test(NAME fuzz_abi COMMAND gpuprims_fuzz_abi)
  set_tests_properties(fuzz_abi PROPERTIES
    # (It also opens CUDA contexts where a GPU is: lsan-cuda.supp says which leaks of
    # the driver's and NVRTC's loading are not gpuprims'.)
    ENVIRONMENT "GPUPRIMS_FUZZ_SECONDS=60;GPUPRIMS_BACKEND=host;LSAN_OPTIONS=suppressions=${_gpuprims_fuzz_dir}/lsan-cuda.supp"
    SKIP_RETURN_CODE 77
    TIMEOUT 300
    LABELS "fuzz")
endif()

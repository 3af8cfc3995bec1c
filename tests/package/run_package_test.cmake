# Runs one packaging check in a scratch directory; invoked by ctest as
#   cmake -DMODE=find_package|add_subdirectory -DWORK_DIR=... -DBROOK_SOURCE_DIR=... -DBROOK_BINARY_DIR=...
#         -DCXX_COMPILER=... [-DCXX_FLAGS=...] [-DBUILD_TYPE=...] [-DGENERATOR=...] [-DMAKE_PROGRAM=...]
#         [-DPREFIX_PATH=a|b] [-DBROOK_VERSION=x.y.z] -P run_package_test.cmake
#
# find_package:     cmake --install <brook build dir> into WORK_DIR/prefix, then configure,
#                   build and run tests/package/consumer against that prefix only; with
#                   -DEXPECT_CLI=ON the installed bin/brook must run too; with -DWITH_ZSTD=ON
#                   the consumer also asks for the zstd component and runs a zstd round trip.
# pkg_config:       the same install, then tests/package/consumer/main.cpp compiled by hand
#                   with `pkg-config --cflags --libs brook` from that prefix, and run.
# install_only:     configures the brook source tree with tests, benchmarks, examples and
#                   tools off and Catch2 and Google Benchmark made unfindable, then installs
#                   it: what a host that only wants the headers runs.
# add_subdirectory: configure, build and run tests/package/subdir_consumer, which
#                   add_subdirectory()s the brook source tree.
# The consumer gets the parent build's compiler, flags (sanitizers included) and build type.
cmake_minimum_required(VERSION 3.25)

foreach(v MODE WORK_DIR BROOK_SOURCE_DIR BROOK_BINARY_DIR CXX_COMPILER)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "run_package_test.cmake: -D${v}=... is required")
  endif()
endforeach()

# Runs a command, echoing it; stops the test with its output on failure.
function(run what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(configure_args
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(GENERATOR)
  list(APPEND configure_args -G ${GENERATOR})
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
# Search paths travel in the environment (':'-separated), which spares list escaping.
string(REPLACE "|" ";" prefix_path "${PREFIX_PATH}")

# Installs the build tree at BROOK_BINARY_DIR under `prefix` and checks the headers arrived.
function(install_brook prefix)
  run("install brook" ${CMAKE_COMMAND} --install "${BROOK_BINARY_DIR}" --prefix "${prefix}")
  foreach(f include/brook/version.hpp include/brook/format/record_batch.hpp share/pkgconfig/brook.pc)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "the install did not put ${f} under ${prefix}")
    endif()
  endforeach()
endfunction()

if(MODE STREQUAL "install_only")
  set(prefix "${WORK_DIR}/prefix")
  set(BROOK_BINARY_DIR "${WORK_DIR}/brook-build")
  set(off_args -DBROOK_BUILD_TESTS=OFF -DBROOK_BUILD_BENCHMARKS=OFF -DBROOK_BUILD_EXAMPLES=OFF
               -DBROOK_BUILD_TOOLS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON
               -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
  run("configure brook headers only" ${CMAKE_COMMAND} -S "${BROOK_SOURCE_DIR}" -B "${BROOK_BINARY_DIR}"
      ${configure_args} ${off_args})
  install_brook("${prefix}")
  if(EXISTS "${prefix}/bin/brook")
    message(FATAL_ERROR "an install without tools installed bin/brook")
  endif()
  message(STATUS "configured and installed without Catch2 or Google Benchmark")
  return()
endif()

if(MODE STREQUAL "pkg_config")
  set(prefix "${WORK_DIR}/prefix")
  install_brook("${prefix}")
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/share/pkgconfig")
  run("pkg-config" ${PKG_CONFIG} --cflags --libs brook)
  string(STRIP "${run_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
  set(exe "${WORK_DIR}/brook_pkg_config_consumer")
  run("compile with pkg-config's flags" ${CXX_COMPILER} ${cxx_flags} "${CMAKE_CURRENT_LIST_DIR}/consumer/main.cpp"
      -o "${exe}" ${pc_flags})
  run("run ${exe}" "${exe}")
  message(STATUS "${run_output}")
  return()
endif()

if(MODE STREQUAL "find_package")
  set(prefix "${WORK_DIR}/prefix")
  install_brook("${prefix}")
  if(EXPECT_CLI)
    run("installed brook --help" "${prefix}/bin/brook" --help)
    string(FIND "${run_output}" "usage: brook" at)
    if(at LESS 0)
      message(FATAL_ERROR "the installed bin/brook printed no usage:\n${run_output}")
    endif()
  endif()
  list(PREPEND prefix_path "${prefix}")
  set(source_dir "${CMAKE_CURRENT_LIST_DIR}/consumer")
  set(exe brook_package_consumer)
  if(BROOK_VERSION)
    list(APPEND configure_args -DBROOK_EXPECTED_VERSION=${BROOK_VERSION})
  endif()
  if(WITH_ZSTD)
    list(APPEND configure_args -DBROOK_WITH_ZSTD=ON)
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  set(source_dir "${CMAKE_CURRENT_LIST_DIR}/subdir_consumer")
  set(exe brook_subdir_consumer)
  list(APPEND configure_args "-DBROOK_SOURCE_DIR=${BROOK_SOURCE_DIR}")
else()
  message(FATAL_ERROR "unknown MODE '${MODE}' (find_package or add_subdirectory)")
endif()

if(NOT "$ENV{CMAKE_PREFIX_PATH}" STREQUAL "")
  list(APPEND prefix_path "$ENV{CMAKE_PREFIX_PATH}")
endif()
list(JOIN prefix_path ":" prefix_path)
set(ENV{CMAKE_PREFIX_PATH} "${prefix_path}")

set(build_dir "${WORK_DIR}/build")
run("configure ${exe}" ${CMAKE_COMMAND} -S "${source_dir}" -B "${build_dir}" ${configure_args})
if(MODE STREQUAL "find_package")
  # brook must come from the fresh install, never from the build or source tree.
  file(STRINGS "${build_dir}/CMakeCache.txt" brook_dir REGEX "^brook_DIR:")
  string(REGEX REPLACE "^brook_DIR:[A-Z]+=" "" brook_dir "${brook_dir}")
  file(REAL_PATH "${brook_dir}" brook_dir)
  file(REAL_PATH "${prefix}" real_prefix)
  string(FIND "${brook_dir}/" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "find_package(brook) used ${brook_dir}, not the install in ${prefix}")
  endif()
endif()
run("build ${exe}" ${CMAKE_COMMAND} --build "${build_dir}")
run("run ${exe}" "${build_dir}/${exe}")
message(STATUS "${run_output}")
if(WITH_ZSTD)  # an opt-in codec through the package (find_package) or the subdirectory
  run("run brook_package_zstd_consumer" "${build_dir}/brook_package_zstd_consumer")
  message(STATUS "${run_output}")
endif()

# Compiles the ```cpp blocks of Markdown files (tests/docs/extract_snippets), as a user
# would: -Wall -Wextra -Werror. Run by ctest (tests/docs/CMakeLists.txt).
#
#   cmake -DEXTRACT=<extract_snippets> -DCXX=<compiler> -DINCLUDES="<dir>|<dir>" -DOUT=<file.cpp>
#         -DDOCS="<a.md>|<b.md>" [-DEXPECT_ERROR_AT=<file.md>:<line>] -P check_snippets.cmake
#
# With EXPECT_ERROR_AT (the self-test), the compile must fail and the compiler must name
# that Markdown line.
string(REPLACE "|" ";" DOCS "${DOCS}")
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
execute_process(COMMAND ${EXTRACT} ${OUT} ${DOCS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "extracting the snippets failed")
endif()
set(flags -std=c++20 -fsyntax-only -Wall -Wextra -Werror)
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags -I${dir})
endforeach()
execute_process(COMMAND ${CXX} ${flags} ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED EXPECT_ERROR_AT)
  string(FIND "${out}" "${EXPECT_ERROR_AT}:" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "expected a compile error at ${EXPECT_ERROR_AT}; the compiler said (exit ${rc}):\n${out}")
  endif()
  message(STATUS "the bad snippet fails at ${EXPECT_ERROR_AT}, as expected")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "a documentation snippet does not compile:\n${out}")
endif()

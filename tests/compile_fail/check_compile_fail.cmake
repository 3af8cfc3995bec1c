# A negative compile test: SOURCE must compile as it is, and must fail to compile with
# -DBROOK_EXPECT_ERROR with a message matching EXPECT (so it fails for the reason meant, not
# for a typo).
#   cmake -DCXX=... -DINCLUDE=... -DSOURCE=... -DEXPECT=regex [-DFLAGS=...] -P check_compile_fail.cmake
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
set(base ${CXX} -std=c++20 -fsyntax-only ${flags} -I${INCLUDE} ${SOURCE})
execute_process(COMMAND ${base} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} does not compile even without BROOK_EXPECT_ERROR:\n${out}")
endif()
execute_process(COMMAND ${base} -DBROOK_EXPECT_ERROR RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled with BROOK_EXPECT_ERROR: the misuse is not rejected")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SOURCE} failed to compile, but not with '${EXPECT}':\n${out}")
endif()
message(STATUS "${SOURCE}: rejected as expected")

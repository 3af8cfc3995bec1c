# Checks that brook's heavy member functions were compiled once: undefined (U) in the host's
# objects, which call them, never defined there (T, or W as an inline copy would be), and
# defined (T) in the definitions object.
#
#   cmake -DNM=nm -DUSER_OBJECTS="a.o|b.o" -DDEFINITION_OBJECTS=d.o -P check_symbols.cmake
set(functions
  "brook::node::open("
  "brook::node::close()"
  "brook::producer::send("
  "brook::producer::flush()"
  "brook::group_consumer::subscribe("
  "brook::group_consumer::poll("
  "brook::group_consumer::close(")

string(REPLACE "|" ";" USER_OBJECTS "${USER_OBJECTS}")
function(symbols objects out)
  set(all "")
  foreach(o IN LISTS objects)
    execute_process(COMMAND ${NM} -C "${o}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${NM} -C ${o} failed (${rc})")
    endif()
    string(APPEND all "${text}")
  endforeach()
  set(${out} "${all}" PARENT_SCOPE)
endfunction()
symbols("${USER_OBJECTS}" user)
symbols("${DEFINITION_OBJECTS}" defs)

set(failures "")
foreach(f IN LISTS functions)
  string(REGEX REPLACE "([][().*+?^$|\\])" "\\\\\\1" f_re "${f}")
  if(NOT user MATCHES "\n *U ${f_re}")
    list(APPEND failures "${f}: not undefined (U) in the host's objects")
  endif()
  if(user MATCHES "\n[0-9a-f]+ [TtWw] ${f_re}")
    list(APPEND failures "${f}: defined in the host's objects (compiled again there)")
  endif()
  if(NOT defs MATCHES "\n[0-9a-f]+ T ${f_re}")
    list(APPEND failures "${f}: not defined (T) in the definitions object")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " text "${failures}")
  message(FATAL_ERROR "separate compilation:\n  ${text}")
endif()
list(LENGTH functions n)
message(STATUS "separate compilation: ${n} member functions compiled once, in the definitions object")

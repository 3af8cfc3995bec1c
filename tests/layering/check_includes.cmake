# Checks that brook's #include arrows only go down the layers of docs/design.md.
#
#   cmake -DROOT=<source tree> -P check_includes.cmake
#   cmake -DROOT=<tree> -DDESIGN=<design.md> -DEXPECTED=<file> -P check_includes.cmake
#
# The layers, bottom first, are the rows of the table under "## Layers" in
# ROOT/docs/design.md (or DESIGN) whose second cell is a directory: "| core | `core/` | ...".
# Rules, for every header (.hpp) and out-of-class definition file (.ipp) under
# ROOT/include/brook:
#   - it lives in a listed layer directory, or at the top (brook.hpp, version.hpp);
#   - it includes brook headers as <brook/...>, never "...";
#   - a layer header includes headers of its own layer or lower ones, and of the top
#     only <brook/version.hpp>;
#   - a header includes <brook/L/detail/...> only from layer L, and <brook/L/impl/...>
#     (the .ipp definitions of core/linkage.hpp) only from layer L or the top (src.hpp);
#   - brook.hpp includes every header of every listed layer outside detail/ and impl/, except
#     the opt-in layers (rows whose last cell begins with "opt-in": the testing/ rigging, the
#     codecs/ that link compression libraries), which no top-level header includes;
# and files under ROOT/tools, ROOT/examples and ROOT/benchmarks include no detail/ header,
# those under ROOT/tools and ROOT/examples no header of the test-only layer (testing/; other
# opt-in layers, such as codecs/, are theirs to include).
#
# Without EXPECTED it prints every violation and fails if there is one not in
# known_violations below, or if a known one no longer happens (the list only shrinks).
# With EXPECTED (the self-test over tests/layering/fixture) the violations found must be
# exactly the lines of that file, so the check is shown to catch each kind.

# "includer -> included" (paths below include/brook/) that are still to be fixed, each
# with a comment naming the step that removes it. Empty: keep it so.
set(known_violations)

cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...) in script mode

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "check_includes.cmake: pass -DROOT=<source tree>")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
if(NOT DEFINED DESIGN)
  set(DESIGN "${ROOT}/docs/design.md")
endif()

# --- the layer table ---------------------------------------------------------------
file(READ "${DESIGN}" design_text)
string(FIND "${design_text}" "\n## Layers" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "${DESIGN}: no '## Layers' section")
endif()
string(SUBSTRING "${design_text}" ${begin} -1 section)
string(SUBSTRING "${section}" 1 -1 section)
string(FIND "${section}" "\n## " end)
if(NOT end EQUAL -1)
  string(SUBSTRING "${section}" 0 ${end} section)
endif()
# A ";" in a cell would split the list of rows.
string(REPLACE ";" "," section "${section}")
string(REGEX MATCHALL "\n\\| [^|\n]+ \\| `[a-z_]+/` \\|[^\n]*" rows "${section}")
set(layers "")
set(opt_in_layers "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "^\n\\| [^|]+ \\| `([a-z_]+)/`.*" "\\1" dir "${row}")
  list(APPEND layers "${dir}")
  if(row MATCHES "\\|[ \t]*opt-in[^|]*\\|?[ \t]*$")
    list(APPEND opt_in_layers "${dir}")
  endif()
endforeach()
# The opt-in layer only tests and benchmarks may include (tools and examples may not).
set(test_only_layer testing)
list(LENGTH layers layer_count)
if(layer_count LESS 2)
  message(FATAL_ERROR "${DESIGN}: the layer table lists ${layer_count} layer directories")
endif()

set(found "")
macro(violation text)
  list(APPEND found "${text}")
endmacro()

# Layer directory of a path below include/brook/ ("top" for a file directly there).
function(layer_of path out)
  if(path MATCHES "^([^/]+)/")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out} "top" PARENT_SCOPE)
  endif()
endfunction()

# --- headers -----------------------------------------------------------------------
file(GLOB_RECURSE headers RELATIVE "${ROOT}/include/brook" "${ROOT}/include/brook/*.hpp"
     "${ROOT}/include/brook/*.ipp")
list(SORT headers)
foreach(h IN LISTS headers)
  layer_of("${h}" from)
  if(NOT from STREQUAL "top")
    list(FIND layers "${from}" from_rank)
    if(from_rank EQUAL -1)
      violation("${h}: in directory ${from}/, which the layer table does not list")
      continue()
    endif()
  endif()
  file(STRINGS "${ROOT}/include/brook/${h}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      violation("${h} -> ${CMAKE_MATCH_1}: a quoted include (use <brook/...>)")
      continue()
    endif()
    if(NOT line MATCHES "#[ \t]*include[ \t]*<brook/([^>]+)>")
      continue()
    endif()
    set(to_path "${CMAKE_MATCH_1}")
    layer_of("${to_path}" to)
    if(from STREQUAL "top")
      if(to_path MATCHES "/detail/")
        violation("${h} -> ${to_path}: the top includes a detail/ header")
      elseif(to IN_LIST opt_in_layers)
        violation("${h} -> ${to_path}: the top includes the opt-in ${to}/ layer")
      endif()
      continue()
    endif()
    if(to STREQUAL "top")
      if(NOT to_path STREQUAL "version.hpp")
        violation("${h} -> ${to_path}: a layer header includes a top-level header")
      endif()
      continue()
    endif()
    list(FIND layers "${to}" to_rank)
    if(to_rank EQUAL -1)
      violation("${h} -> ${to_path}: ${to}/ is not in the layer table")
    elseif(to_rank GREATER from_rank)
      violation("${h} -> ${to_path}: ${from} includes the higher layer ${to}")
    elseif(to_path MATCHES "/detail/" AND NOT to STREQUAL from)
      violation("${h} -> ${to_path}: ${from} includes ${to}'s detail/")
    elseif(to_path MATCHES "/impl/" AND NOT to STREQUAL from)
      violation("${h} -> ${to_path}: ${from} includes ${to}'s impl/")
    endif()
  endforeach()
endforeach()

# --- brook.hpp is everything ---------------------------------------------------------
# Every header of a listed layer outside detail/ is included by brook.hpp.
if(EXISTS "${ROOT}/include/brook/brook.hpp")
  file(STRINGS "${ROOT}/include/brook/brook.hpp" umbrella REGEX "#[ \t]*include[ \t]*<brook/")
  foreach(h IN LISTS headers)
    layer_of("${h}" from)
    list(FIND layers "${from}" rank)
    if(rank EQUAL -1 OR h MATCHES "/(detail|impl)/" OR from IN_LIST opt_in_layers)
      continue()
    endif()
    string(REPLACE "." "\\." h_re "${h}")
    if(NOT umbrella MATCHES "<brook/${h_re}>")
      violation("brook.hpp: does not include ${h}")
    endif()
  endforeach()
endif()

# --- programs ----------------------------------------------------------------------
foreach(dir tools examples benchmarks)
  file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.hpp" "${ROOT}/${dir}/*.h")
  list(SORT sources)
  foreach(s IN LISTS sources)
    file(STRINGS "${ROOT}/${s}" lines REGEX "#[ \t]*include[ \t]*<brook/.*(detail|impl)/")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE ".*<brook/([^>]+)>.*" "\\1" to_path "${line}")
      if(to_path MATCHES "/impl/")
        violation("${s} -> ${to_path}: ${dir}/ includes an impl/ file")
      else()
        violation("${s} -> ${to_path}: ${dir}/ includes a detail/ header")
      endif()
    endforeach()
    if(NOT dir STREQUAL "benchmarks")
      file(STRINGS "${ROOT}/${s}" lines REGEX "#[ \t]*include[ \t]*<brook/${test_only_layer}/")
      foreach(line IN LISTS lines)
        string(REGEX REPLACE ".*<brook/([^>]+)>.*" "\\1" to_path "${line}")
        violation("${s} -> ${to_path}: ${dir}/ includes the opt-in ${test_only_layer}/ layer")
      endforeach()
    endif()
  endforeach()
endforeach()

# --- verdict -----------------------------------------------------------------------
list(LENGTH headers header_count)
if(DEFINED EXPECTED)
  file(STRINGS "${EXPECTED}" expected)
  list(SORT expected)
  list(SORT found)
  if(NOT found STREQUAL expected)
    string(REPLACE ";" "\n  " f "${found}")
    string(REPLACE ";" "\n  " e "${expected}")
    message(FATAL_ERROR "self-test: the violations found differ from ${EXPECTED}\nfound:\n  ${f}\nexpected:\n  ${e}")
  endif()
  list(LENGTH found n)
  message(STATUS "self-test: all ${n} planted violations found, nothing else")
  return()
endif()

set(unknown "")
set(seen_known "")
foreach(v IN LISTS found)
  string(REGEX REPLACE ":.*" "" key "${v}")
  list(FIND known_violations "${key}" k)
  if(k EQUAL -1)
    list(APPEND unknown "${v}")
  else()
    list(APPEND seen_known "${key}")
    message(STATUS "known (still to fix): ${v}")
  endif()
endforeach()
set(stale "")
foreach(k IN LISTS known_violations)
  list(FIND seen_known "${k}" i)
  if(i EQUAL -1)
    list(APPEND stale "${k}")
  endif()
endforeach()
string(REPLACE ";" " < " order "${layers}")
string(REPLACE ";" ", " opt_in "${opt_in_layers}")
message(STATUS "layers (bottom first): ${order} (opt-in: ${opt_in}); ${header_count} headers checked")
if(unknown OR stale)
  foreach(v IN LISTS unknown)
    message(STATUS "VIOLATION: ${v}")
  endforeach()
  foreach(k IN LISTS stale)
    message(STATUS "STALE: '${k}' no longer happens: remove it from known_violations")
  endforeach()
  message(FATAL_ERROR "include layering: see the lines above (the order is docs/design.md's layer table)")
endif()
message(STATUS "include layering: ok")

# Run after unit_tests is built (tests/CMakeLists.txt): asks it for its doctest cases and writes
# OUT, a CTest file with one test per case, named "unit: <case>", labelled unit (and slow for
# the cases of doctest's test suite "slow": the convergence runs, over ~10 s under the
# sanitizers).
#   cmake -D EXE=<unit_tests> -D OUT=<file> -P unit_cases.cmake
# Each test runs the executable with --test-case=<name>, commas escaped (doctest splits its
# filters at unescaped commas), and passes only when doctest reports exactly one case run and
# passed: a filter that matched nothing, or more than one case, cannot pass unnoticed. A case
# that prints "SKIPPED: <why>" (test::skip, when data is absent) is reported as skipped.
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...) in this -P script
execute_process(COMMAND "${EXE}" --list-test-cases --no-intro=true
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list-test-cases failed (${rc}): ${listing}")
endif()
execute_process(COMMAND "${EXE}" --list-test-cases --no-intro=true --test-suite=slow
                OUTPUT_VARIABLE slow_listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list-test-cases --test-suite=slow failed (${rc}): ${slow_listing}")
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE ";" "\\;" slow_listing "${slow_listing}")
string(REPLACE "\n" ";" slow_lines "${slow_listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(name IN LISTS lines)
  if(name STREQUAL "" OR name MATCHES "^\\[doctest\\] " OR name MATCHES "^=+$")
    continue()
  endif()
  set(labels unit)
  if(name IN_LIST slow_lines)  # compared before the semicolons are unescaped, as listed
    set(labels "unit;slow")
  endif()
  string(REPLACE "\\;" ";" name "${name}")
  string(REPLACE "\\" "\\\\" filter "${name}")
  string(REPLACE "," "\\," filter "${filter}")
  string(APPEND script
    "add_test([==[unit: ${name}]==] [==[${EXE}]==] --no-intro=true [==[--test-case=${filter}]==])\n"
    "set_tests_properties([==[unit: ${name}]==] PROPERTIES LABELS [==[${labels}]==]\n"
    "  PASS_REGULAR_EXPRESSION [==[test cases: +1 \\| +1 passed \\| +0 failed]==]\n"
    "  SKIP_REGULAR_EXPRESSION [==[SKIPPED: ]==])\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${EXE} listed no test cases")
endif()
file(WRITE "${OUT}" "${script}")

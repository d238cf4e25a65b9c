# Runs dsplan for one CLI test case and checks its exit status and output.
#   ARGS    the arguments joined by "^^"; a "THEN" argument separates a second command,
#           run only if the first one exits 0; %WORKDIR% is a fresh scratch folder.
#   STATUS  regex the LAST command's exit status must match exactly ("2", "2|0").
#   PATTERN regex its stdout+stderr must contain ("^$" = no output at all).
# On a non-zero status WORKDIR must be empty: no partial output file.
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
string(REPLACE "%WORKDIR%" "${WORKDIR}" args "${ARGS}")
string(REPLACE "^^THEN^^" "|" args "${args}")
string(REPLACE "|" ";" commands "${args}")
foreach(cmd IN LISTS commands)
  string(REPLACE "^^" ";" argv "${cmd}")
  execute_process(COMMAND "${DSPLAN}" ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message(STATUS "dsplan ${argv}\n-> exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    break()
  endif()
endforeach()
if(NOT rc MATCHES "^(${STATUS})$")
  message(FATAL_ERROR "exit status ${rc}, expected ${STATUS}")
endif()
if(NOT "${out}${err}" MATCHES "${PATTERN}")
  message(FATAL_ERROR "output does not match: ${PATTERN}")
endif()
if(NOT rc EQUAL 0)
  file(GLOB left "${WORKDIR}/*")
  if(left)
    message(FATAL_ERROR "files left behind after a failure: ${left}")
  endif()
endif()

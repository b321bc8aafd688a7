# Proves every header under src/kernels/ can be entered on its own
# (ctest kernel_headers_standalone; run as
#   cmake -DCXX=<compiler> -DSRC=<repo>/src -DWORK=<scratch dir> -P check_kernel_headers.cmake):
# - a plain header compiles alone in a one-line translation unit;
# - a *_body.h piece (not standalone by design, see
#   src/kernels/cpu/x86_body_context.h) included alone stops at its own
#   #error naming x86_body_context.h, and one that builds on other bodies,
#   included after the context but without them, stops at the #error naming
#   the first body it lacks. (x86 only: elsewhere the context defines nothing.)
# Syntax-only with -Wfatal-errors, so the first diagnostic is the one checked.
cmake_minimum_required(VERSION 3.20)
foreach(var CXX SRC WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_kernel_headers.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK})
file(GLOB_RECURSE headers RELATIVE ${SRC} ${SRC}/kernels/*.h)
list(SORT headers)
set(failures "")
set(checked 0)

# Compiles `text` as a translation unit; sets ok (TRUE/FALSE) and out.
function(try_tu name text)
  set(tu ${WORK}/${name}.cpp)
  file(WRITE ${tu} "${text}")
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wfatal-errors -Wall -Wextra -Werror
                          -I${SRC} ${tu}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(rc EQUAL 0)
    set(ok TRUE PARENT_SCOPE)
  else()
    set(ok FALSE PARENT_SCOPE)
  endif()
  set(out "${o}${e}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${CXX} -dumpmachine OUTPUT_VARIABLE machine)
foreach(h IN LISTS headers)
  string(MAKE_C_IDENTIFIER ${h} id)
  get_filename_component(name ${h} NAME)
  math(EXPR checked "${checked} + 1")
  if(NOT name MATCHES "_body\\.h$")
    try_tu(${id} "#include \"${h}\"\n")
    if(NOT ok)
      string(APPEND failures "${h} does not compile alone:\n${out}\n")
    endif()
    continue()
  endif()
  if(NOT machine MATCHES "^x86_64")
    continue()
  endif()
  try_tu(${id}_alone "#include \"${h}\"\n")
  if(ok OR NOT out MATCHES "#error \"?${name}: include kernels/cpu/x86_body_context.h")
    string(APPEND failures "${h} alone does not stop at its x86_body_context.h #error:\n${out}\n")
  endif()
  file(READ ${SRC}/${h} body)
  string(REGEX MATCH "#error \"${name}: include kernels/cpu/[a-z0-9_]+_body\\.h" sibling "${body}")
  if(sibling)
    try_tu(${id}_no_siblings
           "#include \"kernels/cpu/x86_body_context.h\"\nnamespace check {\n#include \"${h}\"\n}\n")
    if(ok OR NOT out MATCHES "${sibling}")
      string(APPEND failures "${h} without the bodies before it does not stop at `${sibling}`:\n${out}\n")
    endif()
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "${failures}")
endif()
message(STATUS "${checked} kernel headers checked")

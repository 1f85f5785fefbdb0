# Installs the C API component of a sharc build into a scratch prefix,
# configures and builds examples/c_api against it with find_package(sharc),
# runs the example, and checks that the installed library exports nothing
# but the C API. Run by ctest as c_api_installed_package:
#   cmake -DSHARC_BUILD_DIR=... -DSHARC_EXAMPLE_DIR=... -DWORK_DIR=...
#         -DGENERATOR=Ninja -DC_COMPILER=cc -P install_and_run_example.cmake
foreach(var SHARC_BUILD_DIR SHARC_EXAMPLE_DIR WORK_DIR GENERATOR C_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_and_run_example.cmake needs -D${var}=...")
  endif()
endforeach()

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${name} failed (${result}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("install" ${CMAKE_COMMAND} --install ${SHARC_BUILD_DIR} --prefix ${prefix}
  --component c_api)
foreach(expected include/sharc/sharc_c.h lib/cmake/sharc/sharcConfig.cmake
    lib/cmake/sharc/sharcConfigVersion.cmake lib/cmake/sharc/sharcTargets.cmake lib/libsharc_c.so)
  if(NOT EXISTS ${prefix}/${expected})
    message(FATAL_ERROR "the install did not create ${prefix}/${expected}")
  endif()
endforeach()

# Only sharc_* functions may be visible to the programs that load the library.
find_program(NM nm)
if(NM)
  run_step("nm" ${NM} -D --defined-only ${prefix}/lib/libsharc_c.so)
  string(REGEX MATCHALL "[^\n]+" symbols "${step_output}")
  foreach(line ${symbols})
    if(NOT line MATCHES " sharc_[a-z0-9_]+$")
      message(FATAL_ERROR "libsharc_c.so exports more than the C API: ${line}")
    endif()
  endforeach()
endif()

run_step("configure the example" ${CMAKE_COMMAND} -S ${SHARC_EXAMPLE_DIR} -B ${WORK_DIR}/build
  -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("run the example" ${WORK_DIR}/build/sharc_c_api_example)
message("${step_output}")
foreach(expected "2 devices match the C loop" "\"schema_version\": 1" "INVALID_ARGUMENT"
    "broken.hlo:5:28: error: use of undefined value '%q'")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the example's output lacks \"${expected}\"")
  endif()
endforeach()

# Prints what this configuration found and builds: included last by the top-level CMakeLists.txt.
# Dependencies come from jetpde_record_dependency() (cmake/JetpdeDependencies.cmake), modules from
# the global property JETPDE_MODULES (jetpde_add_module, cmake/JetpdeModules.cmake).

function(_jetpde_pad out text width)
  string(LENGTH "${text}" len)
  if(len LESS width)
    math(EXPR n "${width} - ${len}")
    string(REPEAT " " ${n} pad)
    set(text "${text}${pad}")
  endif()
  set(${out} "${text} " PARENT_SCOPE)
endfunction()

function(jetpde_print_summary)
  message(STATUS "")
  message(STATUS "jetpde ${PROJECT_VERSION}: ${CMAKE_BUILD_TYPE}, ${CMAKE_CXX_COMPILER_ID} "
                 "${CMAKE_CXX_COMPILER_VERSION}, C++${CMAKE_CXX_STANDARD}, ${CMAKE_GENERATOR}")

  message(STATUS "Dependencies:")
  get_property(deps GLOBAL PROPERTY JETPDE_DEPENDENCIES)
  foreach(dep IN LISTS deps)
    get_property(state GLOBAL PROPERTY JETPDE_DEPENDENCY_${dep}_STATE)
    get_property(version GLOBAL PROPERTY JETPDE_DEPENDENCY_${dep}_VERSION)
    get_property(detail GLOBAL PROPERTY JETPDE_DEPENDENCY_${dep}_DETAIL)
    _jetpde_pad(name_col "${dep}" 12)
    if(state STREQUAL "found")
      _jetpde_pad(state_col "found" 10)
      _jetpde_pad(version_col "${version}" 9)
      message(STATUS "  ${name_col}${state_col}${version_col}${detail}")
    else()
      message(STATUS "  ${name_col}${state}")
    endif()
  endforeach()

  get_property(modules GLOBAL PROPERTY JETPDE_MODULES)
  list(JOIN modules " " modules_text)
  if(modules_text STREQUAL "")
    set(modules_text "(none)")
  endif()
  message(STATUS "Modules:      ${modules_text}")

  # Folders of DESIGN.md section 3 that nothing builds yet (no CMakeLists.txt).
  set(empty)
  foreach(dir IN ITEMS autodiff compiler geometry equations nn solvers io apps python
                       tests examples bench)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt")
      list(APPEND empty ${dir})
    endif()
  endforeach()
  list(JOIN empty " " empty_text)
  if(empty_text STREQUAL "")
    set(empty_text "(none)")
  endif()
  message(STATUS "No code yet:  ${empty_text}")
  message(STATUS "Tests:        ${JETPDE_BUILD_TESTS}")
  message(STATUS "")
endfunction()

jetpde_print_summary()

# jetpde_add_module(NAME SOURCES ... DEPS ...)
# One library target per module folder (jetpde_<NAME>, alias jetpde::<NAME>). DEPS are the modules
# to its left in the layering of docs/design.md section 2, plus external targets.
function(jetpde_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(jetpde_${name} ${ARG_SOURCES})
  add_library(jetpde::${name} ALIAS jetpde_${name})
  target_include_directories(jetpde_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(jetpde_${name} PUBLIC ${ARG_DEPS})
  target_compile_features(jetpde_${name} PUBLIC cxx_std_20)
  set_property(GLOBAL APPEND PROPERTY JETPDE_MODULES ${name})
endfunction()

# jetpde_add_subdirectory_if_present(DIR)
# add_subdirectory(DIR) when DIR has a CMakeLists.txt; folders without code yet are skipped (the
# configure summary lists them). A macro, so that DIR's parent scope is the caller's.
# The folder itself is a configure dependency: adding its CMakeLists.txt later changes the folder's
# time stamp, and the next build re-runs CMake and picks it up.
macro(jetpde_add_subdirectory_if_present dir)
  if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt")
    add_subdirectory(${dir})
  else()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}")
  endif()
endmacro()

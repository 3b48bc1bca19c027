# External dependencies (docs/design.md section 13; scripts/bootstrap.sh installs them on Debian 12).
#
# Each dependency that is found sets JETPDE_HAVE_<X> (TRUE/FALSE, in this scope) and defines one
# interface target jetpde::ext::<x> that carries its include directories, libraries and the compile
# definition JETPDE_HAVE_<X>=1. Link the target only inside `if(JETPDE_HAVE_<X>)`: missing optional
# dependencies define no target, so a module that needs one says so where it is added.
#
#   dependency      JETPDE_HAVE_      target                    option (ON = use when found)
#   Eigen3          EIGEN3            jetpde::ext::eigen        (required)
#   LBFGSpp         LBFGSPP           jetpde::ext::lbfgspp      (required; header-only, its
#                                                               strong-Wolfe line search)
#   Boost (headers) BOOST             jetpde::ext::boost        (required: Boost.Random's Sobol)
#   BLAS            BLAS              jetpde::ext::blas         (OpenBLAS preferred)
#   MPI (C, CXX)    MPI               jetpde::ext::mpi          JETPDE_WITH_MPI
#   HDF5 (C)        HDF5              jetpde::ext::hdf5         JETPDE_WITH_HDF5 (Open MPI flavour)
#   VTK             VTK               jetpde::ext::vtk          JETPDE_WITH_VTK
#     IOGeometry    VTK_STL           jetpde::ext::vtk_stl      (STL files: geometry/stl.cpp)
#   PETSc           PETSC             jetpde::ext::petsc        JETPDE_WITH_PETSC (pkg-config)
#   CUDA toolkit    CUDA              jetpde::ext::cuda         JETPDE_WITH_CUDA (cudart, cuBLAS, NVRTC)
#   yaml-cpp        YAML_CPP          jetpde::ext::yaml_cpp
#   matio           MATIO             jetpde::ext::matio        JETPDE_WITH_MATIO (.mat files)
#   libzip          LIBZIP            jetpde::ext::libzip       JETPDE_WITH_LIBZIP (.npz files)
#   GoogleTest      GTEST             GTest::gtest, GTest::gtest_main, GTest::gmock
#                                                               JETPDE_BUILD_TESTS (required then)
#   pybind11        PYBIND11          pybind11::module, Python::Module   JETPDE_WITH_PYTHON
#
# Findings are recorded with jetpde_record_dependency() for cmake/JetpdeSummary.cmake.

option(JETPDE_WITH_CUDA "Use the CUDA toolkit (cudart, cuBLAS, NVRTC) when found" ON)
option(JETPDE_WITH_MPI "Use MPI when found" ON)
option(JETPDE_WITH_PETSC "Use PETSc (pkg-config) when found" ON)
option(JETPDE_WITH_VTK "Use VTK when found" ON)
option(JETPDE_WITH_PYTHON "Build the Python bindings when pybind11 and Python are found" ON)
option(JETPDE_WITH_HDF5 "Use HDF5 (the Open MPI flavour) when found" ON)
option(JETPDE_WITH_MATIO "Read MATLAB .mat files with matio when found" ON)
option(JETPDE_WITH_LIBZIP "Read NumPy .npz files with libzip when found" ON)
option(JETPDE_BUILD_TESTS "Build the GoogleTest tests (needs GoogleTest)" ON)

# jetpde_record_dependency(NAME <found> [VERSION v] [DETAIL text] [OPTION opt])
function(jetpde_record_dependency name found)
  cmake_parse_arguments(ARG "" "VERSION;DETAIL;OPTION" "" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY JETPDE_DEPENDENCIES ${name})
  if(ARG_OPTION AND NOT ${ARG_OPTION})
    set(state "off (${ARG_OPTION}=OFF)")
  elseif(found)
    set(state "found")
  else()
    set(state "not found")
  endif()
  set_property(GLOBAL PROPERTY JETPDE_DEPENDENCY_${name}_STATE "${state}")
  set_property(GLOBAL PROPERTY JETPDE_DEPENDENCY_${name}_VERSION "${ARG_VERSION}")
  set_property(GLOBAL PROPERTY JETPDE_DEPENDENCY_${name}_DETAIL "${ARG_DETAIL}")
endfunction()

# jetpde_external_target(<x> <HAVE-suffix> LINK targets... [INCLUDE dirs...])
function(jetpde_external_target name have)
  cmake_parse_arguments(ARG "" "" "LINK;INCLUDE" ${ARGN})
  add_library(jetpde_ext_${name} INTERFACE)
  add_library(jetpde::ext::${name} ALIAS jetpde_ext_${name})
  target_link_libraries(jetpde_ext_${name} INTERFACE ${ARG_LINK})
  if(ARG_INCLUDE)
    target_include_directories(jetpde_ext_${name} SYSTEM INTERFACE ${ARG_INCLUDE})
  endif()
  target_compile_definitions(jetpde_ext_${name} INTERFACE JETPDE_HAVE_${have}=1)
endfunction()

# --- Eigen3 (required) -----------------------------------------------------------------------------
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
set(JETPDE_HAVE_EIGEN3 TRUE)
jetpde_external_target(eigen EIGEN3 LINK Eigen3::Eigen)
jetpde_record_dependency(Eigen3 TRUE VERSION ${Eigen3_VERSION})

# --- LBFGSpp (required, header-only): nn/lbfgs.cpp uses its Nocedal-Wright line search ------------
find_path(JETPDE_LBFGSPP_INCLUDE_DIR LBFGSpp/LineSearchNocedalWright.h)
if(NOT JETPDE_LBFGSPP_INCLUDE_DIR)
  message(FATAL_ERROR "LBFGSpp not found (Debian: liblbfgspp-dev; scripts/bootstrap.sh installs it)")
endif()
set(JETPDE_HAVE_LBFGSPP TRUE)
jetpde_external_target(lbfgspp LBFGSPP LINK Eigen3::Eigen INCLUDE ${JETPDE_LBFGSPP_INCLUDE_DIR})
jetpde_record_dependency(LBFGSpp TRUE DETAIL ${JETPDE_LBFGSPP_INCLUDE_DIR})

# --- Boost, headers only (required): Boost.Random's sobol engine for geometry/ -------------------
find_package(Boost 1.71 CONFIG QUIET)
if(NOT Boost_FOUND OR NOT TARGET Boost::headers)
  message(FATAL_ERROR "jetpde: Boost (headers, 1.71 or later; Debian: libboost-dev) was not "
                      "found; geometry/ needs Boost.Random's Sobol sequence. Run scripts/bootstrap.sh.")
endif()
set(JETPDE_HAVE_BOOST TRUE)
jetpde_external_target(boost BOOST LINK Boost::headers)
jetpde_record_dependency(Boost TRUE VERSION ${Boost_VERSION} DETAIL "headers: Boost.Random sobol")

# --- BLAS: OpenBLAS's own config (version, cblas.h directory), else FindBLAS ------------------------
set(JETPDE_HAVE_BLAS FALSE)
find_package(OpenBLAS CONFIG QUIET)
if(OpenBLAS_FOUND AND OpenBLAS_LIBRARIES)
  set(JETPDE_HAVE_BLAS TRUE)
  set(JETPDE_BLAS_VENDOR OpenBLAS)
  set(JETPDE_BLAS_VERSION ${OpenBLAS_VERSION})
  set(JETPDE_BLAS_INCLUDE_DIRS ${OpenBLAS_INCLUDE_DIRS})
  set(JETPDE_BLAS_LIBRARIES ${OpenBLAS_LIBRARIES})
else()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  if(NOT BLAS_FOUND)
    unset(BLA_VENDOR)
    find_package(BLAS QUIET)
    set(JETPDE_BLAS_VENDOR "generic")
  else()
    set(JETPDE_BLAS_VENDOR OpenBLAS)
  endif()
  if(BLAS_FOUND)
    set(JETPDE_HAVE_BLAS TRUE)
    set(JETPDE_BLAS_VERSION "")
    set(JETPDE_BLAS_INCLUDE_DIRS "")
    set(JETPDE_BLAS_LIBRARIES ${BLAS_LIBRARIES})
  endif()
endif()
# The generated CPU kernels run on OpenMP. OpenBLAS built on pthreads keeps a second pool of
# threads, and the two pools' spinning workers fight over the cores (GEMMs ran 2-3x slower in
# jetpde_bench); OpenBLAS's OpenMP build shares one pool. Prefer it where installed
# (libopenblas0-openmp): link it by path; CMake's build RPATH makes the loader pick it.
if(JETPDE_HAVE_BLAS AND JETPDE_BLAS_VENDOR STREQUAL "OpenBLAS")
  find_library(JETPDE_OPENBLAS_OPENMP NAMES libopenblas.so.0
    PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp
    NO_DEFAULT_PATH)
  if(JETPDE_OPENBLAS_OPENMP)
    set(JETPDE_BLAS_LIBRARIES ${JETPDE_OPENBLAS_OPENMP})
    set(JETPDE_BLAS_VENDOR "OpenBLAS (OpenMP)")
  endif()
endif()
if(JETPDE_HAVE_BLAS)
  jetpde_external_target(blas BLAS LINK ${JETPDE_BLAS_LIBRARIES} INCLUDE ${JETPDE_BLAS_INCLUDE_DIRS})
endif()

# --- oneDNN: the fastest f32 GEMM measured on PINN shapes here (bench/gemm/README.md) ------------
set(JETPDE_HAVE_DNNL FALSE)
find_package(dnnl CONFIG QUIET)
if(dnnl_FOUND AND TARGET DNNL::dnnl)
  set(JETPDE_HAVE_DNNL TRUE)
endif()
jetpde_record_dependency(oneDNN ${JETPDE_HAVE_DNNL} VERSION "${dnnl_VERSION}" DETAIL "sgemm")
jetpde_record_dependency(BLAS ${JETPDE_HAVE_BLAS} VERSION "${JETPDE_BLAS_VERSION}"
  DETAIL "${JETPDE_BLAS_VENDOR}")

# --- MPI (before HDF5 and PETSc, which are built on it) --------------------------------------------
set(JETPDE_HAVE_MPI FALSE)
if(JETPDE_WITH_MPI)
  set(MPI_CXX_SKIP_MPICXX TRUE) # the C API only; the MPI-2 C++ bindings are deprecated
  find_package(MPI QUIET COMPONENTS C CXX)
  if(MPI_C_FOUND AND MPI_CXX_FOUND)
    set(JETPDE_HAVE_MPI TRUE)
    jetpde_external_target(mpi MPI LINK MPI::MPI_CXX MPI::MPI_C)
  endif()
endif()
set(_detail "")
if(JETPDE_HAVE_MPI)
  # The implementation's version, from mpi.h (FindMPI would need a test run for it).
  find_file(_mpi_h mpi.h PATHS ${MPI_C_HEADER_DIR} ${MPI_C_INCLUDE_DIRS} NO_DEFAULT_PATH
            NO_CACHE)
  if(_mpi_h)
    file(STRINGS "${_mpi_h}" _lines REGEX "^#define (OMPI_(MAJOR|MINOR|RELEASE)_VERSION|MPICH_VERSION) ")
    if(_lines MATCHES "OMPI_MAJOR_VERSION ([0-9]+).*OMPI_MINOR_VERSION ([0-9]+).*OMPI_RELEASE_VERSION ([0-9]+)")
      set(_detail "Open MPI ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
    elseif(_lines MATCHES "MPICH_VERSION \"([^\"]+)\"")
      set(_detail "MPICH ${CMAKE_MATCH_1}")
    endif()
  endif()
  unset(_mpi_h)
  unset(_lines)
endif()
jetpde_record_dependency(MPI ${JETPDE_HAVE_MPI} VERSION "${MPI_CXX_VERSION}" DETAIL "${_detail}"
  OPTION JETPDE_WITH_MPI)

# Parallel HDF5 and PETSc are built on MPI and include mpi.h: they link MPI::MPI_C even when
# JETPDE_WITH_MPI=OFF (which keeps jetpde's own code serial).
macro(_jetpde_find_mpi_c)
  if(NOT TARGET MPI::MPI_C)
    find_package(MPI QUIET COMPONENTS C)
  endif()
endmacro()

# --- HDF5: the Open MPI flavour, the one PETSc links (docs/design.md section 13) ------------------------
set(JETPDE_HAVE_HDF5 FALSE)
if(JETPDE_WITH_HDF5)
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 QUIET COMPONENTS C)
  if(HDF5_FOUND)
    set(JETPDE_HAVE_HDF5 TRUE)
    set(_link HDF5::HDF5)
    if(HDF5_IS_PARALLEL)
      _jetpde_find_mpi_c()
      if(TARGET MPI::MPI_C)
        list(APPEND _link MPI::MPI_C) # parallel hdf5.h includes mpi.h
      endif()
    endif()
    jetpde_external_target(hdf5 HDF5 LINK ${_link})
    if(HDF5_IS_PARALLEL)
      target_compile_definitions(jetpde_ext_hdf5 INTERFACE JETPDE_HDF5_IS_PARALLEL=1)
    endif()
  endif()
endif()
set(_detail "")
if(JETPDE_HAVE_HDF5)
  if(HDF5_IS_PARALLEL)
    set(_detail "parallel")
  else()
    set(_detail "serial")
  endif()
  foreach(_lib IN LISTS HDF5_C_LIBRARIES)
    if(_lib MATCHES "/libhdf5[^/]*\\.(so|a)$")
      get_filename_component(_dir "${_lib}" DIRECTORY)
      set(_detail "${_detail}, ${_dir}")
      break()
    endif()
  endforeach()
endif()
jetpde_record_dependency(HDF5 ${JETPDE_HAVE_HDF5} VERSION "${HDF5_VERSION}" DETAIL "${_detail}"
  OPTION JETPDE_WITH_HDF5)

# --- VTK: the XML writers for .vti/.vtu/.pvd; IOGeometry (optional): STL files for geometry/ -------
set(JETPDE_HAVE_VTK FALSE)
set(JETPDE_HAVE_VTK_STL FALSE)
set(_detail "CommonCore CommonDataModel IOXML")
if(JETPDE_WITH_VTK)
  find_package(VTK QUIET COMPONENTS CommonCore CommonDataModel IOXML OPTIONAL_COMPONENTS IOGeometry)
  if(VTK_FOUND)
    set(JETPDE_HAVE_VTK TRUE)
    jetpde_external_target(vtk VTK LINK VTK::CommonCore VTK::CommonDataModel VTK::IOXML)
    if(TARGET VTK::IOGeometry)
      set(JETPDE_HAVE_VTK_STL TRUE)
      jetpde_external_target(vtk_stl VTK_STL LINK VTK::CommonCore VTK::CommonDataModel
                             VTK::IOGeometry)
      set(_detail "${_detail} IOGeometry")
    endif()
  endif()
endif()
jetpde_record_dependency(VTK ${JETPDE_HAVE_VTK} VERSION "${VTK_VERSION}" DETAIL "${_detail}"
  OPTION JETPDE_WITH_VTK)

# --- PETSc, through pkg-config (Debian keeps PETSc.pc outside the default search path) ------------
set(JETPDE_HAVE_PETSC FALSE)
if(JETPDE_WITH_PETSC)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    set(_petsc_pc_dirs)
    set(_candidates /usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/lib/pkgconfig
                    /usr/lib/petsc/lib/pkgconfig)
    if(DEFINED ENV{PETSC_DIR})
      list(PREPEND _candidates "$ENV{PETSC_DIR}/lib/pkgconfig")
    endif()
    foreach(_dir IN LISTS _candidates)
      if(IS_DIRECTORY "${_dir}")
        list(APPEND _petsc_pc_dirs "${_dir}")
      endif()
    endforeach()
    if(_petsc_pc_dirs)
      # Searched after the user's own PKG_CONFIG_PATH.
      string(REPLACE ";" ":" _petsc_pc_dirs "${_petsc_pc_dirs}")
      if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
        set(ENV{PKG_CONFIG_PATH} "$ENV{PKG_CONFIG_PATH}:${_petsc_pc_dirs}")
      else()
        set(ENV{PKG_CONFIG_PATH} "${_petsc_pc_dirs}")
      endif()
    endif()
    pkg_check_modules(PETSC QUIET IMPORTED_TARGET PETSc)
    if(PETSC_FOUND)
      set(JETPDE_HAVE_PETSC TRUE)
      # Debian's PETSc.pc carries its own hardening flags (-D_FORTIFY_SOURCE=2, which warns in
      # unoptimized builds, and -Wdate-time): keep only what PETSc itself needs.
      get_target_property(_opts PkgConfig::PETSC INTERFACE_COMPILE_OPTIONS)
      if(_opts)
        list(FILTER _opts EXCLUDE REGEX "^(-D_FORTIFY_SOURCE=.*|-Wdate-time)$")
        set_target_properties(PkgConfig::PETSC PROPERTIES INTERFACE_COMPILE_OPTIONS "${_opts}")
      endif()
      set(_link PkgConfig::PETSC)
      _jetpde_find_mpi_c()
      if(TARGET MPI::MPI_C)
        list(APPEND _link MPI::MPI_C) # petscsys.h includes mpi.h; PETSc.pc does not say where
      endif()
      jetpde_external_target(petsc PETSC LINK ${_link})
    endif()
  endif()
endif()
jetpde_record_dependency(PETSc ${JETPDE_HAVE_PETSC} VERSION "${PETSC_VERSION}"
  OPTION JETPDE_WITH_PETSC)
if(JETPDE_HAVE_PETSC AND JETPDE_HAVE_HDF5 AND NOT HDF5_IS_PARALLEL)
  message(WARNING "jetpde: found a serial HDF5 (${HDF5_C_LIBRARIES}) but PETSc links the Open MPI "
                  "flavour; two HDF5 libraries in one process clash. Install libhdf5-openmpi-dev.")
endif()

# --- CUDA toolkit: host libraries only (kernels are compiled at run time by NVRTC) -----------------
set(JETPDE_HAVE_CUDA FALSE)
if(JETPDE_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas AND TARGET CUDA::nvrtc)
    set(JETPDE_HAVE_CUDA TRUE)
    jetpde_external_target(cuda CUDA LINK CUDA::cudart CUDA::cublas CUDA::nvrtc)
  endif()
endif()
jetpde_record_dependency(CUDAToolkit ${JETPDE_HAVE_CUDA} VERSION "${CUDAToolkit_VERSION}"
  DETAIL "cudart cublas nvrtc" OPTION JETPDE_WITH_CUDA)

# --- yaml-cpp (config files) -----------------------------------------------------------------------
set(JETPDE_HAVE_YAML_CPP FALSE)
find_package(yaml-cpp QUIET)
if(yaml-cpp_FOUND)
  if(TARGET yaml-cpp::yaml-cpp) # 0.8 and later
    set(_link yaml-cpp::yaml-cpp)
  elseif(TARGET yaml-cpp)       # 0.7 (Debian 12)
    set(_link yaml-cpp)
  else()
    set(_link ${YAML_CPP_LIBRARIES})
  endif()
  set(JETPDE_HAVE_YAML_CPP TRUE)
  jetpde_external_target(yaml_cpp YAML_CPP LINK ${_link})
endif()
jetpde_record_dependency(yaml-cpp ${JETPDE_HAVE_YAML_CPP} VERSION "${yaml-cpp_VERSION}")

# --- matio (.mat data files: v4, v5, and v7.3 through its own serial HDF5) -------------------------
# Only matio.h and libmatio: matio.pc's Cflags add the serial HDF5's include folder, which would
# shadow the Open MPI hdf5.h that io/ compiles against. libmatio links its HDF5 itself; the two
# HDF5 libraries' symbols are versioned apart (io/mat.cpp).
set(JETPDE_HAVE_MATIO FALSE)
if(JETPDE_WITH_MATIO)
  find_path(JETPDE_MATIO_INCLUDE_DIR matio.h)
  find_library(JETPDE_MATIO_LIBRARY matio)
  if(JETPDE_MATIO_INCLUDE_DIR AND JETPDE_MATIO_LIBRARY)
    set(JETPDE_HAVE_MATIO TRUE)
    jetpde_external_target(matio MATIO LINK ${JETPDE_MATIO_LIBRARY}
      INCLUDE ${JETPDE_MATIO_INCLUDE_DIR})
    file(STRINGS "${JETPDE_MATIO_INCLUDE_DIR}/matio_pubconf.h" _lines
         REGEX "^#define MATIO_VERSION_STR ")
    string(REGEX REPLACE ".*\"(.*)\".*" "\\1" _matio_version "${_lines}")
  endif()
endif()
jetpde_record_dependency(matio ${JETPDE_HAVE_MATIO} VERSION "${_matio_version}"
  DETAIL ".mat files" OPTION JETPDE_WITH_MATIO)

# --- libzip (.npz data files: NumPy's zip of .npy arrays, stored or deflated) ---------------------
set(JETPDE_HAVE_LIBZIP FALSE)
if(JETPDE_WITH_LIBZIP)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)
  endif()
  if(LIBZIP_FOUND)
    set(JETPDE_HAVE_LIBZIP TRUE)
    jetpde_external_target(libzip LIBZIP LINK PkgConfig::LIBZIP)
  endif()
endif()
jetpde_record_dependency(libzip ${JETPDE_HAVE_LIBZIP} VERSION "${LIBZIP_VERSION}"
  DETAIL ".npz files" OPTION JETPDE_WITH_LIBZIP)

# --- nlohmann/json (summary.json) and CLI11 (the jetpde command's options) -------------------------
set(JETPDE_HAVE_JSON FALSE)
find_package(nlohmann_json 3 QUIET)
if(nlohmann_json_FOUND)
  set(JETPDE_HAVE_JSON TRUE)
  jetpde_external_target(json JSON LINK nlohmann_json::nlohmann_json)
endif()
jetpde_record_dependency(nlohmann_json ${JETPDE_HAVE_JSON} VERSION "${nlohmann_json_VERSION}")
set(JETPDE_HAVE_CLI11 FALSE)
find_package(CLI11 QUIET)
if(CLI11_FOUND)
  set(JETPDE_HAVE_CLI11 TRUE)
  jetpde_external_target(cli11 CLI11 LINK CLI11::CLI11)
endif()
jetpde_record_dependency(CLI11 ${JETPDE_HAVE_CLI11} VERSION "${CLI11_VERSION}")

# --- GoogleTest (required when the tests are built) -------------------------------------------------
set(JETPDE_HAVE_GTEST FALSE)
if(JETPDE_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    message(FATAL_ERROR "jetpde: JETPDE_BUILD_TESTS is ON but GoogleTest was not found. "
                        "Run scripts/bootstrap.sh, or configure with -DJETPDE_BUILD_TESTS=OFF.")
  endif()
  set(JETPDE_HAVE_GTEST TRUE)
  include(GoogleTest)
endif()
jetpde_record_dependency(GTest ${JETPDE_HAVE_GTEST} VERSION "${GTest_VERSION}"
  OPTION JETPDE_BUILD_TESTS)

# --- pybind11 and Python: the python3 on PATH, with pybind11 from its site-packages -----------------
set(JETPDE_HAVE_PYBIND11 FALSE)
if(JETPDE_WITH_PYTHON)
  if(NOT Python_EXECUTABLE)
    # Resolve launchers (pyenv shims) to the interpreter itself, so that FindPython, pybind11 and the
    # pytest run all use one Python.
    find_program(_python3 python3)
    if(_python3)
      execute_process(COMMAND ${_python3} -c "import sys; print(sys.executable)"
                      OUTPUT_VARIABLE _exe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_exe)
        set(Python_EXECUTABLE "${_exe}" CACHE FILEPATH "Python interpreter for the bindings")
      endif()
    endif()
    unset(_python3 CACHE)
  endif()
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    if(NOT pybind11_DIR)
      execute_process(COMMAND ${Python_EXECUTABLE} -m pybind11 --cmakedir
                      OUTPUT_VARIABLE _pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    set(PYBIND11_FINDPYTHON ON) # reuse the Python found above
    find_package(pybind11 CONFIG QUIET HINTS ${_pybind11_dir})
    if(pybind11_FOUND)
      set(JETPDE_HAVE_PYBIND11 TRUE)
    endif()
  endif()
endif()
set(_detail "")
if(Python_FOUND)
  set(_detail "Python ${Python_VERSION}, ${Python_EXECUTABLE}")
endif()
jetpde_record_dependency(pybind11 ${JETPDE_HAVE_PYBIND11} VERSION "${pybind11_VERSION}"
  DETAIL "${_detail}" OPTION JETPDE_WITH_PYTHON)

unset(_detail)
unset(_lines)
unset(_matio_version)
unset(_link)
unset(_opts)

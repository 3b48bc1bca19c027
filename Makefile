# Entry points: make build | run | test | bench | bench-recipes | fuzz | format | clean
# Each first installs what is missing (scripts/bootstrap.sh), configures BUILD_DIR once with CMake
# and Ninja, and builds with one job per core. Warnings in the project's code are errors
# (WERROR=OFF to build anyway).
#
#   make test BUILD_DIR=build-debug BUILD_TYPE=Debug
#   make test FUZZ_SECONDS=0 ASAN=0     (without the fuzzers and the ASan/UBSan unit tests)
#   make fuzz FUZZ_SECONDS=3600         make format
#   make run RUN_ARGS="..."   make bench BENCH_ARGS="..."   make build CMAKE_ARGS="-DJETPDE_WITH_CUDA=OFF"

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
WERROR     ?= ON
ASAN       ?= 1
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PYTHON     ?= python3
RUN_ARGS   ?=
BENCH_ARGS ?=
# Seconds per fuzzer: FUZZ_SECONDS, else 60 in `make test` and 600 in `make fuzz`; 0 skips them.
# `make test` fuzzes from the fixed seed FUZZ_SEED=1 (the same inputs every run), `make fuzz` from a
# random one.
FUZZ_SECONDS ?=

.PHONY: all bootstrap configure build run test test-ctest test-asan test-fuzz bench bench-recipes fuzz \
        fuzz-build format format-check clean
.DEFAULT_GOAL := build
# The steps of `make test` run one after the other, in the order written.
.NOTPARALLEL:

all: build

bootstrap:
	@bash scripts/bootstrap.sh

# Configures only a build folder that is not configured yet (later runs of cmake --build re-run
# CMake by themselves when a CMakeLists.txt changes), or one configured with another WERROR.
configure: bootstrap
	@if [ ! -f $(BUILD_DIR)/CMakeCache.txt ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DCMAKE_COMPILE_WARNING_AS_ERROR:BOOL=$(WERROR) $(CMAKE_ARGS); \
	elif ! grep -qx 'CMAKE_COMPILE_WARNING_AS_ERROR:BOOL=$(WERROR)' $(BUILD_DIR)/CMakeCache.txt; then \
	  cmake $(BUILD_DIR) -DCMAKE_COMPILE_WARNING_AS_ERROR:BOOL=$(WERROR); \
	fi

build: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

# The default example: Burgers' equation trained from examples/burgers.yaml, its error against the
# exact solution, VTK and HDF5 in runs/burgers/ (RUN_ARGS: more jetpde run options, e.g.
# RUN_ARGS="--max-steps 100").
run: build
	$(BUILD_DIR)/apps/jetpde run examples/burgers.yaml $(RUN_ARGS)

# What CI runs (.ci/run), in this order: the format check; the build with warnings as errors and
# every test (CTest, then pytest); the unit tests again under ASan and UBSan (ASAN=0 skips); each
# fuzzer for FUZZ_SECONDS (default 60; 0 skips).
test: format-check test-ctest test-asan test-fuzz

# GoogleTest tests through CTest, then the Python tests when there are any (pytest exits 5 when it
# collects none). CTest runs JOBS tests at once, each on one OpenMP thread: tests that each spread
# over every core would oversubscribe them (the training tests ran 5-40x slower that way).
# The tests compile into a cache of their own under the build folder (JETPDE_CACHE_DIR where set),
# not the user's ~/.cache/jetpde: tiles measured beside other tests stay out of the user's runs.
test_cache = JETPDE_CACHE_DIR=$${JETPDE_CACHE_DIR:-$(abspath $(1))/test-cache}
test-ctest: build
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(call test_cache,$(BUILD_DIR)) \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error --parallel $(JOBS)
	@if [ -d python/tests ]; then \
	  PYTHONPATH="$(abspath $(BUILD_DIR))/python$${PYTHONPATH:+:$$PYTHONPATH}" \
	  $(call test_cache,$(BUILD_DIR)) $(PYTHON) -m pytest -q python/tests; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest: no tests collected in python/tests"; rc=0; fi; \
	  exit $$rc; \
	fi

# The tests labelled `unit` (tests/CMakeLists.txt) built with the asan preset (GCC,
# AddressSanitizer + UndefinedBehaviorSanitizer) in build-asan/, and run with its test preset.
test-asan: bootstrap
ifneq ($(ASAN),0)
	@test -f build-asan/CMakeCache.txt || cmake --preset asan $(CMAKE_ARGS)
	cmake --build --preset asan --parallel $(JOBS)
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(call test_cache,build-asan) \
	  ctest --preset asan --parallel $(JOBS)
else
	@echo "test-asan: skipped (ASAN=0)"
endif

# The libFuzzer targets (tests/fuzz/README.md), built with the fuzz preset (clang) in build-fuzz/.
fuzz-build: bootstrap
	@test -f build-fuzz/CMakeCache.txt || cmake --preset fuzz $(CMAKE_ARGS)
	cmake --build --preset fuzz --parallel $(JOBS)

test-fuzz:
	@if [ "$(or $(FUZZ_SECONDS),60)" = 0 ]; then echo "test-fuzz: skipped (FUZZ_SECONDS=0)"; \
	else $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) \
	  FUZZ_SEED=$${FUZZ_SEED:-1}; fi

fuzz: fuzz-build
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600) FUZZ_SEED=$${FUZZ_SEED:-0} bash tests/fuzz/run.sh build-fuzz

# clang-format: `make format` rewrites the tree's C++ files, `make format-check` lists the ones
# that differ (golden files excluded: tests compare them byte for byte).
format: bootstrap
	@bash scripts/format.sh

format-check: bootstrap
	@bash scripts/format.sh --check

# The benchmarks and their peers in one run (bench/run.sh; BENCH_WORKLOADS, BENCH_REPS,
# BENCH_THREADS, BENCH_PEERS=0, BENCH_ARGS; BENCH_SCALING=0 skips the MPI scaling run).
bench: build
	BUILD_DIR="$(BUILD_DIR)" bash bench/run.sh

# The default recipe against the hand-tuned examples (bench/recipes/recipes.py: seven problems,
# seeds 0-2, at most 15 minutes a run; RECIPE_ARGS, e.g. "--problems heat wave --seeds 0").
# Hours on 2 cores, so not part of `make bench`.
RECIPE_ARGS ?=
bench-recipes: build
	$(PYTHON) bench/recipes/recipes.py --build $(BUILD_DIR) $(RECIPE_ARGS)
clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz

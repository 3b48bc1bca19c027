# Entry points: make build | run | test | bench | clean
# Each first installs what is missing (scripts/bootstrap.sh), configures BUILD_DIR once with CMake
# and Ninja, and builds with one job per core.
#
#   make test BUILD_DIR=build-debug BUILD_TYPE=Debug
#   make run RUN_ARGS="..."   make bench BENCH_ARGS="..."   make build CMAKE_ARGS="-DJETPDE_WITH_CUDA=OFF"

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PYTHON     ?= python3
RUN_ARGS   ?=
BENCH_ARGS ?=

.PHONY: all bootstrap configure build run test bench clean
.DEFAULT_GOAL := build

all: build

bootstrap:
	@bash scripts/bootstrap.sh

# Configures only a build folder that is not configured yet; later runs of cmake --build re-run
# CMake by themselves when a CMakeLists.txt changes.
configure: bootstrap
	@test -f $(BUILD_DIR)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

# The default example: Burgers' equation trained from examples/burgers.yaml, its error against the
# exact solution, VTK and HDF5 in runs/burgers/ (RUN_ARGS: more jetpde run options, e.g.
# RUN_ARGS="--max-steps 100").
run: build
	$(BUILD_DIR)/apps/jetpde run examples/burgers.yaml $(RUN_ARGS)

# GoogleTest tests through CTest, then the Python tests when there are any (pytest exits 5 when it
# collects none). CTest runs JOBS tests at once, each on one OpenMP thread: tests that each spread
# over every core would oversubscribe them (the training tests ran 5-40x slower that way).
test: build
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error --parallel $(JOBS)
	@if [ -d python/tests ]; then \
	  PYTHONPATH="$(abspath $(BUILD_DIR))/python$${PYTHONPATH:+:$$PYTHONPATH}" \
	    $(PYTHON) -m pytest -q python/tests; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest: no tests collected in python/tests"; rc=0; fi; \
	  exit $$rc; \
	fi

# The benchmarks and their peers in one run (bench/run.sh; BENCH_WORKLOADS, BENCH_REPS,
# BENCH_THREADS, BENCH_PEERS=0, BENCH_ARGS).
bench: build
	BUILD_DIR="$(BUILD_DIR)" bash bench/run.sh

clean:
	rm -rf $(BUILD_DIR)

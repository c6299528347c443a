# The two commands a user needs: `make demo` and `make test`. Both install any
# missing Debian packages first (scripts/install-deps.sh), then configure and
# build with CMake.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build test demo bench test-asan fuzz-build fuzz fuzz-long format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The demo builds only what it runs, so a fresh machine gets there quickly.
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mlp_fashion_mnist lightmetal_cli -- --no-print-directory
	@scripts/demo.sh $(BUILD)

bench: build
	@scripts/run-bench.sh $(BUILD)

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
ASAN_BUILD ?= build-asan

test-asan:
	@$(MAKE) --no-print-directory test BUILD=$(ASAN_BUILD) BUILD_TYPE=Debug \
	    CMAKE_ARGS="-DLM_SANITIZE=ON -DLM_BUILD_BENCH=OFF $(CMAKE_ARGS)"

# Bounded libFuzzer sessions (clang) over the binary format, replay on the
# simulator and the interpreter: a fixed number of inputs each, from the
# committed corpora, with every library instrumented (LM_FUZZ_INSTRUMENT).
FUZZ_BUILD ?= build-fuzz

fuzz-build: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLM_BUILD_BENCH=OFF \
	    -DLM_FUZZ_INSTRUMENT=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers -- --no-print-directory

fuzz: fuzz-build
	@ctest --test-dir $(FUZZ_BUILD) -L fuzz --output-on-failure

# Long sessions: every fuzz target for FUZZ_SECONDS each, in FUZZ_JOBS
# processes; finds and crashes under $(FUZZ_BUILD)/fuzz-long, then a summary
# (see scripts/fuzz-long.sh).
FUZZ_SECONDS ?= 600
FUZZ_JOBS    ?= 1

fuzz-long: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz-long.sh $(FUZZ_BUILD)

format:
	@git ls-files '*.c' '*.h' | xargs clang-format -i

clean:
	@rm -rf build build-asan build-fuzz

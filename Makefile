# The two commands a user needs: `make demo` and `make test`. Both install any
# missing Debian packages first (scripts/install-deps.sh), then configure and
# build with CMake.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# Where `make install` puts the library. It is passed when configuring: the
# installed library and tool find their kernel SDK from wherever they are, but
# programs linked with the static library look under the configured prefix.
PREFIX     ?=

.PHONY: all deps configure build test onnx-conformance demo bench test-asan fuzz-build fuzz fuzz-long format \
        format-check install check-aarch64 clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    $(if $(PREFIX),-DCMAKE_INSTALL_PREFIX=$(PREFIX)) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# Everything but the ONNX conformance suite (label onnx), which has its own target.
test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE '^onnx$$'

# ONNX's backend tests (Debian's libonnx-testdata) compiled with `lightmetal
# compile` and replayed with `lightmetal run`: writes one row per test to
# $(BUILD)/onnx-conformance.tsv, regenerates docs/onnx-conformance.md, and
# fails when a test listed in tests/onnx/expected_pass.txt no longer passes;
# then the same tests with every tensor input given with --const, so each op's
# constant folding on the host is checked against the same expected outputs,
# and compiled with --trace, so each op runs inside a metal trace.
# ONNX_ARGS adds options, e.g. --update-expected (record the passing tests),
# --filter TEXT, -v (see tests/onnx/onnx_conformance.c).
ONNX_JOBS ?= 2
ONNX_ARGS ?=

onnx-conformance: configure
	@cmake --build $(BUILD) -j $(JOBS) --target onnx_conformance -- --no-print-directory
	@$(BUILD)/tests/onnx_conformance --jobs $(ONNX_JOBS) --expect-file tests/onnx/expected_pass.txt \
	    --tsv $(BUILD)/onnx-conformance.tsv --md docs/onnx-conformance.md $(ONNX_ARGS)
	@echo "the same tests with every input a constant (the compiler's folding):"
	@$(BUILD)/tests/onnx_conformance --jobs $(ONNX_JOBS) --expect-file tests/onnx/expected_pass.txt \
	    --const-inputs --tsv $(BUILD)/onnx-conformance-const.tsv
	@echo "the same tests compiled as one metal trace each (--trace):"
	@$(BUILD)/tests/onnx_conformance --jobs $(ONNX_JOBS) --expect-file tests/onnx/expected_pass.txt \
	    --trace --tsv $(BUILD)/onnx-conformance-trace.tsv

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

# Headers, kernel SDK, libraries, pkg-config files, CMake package and CLI
# under PREFIX (default /usr/local); DESTDIR stages them elsewhere.
install: build
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# The static replayer cross-built for aarch64 and, with qemu-user, a captured
# workload replayed on it, compared byte for byte with the x86-64 run.
check-aarch64: build
	@scripts/check-aarch64.sh $(BUILD)

format:
	@git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | xargs clang-format -i

# Fails when `make format` would change anything.
format-check: deps
	@git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

clean:
	@rm -rf build build-asan build-fuzz build-release

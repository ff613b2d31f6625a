# Entry points; each installs what it needs first (scripts/install-deps.sh is idempotent).
BUILD ?= build
FLOE := $(BUILD)/src/floe/cli/floe
JOBS ?= 2
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere (CI) reuses objects
# compiled in another checkout of the same sources.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: deps deps-run build build-floe run test sanitize sanitize-asan sanitize-tsan bench experiments format

deps-run:
	bash scripts/install-deps.sh run

deps:
	bash scripts/install-deps.sh test

# The floe binary alone (what `make run` needs). A tree configured with tests keeps them.
build-floe: deps-run
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target floe

# Everything: floe, the unit-test binaries and the bench drivers.
build: deps
	$(CONFIGURE) -DFLOE_BUILD_TESTS=ON
	cmake --build $(BUILD) -j $(JOBS)

# The main job on embedded defaults.
run: build-floe
	$(FLOE) demo

# Every test: unit tests, CLI and interop tests (independent readers).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Every unit and multi-process test under ASan+UBSan, then the runtime and process tests under
# TSan; separate build trees (build-asan, build-tsan). A sanitizer report fails the test.
SANITIZE_CONFIGURE = cmake -S . -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOE_BUILD_TESTS=ON
sanitize: sanitize-asan sanitize-tsan

sanitize-asan: deps
	$(SANITIZE_CONFIGURE) -B $(BUILD)-asan -DFLOE_SANITIZE=address,undefined
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

sanitize-tsan: deps
	$(SANITIZE_CONFIGURE) -B $(BUILD)-tsan -DFLOE_SANITIZE=thread
	cmake --build $(BUILD)-tsan -j $(JOBS) --target runtime_test process_test floe
	cd $(BUILD)-tsan && export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 && \
	  src/floe/runtime/runtime_test && src/floe/runtime/process/process_test && \
	  ctest --output-on-failure -R '^cli_job_processes$$'

bench: build
	bash bench/append_bench.sh

# The reference study's experiments against floe, then experiments/REPORT.md (experiments/README.md);
# QUICK=1 runs each at its CI size.
experiments: build
	bash experiments/run.sh $(if $(QUICK),--quick)

format:
	find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

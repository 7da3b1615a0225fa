# Thin wrapper over CMake. `make run` and `make test` do all set-up on a fresh Debian 12 machine.
BUILD   ?= build
JOBS    ?= 2
HOME_DIR ?= $(CURDIR)/demo

.PHONY: all build test test-system test-e2e test-sanitize fuzz fuzz-build run bench deps clean format format-check config deb

all: build

deps:
	@scripts/bootstrap

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

test: build fuzz-build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600
	cd $(BUILD)-fuzz && ctest --output-on-failure -j$(JOBS) -L fuzz

# libFuzzer targets, built with clang (fuzz/); `make fuzz` searches longer (FUZZ_SECONDS).
FUZZ_SECONDS ?= 600
fuzz-build: deps
	CXX=clang++-14 cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLUSTERWS_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS)

fuzz: fuzz-build
	cmake -S . -B $(BUILD)-fuzz -DCLUSTERWS_FUZZ_SECONDS=$(FUZZ_SECONDS)
	cd $(BUILD)-fuzz && ctest --output-on-failure -j$(JOBS) -L fuzz
	cmake -S . -B $(BUILD)-fuzz -DCLUSTERWS_FUZZ_SECONDS=20

# The package on a minimal Debian 12 booted under systemd-nspawn (docs/operations.md,
# "Tested under systemd"); the minimal system is cached in $(TEST_SYSTEM_CACHE).
TEST_SYSTEM_CACHE ?= /var/cache/clusterws-test
test-system: deb
	@start=$$(date +%s); CLUSTERWS_TEST_CACHE=$(TEST_SYSTEM_CACHE) timeout -k 30 1800 \
	  tests/system/system_test.sh $(BUILD); rc=$$?; \
	  echo "make test-system: $$(( $$(date +%s) - start )) s wall time (exit $$rc)"; exit $$rc

# A QEMU VM network-boots from clusterwsd and dnsmasq in a network namespace (docs/
# provisioning.md, "End-to-end test"): a few minutes under TCG, so its own CI step.
test-e2e: build
	@start=$$(date +%s); timeout -k 30 900 tests/e2e/pxe_boot_test.sh $(BUILD); rc=$$?; \
	  echo "make test-e2e: pxe_boot_test $$(( $$(date +%s) - start )) s (exit $$rc)"; \
	  c=$$(date +%s); timeout -k 30 300 tests/e2e/console_vm_test.sh $(BUILD); crc=$$?; \
	  echo "make test-e2e: console_vm_test $$(( $$(date +%s) - c )) s (exit $$crc)"; \
	  echo "make test-e2e: $$(( $$(date +%s) - start )) s wall time"; \
	  [ $$rc -eq 0 ] && [ $$crc -eq 0 ]

# The whole suite built with AddressSanitizer + UndefinedBehaviorSanitizer (not the browser
# tests: chromium's time under a sanitized daemon says nothing more).
test-sanitize: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DCLUSTERWS_SANITIZE=ON
	cmake --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/ubsan.supp \
	  ctest --output-on-failure -j$(JOBS) --timeout 900 -LE browser

# The Debian package (docs/operations.md): build/packages/clusterws_<version>_<arch>.deb
deb: build
	cmake --build $(BUILD) --target deb

run: build
	@scripts/run-demo $(BUILD) $(HOME_DIR)

bench: build
	@scripts/bootstrap bench
	BUILD=$(BUILD) bench/run.sh

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.ipp')

# fails on any file clang-format would change (CI runs it first)
format-check: deps
	clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.hpp' '*.ipp')

clean:
	rm -rf $(BUILD)

# config/clusterws.conf as `clusterctl init` writes it from the settings schema (api/settings.cpp)
config: build
	d=$$(mktemp -d) && $(BUILD)/bin/clusterctl init --home $$d/h --admin-password x >/dev/null \
	  && cp $$d/h/clusterws.conf config/clusterws.conf; rc=$$?; rm -rf $$d; exit $$rc

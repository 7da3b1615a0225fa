# Thin wrapper over CMake. `make run` and `make test` do all set-up on a fresh Debian 12 machine.
BUILD   ?= build
JOBS    ?= 2
HOME_DIR ?= $(CURDIR)/demo

.PHONY: all build test run bench deps clean format

all: build

deps:
	@scripts/bootstrap

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600

run: build
	@scripts/run-demo $(BUILD) $(HOME_DIR)

bench: build
	@scripts/bootstrap bench
	BUILD=$(BUILD) bench/run.sh

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD)

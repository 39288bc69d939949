# Thin wrapper over CMake presets. `make run` and `make test` are the only set-up commands.
.PHONY: all run test build setup setup-python bench clean

all: build

JOBS ?= $(shell nproc)
EXAMPLE := resources/examples/llama3_8b_2l_tiny_train.log.gz

setup:
	@scripts/setup.sh

setup-python: setup
	@scripts/setup.sh --python

# The build also installs the Python runtime (`import lathe`) into .venv, editable, with the native
# module the build writes into runtime/python/lathe/.
build: setup-python
	cmake --preset default
	cmake --build --preset default -j $(JOBS)
	.venv/bin/pip install -q --no-deps --no-build-isolation -e runtime/python

STUDIO := build/default/app/studio/lathe-studio
SCREENSHOT := build/lathe-studio-example.png

# With a display the studio opens on the bundled example; without one it renders the same window
# headless to a PNG and says where.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  $(STUDIO) $(EXAMPLE); \
	else \
	  $(STUDIO) --screenshot $(SCREENSHOT) $(EXAMPLE) > /dev/null && \
	  echo "no display: rendered lathe-studio on $(EXAMPLE) to $(SCREENSHOT)"; \
	fi

test: build
	ctest --preset default
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	ctest --preset fuzz

bench: setup-python
	cmake --preset release
	cmake --build --preset release -j $(JOBS)
	bench/load/run.sh
	bench/plan/run.sh

clean:
	rm -rf build runtime/python/lathe/_native*.so

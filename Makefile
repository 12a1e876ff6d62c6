# For OpenBench, which runs `make -j EXE=NAME` here and then `./NAME bench`. Everywhere else,
# `cargo build --release -p squall` is the build; this only copies its binary to $(EXE).

EXE ?= squall
CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)

ifeq ($(OS),Windows_NT)
    SUFFIX := .exe
else
    SUFFIX :=
endif

# OpenBench also passes CC=cargo (its name for the engine's compiler): keep it out of cargo's
# environment, where a build script compiling C would take it for the C compiler.
unexport CC CXX

.PHONY: all clean

all:
	$(CARGO) build --release -p squall --bin squall
	cp $(TARGET_DIR)/release/squall$(SUFFIX) $(EXE)$(SUFFIX)

# Only squall's release artifacts: target/ also holds the lab's build cache.
clean:
	$(CARGO) clean --release -p squall
	rm -f $(EXE)$(SUFFIX)

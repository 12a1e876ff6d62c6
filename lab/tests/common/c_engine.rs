//! A small C engine built by make through a `lab.toml` (format "openbench"), for tests of what
//! the lab does with engine definitions, wrappers and binaries valgrind cannot run. Include it
//! with `#[path = "common/c_engine.rs"] mod c_engine;` beside `mod common;`.

use std::process::Command;

use super::common::FakeRepo;

/// Nodes are deterministic (`depth` × 3000); each node costs `WORK` rounds of an LCG. Under
/// valgrind (its preload library in `LD_PRELOAD`) with `-DAVX512_UNDER_VALGRIND`, the bench
/// first executes `vpaddd zmm0, zmm0, zmm0`, an instruction valgrind does not implement, as a
/// binary built with `-march=native` on an AVX-512 machine would; natively it never does.
pub const ENGINE_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef WORK
#define WORK 300
#endif

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long search_node(unsigned long seed) {
    unsigned long x = seed;
    for (int i = 0; i < WORK; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "bench") != 0) return 1;
#ifdef AVX512_UNDER_VALGRIND
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) __asm__ volatile(".byte 0x62,0xf1,0x7d,0x48,0xfe,0xc0");
#endif
    unsigned long depth = argc > 2 ? strtoul(argv[2], NULL, 10) : 4;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    unsigned long total = 0;
    for (unsigned long position = 1; position <= 3; position++) {
        unsigned long nodes = 1000 * depth;
        for (unsigned long node = 0; node < nodes; node++) sink += search_node(node ^ position);
        total += nodes;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    if (seconds <= 0) seconds = 1e-9;
    printf("Nodes searched: %lu\nNodes/second: %lu\n", total, (unsigned long)(total / seconds));
    return 0;
}
"#;

/// `CFLAGS` from the command line or the environment reach the compiler.
pub const MAKEFILE: &str = "EXE ?= tiny\nall:\n\t$(CC) $(CFLAGS) -O1 -g -o $(EXE) engine.c\n";

pub fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// `[engine]` of the C engine in `src/` with these build and bench commands.
pub fn lab_toml(build: &str, bench: &str) -> String {
    format!("[engine]\nname = \"tiny\"\nbuild-dir = \"src\"\nbuild = \"{build}\"\nbench = \"{bench}\"\n")
}

/// A repository whose HEAD has the C engine and a `lab.toml` with `build` and `bench`; `None`
/// (with the reason printed) when cc or make is missing.
pub fn c_engine_repo(build: &str, bench: &str) -> Option<FakeRepo> {
    if !have("cc") || !have("make") {
        eprintln!("skipped: cc and make are needed to build the C engine");
        return None;
    }
    let repo = FakeRepo::new();
    repo.write("src/engine.c", ENGINE_C);
    repo.write("src/Makefile", MAKEFILE);
    repo.write("lab.toml", &lab_toml(build, bench));
    repo.commit("a C engine with a lab.toml");
    Some(repo)
}

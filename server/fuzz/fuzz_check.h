// FUZZ_CHECK: the property checks of the fuzz targets. A failed check prints what broke and
// traps, so libFuzzer records the input as a crash like any sanitizer report.
#pragma once

#include <cstdio>

#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      __builtin_trap();                                                                     \
    }                                                                                       \
  } while (0)

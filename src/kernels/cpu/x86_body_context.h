// Everything the x86 kernel bodies (kernels/cpu/*_body.h) use from outside
// their own family, in one normal header. The bodies are not standalone:
// each is written once and compiled once per ISA level by being included
// inside a level's namespace, under that level's `#pragma GCC target`
// (dot_avx2.cpp, attn_avx512.cpp, ...). Headers cannot be included there
// (their declarations would land in the level's namespace, their inline
// functions be compiled for the level's ISA), so a file including a body
// includes this one first, at file scope before its target pragma, and each
// body checks with #error that it was (and that the bodies it builds on came
// before it), naming what is missing. tools/check_kernel_headers.cmake
// (ctest kernel_headers_standalone) proves both: every other kernels header
// compiles alone, every body alone stops at its own #error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "kernels/act_quads.h"
#include "kernels/attention.h"
#include "kernels/dot_kernels.h"
#include "kernels/row_kernels.h"
#include "tensor/fp16.h"
#include "tensor/kv_type.h"
#include "tensor/quant_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

// What every *_body.h tests for first.
#define TESSERA_X86_BODY_CONTEXT 1
#endif

// AVX2 activation quantization to Q8_0 / Q8_1 / Q8_K for the matmul: the same
// float operations as the scalar reference (tensor/quant.h quantize_row), so
// the bytes are identical, eight elements at a time. Only called after a
// CPUID check for AVX2.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"

namespace tessera::x86 {

// act_type is Q8_0 or Q8_1 (n a multiple of 32) or Q8_K (of 256).
void avx2_quantize_act(GgmlType act_type, const float* x, uint8_t* dst, int64_t n);

}  // namespace tessera::x86

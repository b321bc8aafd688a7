// Run-time selection of the row kernel table: AVX-512 at the VNNI level (it
// only needs avx512f, which that level implies), else AVX2.
#include "kernels/row_kernels.h"

#include "core/check.h"
#include "kernels/cpu/row_kernels_x86.h"

namespace tessera {

const RowKernels* find_row_kernels(SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    switch (level) {
        case SimdLevel::Avx512Amx:
        case SimdLevel::Avx512Vnni: return x86::avx512_row_kernels();
        case SimdLevel::Avx2: return x86::avx2_row_kernels();
        case SimdLevel::Scalar: return nullptr;
    }
    return nullptr;
}

}  // namespace tessera

// The weighted least-squares scale searches every quantizer that is not
// plain round-to-nearest shares (K-quants, IQ4, and the legacy formats when
// an importance matrix is given): see quant_impl.h.
#include <algorithm>
#include <cmath>

#include "tensor/quant_impl.h"

namespace tessera::quant_detail {
namespace {

// The inverse scales tried per sub-block: (nmax + kStepLo + k*kStep) / range
// for k = 0..kSteps; wider or finer grids changed the error by < 0.5%.
constexpr int kSteps = 20;
constexpr float kStepLo = -1.0f;
constexpr float kStep = 0.1f;

}  // namespace

AffineFit fit_affine(const float* x, const float* w, int n, int nmax) {
    float lo = 0.0f, hi = x[0];
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    if (!(hi > lo)) return AffineFit{0.0f, -lo};
    AffineFit best{(hi - lo) / static_cast<float>(nmax), -lo};
    double best_err = INFINITY;
    for (int k = 0; k <= kSteps; ++k) {
        const float iscale = (static_cast<float>(nmax) + kStepLo + kStep * static_cast<float>(k)) / (hi - lo);
        double sw = 0, sq = 0, sx = 0, sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            const double q = round_clamp(iscale * (x[i] - lo), 0, nmax);
            sw += w[i];
            sq += w[i] * q;
            sx += w[i] * x[i];
            sqq += w[i] * q * q;
            sqx += w[i] * q * x[i];
        }
        const double det = sw * sqq - sq * sq;
        if (!(det > 0)) continue;
        double a = (sw * sqx - sq * sx) / det;
        double b = (sqq * sx - sq * sqx) / det;  // x ~ a*q + b
        if (b > 0) {  // the format's minimum only subtracts
            b = 0;
            a = sqx / sqq;
        }
        if (!(a > 0)) continue;
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const int q = round_clamp(static_cast<float>((x[i] - b) / a), 0, nmax);
            const double e = a * q + b - x[i];
            err += w[i] * e * e;
        }
        if (err < best_err) {
            best_err = err;
            best = AffineFit{static_cast<float>(a), static_cast<float>(-b)};
        }
    }
    return best;
}

float fit_symmetric(const float* x, const float* w, int n, int nmax) {
    float extreme = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
    }
    if (extreme == 0.0f) return 0.0f;
    float best_scale = -extreme / static_cast<float>(nmax);
    double best_score = -1;
    for (int k = 0; k <= kSteps; ++k) {
        const float iscale = -(static_cast<float>(nmax) + kStepLo + kStep * static_cast<float>(k)) / extreme;
        double sqx = 0, sqq = 0;
        for (int i = 0; i < n; ++i) {
            const double q = round_clamp(iscale * x[i], -nmax, nmax - 1);
            sqx += w[i] * q * x[i];
            sqq += w[i] * q * q;
        }
        // For the least-squares scale sqx/sqq, the error falls as sqx^2/sqq grows.
        if (sqq > 0 && sqx * sqx / sqq > best_score) {
            best_score = sqx * sqx / sqq;
            best_scale = static_cast<float>(sqx / sqq);
        }
    }
    return best_scale;
}

int round_clamp(float v, int lo, int hi) {
    if (!(std::fabs(v) < 1e9f)) return lo;  // NaN, infinities: the lowest level
    return std::clamp(static_cast<int>(std::nearbyint(v)), lo, hi);
}

void element_weights(const float* x, int n, const float* importance, float* w) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float rms = static_cast<float>(std::sqrt(ss / n));
    for (int i = 0; i < n; ++i) w[i] = rms + std::fabs(x[i]);
    if (importance != nullptr) {
        for (int i = 0; i < n; ++i) w[i] *= importance[i];
    }
}

}  // namespace tessera::quant_detail

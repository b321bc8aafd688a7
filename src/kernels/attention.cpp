// Streaming-softmax attention, one block of keys at a time: scores for the
// block, then one rescale of the running sum. Query heads that share a KV
// head (GQA/MQA) read the same K/V rows.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>


namespace tessera {
namespace {

float dot(const float* q, const float* k, int n) {
    float sum = 0.0f;
    for (int d = 0; d < n; ++d) sum += q[d] * k[d];
    return sum;
}

void attend_kv_head(const AttentionShape& s, const PagedKv& kv, const float* q, int kv_head,
                    int64_t n_ctx, float* out) {
    const int hd = s.head_dim;
    float running_max = -std::numeric_limits<float>::infinity();
    float running_sum = 0.0f;
    std::fill(out, out + hd, 0.0f);
    float scores[256];
    for (int64_t start = 0; start < n_ctx; start += kv.block_size) {
        const int n = static_cast<int>(std::min<int64_t>(kv.block_size, n_ctx - start));
        const int64_t slot0 = static_cast<int64_t>(kv.block_table[start / kv.block_size]) * kv.block_size;
        float block_max = -std::numeric_limits<float>::infinity();
        for (int j = 0; j < n; ++j) {
            const float* k = kv.k_pool + (slot0 + j) * kv.kv_dim + kv_head * hd;
            scores[j] = dot(q, k, hd) * s.scale;
            block_max = std::max(block_max, scores[j]);
        }
        const float new_max = std::max(running_max, block_max);
        const float correction = std::exp(running_max - new_max);
        running_sum *= correction;
        for (int d = 0; d < hd; ++d) out[d] *= correction;
        for (int j = 0; j < n; ++j) {
            const float p = std::exp(scores[j] - new_max);
            running_sum += p;
            const float* v = kv.v_pool + (slot0 + j) * kv.kv_dim + kv_head * hd;
            for (int d = 0; d < hd; ++d) out[d] += p * v[d];
        }
        running_max = new_max;
    }
    const float inv = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
    for (int d = 0; d < hd; ++d) out[d] *= inv;
}

}  // namespace

void attend_head(const AttentionShape& s, const PagedKv& kv, const float* q, int head, int64_t n_ctx, float* out) {
    attend_kv_head(s, kv, q, head / (s.n_head / s.n_head_kv), n_ctx, out);
}

}  // namespace tessera

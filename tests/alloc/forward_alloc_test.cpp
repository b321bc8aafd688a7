// The forward pass keeps its activations in preallocated buffers: once a
// model has run a prompt chunk and a decode step, further decode steps and
// prompt chunks of that length allocate nothing on the heap, on any thread.
// (Buffers grow, never shrink, when a step needs more than any before: a
// longer chunk, or more attention work pieces.) Every operator new of this
// binary is counted: a binary of its own, so the unit tests keep the
// allocator's own new/delete checks under ASan.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "model/model.h"

// The replacements below pair every new with free(); GCC 12 sees only the
// malloc side of a mismatch once they inline, and warns.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* counted_alloc(std::size_t size, std::size_t align) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (size == 0) size = 1;
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) {
        p = std::malloc(size);
    } else if (posix_memalign(&p, align, size) != 0) {
        p = nullptr;
    }
    return p;
}

}  // namespace

void* operator new(std::size_t size) {
    if (void* p = counted_alloc(size, 0)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
    if (void* p = counted_alloc(size, static_cast<std::size_t>(align))) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return ::operator new(size, align); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace tessera {
namespace {

// Heap allocations (any thread) made while fn runs.
template <class F>
long allocations_during(F&& fn) {
    g_allocations.store(0);
    g_counting.store(true);
    fn();
    g_counting.store(false);
    return g_allocations.load();
}

TEST(ForwardAllocations, CountsAnAllocation) {  // the counter itself works
    const long n = allocations_during([] { delete new std::vector<int>(100); });
    EXPECT_GE(n, 2);
}

TEST(ForwardAllocations, NoneAfterTheFirstPromptAndDecodeStep) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    auto loaded = Model::load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    Model& model = **loaded;
    for (int n_threads : {1, 2}) {
        ThreadPool pool(n_threads);
        KvCache cache = model.make_kv_cache(256);
        SoloSequence seq(cache);
        std::vector<float> logits;
        // Warm-up: a prompt chunk long enough to split the per-token work
        // over the pool, then one decode step; the buffers grow to these sizes.
        std::vector<int32_t> prompt(24);
        for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(100 + 37 * i);
        ASSERT_TRUE(model.forward(cache, seq, prompt, false, logits, pool).ok());
        const int32_t first[] = {7};
        ASSERT_TRUE(model.forward(cache, seq, first, false, logits, pool).ok());

        const long decode = allocations_during([&] {
            for (int32_t token : {300, 4000, 12, 999, 31}) {
                const int32_t one[] = {token};
                ASSERT_TRUE(model.forward(cache, seq, one, false, logits, pool).ok());
            }
        });
        EXPECT_EQ(decode, 0) << "heap allocations in 5 decode steps, " << n_threads << " threads";

        // A second chunk of the same length, further on in the sequence
        // (blocks its earlier chunks did not touch).
        const long prefill = allocations_during([&] {
            ASSERT_TRUE(model.forward(cache, seq, prompt, false, logits, pool).ok());
        });
        EXPECT_EQ(prefill, 0) << "heap allocations in a 24-token prompt chunk, " << n_threads << " threads";
    }
}

}  // namespace
}  // namespace tessera

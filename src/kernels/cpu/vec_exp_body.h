// e^x on a vector of floats, written once over the primitives of a vector-ops
// struct (simd_ops_avx2_body.h, simd_ops_avx512_body.h) so the attention
// softmax and SwiGLU share one polynomial at every width. Included inside a
// file's own namespace, before the Ops struct that forwards Ops::exp here.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "vec_exp_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#define TESSERA_BODY_VEC_EXP 1

// e^x as 2^n * e^r with |r| <= ln2/2 and a degree-6 Taylor polynomial
// (relative error ~2e-7). Inputs below -87 give 0 (so -inf gives 0), inputs
// above 88 give e^88; a NaN input gives e^-87.
template <class Ops>
inline typename Ops::V vec_exp(typename Ops::V x) {
    using V = typename Ops::V;
    const V lo = Ops::set1(-87.0f);
    const auto tiny = Ops::less(x, lo);
    x = Ops::min(Ops::max(x, lo), Ops::set1(88.0f));
    const V n = Ops::round(Ops::mul(x, Ops::set1(1.44269504f)));
    // r = x - n ln2, with ln2 split in two so n * ln2_hi is exact.
    V r = Ops::fnmadd(n, Ops::set1(0.693145751953125f), x);
    r = Ops::fnmadd(n, Ops::set1(1.428606765330187e-06f), r);
    V p = Ops::set1(1.0f / 720.0f);
    p = Ops::fmadd(p, r, Ops::set1(1.0f / 120.0f));
    p = Ops::fmadd(p, r, Ops::set1(1.0f / 24.0f));
    p = Ops::fmadd(p, r, Ops::set1(1.0f / 6.0f));
    p = Ops::fmadd(p, r, Ops::set1(0.5f));
    p = Ops::fmadd(p, r, Ops::set1(1.0f));
    p = Ops::fmadd(p, r, Ops::set1(1.0f));
    return Ops::zero_where(tiny, Ops::mul(p, Ops::pow2(n)));
}

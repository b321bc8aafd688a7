#!/usr/bin/env python3
"""A/B of the AVX2 one-token (decode) tiles of two source trees in one process.

On a shared machine two builds timed in separate processes drift apart by
more than a kernel change moves them (one-thread decode swung between 115
and 190 t/s within an hour in session 15). This script compiles the AVX2
kernel bodies (src/kernels/cpu/*_x86_body.h) of a base revision and of the
working tree into one binary, in two namespaces, and times their 4-row x
1-token tiles (quad_rows) over L2-resident weights, alternating A and B 60
times per format; drift hits both halves of a pair alike, so the median of
the pair ratios says which is faster, and the best times what each can do.
It also checks that both give the same bits for every output row.

Usage: python3 bench/decode_tile_ab.py [--base REV]   (default HEAD)
Needs build/libtessera_lib.a (the activation re-layout comes from it) and
an AVX2 + FMA + F16C CPU. Only as good as the harness's coupling to
quad_rows' signature: a change to that needs this script changed too.
"""
import argparse
import os
import subprocess
import sys
import tempfile

TU = r"""
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>
#include "kernels/act_quads.h"
#include "tensor/quant_blocks.h"
#include "kernels/cpu/dot_x86.h"
#if __has_include("kernels/cpu/x86_body_context.h")
#include "kernels/cpu/x86_body_context.h"
#endif
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace tessera::x86 { namespace NS {
constexpr bool kVnni = false;
#include "kernels/cpu/dot_x86_body.h"
#include "kernels/cpu/dot_rows_x86_body.h"
#if __has_include("kernels/cpu/dot_legacy_x86_body.h")
#include "kernels/cpu/quad_qwords_x86_body.h"
#include "kernels/cpu/dot_legacy_x86_body.h"
#else  // trees before the kernels' files were renamed
#include "kernels/cpu/dot_widened_x86_body.h"
#if __has_include("kernels/cpu/quad_qwords_x86_body.h")
#include "kernels/cpu/quad_qwords_x86_body.h"
#endif
#include "kernels/cpu/dot_quads_x86_body.h"
#endif
}}
#pragma GCC pop_options
using namespace tessera;
namespace NS {
struct Setup { std::vector<uint8_t> w, act; std::vector<float> out; int64_t nb; size_t rb; int rows; };
// Random bytes with normal fp16 scales (and minimums), Q8_0 / Q8_1 activations.
template <class Block> Setup make(int rows, int64_t n) {
  Setup s; s.nb = n / 32; s.rb = s.nb * sizeof(Block); s.rows = rows;
  s.w.resize(rows * s.rb + 64 * 1024);
  std::mt19937 rng(1);
  for (auto& b : s.w) b = static_cast<uint8_t>(rng());
  for (int r = 0; r < rows; ++r) for (int64_t i = 0; i < s.nb; ++i) {
    auto* blk = reinterpret_cast<Block*>(s.w.data() + r * s.rb) + i;
    blk->d = static_cast<uint16_t>(0x3c00 + rng() % 512);
    if constexpr (requires { blk->m; }) blk->m = static_cast<uint16_t>(0x3c00 + rng() % 512);
  }
  constexpr bool kMin = std::is_same_v<Block, BlockQ4_1>;
  std::vector<uint8_t> raw(s.nb * sizeof(BlockQ8_1));
  for (int64_t i = 0; i < s.nb; ++i) {
    int8_t q[32]; int sum = 0;
    for (auto& v : q) { v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127); sum += v; }
    if constexpr (kMin) {
      auto* b = reinterpret_cast<BlockQ8_1*>(raw.data()) + i;
      b->d = 0x3c00; b->s = _cvtss_sh(static_cast<float>(sum), 0); std::memcpy(b->qs, q, 32);
    } else {
      auto* b = reinterpret_cast<BlockQ8_0*>(raw.data()) + i;
      b->d = 0x3c00; std::memcpy(b->qs, q, 32);
    }
  }
  const GgmlType at = kMin ? GgmlType::Q8_1 : GgmlType::Q8_0;
  s.act.resize(act_quad_pairs_bytes(at, n) + 64);
  prepare_act_quads(at, n, raw.data(), 0, s.act.data(), SimdLevel::Scalar);
  s.out.resize(rows);
  return s;
}
template <class Block> double time_once(Setup& s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < 100; ++k)
    for (int r = 0; r < s.rows; r += 4)
      x86::NS::quad_rows<4, 1, Block>(s.nb, s.w.data() + r * s.rb, s.rb, s.act.data(), 0, s.out.data() + r, 1);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace NS
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define TILE(name, Block, rows) \
  double CAT(name, NS)(std::vector<float>* out) { \
    static NS::Setup s = NS::make<Block>(rows, 576); \
    const double t = NS::time_once<Block>(s); *out = s.out; return t; }
TILE(q4_0_, BlockQ4_0, 592)
TILE(q4_1_, BlockQ4_1, 544)
TILE(q5_0_, BlockQ5_0, 496)
TILE(q8_0_, BlockQ8_0, 320)
"""

MAIN = r"""
#include <algorithm>
#include <cstdio>
#include <vector>
#define DECL(name) double name##A(std::vector<float>*); double name##B(std::vector<float>*);
DECL(q4_0_) DECL(q4_1_) DECL(q5_0_) DECL(q8_0_)
int main() {
  using F = double (*)(std::vector<float>*);
  const F a[] = {q4_0_A, q4_1_A, q5_0_A, q8_0_A}, b[] = {q4_0_B, q4_1_B, q5_0_B, q8_0_B};
  const char* names[] = {"Q4_0 592 x 576", "Q4_1 544 x 576", "Q5_0 496 x 576", "Q8_0 320 x 576"};
  std::printf("%-16s %12s %12s %10s %12s %9s\n", "tile", "A best (ms)", "B best (ms)", "A/B best", "median A/B", "same bits");
  for (int k = 0; k < 4; ++k) {
    std::vector<float> oa, ob;
    a[k](&oa); b[k](&ob);  // first touch
    std::vector<double> ta, tb, ratio;
    for (int i = 0; i < 60; ++i) {
      const double x = a[k](&oa), y = b[k](&ob);
      ta.push_back(x); tb.push_back(y); ratio.push_back(x / y);
    }
    std::sort(ta.begin(), ta.end()); std::sort(tb.begin(), tb.end()); std::sort(ratio.begin(), ratio.end());
    std::printf("%-16s %12.3f %12.3f %10.3f %12.3f %9s\n", names[k], ta[0] * 1e3, tb[0] * 1e3, ta[0] / tb[0],
                ratio[ratio.size() / 2], oa == ob ? "yes" : "NO");
  }
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="HEAD", help="revision whose src/ is A (B is the working tree)")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lib = os.path.join(root, "build", "libtessera_lib.a")
    if not os.path.exists(lib):
        sys.exit(f"{lib} missing: build tessera first")
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        os.mkdir(base)
        archive = subprocess.run(["git", "-C", root, "archive", args.base, "src"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", base], input=archive.stdout, check=True)
        for name, text in (("tu.cpp", TU), ("main.cpp", MAIN)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        flags = ["g++", "-std=c++20", "-O3", "-march=native", "-c", os.path.join(tmp, "tu.cpp")]
        for ns, src in (("A", os.path.join(base, "src")), ("B", os.path.join(root, "src"))):
            subprocess.run(flags + [f"-I{src}", f"-DNS={ns}", "-o", os.path.join(tmp, f"tu{ns}.o")], check=True)
        exe = os.path.join(tmp, "ab")
        subprocess.run(["g++", "-O2", os.path.join(tmp, "main.cpp"), os.path.join(tmp, "tuA.o"),
                        os.path.join(tmp, "tuB.o"), lib, "-o", exe], check=True)
        print(f"A = {args.base}, B = working tree; ratios above 1: B faster")
        subprocess.run([exe], check=True)


if __name__ == "__main__":
    main()

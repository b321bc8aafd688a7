#!/usr/bin/env python3
"""Which operations slow down the int8 byte dots on this CPU.

Each probe is a loop of rounds: independent byte dots (AVX-512: twelve
512-bit vpdpbusd chains; --avx2: six 256-bit vpmaddubsw, the AVX2 tiles'
byte dot) plus K extra operations of one kind, each feeding one of the dots
so that none is dead code. If a round takes no longer with the extras, they
ran beside the dots on other pipes; if it takes longer, they compete with
the dots for issue. The loops are inline assembly with fixed registers, so
the compiler cannot spill, fold or hoist anything; the extras read a small
buffer in L1.

Usage: python3 bench/pipe_probe.py [--avx2] [--rounds N]
Writes the C++ to a temporary directory, compiles it with g++ -O2
-march=native and prints ns per round for K = 0, 4, 8 and 12 extras
(--avx2: 0, 2, 4 and 6). Needs an AVX-512 VNNI CPU, or with --avx2 an
AVX2 one.
"""
import argparse
import os
import subprocess
import sys
import tempfile

# name -> (assembly of one extra writing %zmm{d}, with {m} a 64-byte-aligned
# address, {u} an unaligned one (crossing a cache line), {w} a dword address).
# zmm30 holds permute indices, zmm29 and zmm31 sources, k1 a byte mask.
# "Free" here means free beside the dots alone: in a real tile, whose other
# pipes are busy too, every extra operation costs something (see
# docs/benchmarks/HISTORY.md, session 10).
PROBES = {
    "load 512 (aligned)": "vmovdqu64 {m}, %%zmm{d}",
    "load 512 (line-crossing)": "vmovdqu64 {u}, %%zmm{d}",
    "masked load (aligned, zeroing)": "vmovdqu8 {m}, %%zmm{d}%{{%%k1%}}%{{z%}}",
    "masked load (line-crossing)": "vmovdqu8 {u}, %%zmm{d}%{{%%k1%}}%{{z%}}",
    "broadcast dword from memory": "vpbroadcastd {w}, %%zmm{d}",
    "vpandd with embedded broadcast": "vpandd {w}%{{1to16%}}, %%zmm31, %%zmm{d}",
    "vpandd (memory operand)": "vpandd {m}, %%zmm31, %%zmm{d}",
    "vpsrlw (memory operand)": "vpsrlw $4, {m}, %%zmm{d}",
    "vpsrlw + vpandd": "vpsrlw $4, {m}, %%zmm{d}\n vpandd %%zmm{d}, %%zmm31, %%zmm{d}",
    "vpunpcklqdq": "vmovdqu64 {m}, %%zmm{d}\n vpunpcklqdq %%zmm31, %%zmm{d}, %%zmm{d}",
    "vpblendmq (memory operand)": "vpblendmq {m}, %%zmm31, %%zmm{d}%{{%%k1%}}",
    "vmovdqa64 register copy": "vmovdqa64 %%zmm31, %%zmm{d}",
    "vcvtdq2ps (memory operand)": "vcvtdq2ps {m}, %%zmm{d}",
    "vmulps (memory operand)": "vmulps {m}, %%zmm31, %%zmm{d}",
    "vfmadd213ps": "vmovdqu64 {m}, %%zmm{d}\n vfmadd213ps %%zmm31, %%zmm31, %%zmm{d}",
    "vcvtph2ps (memory operand)": "vcvtph2ps {h}, %%zmm{d}",
    "vpermw (memory operand)": "vpermw {m}, %%zmm30, %%zmm{d}",
    "vpermq (memory operand)": "vpermq {m}, %%zmm30, %%zmm{d}",
    "vpermt2w": "vmovdqu64 {m}, %%zmm{d}\n vpermt2w %%zmm31, %%zmm30, %%zmm{d}",
    "vshufi64x2": "vmovdqu64 {m}, %%zmm{d}\n vshufi64x2 $0x4e, %%zmm{d}, %%zmm{d}, %%zmm{d}",
    "vinserti32x4 from memory": "vinserti32x4 $1, {m}, %%zmm31, %%zmm{d}",
    "vbroadcasti32x4 from memory": "vbroadcasti32x4 {m}, %%zmm{d}",
    "vpshufd": "vpshufd $0xb1, %%zmm31, %%zmm{d}",
    "vpermilps (immediate)": "vpermilps $0xb1, %%zmm31, %%zmm{d}",
    "vpunpckldq": "vpunpckldq %%zmm31, %%zmm29, %%zmm{d}",
    "vpblendmd": "vpblendmd %%zmm31, %%zmm29, %%zmm{d}%{{%%k1%}}",
    "vpaddd": "vpaddd %%zmm31, %%zmm29, %%zmm{d}",
    "vpternlogd": "vpternlogd $0x96, %%zmm31, %%zmm29, %%zmm{d}",
    "vaddps": "vaddps %%zmm31, %%zmm29, %%zmm{d}",
    "vpermd": "vpermd %%zmm31, %%zmm30, %%zmm{d}",
    "vpermt2d": "vmovdqa64 %%zmm29, %%zmm{d}\n vpermt2d %%zmm31, %%zmm30, %%zmm{d}",
    "vgf2p8affineqb": "vgf2p8affineqb $0, %%zmm31, %%zmm29, %%zmm{d}",
    "vpmulld": "vpmulld %%zmm31, %%zmm29, %%zmm{d}",
    "vpmuludq": "vpmuludq %%zmm31, %%zmm29, %%zmm{d}",
    "vpmaddwd": "vpmaddwd %%zmm31, %%zmm29, %%zmm{d}",
    "vscalefps": "vscalefps %%zmm31, %%zmm29, %%zmm{d}",
}
COUNTS = (0, 4, 8, 12)

# The AVX2 tiles' operations (dot_legacy_x86_body.h, attn_x86_body.h), for
# six 256-bit vpmaddubsw a round (ymm0-5; extras write ymm8-13). ymm15 and
# ymm14 hold sources, ymm7 permute indices.
PROBES_AVX2 = {
    "load 256": "vmovdqu {m}, %%ymm{d}",
    "broadcast dword from memory": "vbroadcastss {w}, %%ymm{d}",
    "vpaddw": "vpaddw %%ymm15, %%ymm14, %%ymm{d}",
    "vpaddd (memory operand)": "vpaddd {m}, %%ymm15, %%ymm{d}",
    "vpand": "vpand %%ymm15, %%ymm14, %%ymm{d}",
    "vpsrlw": "vpsrlw $4, %%ymm15, %%ymm{d}",
    "vpsignb": "vpsignb %%ymm15, %%ymm14, %%ymm{d}",
    "vpshufb": "vpshufb %%ymm15, %%ymm14, %%ymm{d}",
    "vpshufd": "vpshufd $0xb1, %%ymm15, %%ymm{d}",
    "vpunpcklqdq": "vpunpcklqdq %%ymm15, %%ymm14, %%ymm{d}",
    "vpermq": "vpermq $0x4e, %%ymm15, %%ymm{d}",
    "vperm2i128": "vperm2i128 $0x21, %%ymm15, %%ymm14, %%ymm{d}",
    "vinserti128 from memory": "vinserti128 $1, {x}, %%ymm15, %%ymm{d}",
    "vpinsrw from memory": "vpinsrw $1, {w}, %%xmm15, %%xmm{d}",
    "vpcmpeqb": "vpcmpeqb %%ymm15, %%ymm14, %%ymm{d}",
    "vpmaddwd": "vpmaddwd %%ymm15, %%ymm14, %%ymm{d}",
    "vpmaddubsw": "vpmaddubsw %%ymm15, %%ymm14, %%ymm{d}",
    "vcvtdq2ps": "vcvtdq2ps %%ymm15, %%ymm{d}",
    "vcvtph2ps (memory operand)": "vcvtph2ps {x}, %%ymm{d}",
    "vmulps": "vmulps %%ymm15, %%ymm14, %%ymm{d}",
    "vfmadd213ps": "vmovdqu {m}, %%ymm{d}\n vfmadd213ps %%ymm15, %%ymm14, %%ymm{d}",
    "vaddps": "vaddps %%ymm15, %%ymm14, %%ymm{d}",
}
COUNTS_AVX2 = (0, 2, 4, 6)


def round_asm(op, k, avx2):
    lines = []
    for i in range(6 if avx2 else 12):
        d = (8 if avx2 else 14) + i
        if i < k:
            extra = op.format(m=f"{64 * i}(%1)", u=f"{64 * i + 40}(%1)", w=f"{4 * i}(%1)", h=f"{32 * i}(%1)",
                              x=f"{16 * i}(%1)", d=d)
            lines += [line.strip() for line in extra.split("\n")]
        src = d if i < k else (14 if avx2 else 12)
        lines.append(f"vpmaddubsw %%ymm15, %%ymm{src}, %%ymm{i}" if avx2 else
                     f"vpdpbusd %%zmm13, %%zmm{src}, %%zmm{i}")
    return "\\n\\t".join(lines)


def program(rounds, avx2):
    probes, counts = (PROBES_AVX2, COUNTS_AVX2) if avx2 else (PROBES, COUNTS)
    clobbers = ", ".join(f'"xmm{j}"' for j in range(16 if avx2 else 32))
    out = ["#include <chrono>", "#include <cstdio>", "#include <cstdint>",
           "alignas(64) static uint8_t buf[64 * 16];"]
    calls = []
    mask_clobber = "" if avx2 else '"k1", '
    for n, (name, op) in enumerate(probes.items()):
        for k in counts:
            fn = f"probe_{n}_{k}"
            out.append(f"""__attribute__((noinline)) double {fn}(long n) {{
    const auto t0 = std::chrono::steady_clock::now();
    asm volatile("1:\\n\\t{round_asm(op, k, avx2)}\\n\\tdec %0\\n\\tjnz 1b" : "+r"(n) : "r"(buf) : "memory", {mask_clobber}{clobbers});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}}""")
        calls.append((name, n))
    out.append("template <class F> double best(F f, long n) { double t = 1e30; for (int r = 0; r < 3; ++r) { const double s = f(n); if (s < t) t = s; } return t; }")
    out.append("int main() {")
    out.append(f"    const long n = {rounds};")
    if not avx2:
        out.append('    asm volatile("movl $0xF0F0F0F0, %%eax\\n\\tkmovq %%rax, %%k1" ::: "eax", "k1");')
    heads = ", ".join(f'"K={k}"' for k in counts)
    dots = "6 vpmaddubsw" if avx2 else "12 byte dots"
    out.append(f'    std::printf("%-34s %8s %8s %8s %8s   (ns per round of {dots} + K extras)\\n", "extra op", {heads});')
    for name, n in calls:
        vals = ", ".join(f"best(probe_{n}_{k}, n) / n * 1e9" for k in counts)
        out.append(f'    std::printf("%-34s %8.2f %8.2f %8.2f %8.2f\\n", "{name}", {vals});')
    out.append("}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20_000_000)
    ap.add_argument("--avx2", action="store_true", help="probe the AVX2 tiles' operations (256-bit)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.cpp"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write(program(args.rounds, args.avx2))
        subprocess.run(["g++", "-O2", "-march=native", "-std=c++20", src, "-o", exe], check=True)
        sys.stdout.flush()
        subprocess.run([exe], check=True)


if __name__ == "__main__":
    main()

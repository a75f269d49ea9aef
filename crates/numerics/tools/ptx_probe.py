#!/usr/bin/env python3
"""Runs PTX instruction forms on a real NVIDIA GPU and records their results.

Each instruction form becomes its own tiny PTX kernel (JIT-compiled by the
driver through ctypes, so a form the driver rejects is skipped, not fatal).
Every form is run on a fixed, seeded set of operand vectors: special values
(zeros, subnormals, infinities, NaNs with payloads, INT_MIN, shift counts past
the width, ...) followed by random ones.

Output (stdout or the file given as argv[1]):

    @<form name>
    <in0> [<in1> ...] <out0>[,<out1>]

all in lower-case hex without 0x. Form names are PTX instruction names, plus a
few pseudo-forms (``addcc.u32`` ...) that run a short carry chain. The file is
checked into ``tests/data/`` and replayed by ``tests/hw_golden.rs`` against
this crate; rerun this script on a GPU to refresh it (``--list`` prints the
forms without a GPU).
"""
import ctypes
import random
import struct
import sys

N_RANDOM = 48

# ---------------------------------------------------------------- operand domains

F32_SPECIAL = [
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x3FC00000,
    0x40000000, 0x40400000, 0x40200000, 0xC0200000, 0x40600000, 0x3EFFFFFF,
    0x00800000, 0x80800000, 0x00000001, 0x007FFFFF, 0x80000001, 0x807FFFFF,
    0x00400000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FFFFFFF,
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA12345, 0xFFC54321, 0x3EAAAAAB,
    0x3F7FFFFF, 0x3F800001, 0x33800000, 0x4B000000, 0x4B800000, 0x4EFFFFFF,
    0x4F000000, 0xCF000000, 0xCF000001, 0x4F800000, 0x5F000000, 0x5F800000,
    0xDF000000, 0xC0F00000, 0x7E800000, 0x7F000000, 0x3FB504F3, 0x40490FDB,
    0x42C80000, 0xC2FE0000, 0x437F0000, 0x3F7FFFFE, 0x34000000, 0x01000000,
]
F64_SPECIAL = [
    0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
    0x3FE0000000000000, 0x3FF8000000000000, 0x4000000000000000, 0x4004000000000000,
    0xC004000000000000, 0x400C000000000000, 0x0010000000000000, 0x8010000000000000,
    0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x8000000000000001, 0x7FEFFFFFFFFFFFFF,
    0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FFFFFFFFFFFFFFF,
    0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF4123456789ABC,
    0xFFF8000000054321, 0x3FD5555555555555, 0x3FEFFFFFFFFFFFFF, 0x3FF0000000000001,
    0x3CA0000000000000, 0x4330000000000000, 0x41DFFFFFFFC00000, 0x41E0000000000000,
    0xC1E0000000000000, 0x41EFFFFFFFE00000, 0x43E0000000000000, 0x43F0000000000000,
    0xC3E0000000000000, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x3690000000000000,
    0x36A0000000000000, 0x3810000000000000, 0x380FFFFFFFFFFFFF, 0x36A8000000000000,
    0x3E70000000000000, 0x3F50000000000000, 0x40F0000000000000, 0x40EFFFE000000000,
    0x400921FB54442D18, 0x7FE0000000000000,
]
F16_SPECIAL = [
    0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x3E00, 0x4000, 0x4200, 0x4100, 0xC100,
    0x0001, 0x03FF, 0x8001, 0x83FF, 0x0400, 0x8400, 0x0200, 0x7BFF, 0xFBFF, 0x7C00,
    0xFC00, 0x7E00, 0x7FFF, 0xFE00, 0x7C01, 0x7D23, 0x3555, 0x3BFF, 0x3C01, 0x1400,
    0x6400, 0x5640, 0xC900, 0x3A00,
]
BF16_SPECIAL = [
    0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0x3FC0, 0x4000, 0x4040, 0x4020, 0xC020,
    0x0001, 0x007F, 0x8001, 0x807F, 0x0080, 0x8080, 0x0040, 0x7F7F, 0xFF7F, 0x7F80,
    0xFF80, 0x7FC0, 0x7FFF, 0xFFC0, 0x7F81, 0x7FA3, 0x3EAB, 0x3F7F, 0x3F81, 0x3380,
    0x4B00, 0x42C8, 0xC2FE, 0x3F40,
]
I32_SPECIAL = [
    0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 63, 64, 65, 100, 127,
    128, 200, 255, 256, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE,
    0xFFFFFFF9, 0x00FFFFFF, 0x00800000, 0xFF800000, 0x007FFFFF, 0x12345678,
    0xDEADBEEF, 0x0000FFFF, 0xFFFF0000, 0x00008000, 0x00007FFF, 0x0000FF80,
    0x80808080, 0x7F7F7F7F, 0x01020304, 0x00000708, 0x1234560C,
]
I64_SPECIAL = [
    0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 255, 0x7FFFFFFFFFFFFFFF,
    0x8000000000000000, 0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE,
    0x0000000100000000, 0x00000000FFFFFFFF, 0xFFFFFFFF00000000, 0x0000000080000000,
    0xFFFFFFFF80000000, 0x000000007FFFFFFF, 0x123456789ABCDEF0, 0xFEDCBA9876543210,
    0x00FFFFFFFFFFFFFF, 0x0000FFFFFFFFFFFF, 0x0000000000000708,
]
I16_SPECIAL = [
    0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 100, 127, 128, 255, 256, 0x7FFF, 0x8000,
    0x8001, 0xFFFF, 0xFFFE, 0x00FF, 0x0080, 0xFF80, 0x1234, 0xBEEF,
]
SMALL = list(range(0, 70)) + [0xFF, 0xC8, 0xFFFFFFFF, 0x80000000, 0x100, 0x120, 0x12345608,
                                0x7FFFFFFF, 0xFFFFFF10]


def rand_float(rng, bits, exp_bits, man_bits, specials):
    r = rng.random()
    if r < 0.35:
        return rng.choice(specials)
    if r < 0.65:
        return rng.getrandbits(bits)
    bias = (1 << (exp_bits - 1)) - 1
    e = bias + rng.randint(-12, 12)
    s = rng.getrandbits(1)
    m = rng.getrandbits(man_bits)
    if rng.random() < 0.2:
        m &= ~((1 << (man_bits // 2)) - 1)  # short mantissas: ties and exact cases
    return (s << (bits - 1)) | (e << man_bits) | m


def gen(dom, rng):
    if dom == "f32":
        return rand_float(rng, 32, 8, 23, F32_SPECIAL)
    if dom == "f64":
        return rand_float(rng, 64, 11, 52, F64_SPECIAL)
    if dom == "f16":
        return rand_float(rng, 16, 5, 10, F16_SPECIAL)
    if dom == "bf16":
        return rand_float(rng, 16, 8, 7, BF16_SPECIAL)
    if dom == "f16x2":
        return gen("f16", rng) | (gen("f16", rng) << 16)
    if dom == "bf16x2":
        return gen("bf16", rng) | (gen("bf16", rng) << 16)
    if dom in ("i16", "i32", "i64"):
        bits = int(dom[1:])
        sp = {16: I16_SPECIAL, 32: I32_SPECIAL, 64: I64_SPECIAL}[bits]
        r = rng.random()
        if r < 0.4:
            return rng.choice(sp)
        if r < 0.6:
            return rng.randint(-300, 300) & ((1 << bits) - 1)
        return rng.getrandbits(bits)
    if dom == "sh":  # shift counts, bit positions and lengths
        return rng.choice(SMALL) if rng.random() < 0.85 else rng.getrandbits(32)
    if dom in ("bit", "bit64"):
        return rng.getrandbits(1)
    if dom == "off":  # small signed offsets (fns)
        return rng.randint(-40, 40) & 0xFFFFFFFF if rng.random() < 0.9 else rng.getrandbits(32)
    raise ValueError(dom)


WIDTH = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32,
         "i16": 16, "i32": 32, "i64": 64, "sh": 32, "bit": 32, "bit64": 64, "off": 32}


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_val(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def vectors(form, doms, rng):
    out = []
    k = len(doms)
    if k >= 2 and doms[0] == doms[1] == "f32":
        fixed = [
            (0x3F7FFFFF, 0x00800000), (0x00800000, 0x80000001), (0x3F800000, 0x33800000),
            (0x3F800000, 0x33800001), (0x7F7FFFFF, 0x7F7FFFFF), (0x7F800000, 0xFF800000),
            (0x7FC12345, 0x3F800000), (0x3F800000, 0x7F812345), (0x80000000, 0x80000000),
            (0x00000000, 0x80000000), (0x3F800000, 0xBF800000), (0xBF800000, 0x3F000000),
            (0x3F800000, 0x3F800000), (0x00000000, 0x00000000), (0x7F800000, 0x00000000),
            (0x00000001, 0x3F000000), (0x00000003, 0x3F000000), (0x00FFFFFF, 0x3F000000),
            (0x7FC00000, 0xFFC54321), (0x3F800000, 0x7F000001), (0x40000000, 0x7E800000),
            (0x3F800000, 0x7E800001), (0x3F800000, 0xFEC00000), (0x7F800000, 0x7F000001),
            # exact product 2^-126 * (1 - 2^-46): tiny before rounding, not after
            (0x32800001, 0x0D7FFFFE), (0xB2800001, 0x0D7FFFFE), (0x00800000, 0x807FFFFF),
        ]
        for a, b in fixed:
            out.append([a, b] + [gen(d, rng) for d in doms[2:]])
        if k == 3:
            out.append([0x32800001, 0x0D7FFFFE, 0x80000000])
            out.append([0x3F800001, 0x3F7FFFFE, 0xBF800000])
        if k == 3:  # fma: exact cancellation of a*b by c
            for _ in range(6):
                a = rand_float(rng, 32, 8, 23, F32_SPECIAL) & 0xBFFFFFFF
                b = rand_float(rng, 32, 8, 23, F32_SPECIAL) & 0xBFFFFFFF
                p = f32_val(a) * f32_val(b)
                try:
                    c = f32_bits(-p)
                except OverflowError:
                    c = 0
                out.append([a, b, c])
    if k >= 2 and doms[0] == doms[1] == "f64":
        fixed = [
            (0x3FEFFFFFFFFFFFFF, 0x0010000000000000), (0x3FF0000000000000, 0x3CA0000000000000),
            (0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF), (0x7FF0000000000000, 0xFFF0000000000000),
            (0x7FF8000000012345, 0x3FF0000000000000), (0x3FF0000000000000, 0x7FF0000000012345),
            (0x7FF4000000000000, 0xFFF8000000054321), (0x3FF0000000000000, 0xBFF0000000000000),
            (0x0000000000000000, 0x0000000000000000), (0x7FF0000000000000, 0x0000000000000000),
            (0x0000000000000001, 0x3FE0000000000000), (0x7FF8000000000000, 0x7FF0000000000000),
        ]
        for a, b in fixed:
            out.append([a, b] + [gen(d, rng) for d in doms[2:]])
        if k == 3:  # NaN priority between a and c
            out.append([0x7FF0000000000001, 0x3FF0000000000000, 0x7FF8000000054321])
            out.append([0x7FF8000000011111, 0x3FF0000000000000, 0x7FF8000000022222])
            out.append([0x3FF0000000000000, 0x7FF8000000011111, 0x7FF0000000022222])
    if k >= 2 and doms[0] == doms[1] == "f16":
        out.append([0x2001, 0x1FFE] + [0] * (k - 2))  # (1+2^-10)(1-2^-10) 2^-14
        out.append([0x0400, 0x83FF] + [0] * (k - 2))
    if k >= 2 and doms[0] == doms[1] and doms[0] in ("i16", "i32", "i64"):
        bits = WIDTH[doms[0]]
        m = (1 << bits) - 1
        mn = 1 << (bits - 1)
        for a in (0, 1, 5, 7, m, (-5) & m, mn, mn - 1, 0x1234 & m):
            out.append([a, 0] + [gen(d, rng) for d in doms[2:]])
        out.append([mn, m] + [gen(d, rng) for d in doms[2:]])
        out.append([mn, 1] + [gen(d, rng) for d in doms[2:]])
        out.append([(-7) & m, 2] + [gen(d, rng) for d in doms[2:]])
        out.append([7, (-2) & m] + [gen(d, rng) for d in doms[2:]])
    if k == 1 and doms[0] == "f64":
        for a in (0x7FF8000000012345, 0xFFF0000000000000, 0x7FF4000000000000, 0xBFF0000000000000):
            out.append([a])
    if k == 1 and doms[0] in ("f32", "f64", "f16", "bf16"):
        sp = {"f32": F32_SPECIAL, "f64": F64_SPECIAL, "f16": F16_SPECIAL,
              "bf16": BF16_SPECIAL}[doms[0]]
        for a in sp:
            out.append([a])
    for _ in range(N_RANDOM):
        out.append([gen(d, rng) for d in doms])
    return out


# ---------------------------------------------------------------- instruction forms

FORMS = []  # (name, template, input domains, output widths)


def F(name, tmpl, doms, outs):
    FORMS.append((name, tmpl, doms, outs))


def un(op, dom, outw=None):
    F(op, op + " {o0}, {i0};", [dom], [outw or WIDTH[dom]])


def bin_(op, dom, dom2=None, outw=None):
    F(op, op + " {o0}, {i0}, {i1};", [dom, dom2 or dom], [outw or WIDTH[dom]])


def ter(op, dom, outw=None, doms=None):
    doms = doms or [dom, dom, dom]
    F(op, op + " {o0}, {i0}, {i1}, {i2};", doms, [outw or WIDTH[dom]])


# --- f32
for op in ("add", "sub", "mul"):
    for r in ("", ".rn", ".rz", ".rm", ".rp"):
        bin_(f"{op}{r}.f32", "f32")
    bin_(f"{op}.rn.ftz.f32", "f32")
    bin_(f"{op}.rz.ftz.f32", "f32")
    bin_(f"{op}.rn.sat.f32", "f32")
    bin_(f"{op}.rm.ftz.sat.f32", "f32")
for r in (".rn", ".rz", ".rm", ".rp"):
    ter(f"fma{r}.f32", "f32")
    ter(f"mad{r}.f32", "f32")
ter("fma.rn.ftz.f32", "f32")
ter("fma.rn.sat.f32", "f32")
ter("fma.rp.ftz.sat.f32", "f32")
for r in (".rn", ".rz", ".rm", ".rp"):
    bin_(f"div{r}.f32", "f32")
    un(f"rcp{r}.f32", "f32")
    un(f"sqrt{r}.f32", "f32")
bin_("div.rn.ftz.f32", "f32")
bin_("div.approx.f32", "f32")
bin_("div.approx.ftz.f32", "f32")
bin_("div.full.f32", "f32")
bin_("div.full.ftz.f32", "f32")
un("rcp.rn.ftz.f32", "f32")
un("rcp.approx.f32", "f32")
un("rcp.approx.ftz.f32", "f32")
un("sqrt.rn.ftz.f32", "f32")
un("sqrt.approx.f32", "f32")
un("sqrt.approx.ftz.f32", "f32")
for fn in ("rsqrt", "sin", "cos", "lg2", "ex2"):
    un(f"{fn}.approx.f32", "f32")
    un(f"{fn}.approx.ftz.f32", "f32")
un("tanh.approx.f32", "f32")
for op in ("abs", "neg"):
    un(f"{op}.f32", "f32")
    un(f"{op}.ftz.f32", "f32")
for op in ("min", "max"):
    bin_(f"{op}.f32", "f32")
    bin_(f"{op}.ftz.f32", "f32")
    bin_(f"{op}.NaN.f32", "f32")
bin_("copysign.f32", "f32")
# --- f64
for op in ("add", "sub", "mul"):
    for r in (".rn", ".rz", ".rm", ".rp"):
        bin_(f"{op}{r}.f64", "f64")
for r in (".rn", ".rz", ".rm", ".rp"):
    ter(f"fma{r}.f64", "f64")
    bin_(f"div{r}.f64", "f64")
    un(f"rcp{r}.f64", "f64")
    un(f"sqrt{r}.f64", "f64")
un("rcp.approx.ftz.f64", "f64")
un("rsqrt.approx.f64", "f64")
un("rsqrt.approx.ftz.f64", "f64")
un("abs.f64", "f64")
un("neg.f64", "f64")
bin_("min.f64", "f64")
bin_("max.f64", "f64")
bin_("copysign.f64", "f64")
# --- f16 / bf16 and the x2 forms
for t in ("f16", "f16x2"):
    for op in ("add", "sub", "mul"):
        bin_(f"{op}.{t}", t)
        bin_(f"{op}.rn.ftz.{t}", t)
        bin_(f"{op}.sat.{t}", t)
    ter(f"fma.rn.{t}", t)
    ter(f"fma.rn.ftz.{t}", t)
    ter(f"fma.rn.sat.{t}", t)
    ter(f"fma.rn.relu.{t}", t)
    un(f"neg.{t}", t)
    un(f"abs.{t}", t)
    un(f"neg.ftz.{t}", t)
    for op in ("min", "max"):
        bin_(f"{op}.{t}", t)
        bin_(f"{op}.ftz.{t}", t)
        bin_(f"{op}.NaN.{t}", t)
    un(f"ex2.approx.{t}", t)
    un(f"tanh.approx.{t}", t)
for t in ("bf16", "bf16x2"):
    for op in ("add", "sub", "mul"):
        bin_(f"{op}.rn.{t}", t)
    ter(f"fma.rn.{t}", t)
    ter(f"fma.rn.relu.{t}", t)
    un(f"neg.{t}", t)
    un(f"abs.{t}", t)
    for op in ("min", "max"):
        bin_(f"{op}.{t}", t)
        bin_(f"{op}.NaN.{t}", t)
    un(f"ex2.approx.ftz.{t}", t)
    un(f"tanh.approx.{t}", t)


# --- setp / testp
def setp(name, dom):
    F(name, "{{ .reg .pred p; " + name + " p, {i0}, {i1}; selp.u32 {o0}, 1, 0, p; }}",
      [dom, dom], [32])


def setp2(name, dom):
    F(name, "{{ .reg .pred p, q; " + name + " p|q, {i0}, {i1}; selp.u32 {o0}, 1, 0, p; "
      "selp.u32 {t0}, 2, 0, q; or.b32 {o0}, {o0}, {t0}; }}", [dom, dom], [32])


for c in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
          "num", "nan"):
    setp(f"setp.{c}.f32", "f32")
setp("setp.lt.ftz.f32", "f32")
setp("setp.eq.ftz.f32", "f32")
setp("setp.lt.f64", "f64")
setp("setp.neu.f64", "f64")
setp("setp.le.f16", "f16")
setp("setp.eq.ftz.f16", "f16")
setp("setp.gtu.bf16", "bf16")
setp2("setp.lt.f16x2", "f16x2")
setp2("setp.geu.bf16x2", "bf16x2")
for c, t in (("eq", "s32"), ("lt", "s32"), ("le", "u32"), ("lo", "u32"), ("hs", "u32"),
             ("ge", "s64"), ("hi", "u64"), ("ne", "b16"), ("lt", "s16"), ("gt", "u16")):
    setp(f"setp.{c}.{t}", {"16": "i16", "32": "i32", "64": "i64"}[t[1:]])
for cls in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
    for t in ("f32", "f64"):
        F(f"testp.{cls}.{t}", "{{ .reg .pred p; testp." + cls + "." + t +
          " p, {i0}; selp.u32 {o0}, 1, 0, p; }}", [t], [32])

# --- integer arithmetic
I = {"16": "i16", "32": "i32", "64": "i64"}
for t in ("s16", "u32", "s64"):
    bin_(f"add.{t}", I[t[1:]])
    bin_(f"sub.{t}", I[t[1:]])
bin_("add.sat.s32", "i32")
bin_("sub.sat.s32", "i32")
for t in ("u16", "s16", "u32", "s32", "u64", "s64"):
    w = t[1:]
    bin_(f"mul.lo.{t}", I[w])
    bin_(f"mul.hi.{t}", I[w])
    ter(f"mad.lo.{t}", I[w])
    ter(f"mad.hi.{t}", I[w])
    bin_(f"div.{t}", I[w])
    bin_(f"rem.{t}", I[w])
    bin_(f"min.{t}", I[w])
    bin_(f"max.{t}", I[w])
    ter(f"sad.{t}", I[w])
    if w != "64":
        bin_(f"mul.wide.{t}", I[w], outw=2 * int(w))
        F(f"mad.wide.{t}", f"mad.wide.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};",
          [I[w], I[w], {"16": "i32", "32": "i64"}[w]], [2 * int(w)])
ter("mad.hi.sat.s32", "i32")
for t in ("u32", "s32"):
    bin_(f"mul24.lo.{t}", "i32")
    bin_(f"mul24.hi.{t}", "i32")
    ter(f"mad24.lo.{t}", "i32")
    ter(f"mad24.hi.{t}", "i32")
ter("mad24.hi.sat.s32", "i32")
for t in ("s16", "s32", "s64"):
    un(f"abs.{t}", I[t[1:]])
    un(f"neg.{t}", I[t[1:]])
for t in ("b32", "b64"):
    un(f"popc.{t}", I[t[1:]], outw=32)
    un(f"clz.{t}", I[t[1:]], outw=32)
    un(f"brev.{t}", I[t[1:]])
for t in ("u32", "s32", "u64", "s64"):
    un(f"bfind.{t}", I[t[1:]], outw=32)
    un(f"bfind.shiftamt.{t}", I[t[1:]], outw=32)
    F(f"bfe.{t}", f"bfe.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", [I[t[1:]], "sh", "sh"],
      [int(t[1:])])
for t in ("b32", "b64"):
    F(f"bfi.{t}", f"bfi.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}}, {{i3}};",
      [I[t[1:]], I[t[1:]], "sh", "sh"], [int(t[1:])])
for mode in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
    ter(f"prmt.b32{mode}", "i32")
for t in ("b16", "b32", "b64"):
    F(f"shl.{t}", f"shl.{t} {{o0}}, {{i0}}, {{i1}};", [I[t[1:]], "sh"], [int(t[1:])])
for t in ("b32", "u16", "s16", "u32", "s32", "u64", "s64"):
    F(f"shr.{t}", f"shr.{t} {{o0}}, {{i0}}, {{i1}};", [I[t[1:]], "sh"], [int(t[1:])])
for d in ("l", "r"):
    for m in ("wrap", "clamp"):
        F(f"shf.{d}.{m}.b32", f"shf.{d}.{m}.b32 {{o0}}, {{i0}}, {{i1}}, {{i2}};",
          ["i32", "i32", "sh"], [32])
bin_("and.b32", "i32")
bin_("or.b64", "i64")
bin_("xor.b16", "i16")
un("not.b32", "i32")
un("not.b64", "i64")
un("cnot.b32", "i32")
un("cnot.b16", "i16")
for lut in (0x96, 0xE8, 0x1E, 0x00, 0xFF, 0x5A, 0xCA, 0x80, 0x01):
    F(f"lop3.b32.{lut:#04x}", f"lop3.b32 {{o0}}, {{i0}}, {{i1}}, {{i2}}, {lut:#04x};",
      ["i32", "i32", "i32"], [32])
for at in ("u32", "s32"):
    for bt in ("u32", "s32"):
        ter(f"dp4a.{at}.{bt}", "i32")
        ter(f"dp2a.lo.{at}.{bt}", "i32")
        ter(f"dp2a.hi.{at}.{bt}", "i32")

BIT = {32: "bit", 64: "bit64"}
# --- carry chains (pseudo-forms; outputs "result,carry-probe")
for t, w in (("u32", 32), ("u64", 64)):
    F(f"addcc.{t}", f"add.cc.{t} {{o0}}, {{i0}}, {{i1}}; addc.{t} {{o1}}, 0, 0;",
      [I[str(w)], I[str(w)]], [w, w])
    F(f"subcc.{t}", f"sub.cc.{t} {{o0}}, {{i0}}, {{i1}}; subc.{t} {{o1}}, 0, 0;",
      [I[str(w)], I[str(w)]], [w, w])
    F(f"addc.cc.{t}", f"add.cc.{t} {{o1}}, {{i2}}, -1; addc.cc.{t} {{o0}}, {{i0}}, {{i1}}; "
      f"addc.{t} {{o1}}, 0, 0;", [I[str(w)], I[str(w)], BIT[w]], [w, w])
    F(f"subc.cc.{t}", f"sub.cc.{t} {{o1}}, 0, {{i2}}; subc.cc.{t} {{o0}}, {{i0}}, {{i1}}; "
      f"subc.{t} {{o1}}, 0, 0;", [I[str(w)], I[str(w)], BIT[w]], [w, w])
    F(f"subcc_addc.{t}", f"sub.cc.{t} {{o0}}, {{i0}}, {{i1}}; addc.{t} {{o1}}, 0, 0;",
      [I[str(w)], I[str(w)]], [w, w])
    F(f"addcc_subc.{t}", f"add.cc.{t} {{o0}}, {{i0}}, {{i1}}; subc.{t} {{o1}}, 0, 0;",
      [I[str(w)], I[str(w)]], [w, w])
    for h in ("lo", "hi"):
        for s in ("u", "s"):
            tt = f"{s}{w}"
            F(f"madcc.{h}.{tt}", f"mad.{h}.cc.{tt} {{o0}}, {{i0}}, {{i1}}, {{i2}}; "
              f"addc.{t} {{o1}}, 0, 0;", [I[str(w)]] * 3, [w, w])
            F(f"madc.{h}.cc.{tt}", f"add.cc.{t} {{o1}}, {{i3}}, -1; "
              f"madc.{h}.cc.{tt} {{o0}}, {{i0}}, {{i1}}, {{i2}}; addc.{t} {{o1}}, 0, 0;",
              [I[str(w)]] * 3 + [BIT[w]], [w, w])

# --- cvt
INTS = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")


def ibits(t):
    return int(t[1:])


def reg_w(t):  # register width used for an integer cvt operand
    return max(16, ibits(t))


for d in INTS:
    for s in INTS:
        if d == s:
            continue
        for sat in ("", ".sat"):
            F(f"cvt{sat}.{d}.{s}", f"cvt{sat}.{d}.{s} {{o0}}, {{i0}};",
              [I[str(reg_w(s))]], [reg_w(d)])
for ft, dom in (("f32", "f32"), ("f64", "f64"), ("f16", "f16"), ("bf16", "bf16")):
    for it in INTS:
        for r in (".rni", ".rzi", ".rmi", ".rpi"):
            F(f"cvt{r}.{it}.{ft}", f"cvt{r}.{it}.{ft} {{o0}}, {{i0}};", [dom], [reg_w(it)])
        for r in (".rn", ".rz", ".rm", ".rp"):
            F(f"cvt{r}.{ft}.{it}", f"cvt{r}.{ft}.{it} {{o0}}, {{i0}};", [I[str(reg_w(it))]],
              [WIDTH[dom]])
for r in (".rzi", ".rpi", ".rmi"):
    F(f"cvt{r}.ftz.s32.f32", f"cvt{r}.ftz.s32.f32 {{o0}}, {{i0}};", ["f32"], [32])
F("cvt.rn.sat.f32.s32", "cvt.rn.sat.f32.s32 {o0}, {i0};", ["i32"], [32])
F("cvt.rn.sat.f16.u32", "cvt.rn.sat.f16.u32 {o0}, {i0};", ["i32"], [16])
FLOATS = (("f16", "f16"), ("bf16", "bf16"), ("f32", "f32"), ("f64", "f64"))
for d, dd in FLOATS:
    for s, sd in FLOATS:
        W = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
        if d == s:
            for r in ("", ".rni", ".rzi", ".rmi", ".rpi"):
                if r or d == "f32":
                    F(f"cvt{r}.{d}.{s}", f"cvt{r}.{d}.{s} {{o0}}, {{i0}};", [sd], [W[d]])
            continue
        for r in ("", ".rn", ".rz", ".rm", ".rp"):
            F(f"cvt{r}.{d}.{s}", f"cvt{r}.{d}.{s} {{o0}}, {{i0}};", [sd], [W[d]])
for x in ("cvt.ftz.f32.f32", "cvt.sat.f32.f32", "cvt.rni.ftz.f32.f32", "cvt.ftz.f32.f16",
          "cvt.rn.ftz.f32.f64", "cvt.rn.sat.f32.f64", "cvt.rn.ftz.f16.f32",
          "cvt.rn.sat.f16.f32", "cvt.rz.sat.f32.f32", "cvt.ftz.f64.f32", "cvt.sat.f64.f32"):
    parts = x.split(".")
    F(x, x + " {o0}, {i0};", [parts[-1]], [WIDTH[parts[-2]]])
for r in (".rna", ".rn", ".rz", ".rna.satfinite"):
    F(f"cvt{r}.tf32.f32", f"cvt{r}.tf32.f32 {{o0}}, {{i0}};", ["f32"], [32])
for t in ("f16x2", "bf16x2"):
    for m in (".rn", ".rz", ".rn.relu", ".rn.satfinite", ".rz.relu.satfinite"):
        F(f"cvt{m}.{t}.f32", f"cvt{m}.{t}.f32 {{o0}}, {{i0}}, {{i1}};", ["f32", "f32"], [32])
for m in (".rn.relu", ".rn.satfinite", ".rz.relu"):
    for t in ("f16", "bf16"):
        F(f"cvt{m}.{t}.f32", f"cvt{m}.{t}.f32 {{o0}}, {{i0}};", ["f32"], [16])
# --- added later (kept last so the seeded vectors of the forms above do not move)
for op in ("min", "max"):
    for t in ("f32", "f16", "f16x2", "bf16", "bf16x2"):
        bin_(f"{op}.xorsign.abs.{t}", t)
        bin_(f"{op}.NaN.xorsign.abs.{t}", t)
    bin_(f"{op}.relu.s32", "i32")
    for t in ("s16x2", "u16x2"):
        bin_(f"{op}.{t}", "i32")
    bin_(f"{op}.relu.s16x2", "i32")
for m in ("wrap", "clamp"):
    for t in ("s32", "u32"):
        bin_(f"szext.{m}.{t}", "i32", "sh")
ter("fns.b32", "i32", doms=["i32", "sh", "off"])

# ---------------------------------------------------------------- PTX generation


def ptx_for(tmpl, doms, outs):
    regs = {16: "%h", 32: "%r", 64: "%rd"}
    load = []
    names = {}
    for i, dom in enumerate(doms):
        w = WIDTH[dom]
        src = f"%x{i}"
        if w == 64:
            names[f"i{i}"] = src
        elif w == 32:
            load.append(f"cvt.u32.u64 %r{i}, {src};")
            names[f"i{i}"] = f"%r{i}"
        else:
            load.append(f"cvt.u16.u64 %h{i}, {src};")
            names[f"i{i}"] = f"%h{i}"
    store = []
    for j, w in enumerate(outs):
        r = f"{regs[w]}{8 + j}"
        names[f"o{j}"] = r
        if w == 64:
            store.append(f"mov.b64 %y{j}, {r};")
        elif w == 32:
            store.append(f"cvt.u64.u32 %y{j}, {r};")
        else:
            store.append(f"cvt.u64.u16 %y{j}, {r};")
    names["t0"] = "%r12"
    body = tmpl.format(**names)
    ins = "".join(f"ld.global.u64 %x{i}, [%a{i}];\n" for i in range(len(doms)))
    ptrs = "".join(f"ld.param.u64 %a{i}, [p{i}]; add.u64 %a{i}, %a{i}, %off;\n"
                   for i in range(len(doms)))
    stores = "".join(f"ld.param.u64 %q, [o{j}]; add.u64 %q, %q, %off; st.global.u64 [%q], %y{j};\n"
                     for j in range(len(outs)))
    return f"""
.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3,
                  .param .u64 o0, .param .u64 o1, .param .u32 n)
{{
.reg .b16 %h<16>; .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %pp;
.reg .b64 %a<4>; .reg .b64 %x<4>; .reg .b64 %y<2>; .reg .b64 %q; .reg .b64 %off;
.reg .b32 %ti, %ci, %ni, %nn;
mov.u32 %ti, %tid.x; mov.u32 %ci, %ctaid.x; mov.u32 %ni, %ntid.x;
mad.lo.u32 %ti, %ci, %ni, %ti;
ld.param.u32 %nn, [n]; setp.ge.u32 %pp, %ti, %nn; @%pp ret;
mul.wide.u32 %off, %ti, 8;
{ptrs}{ins}{chr(10).join(load)}
{body}
{chr(10).join(store)}
{stores}ret;
}}
"""


# ---------------------------------------------------------------- driver


def main():
    if "--list" in sys.argv:
        for f in FORMS:
            print(f[0])
        return
    out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
    errs = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stderr
    cu = ctypes.CDLL("libcuda.so.1")

    def ck(r, what):
        if r != 0:
            raise RuntimeError(f"{what} failed: {r}")

    ck(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    ck(cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    MAXN = 4096
    bufs = []
    for _ in range(6):
        p = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), MAXN * 8), "cuMemAlloc")
        bufs.append(p)
    rng = random.Random(20240611)
    skipped = 0
    for name, tmpl, doms, outs in FORMS:
        vecs = vectors(name, doms, rng)
        ptx = ptx_for(tmpl, doms, outs).encode() + b"\0"
        logbuf = ctypes.create_string_buffer(8192)
        opts = (ctypes.c_int * 2)(5, 6)  # ERROR_LOG_BUFFER, ERROR_LOG_BUFFER_SIZE_BYTES
        vals = (ctypes.c_void_p * 2)(ctypes.cast(logbuf, ctypes.c_void_p).value, 8192)
        mod = ctypes.c_void_p()
        r = cu.cuModuleLoadDataEx(ctypes.byref(mod), ptx, 2, opts, vals)
        if r != 0:
            skipped += 1
            errs.write(f"SKIP {name}: {r} {logbuf.value.decode(errors='replace')[:300]}\n")
            continue
        fn = ctypes.c_void_p()
        ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"k"), "getfn")
        n = len(vecs)
        for i in range(len(doms)):
            col = (ctypes.c_uint64 * n)(*[v[i] for v in vecs])
            ck(cu.cuMemcpyHtoD_v2(bufs[i], col, n * 8), "htod")
        args = [ctypes.c_uint64(bufs[i].value) for i in range(6)] + [ctypes.c_uint32(n)]
        params = (ctypes.c_void_p * 7)(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        ck(cu.cuLaunchKernel(fn, (n + 127) // 128, 1, 1, 128, 1, 1, 0, None, params, None),
           "launch " + name)
        ck(cu.cuCtxSynchronize(), "sync " + name)
        res = []
        for j in range(len(outs)):
            col = (ctypes.c_uint64 * n)()
            ck(cu.cuMemcpyDtoH_v2(col, bufs[4 + j], n * 8), "dtoh")
            res.append(list(col))
        out.write(f"@{name}\n")
        for k, v in enumerate(vecs):
            o = ",".join(f"{res[j][k]:x}" for j in range(len(outs)))
            out.write(" ".join(f"{x:x}" for x in v) + " " + o + "\n")
        cu.cuModuleUnload(mod)
    errs.write(f"{len(FORMS)} forms, {skipped} skipped\n")


if __name__ == "__main__":
    main()

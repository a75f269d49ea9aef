//! Tensor-core, matrix-movement, asynchronous-copy and mbarrier
//! instructions: their decoded forms ([`MmaOp`], carried by
//! [`Op::Mma`](crate::Op::Mma)) and the fragment layouts that say which
//! lane and register hold which matrix element.
//!
//! Fragment layouts come from the PTX ISA where it pins them down (`mma`,
//! `ldmatrix`, `wgmma` register fragments). `wmma` fragments are officially
//! opaque; warpsim uses the layout an H200 gives them, recorded with
//! fragment probes (`tests/mma/gpu/mma_gpu.cu`, `tests/mma/golden/probe_*`):
//! m16n16k16 and m32n8k16 fragments are stacks of `mma.m16n8k16` fragments,
//! m8n32k16 is the transpose of m32n8k16 (A and B swap roles), and `.f16` A/B
//! fragments, which have 16 slots for fewer distinct elements, repeat them.
//! The layout does not depend on the `.row`/`.col` memory layout.

use crate::inst::{Addr, RegRef, Space};

/// Element type of a matrix operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MmaType {
    F16,
    BF16,
    TF32,
    F32,
    F64,
    S8,
    U8,
    S32,
}

impl MmaType {
    pub fn from_ptx(s: &str) -> Option<Self> {
        Some(match s {
            "f16" => MmaType::F16,
            "bf16" => MmaType::BF16,
            "tf32" => MmaType::TF32,
            "f32" => MmaType::F32,
            "f64" => MmaType::F64,
            "s8" => MmaType::S8,
            "u8" => MmaType::U8,
            "s32" => MmaType::S32,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            MmaType::F16 => "f16",
            MmaType::BF16 => "bf16",
            MmaType::TF32 => "tf32",
            MmaType::F32 => "f32",
            MmaType::F64 => "f64",
            MmaType::S8 => "s8",
            MmaType::U8 => "u8",
            MmaType::S32 => "s32",
        }
    }

    /// Bits one element occupies in a register or in memory (tf32: 32).
    pub fn bits(self) -> u32 {
        match self {
            MmaType::F16 | MmaType::BF16 => 16,
            MmaType::TF32 | MmaType::F32 | MmaType::S32 => 32,
            MmaType::F64 => 64,
            MmaType::S8 | MmaType::U8 => 8,
        }
    }

    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }

    /// Elements packed in one register (`.f16x2`: 2, four bytes: 4; f64 in a 64-bit register: 1).
    pub fn per_reg(self) -> u32 {
        if self.bits() >= 32 {
            1
        } else {
            32 / self.bits()
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, MmaType::S8 | MmaType::U8 | MmaType::S32)
    }
}

/// Which instruction family a fragment belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// `mma.sync.aligned`: one warp.
    Mma,
    /// `wmma.*`: one warp.
    Wmma,
    /// `wgmma.mma_async`: one warpgroup (128 threads); lanes 0..127.
    Wgmma,
}

/// A matrix operand: A (M x K), B (K x N), or the accumulator C/D (M x N).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mat {
    A,
    B,
    C,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl Shape {
    /// `"m16n8k16"` -> 16, 8, 16.
    pub fn parse(s: &str) -> Option<Shape> {
        let rest = s.strip_prefix('m')?;
        let (m, rest) = rest.split_once('n')?;
        let (n, k) = rest.split_once('k')?;
        Some(Shape { m: m.parse().ok()?, n: n.parse().ok()?, k: k.parse().ok()? })
    }

    pub fn name(&self) -> String {
        format!("m{}n{}k{}", self.m, self.n, self.k)
    }

    /// Rows and columns of operand `mat`.
    pub fn dims(&self, mat: Mat) -> (u32, u32) {
        match mat {
            Mat::A => (self.m, self.k),
            Mat::B => (self.k, self.n),
            Mat::C => (self.m, self.n),
        }
    }
}

/// A fragment: which family, shape, operand and element type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frag {
    pub family: Family,
    pub shape: Shape,
    pub mat: Mat,
    pub ty: MmaType,
}

impl Frag {
    /// Whether warpsim knows this fragment's layout.
    pub fn supported(&self) -> bool {
        self.layout_kind().is_some()
    }

    /// Element slots each thread holds (for `.f16` wmma A/B fragments, more
    /// than the distinct elements: the rest repeat them).
    pub fn slots(&self) -> u32 {
        if self.family == Family::Wmma && self.mat != Mat::C && self.ty == MmaType::F16 {
            16
        } else {
            self.distinct()
        }
    }

    /// Distinct elements each thread holds.
    pub fn distinct(&self) -> u32 {
        let (r, c) = self.shape.dims(self.mat);
        let threads = if self.family == Family::Wgmma { 128 } else { 32 };
        r * c / threads
    }

    /// Registers the fragment occupies.
    pub fn regs(&self) -> u32 {
        self.slots().div_ceil(self.ty.per_reg())
    }

    /// (row, column) in the operand's matrix of slot `slot` of thread `lane`
    /// (0..32, or 0..128 for wgmma).
    pub fn pos(&self, lane: u32, slot: u32) -> (u32, u32) {
        let e = slot % self.distinct();
        match self.family {
            Family::Mma => mma_pos(self.shape, self.mat, self.ty, lane, e),
            Family::Wmma => wmma_pos(self.shape, self.mat, self.ty, lane, e),
            Family::Wgmma => {
                let (w, l) = (lane / 32, lane % 32);
                let tile = Shape { m: 16, n: 8, k: self.shape.k };
                match self.mat {
                    Mat::A => {
                        let (r, c) = mma_pos(tile, Mat::A, self.ty, l, e);
                        (16 * w + r, c)
                    }
                    Mat::C => {
                        let (r, c) = mma_pos(tile, Mat::C, self.ty, l, e % 4);
                        (16 * w + r, 8 * (e / 4) + c)
                    }
                    Mat::B => (0, 0),
                }
            }
        }
    }

    fn layout_kind(&self) -> Option<()> {
        let Shape { m, n, k } = self.shape;
        let t = self.ty;
        let input = self.mat != Mat::C;
        let f16ish = matches!(t, MmaType::F16 | MmaType::BF16);
        let i8ish = matches!(t, MmaType::S8 | MmaType::U8);
        let ok = match self.family {
            Family::Mma => match (m, n, k) {
                (16, 8, 16) => {
                    if input {
                        f16ish || i8ish
                    } else {
                        matches!(t, MmaType::F32 | MmaType::F16 | MmaType::S32)
                    }
                }
                (16, 8, 8) => {
                    if input {
                        f16ish || t == MmaType::TF32 || t == MmaType::F64
                    } else {
                        matches!(t, MmaType::F32 | MmaType::F16 | MmaType::F64)
                    }
                }
                (16, 8, 4) => {
                    if input {
                        t == MmaType::TF32 || t == MmaType::F64
                    } else {
                        matches!(t, MmaType::F32 | MmaType::F64)
                    }
                }
                (16, 8, 32) => {
                    if input {
                        i8ish
                    } else {
                        t == MmaType::S32
                    }
                }
                (8, 8, 16) => {
                    if input {
                        i8ish
                    } else {
                        t == MmaType::S32
                    }
                }
                (8, 8, 4) => t == MmaType::F64,
                _ => false,
            },
            Family::Wmma => match (m, n, k) {
                (16, 16, 16) | (32, 8, 16) | (8, 32, 16) => {
                    if input {
                        f16ish || i8ish
                    } else {
                        matches!(t, MmaType::F32 | MmaType::F16 | MmaType::S32)
                    }
                }
                (16, 16, 8) => {
                    if input {
                        t == MmaType::TF32
                    } else {
                        t == MmaType::F32
                    }
                }
                (8, 8, 4) => t == MmaType::F64,
                _ => false,
            },
            Family::Wgmma => {
                m == 64
                    && n % 8 == 0
                    && (8..=256).contains(&n)
                    && self.mat != Mat::B
                    && match (k, input) {
                        (16, true) => f16ish,
                        (8, true) => t == MmaType::TF32,
                        (32, true) => i8ish,
                        (16 | 8, false) => matches!(t, MmaType::F32 | MmaType::F16) && !(k == 8 && t == MmaType::F16),
                        (32, false) => t == MmaType::S32,
                        _ => false,
                    }
            }
        };
        ok.then_some(())
    }
}

/// `mma.sync` fragments (PTX ISA, "Matrix fragments for mma.mMnNkK").
fn mma_pos(s: Shape, mat: Mat, ty: MmaType, lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane >> 2, lane & 3);
    match mat {
        Mat::C => {
            if s.m == 8 {
                (g, 2 * t + i)
            } else {
                (g + 8 * (i >> 1), 2 * t + (i & 1))
            }
        }
        Mat::A => match (ty.bits(), s.m, s.k) {
            (16, _, 16) => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
            (16, _, 8) => (g + 8 * (i >> 1), 2 * t + (i & 1)),
            (8, 8, 16) => (g, 4 * t + i),
            (8, _, 16) => (g + 8 * (i >> 2), 4 * t + (i & 3)),
            (8, _, 32) => (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
            (_, 8, 4) => (g, t),
            (_, _, 4) => (g + 8 * i, t),
            _ => (g + 8 * (i & 1), t + 4 * (i >> 1)),
        },
        Mat::B => match (ty.bits(), s.k) {
            (16, 16) => (2 * t + (i & 1) + 8 * (i >> 1), g),
            (16, _) => (2 * t + i, g),
            (8, 32) => (4 * t + (i & 3) + 16 * (i >> 2), g),
            (8, _) => (4 * t + i, g),
            (_, 4) => (t, g),
            _ => (t + 4 * i, g),
        },
    }
}

/// `wmma` fragments, as an H200 lays them out.
fn wmma_pos(s: Shape, mat: Mat, ty: MmaType, lane: u32, e: u32) -> (u32, u32) {
    if s.m == 8 && s.n == 32 {
        // The transpose of m32n8k16: A <-> B^T, C <-> C^T.
        let t = Shape { m: 32, n: 8, k: 16 };
        let (r, c) = match mat {
            Mat::A => wmma_pos(t, Mat::B, ty, lane, e),
            Mat::B => wmma_pos(t, Mat::A, ty, lane, e),
            Mat::C => wmma_pos(t, Mat::C, ty, lane, e),
        };
        return (c, r);
    }
    if s.m == 8 {
        // m8n8k4 f64: one mma.m8n8k4.
        return mma_pos(s, mat, ty, lane, e);
    }
    let tile = Shape { m: 16, n: 8, k: s.k };
    match mat {
        Mat::A => {
            let per = mma_frag_len(tile, Mat::A, ty);
            let (r, c) = mma_pos(tile, Mat::A, ty, lane, e % per);
            (r + 16 * (e / per), c)
        }
        Mat::B => {
            let per = mma_frag_len(tile, Mat::B, ty);
            let (r, c) = mma_pos(tile, Mat::B, ty, lane, e % per);
            (r, c + 8 * (e / per))
        }
        Mat::C => {
            let (r, c) = mma_pos(tile, Mat::C, ty, lane, e % 4);
            let tile_i = e / 4;
            if s.n == 16 {
                (r, c + 8 * tile_i)
            } else {
                (r + 16 * tile_i, c)
            }
        }
    }
}

fn mma_frag_len(s: Shape, mat: Mat, ty: MmaType) -> u32 {
    Frag { family: Family::Mma, shape: s, mat, ty }.distinct()
}

// ---- decoded instructions --------------------------------------------------------------

/// One decoded instruction of these families (boxed in [`Op::Mma`](crate::Op::Mma)).
#[derive(Clone, Debug, PartialEq)]
pub enum MmaOp {
    /// `mma.sync.aligned` and `wmma.mma.sync.aligned`: D = A * B + C, warp-wide.
    Mma(MmaSync),
    /// `wmma.load.{a,b,c}`.
    WmmaLoad { frag: Frag, col_major: bool, space: Space, addr: Addr, stride: Option<RegRef>, d: Vec<RegRef> },
    /// `wmma.store.d`.
    WmmaStore { frag: Frag, col_major: bool, space: Space, addr: Addr, stride: Option<RegRef>, s: Vec<RegRef> },
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.b16`.
    LdMatrix { num: u8, trans: bool, space: Space, addr: Addr, d: Vec<RegRef> },
    /// `stmatrix.sync.aligned.m8n8.xN{.trans}.b16`.
    StMatrix { num: u8, trans: bool, space: Space, addr: Addr, s: Vec<RegRef> },
    /// `movmatrix.sync.aligned.m8n8.trans.b16`.
    MovMatrix { d: RegRef, a: RegRef },
    /// `cp.async.{ca,cg}.shared.global`: `size` bytes, of which `src_size`
    /// (all when `None`) come from the source and the rest are zeros; with
    /// `ignore_src` true, all are zeros.
    CpAsync {
        size: u8,
        dst: Addr,
        dst_space: Space,
        src: Addr,
        src_space: Space,
        src_size: Option<RegRef>,
        ignore_src: Option<(u32, bool)>,
    },
    /// `cp.async.mbarrier.arrive{.noinc}`.
    CpAsyncMbarrierArrive { noinc: bool, space: Space, addr: Addr },
    /// `mbarrier.*`.
    Mbarrier { kind: MbarKind, space: Space, addr: Addr },
    /// `mbarrier.pending_count.b64 d, state`.
    MbarPendingCount { d: RegRef, state: RegRef },
    /// `cp.async.bulk` (non-tensor): `size` bytes.
    Bulk { dir: BulkDir, dst: Addr, src: Addr, size: RegRef, mbar: Option<Addr> },
    /// `cp.async.bulk.tensor.Nd`: a box of the tensor map at `tmap` with
    /// origin `coords`, loaded into shared memory (completing on `mbar`) or
    /// stored from it.
    BulkTensor { load: bool, dims: u8, smem: Addr, tmap: RegRef, coords: Vec<RegRef>, mbar: Option<Addr> },
    /// `wgmma.mma_async`.
    Wgmma(Box<Wgmma>),
    /// Ordering and completion instructions that are no-ops in the
    /// functional engine, since their asynchronous operations complete at
    /// issue: `cp.async.commit_group`/`wait_group`/`wait_all`,
    /// `cp.async.bulk.commit_group`/`wait_group`, `wgmma.fence`,
    /// `wgmma.commit_group`/`wait_group`, `setmaxnreg`, bulk prefetches.
    Sync(SyncKind),
}

/// Warps in a warpgroup (`wgmma`): warp w belongs to warpgroup w / 4.
pub const WARPGROUP_WARPS: u32 = 4;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SyncKind {
    CpAsyncCommit,
    CpAsyncWait,
    BulkCommit,
    BulkWait,
    WgmmaFence,
    WgmmaCommit,
    WgmmaWait,
    SetMaxNReg,
    /// `cp.async.bulk.prefetch{.tensor}`.
    Prefetch,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BulkDir {
    /// global -> shared, completing on an mbarrier.
    GlobalToShared,
    /// shared -> global, tracked by bulk async-groups.
    SharedToGlobal,
    /// shared::cta -> shared::cluster (this CTA's shared memory), completing on an mbarrier.
    SharedToShared,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MbarKind {
    Init {
        count: RegRef,
    },
    Inval,
    /// `arrive`, `arrive_drop`, with `.expect_tx` and `.noComplete`;
    /// `state` receives the state token.
    Arrive {
        state: Option<RegRef>,
        count: Option<RegRef>,
        drop: bool,
        expect_tx: Option<RegRef>,
        no_complete: bool,
    },
    ExpectTx {
        tx: RegRef,
    },
    CompleteTx {
        tx: RegRef,
    },
    /// `test_wait` / `try_wait` (`.parity`: `arg` is the phase parity, else the state token).
    Wait {
        p: u32,
        parity: bool,
        arg: RegRef,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct MmaSync {
    pub family: Family,
    pub shape: Shape,
    pub atype: MmaType,
    pub btype: MmaType,
    pub ctype: MmaType,
    pub dtype: MmaType,
    pub satfinite: bool,
    pub d: Vec<RegRef>,
    pub a: Vec<RegRef>,
    pub b: Vec<RegRef>,
    pub c: Vec<RegRef>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum WgmmaA {
    /// A shared-memory matrix descriptor (a 64-bit register).
    Desc(RegRef),
    /// Registers holding the warp's 16 rows of A.
    Regs(Vec<RegRef>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Wgmma {
    pub shape: Shape,
    pub atype: MmaType,
    pub btype: MmaType,
    pub dtype: MmaType,
    pub d: Vec<RegRef>,
    pub a: WgmmaA,
    pub b_desc: RegRef,
    /// `scale-d`: D = A*B + D when true, A*B when false. A predicate (negated?) or a constant.
    pub scale_d: Result<(u32, bool), bool>,
    pub neg_a: bool,
    pub neg_b: bool,
    pub trans_a: bool,
    pub trans_b: bool,
    /// `.satfinite` (integer forms): clamp instead of wrapping.
    pub satfinite: bool,
}

impl MmaOp {
    /// Whether the instruction is executed by a whole warpgroup (four
    /// consecutive warps, the first a multiple of 4) rather than one warp.
    pub fn warpgroup_wide(&self) -> bool {
        matches!(
            self,
            MmaOp::Wgmma(_) | MmaOp::Sync(SyncKind::WgmmaFence | SyncKind::WgmmaCommit | SyncKind::WgmmaWait | SyncKind::SetMaxNReg)
        )
    }
}

// ---- shared-memory matrix descriptors (wgmma) ---------------------------------------------

/// A decoded `wgmma` shared-memory matrix descriptor (PTX ISA, "Matrix
/// Descriptor Format").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Start address in shared memory (bytes).
    pub start: u32,
    /// Leading dimension byte offset.
    pub lbo: u32,
    /// Stride dimension byte offset.
    pub sbo: u32,
    pub base_offset: u32,
    /// Swizzle width in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
}

impl MatrixDesc {
    pub fn decode(d: u64) -> MatrixDesc {
        MatrixDesc {
            start: ((d & 0x3FFF) << 4) as u32,
            lbo: (((d >> 16) & 0x3FFF) << 4) as u32,
            sbo: (((d >> 32) & 0x3FFF) << 4) as u32,
            base_offset: ((d >> 49) & 7) as u32,
            swizzle: match d >> 62 {
                0 => 0,
                1 => 128,
                2 => 64,
                _ => 32,
            },
        }
    }

    /// Shared-memory byte address of element (`mn`, `k`) of an operand with
    /// `elem_bytes`-byte elements: `mn` indexes M (for A) or N (for B).
    /// `k_major`: K is the contiguous dimension (imm-trans = 0). The
    /// canonical layouts of the PTX ISA ("Shared Memory Matrix Layout"):
    /// with T = 16 / elem_bytes elements per 16 bytes and S = swizzle / 16,
    ///
    /// * K-major, no swizzle: ((8,m),(T,2k)):((1T,SBO),(1,LBO))
    /// * K-major, swizzled:   ((8,m),(T,2k)):((S*T,SBO),(1,T))
    /// * MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
    /// * MN-major, swizzled:  ((T,S,m),(8,k)):((1,T,LBO),(S*T,SBO))
    ///
    /// followed by the swizzle on the address bits: bits [4, 4+log2 S)
    /// are XORed with the bits 3 places above them.
    pub fn address(&self, mn: u32, k: u32, elem_bytes: u32, k_major: bool) -> u32 {
        let t = 16 / elem_bytes;
        let s = self.swizzle / 16;
        let (lbo, sbo) = (self.lbo / elem_bytes, self.sbo / elem_bytes);
        let el = if k_major {
            if s == 0 {
                (mn % 8) * t + (mn / 8) * sbo + (k % t) + (k / t) * lbo
            } else {
                // Within one swizzle atom along K (an instruction's K extent never exceeds it).
                (mn % 8) * s * t + (mn / 8) * sbo + k
            }
        } else if s == 0 {
            (mn % t) + (mn / t) * sbo + (k % 8) * t + (k / 8) * lbo
        } else {
            (mn % (s * t)) + (mn / (s * t)) * lbo + (k % 8) * s * t + (k / 8) * sbo
        };
        let addr = self.start.wrapping_add(el.wrapping_mul(elem_bytes));
        let mask = s.saturating_sub(1);
        addr ^ (((addr >> 7) & mask) << 4)
    }
}

// ---- tensor maps ---------------------------------------------------------------------------

/// warpsim's encoding of a tensor map (the 128-byte `CUtensorMap` kernel
/// parameter of `cp.async.bulk.tensor`). NVIDIA's own encoding is opaque
/// (the CUDA driver fills it in `cuTensorMapEncodeTiled`), so warpsim reads
/// this documented one instead; [`TensorMap::encode`] builds it. Little-endian:
///
/// | bytes | field |
/// |---|---|
/// | 0..8 | magic `WSTMAP01` |
/// | 8..16 | global address |
/// | 16 | rank (1..5) |
/// | 17 | element size in bytes (1, 2, 4, 8) |
/// | 18 | swizzle: 0 none, 1 32B, 2 64B, 3 128B |
/// | 19 | out-of-bounds fill: 0 zeros, 1 NaN (floats) |
/// | 20..40 | global dimensions (u32 x 5, elements) |
/// | 40..72 | global strides of dimensions 1..4 (u64 x 4, bytes) |
/// | 72..82 | box dimensions (u16 x 5, elements) |
/// | 82..87 | element strides (u8 x 5) |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub address: u64,
    pub rank: u32,
    pub elem_bytes: u32,
    /// Swizzle width in bytes: 0, 32, 64, 128.
    pub swizzle: u32,
    pub nan_fill: bool,
    pub dims: [u64; 5],
    /// Byte strides; `strides[0]` is the element size.
    pub strides: [u64; 5],
    pub box_dims: [u32; 5],
    pub elem_strides: [u32; 5],
}

pub const TENSOR_MAP_MAGIC: &[u8; 8] = b"WSTMAP01";

impl TensorMap {
    /// A tiled tensor map of `dims` (innermost first) with byte `strides` for
    /// dimensions 1.., copying boxes of `box_dims`.
    pub fn tiled(address: u64, elem_bytes: u32, dims: &[u64], strides: &[u64], box_dims: &[u32], swizzle: u32) -> TensorMap {
        let mut t = TensorMap {
            address,
            rank: dims.len() as u32,
            elem_bytes,
            swizzle,
            nan_fill: false,
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            elem_strides: [1; 5],
        };
        t.dims[..dims.len()].copy_from_slice(dims);
        t.strides[0] = elem_bytes as u64;
        t.strides[1..1 + strides.len()].copy_from_slice(strides);
        t.box_dims[..box_dims.len()].copy_from_slice(box_dims);
        t
    }

    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[..8].copy_from_slice(TENSOR_MAP_MAGIC);
        b[8..16].copy_from_slice(&self.address.to_le_bytes());
        b[16] = self.rank as u8;
        b[17] = self.elem_bytes as u8;
        b[18] = match self.swizzle {
            32 => 1,
            64 => 2,
            128 => 3,
            _ => 0,
        };
        b[19] = self.nan_fill as u8;
        for i in 0..5 {
            b[20 + 4 * i..24 + 4 * i].copy_from_slice(&(self.dims[i] as u32).to_le_bytes());
            b[72 + 2 * i..74 + 2 * i].copy_from_slice(&(self.box_dims[i] as u16).to_le_bytes());
            b[82 + i] = self.elem_strides[i] as u8;
        }
        for i in 0..4 {
            b[40 + 8 * i..48 + 8 * i].copy_from_slice(&self.strides[i + 1].to_le_bytes());
        }
        b
    }

    pub fn decode(b: &[u8; 128]) -> Result<TensorMap, String> {
        if &b[..8] != TENSOR_MAP_MAGIC {
            return Err("the tensor map is not in warpsim's encoding (NVIDIA's CUtensorMap contents are opaque and not supported; \
                        build the 128 bytes with warpsim_ir::mma::TensorMap::encode, magic `WSTMAP01`)"
                .into());
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let mut t = TensorMap {
            address: u64::from_le_bytes(b[8..16].try_into().unwrap()),
            rank: b[16] as u32,
            elem_bytes: b[17] as u32,
            swizzle: match b[18] {
                0 => 0,
                1 => 32,
                2 => 64,
                3 => 128,
                s => return Err(format!("tensor map swizzle code {s} is not one of 0..3")),
            },
            nan_fill: b[19] != 0,
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            elem_strides: [1; 5],
        };
        if !(1..=5).contains(&t.rank) || ![1, 2, 4, 8].contains(&t.elem_bytes) {
            return Err(format!("tensor map rank {} or element size {} is invalid", t.rank, t.elem_bytes));
        }
        t.strides[0] = t.elem_bytes as u64;
        for i in 0..5 {
            t.dims[i] = u32_at(20 + 4 * i) as u64;
            t.box_dims[i] = u16::from_le_bytes(b[72 + 2 * i..74 + 2 * i].try_into().unwrap()) as u32;
            t.elem_strides[i] = b[82 + i] as u32;
        }
        for i in 0..4 {
            t.strides[i + 1] = u64::from_le_bytes(b[40 + 8 * i..48 + 8 * i].try_into().unwrap());
        }
        for i in 0..t.rank as usize {
            if t.box_dims[i] == 0 || t.box_dims[i] > 256 {
                return Err(format!("tensor map box dimension {i} is {} (1..256)", t.box_dims[i]));
            }
            if t.elem_strides[i] != 1 {
                return Err("tensor map element strides other than 1 are not supported".into());
            }
        }
        if t.swizzle != 0 && t.box_dims[0] * t.elem_bytes > t.swizzle {
            return Err(format!("tensor map inner box of {} bytes exceeds the {}-byte swizzle", t.box_dims[0] * t.elem_bytes, t.swizzle));
        }
        Ok(t)
    }

    /// Bytes in one box.
    pub fn box_bytes(&self) -> u64 {
        self.box_dims[..self.rank as usize].iter().map(|&d| d as u64).product::<u64>() * self.elem_bytes as u64
    }
}

// ---- explaining fragment layouts -------------------------------------------------------------

/// Parses `[mma.|wmma.|wgmma.]mMnNkK[.type]` (default `mma`, the type
/// defaulting to f16, tf32, s8 or f64 by shape).
pub fn parse_explain(spec: &str) -> Result<(Family, Shape, MmaType), String> {
    let mut parts: Vec<&str> = spec.split('.').collect();
    let family = match parts.first().copied() {
        Some("mma") => {
            parts.remove(0);
            Family::Mma
        }
        Some("wmma") => {
            parts.remove(0);
            Family::Wmma
        }
        Some("wgmma") => {
            parts.remove(0);
            Family::Wgmma
        }
        _ => Family::Mma,
    };
    let shape = parts.first().and_then(|s| Shape::parse(s)).ok_or_else(|| format!("`{spec}`: expected a shape such as m16n8k16"))?;
    let family = if family == Family::Mma && shape.m == 64 { Family::Wgmma } else { family };
    let ty = match parts.get(1) {
        Some(t) => MmaType::from_ptx(t).ok_or_else(|| format!("`{t}` is not an MMA element type"))?,
        None => match (family, shape.m, shape.n, shape.k) {
            (_, 8, 8, 4) => MmaType::F64,
            (Family::Mma, 16, 8, 4) | (Family::Wmma, 16, 16, 8) | (Family::Wgmma, _, _, 8) => MmaType::TF32,
            (Family::Mma, _, _, 32) | (Family::Mma, 8, 8, 16) | (Family::Wgmma, _, _, 32) => MmaType::S8,
            _ => MmaType::F16,
        },
    };
    let acc = accumulator_type(ty);
    for (mat, t) in [(Mat::A, ty), (Mat::B, ty), (Mat::C, acc)] {
        let f = Frag { family, shape, mat, ty: t };
        if mat == Mat::B && family == Family::Wgmma {
            continue;
        }
        if !f.supported() {
            return Err(format!("{} {} with {} elements is not a supported fragment", family_name(family), shape.name(), ty.name()));
        }
    }
    Ok((family, shape, ty))
}

fn accumulator_type(ty: MmaType) -> MmaType {
    match ty {
        MmaType::S8 | MmaType::U8 => MmaType::S32,
        MmaType::F64 => MmaType::F64,
        _ => MmaType::F32,
    }
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::Mma => "mma.sync",
        Family::Wmma => "wmma",
        Family::Wgmma => "wgmma",
    }
}

/// For each element of operand `mat`, the holder: (thread, slot) of its first copy.
fn owner_grid(family: Family, shape: Shape, mat: Mat, ty: MmaType) -> Vec<Vec<Option<(u32, u32)>>> {
    let (rows, cols) = shape.dims(mat);
    let mut grid = vec![vec![None; cols as usize]; rows as usize];
    let f = Frag { family, shape, mat, ty };
    let threads = if family == Family::Wgmma { 128 } else { 32 };
    for lane in 0..threads {
        for slot in 0..f.distinct() {
            let (r, c) = f.pos(lane, slot);
            let cell = &mut grid[r as usize][c as usize];
            if cell.is_none() {
                *cell = Some((lane, slot));
            }
        }
    }
    grid
}

/// The fragment layout of a shape as text no wider than `width` columns:
/// for A, B and C, a grid whose cell (row, col) says which thread and
/// element hold it (`T5:a2`: thread 5, element a2 of its fragment; each
/// `.f16x2` register holds two consecutive elements). Wide matrices are
/// printed in column bands.
pub fn explain(spec: &str, width: usize) -> Result<String, String> {
    let (family, shape, ty) = parse_explain(spec)?;
    let acc = accumulator_type(ty);
    let mut out = String::new();
    out.push_str(&format!(
        "{} {}: A {} x {} ({}), B {} x {} ({}), C/D {} x {} ({})\n",
        family_name(family),
        shape.name(),
        shape.m,
        shape.k,
        ty.name(),
        shape.k,
        shape.n,
        ty.name(),
        shape.m,
        shape.n,
        acc.name()
    ));
    out.push_str("cell = thread:element (T5:a2 = element a2 of thread 5's fragment)\n");
    out.push_str(&format!(
        "elements per register: {} for {}, {} for {}; element i is in register i / that\n",
        ty.per_reg(),
        ty.name(),
        acc.per_reg(),
        acc.name()
    ));
    if family == Family::Wgmma {
        out.push_str("threads 0..127 of the warpgroup; warp w = thread / 32 holds rows 16w .. 16w+15\n");
        out.push_str("B is read from shared memory through a matrix descriptor\n");
    }
    if family == Family::Wmma {
        out.push_str("wmma layouts are opaque in the PTX ISA: this is the one an H200 uses\n");
        out.push_str("(the .row/.col memory layout does not change it)\n");
    }
    for (mat, t, letter) in [(Mat::A, ty, 'a'), (Mat::B, ty, 'b'), (Mat::C, acc, 'c')] {
        if family == Family::Wgmma && mat == Mat::B {
            continue;
        }
        let grid = owner_grid(family, shape, mat, t);
        let (rows, cols) = shape.dims(mat);
        let name = match mat {
            Mat::A => "A",
            Mat::B => "B",
            Mat::C => "C/D",
        };
        let cell = |o: Option<(u32, u32)>| match o {
            Some((l, s)) => format!("T{l}:{letter}{s}"),
            None => "-".into(),
        };
        let cw = grid.iter().flatten().map(|&o| cell(o).len()).max().unwrap_or(1) + 1;
        let label_w = format!("{}", rows - 1).len() + 2;
        let mut per_band = ((width.saturating_sub(label_w)) / cw).max(1) as u32;
        if per_band < cols && per_band >= 8 {
            // Bands of whole 8-column groups (the fragments' tiles).
            per_band = per_band / 8 * 8;
        }
        out.push('\n');
        out.push_str(&format!("{name} ({rows} x {cols}):\n"));
        let mut c0 = 0;
        while c0 < cols {
            let c1 = (c0 + per_band).min(cols);
            let mut line = " ".repeat(label_w);
            for c in c0..c1 {
                line.push_str(&format!("{:>cw$}", c, cw = cw));
            }
            out.push_str(line.trim_end());
            out.push('\n');
            for r in 0..rows {
                let mut line = format!("{:>w$}  ", r, w = label_w - 2);
                for c in c0..c1 {
                    line.push_str(&format!("{:>cw$}", cell(grid[r as usize][c as usize]), cw = cw));
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
            c0 = c1;
        }
    }
    Ok(out)
}

/// The same layout as an HTML fragment (one table per operand, cells
/// coloured by thread), for reports.
pub fn explain_html(spec: &str) -> Result<String, String> {
    let (family, shape, ty) = parse_explain(spec)?;
    let acc = accumulator_type(ty);
    let mut out = format!("<div class=\"mma-layout\"><h3>{} {} ({})</h3>\n", family_name(family), shape.name(), ty.name());
    for (mat, t, letter) in [(Mat::A, ty, 'a'), (Mat::B, ty, 'b'), (Mat::C, acc, 'c')] {
        if family == Family::Wgmma && mat == Mat::B {
            continue;
        }
        let grid = owner_grid(family, shape, mat, t);
        let name = match mat {
            Mat::A => "A",
            Mat::B => "B",
            Mat::C => "C/D",
        };
        out.push_str(&format!("<table class=\"mma-frag\"><caption>{name}</caption>\n"));
        for row in &grid {
            out.push_str("<tr>");
            for o in row {
                match o {
                    Some((l, s)) => {
                        let hue = (l * 360 / 32) % 360;
                        out.push_str(&format!("<td style=\"background:hsl({hue},70%,85%)\">T{l}:{letter}{s}</td>"));
                    }
                    None => out.push_str("<td>-</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
    out.push_str("</div>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_once(f: Frag) {
        let (rows, cols) = f.shape.dims(f.mat);
        let threads = if f.family == Family::Wgmma { 128 } else { 32 };
        let mut seen = vec![0u32; (rows * cols) as usize];
        for lane in 0..threads {
            for s in 0..f.distinct() {
                let (r, c) = f.pos(lane, s);
                assert!(r < rows && c < cols, "{f:?} lane {lane} slot {s} -> ({r},{c})");
                seen[(r * cols + c) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{f:?}: every element exactly once");
    }

    #[test]
    fn every_supported_fragment_is_a_bijection() {
        use MmaType::*;
        let shapes =
            [(16, 8, 16), (16, 8, 8), (16, 8, 4), (16, 8, 32), (8, 8, 16), (8, 8, 4), (16, 16, 16), (32, 8, 16), (8, 32, 16), (16, 16, 8)];
        let mut n = 0;
        for family in [Family::Mma, Family::Wmma] {
            for &(m, nn, k) in &shapes {
                for ty in [F16, BF16, TF32, F32, F64, S8, U8, S32] {
                    for mat in [Mat::A, Mat::B, Mat::C] {
                        let f = Frag { family, shape: Shape { m, n: nn, k }, mat, ty };
                        if f.supported() {
                            covers_once(f);
                            n += 1;
                        }
                    }
                }
            }
        }
        for nn in [8, 16, 64, 256] {
            covers_once(Frag { family: Family::Wgmma, shape: Shape { m: 64, n: nn, k: 16 }, mat: Mat::C, ty: F32 });
            covers_once(Frag { family: Family::Wgmma, shape: Shape { m: 64, n: nn, k: 16 }, mat: Mat::A, ty: F16 });
        }
        assert!(n > 50);
    }

    // hardware.md §7 (from the PTX ISA): m16n8k16 f16.
    #[test]
    fn m16n8k16_matches_the_manual() {
        let s = Shape { m: 16, n: 8, k: 16 };
        let a = Frag { family: Family::Mma, shape: s, mat: Mat::A, ty: MmaType::F16 };
        assert_eq!(a.pos(5, 0), (1, 2));
        assert_eq!(a.pos(5, 3), (9, 3));
        assert_eq!(a.pos(5, 6), (9, 10));
        let b = Frag { family: Family::Mma, shape: s, mat: Mat::B, ty: MmaType::F16 };
        assert_eq!(b.pos(6, 3), (13, 1));
        let c = Frag { family: Family::Mma, shape: s, mat: Mat::C, ty: MmaType::F32 };
        assert_eq!(c.pos(31, 3), (15, 7));
        assert_eq!(a.regs(), 4);
        assert_eq!(b.regs(), 2);
        assert_eq!(c.regs(), 4);
    }

    #[test]
    fn wmma_register_counts_follow_the_manual() {
        let f = |m, n, k, mat, ty| Frag { family: Family::Wmma, shape: Shape { m, n, k }, mat, ty }.regs();
        use MmaType::*;
        assert_eq!(f(16, 16, 16, Mat::A, F16), 8);
        assert_eq!(f(8, 32, 16, Mat::B, F16), 8);
        assert_eq!(f(16, 16, 16, Mat::C, F16), 4);
        assert_eq!(f(16, 16, 16, Mat::C, F32), 8);
        assert_eq!(f(16, 16, 16, Mat::A, BF16), 4);
        assert_eq!(f(8, 32, 16, Mat::A, BF16), 2);
        assert_eq!(f(32, 8, 16, Mat::A, BF16), 8);
        assert_eq!(f(8, 32, 16, Mat::B, BF16), 8);
        assert_eq!(f(16, 16, 16, Mat::A, S8), 2);
        assert_eq!(f(32, 8, 16, Mat::A, U8), 4);
        assert_eq!(f(8, 32, 16, Mat::A, S8), 1);
        assert_eq!(f(16, 16, 8, Mat::A, TF32), 4);
        assert_eq!(f(8, 8, 4, Mat::C, F64), 2);
    }

    #[test]
    fn descriptors_and_swizzles() {
        // 128B swizzle, K-major f16: row r of 64 elements at r*128, 16-byte chunks XOR (r % 8).
        let d = MatrixDesc { start: 1024, lbo: 16, sbo: 1024, base_offset: 0, swizzle: 128 };
        assert_eq!(d.address(0, 0, 2, true), 1024);
        assert_eq!(d.address(1, 0, 2, true), 1024 + 128 + 16);
        assert_eq!(d.address(3, 9, 2, true), 1024 + 3 * 128 + ((1 ^ 3) << 4) + 2);
        assert_eq!(d.address(9, 0, 2, true), 1024 + 1024 + 128 + 16);
        let raw = (1024u64 >> 4) | (1 << 16) | (64 << 32) | (1 << 62);
        assert_eq!(MatrixDesc::decode(raw), d);
        // No swizzle, K-major: core matrices of 8 rows x 16 bytes.
        let d = MatrixDesc { start: 0, lbo: 128, sbo: 256, base_offset: 0, swizzle: 0 };
        assert_eq!(d.address(1, 1, 2, true), 16 + 2);
        assert_eq!(d.address(8, 8, 2, true), 256 + 128);
    }

    #[test]
    fn tensor_maps_round_trip() {
        let t = TensorMap::tiled(0x7f00_0000_1000, 2, &[64, 120], &[128], &[64, 64], 128);
        let b = t.encode();
        assert_eq!(TensorMap::decode(&b).unwrap(), t);
        assert_eq!(t.box_bytes(), 8192);
        let mut bad = b;
        bad[0] = 0;
        assert!(TensorMap::decode(&bad).unwrap_err().contains("not in warpsim's encoding"));
    }

    #[test]
    fn explain_fits_in_100_columns() {
        for spec in ["m16n8k16", "m16n8k8.tf32", "m16n8k32.s8", "m8n8k4", "wmma.m16n16k16", "wmma.m8n32k16.bf16", "wgmma.m64n16k16"] {
            let s = explain(spec, 100).unwrap();
            assert!(s.lines().all(|l| l.chars().count() <= 100), "{spec}:\n{s}");
            assert!(s.contains("T0:a0"), "{spec}");
        }
        let s = explain("m16n8k16", 100).unwrap();
        // Row 9 (g = 1 + 8) column 3 of A: thread 5 (g 1, t 1), element a3.
        let row9 = s.lines().skip_while(|l| !l.starts_with("A ")).find(|l| l.trim_start().starts_with("9 ")).unwrap();
        assert!(row9.contains("T5:a3"), "{row9}");
        assert!(explain("m16n8k99", 100).is_err());
        assert!(explain("wmma.m16n8k16", 100).unwrap_err().contains("not a supported fragment"));
        assert!(explain_html("m16n8k16").unwrap().contains("<table"));
    }
}

//! The decoded forms of these instructions, carried by [`Op::Mma`](crate::Op::Mma).

use super::fragment::{Family, Frag, MmaType, Shape};
use crate::inst::{Addr, RegRef, Space};

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

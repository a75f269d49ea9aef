//! Element types, shapes and fragment layouts: which lane and register
//! hold which matrix element.

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
        // Whether the type fits the A/B operands (`input`) or C/D.
        let pick = |a_b: bool, c_d: bool| if input { a_b } else { c_d };
        let ok = match self.family {
            Family::Mma => match (m, n, k) {
                (16, 8, 16) => pick(f16ish || i8ish, matches!(t, MmaType::F32 | MmaType::F16 | MmaType::S32)),
                (16, 8, 8) => {
                    pick(f16ish || t == MmaType::TF32 || t == MmaType::F64, matches!(t, MmaType::F32 | MmaType::F16 | MmaType::F64))
                }
                (16, 8, 4) => pick(t == MmaType::TF32 || t == MmaType::F64, matches!(t, MmaType::F32 | MmaType::F64)),
                (16, 8, 32) | (8, 8, 16) => pick(i8ish, t == MmaType::S32),
                (8, 8, 4) => t == MmaType::F64,
                _ => false,
            },
            Family::Wmma => match (m, n, k) {
                (16, 16, 16) | (32, 8, 16) | (8, 32, 16) => pick(f16ish || i8ish, matches!(t, MmaType::F32 | MmaType::F16 | MmaType::S32)),
                (16, 16, 8) => pick(t == MmaType::TF32, t == MmaType::F32),
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
}

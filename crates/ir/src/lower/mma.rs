//! Lowering of tensor-core (`mma`, `wmma`, `wgmma`), matrix-movement
//! (`ldmatrix`, `stmatrix`, `movmatrix`), asynchronous-copy (`cp.async`,
//! `cp.async.bulk`, `cp.async.bulk.tensor`) and `mbarrier` instructions into
//! [`Op::Mma`]. A child module of `lower`, so that it shares the lowerer's
//! operand helpers. Shapes, types and forms warpsim does not model are
//! errors that name them, never a silent approximation.

use super::{LResult, Lowerer, Mods};
use crate::inst::*;
use crate::mma::*;
use warpsim_numerics::ScalarType;
use warpsim_ptx::ast::{Instruction, Operand};

impl Lowerer<'_> {
    /// Lowers one instruction of these families (`i.opcode` is one of
    /// `mma`, `wmma`, `ldmatrix`, `stmatrix`, `movmatrix`, `cp`, `mbarrier`,
    /// `wgmma`, `setmaxnreg`).
    pub(super) fn lower_mma(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let op = match i.opcode.as_str() {
            "mma" => self.mma_sync(i, mods, full)?,
            "wmma" => self.wmma(i, mods, full)?,
            "ldmatrix" | "stmatrix" => self.ld_st_matrix(i, mods, full)?,
            "movmatrix" => {
                if !mods.has("m8n8") || !mods.has("trans") {
                    return self.unsupported_mma(i, full, ": only movmatrix.sync.aligned.m8n8.trans.b16");
                }
                self.need_ops(i, full, 2)?;
                let d = self.dst(&i.operands[0])?;
                let a = self.src(&i.operands[1], ScalarType::B32)?;
                self.want_r32(i, &[d, a])?;
                MmaOp::MovMatrix { d, a }
            }
            "cp" => self.cp_async(i, mods, full)?,
            "mbarrier" => self.mbarrier(i, mods, full)?,
            "wgmma" => self.wgmma(i, mods, full)?,
            "setmaxnreg" => MmaOp::Sync(SyncKind::SetMaxNReg),
            _ => return self.unsupported_mma(i, full, ""),
        };
        self.push(Op::Mma(Box::new(op)), guard, i.span, full);
        Ok(())
    }

    fn unsupported_mma<T>(&self, i: &Instruction, full: &str, what: &str) -> LResult<T> {
        self.err(i.span, format!("unsupported instruction `{full}`{what}"))
    }

    fn need_ops(&self, i: &Instruction, full: &str, n: usize) -> LResult<()> {
        if i.operands.len() < n {
            return self.err(i.span, format!("`{full}` expects {n} operands, found {}", i.operands.len()));
        }
        Ok(())
    }

    fn want_r32(&self, i: &Instruction, regs: &[RegRef]) -> LResult<()> {
        if regs.iter().any(|r| r.bank != Bank::R32) {
            return self.err(i.span, "operand size mismatch: expected registers of at most 32 bits");
        }
        Ok(())
    }

    /// A `{r0, r1, ...}` operand of exactly `n` registers (64-bit ones when
    /// `wide`); destinations may be `_`.
    fn reg_vec(&mut self, op: &Operand, n: u32, wide: bool, dest: bool, what: &str) -> LResult<Vec<RegRef>> {
        let items: Vec<Operand> = match op {
            Operand::Vector(items, _) => items.clone(),
            other if n == 1 => vec![other.clone()],
            other => return self.err(other.span(), format!("{what}: expected a vector of {n} registers `{{...}}`")),
        };
        if items.len() != n as usize {
            return self.err(op.span(), format!("{what}: expected {n} registers, found {}", items.len()));
        }
        let ty = if wide { ScalarType::B64 } else { ScalarType::B32 };
        let mut out = Vec::with_capacity(items.len());
        for it in &items {
            let r = if dest { self.dst(it)? } else { self.src(it, ty)? };
            let want = if wide { Bank::R64 } else { Bank::R32 };
            // A sink is a fresh 64-bit scratch register; narrow it for 32-bit fragments.
            let r = if dest && matches!(it, Operand::Sink(_)) && !wide { self.alloc_reg(ScalarType::B32) } else { r };
            if r.bank != want {
                let w = if wide { "64-bit registers" } else { "registers of at most 32 bits" };
                return self.err(it.span(), format!("{what}: expected {w}"));
            }
            out.push(r);
        }
        Ok(out)
    }

    /// The state space a memory operand of these instructions names:
    /// `.shared`, `.shared::cta` and `.shared::cluster` (a cluster of one
    /// CTA) are shared memory.
    fn space_of(mods: &Mods) -> Space {
        use Space::*;
        mods.pick("shared shared::cta shared::cluster global", [Shared, Shared, Shared, Global]).unwrap_or(Generic)
    }

    fn imm(&self, op: &Operand, what: &str) -> LResult<i64> {
        match op {
            Operand::Imm(v, _) => Ok(*v),
            other => self.err(other.span(), format!("{what} must be an immediate")),
        }
    }

    fn shape_mod(&self, i: &Instruction, mods: &Mods, full: &str) -> LResult<Shape> {
        match mods.raw.iter().find_map(|m| Shape::parse(m)) {
            Some(s) => Ok(s),
            None => self.err(i.span, format!("`{full}` has no shape (.mMnNkK)")),
        }
    }

    fn mma_types(&self, i: &Instruction, mods: &Mods, full: &str) -> LResult<Vec<MmaType>> {
        let mut v = Vec::new();
        for m in &mods.raw {
            if let Some(t) = MmaType::from_ptx(m) {
                v.push(t);
            } else if ScalarType::from_ptx(m).is_some()
                || matches!(m.as_str(), "e4m3" | "e5m2" | "e3m2" | "e2m3" | "e2m1" | "s4" | "u4" | "b1")
            {
                return self.unsupported_mma(i, full, &format!(": .{m} elements are not supported"));
            }
        }
        Ok(v)
    }

    /// Checks that a (family, shape, types) combination is one warpsim models.
    fn check_mma_types(&self, i: &Instruction, full: &str, family: Family, shape: Shape, t: [MmaType; 4]) -> LResult<()> {
        let [d, a, b, c] = t;
        use MmaType::*;
        let ok_combo = match (a, b) {
            (F16, F16) => matches!((c, d), (F16 | F32, F16 | F32)),
            (BF16, BF16) | (TF32, TF32) => c == F32 && d == F32,
            (F64, F64) => c == F64 && d == F64,
            (S8 | U8, S8 | U8) => c == S32 && d == S32,
            _ => false,
        };
        let frags = [
            Frag { family, shape, mat: Mat::A, ty: a },
            Frag { family, shape, mat: Mat::B, ty: b },
            Frag { family, shape, mat: Mat::C, ty: c },
            Frag { family, shape, mat: Mat::C, ty: d },
        ];
        if !ok_combo || frags.iter().any(|f| !f.supported()) {
            return self.unsupported_mma(
                i,
                full,
                &format!(
                    ": shape {} with .{}.{}.{}.{} (D, A, B, C) is not supported",
                    shape.name(),
                    d.name(),
                    a.name(),
                    b.name(),
                    c.name()
                ),
            );
        }
        Ok(())
    }

    fn mma_sync(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        if mods.raw.iter().any(|m| m == "sp" || m.starts_with("sp::") || m.starts_with("kind::") || m == "block_scale") {
            return self.unsupported_mma(i, full, ": sparse, block-scaled and .kind variants are not supported");
        }
        if mods.has("xor") || mods.has("and") || mods.has("popc") {
            return self.unsupported_mma(i, full, ": single-bit mma is not supported");
        }
        let shape = self.shape_mod(i, mods, full)?;
        if shape == (Shape { m: 8, n: 8, k: 4 }) && !mods.has("f64") {
            return self.unsupported_mma(i, full, ": the m8n8k4 .f16 form (Volta quad-pairs) is not supported");
        }
        if !mods.has("row") || !mods.has("col") {
            return self.unsupported_mma(i, full, ": mma needs .row.col (A row-major, B column-major)");
        }
        let t = self.mma_types(i, mods, full)?;
        if t.len() != 4 {
            return self.err(i.span, format!("`{full}` needs four types: .dtype.atype.btype.ctype"));
        }
        let types = [t[0], t[1], t[2], t[3]];
        self.check_mma_types(i, full, Family::Mma, shape, types)?;
        if matches!(mods.rnd, Some(r) if r != warpsim_numerics::Rounding::Rn) {
            return self.unsupported_mma(i, full, ": only the .rn rounding of f64 mma is supported");
        }
        {
            self.no_float_satfinite(i, full, types[0], mods.sat)?;
            self.mma_operands(i, full, Family::Mma, shape, types, mods.sat)
        }
    }

    fn no_float_satfinite(&self, i: &Instruction, full: &str, dtype: MmaType, sat: bool) -> LResult<()> {
        if sat && !dtype.is_int() {
            return self.unsupported_mma(i, full, ": .satfinite with floating-point accumulators is not supported");
        }
        Ok(())
    }

    fn mma_operands(
        &mut self,
        i: &Instruction,
        full: &str,
        family: Family,
        shape: Shape,
        t: [MmaType; 4],
        satfinite: bool,
    ) -> LResult<MmaOp> {
        self.need_ops(i, full, 4)?;
        let [dt, at, bt, ct] = t;
        let frag = |mat, ty| Frag { family, shape, mat, ty };
        let d = self.reg_vec(&i.operands[0], frag(Mat::C, dt).regs(), dt == MmaType::F64, true, "D")?;
        let a = self.reg_vec(&i.operands[1], frag(Mat::A, at).regs(), at == MmaType::F64, false, "A")?;
        let b = self.reg_vec(&i.operands[2], frag(Mat::B, bt).regs(), bt == MmaType::F64, false, "B")?;
        let c = self.reg_vec(&i.operands[3], frag(Mat::C, ct).regs(), ct == MmaType::F64, false, "C")?;
        Ok(MmaOp::Mma(MmaSync { family, shape, atype: at, btype: bt, ctype: ct, dtype: dt, satfinite, d, a, b, c }))
    }

    fn wmma(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        let shape = self.shape_mod(i, mods, full)?;
        let what = mods.raw.first().map(String::as_str).unwrap_or("");
        match what {
            "load" | "store" => {
                let Some(mat) = mods.pick("a b c d", [Mat::A, Mat::B, Mat::C, Mat::C]) else {
                    return self.err(i.span, format!("`{full}`: expected .a, .b, .c or .d"));
                };
                let col_major = mods.has("col");
                if !col_major && !mods.has("row") {
                    return self.err(i.span, format!("`{full}`: expected .row or .col"));
                }
                let t = self.mma_types(i, mods, full)?;
                let Some(&ty) = t.last() else {
                    return self.err(i.span, format!("`{full}` has no element type"));
                };
                let frag = Frag { family: Family::Wmma, shape, mat, ty };
                if !frag.supported() {
                    return self.unsupported_mma(
                        i,
                        full,
                        &format!(": a wmma {} fragment of .{} for {}", ["A", "B", "C"][mat as usize], ty.name(), shape.name()),
                    );
                }
                let space = Self::space_of(mods);
                self.need_ops(i, full, 2)?;
                let wide = ty == MmaType::F64;
                let (regs_op, addr_op) = if what == "load" { (&i.operands[0], &i.operands[1]) } else { (&i.operands[1], &i.operands[0]) };
                let (space, addr) = self.address(addr_op, space)?;
                if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
                    return self.err(i.span, format!("`{full}`: wmma accesses global or shared memory only"));
                }
                let stride = match i.operands.get(2) {
                    Some(o) => Some(self.src(o, ScalarType::U32)?),
                    None => None,
                };
                if what == "load" {
                    let d = self.reg_vec(regs_op, frag.regs(), wide, true, "fragment")?;
                    Ok(MmaOp::WmmaLoad { frag, col_major, space, addr, stride, d })
                } else {
                    if mat != Mat::C {
                        return self.err(i.span, format!("`{full}`: wmma.store stores the .d matrix"));
                    }
                    let s = self.reg_vec(regs_op, frag.regs(), wide, false, "fragment")?;
                    Ok(MmaOp::WmmaStore { frag, col_major, space, addr, stride, s })
                }
            }
            "mma" => {
                if mods.has("xor") || mods.has("and") || mods.has("popc") {
                    return self.unsupported_mma(i, full, ": single-bit wmma is not supported");
                }
                let t = self.mma_types(i, mods, full)?;
                let types = match t.len() {
                    // `.dtype.ctype` with f16 A and B.
                    2 => [t[0], MmaType::F16, MmaType::F16, t[1]],
                    4 => [t[0], t[1], t[2], t[3]],
                    _ => return self.err(i.span, format!("`{full}` needs .dtype.ctype or .dtype.atype.btype.ctype")),
                };
                self.check_mma_types(i, full, Family::Wmma, shape, types)?;
                self.no_float_satfinite(i, full, types[0], mods.sat)?;
                self.mma_operands(i, full, Family::Wmma, shape, types, mods.sat)
            }
            _ => self.unsupported_mma(i, full, ""),
        }
    }

    fn ld_st_matrix(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        if !mods.has("m8n8") || !mods.has("b16") {
            return self.unsupported_mma(i, full, ": only the .m8n8 .b16 shape is supported");
        }
        let Some(num) = mods.pick("x1 x2 x4", [1, 2, 4]) else {
            return self.err(i.span, format!("`{full}`: expected .x1, .x2 or .x4"));
        };
        let trans = mods.has("trans");
        self.need_ops(i, full, 2)?;
        let space = Self::space_of(mods);
        if i.opcode == "ldmatrix" {
            let (space, addr) = self.address(&i.operands[1], space)?;
            let d = self.reg_vec(&i.operands[0], num, false, true, "ldmatrix destination")?;
            Ok(MmaOp::LdMatrix { num: num as u8, trans, space, addr, d })
        } else {
            let (space, addr) = self.address(&i.operands[0], space)?;
            let s = self.reg_vec(&i.operands[1], num, false, false, "stmatrix source")?;
            Ok(MmaOp::StMatrix { num: num as u8, trans, space, addr, s })
        }
    }

    fn cp_async(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        if !mods.has("async") || mods.has("reduce") || i.opcode != "cp" || mods.raw.first().map(String::as_str) != Some("async") {
            return self.unsupported_mma(i, full, "");
        }
        let ops = &i.operands;
        if mods.has("bulk") {
            if mods.has("prefetch") {
                return Ok(MmaOp::Sync(SyncKind::Prefetch));
            }
            if mods.has("commit_group") {
                return Ok(MmaOp::Sync(SyncKind::BulkCommit));
            }
            if mods.has("wait_group") {
                return Ok(MmaOp::Sync(SyncKind::BulkWait));
            }
            if mods.has("cp_mask") {
                return self.unsupported_mma(i, full, ": byte-masked bulk copies (.cp_mask)");
            }
            if mods.raw.iter().any(|m| m.starts_with("multicast")) {
                return self.unsupported_mma(i, full, ": multicast to a cluster (warpsim runs clusters of one CTA)");
            }
            if mods.has("im2col") || mods.raw.iter().any(|m| m.starts_with("im2col") || m.starts_with("tile::")) {
                return self.unsupported_mma(i, full, ": only the .tile mode of tensor copies is supported");
            }
            // Destination and source spaces, in the order written.
            let spaces: Vec<Space> = mods
                .raw
                .iter()
                .filter_map(|m| match m.as_str() {
                    "global" => Some(Space::Global),
                    "shared" | "shared::cta" | "shared::cluster" => Some(Space::Shared),
                    _ => None,
                })
                .collect();
            if spaces.len() != 2 {
                return self.err(i.span, format!("`{full}`: expected a destination and a source state space"));
            }
            let to_shared = spaces[0] == Space::Shared;
            if let Some(dims) = mods.raw.iter().find_map(|m| m.strip_suffix('d').and_then(|d| d.parse::<u8>().ok())) {
                if !mods.has("tensor") || !(1..=5).contains(&dims) {
                    return self.unsupported_mma(i, full, "");
                }
                let (smem_op, tmap_op) = if to_shared { (ops.first(), ops.get(1)) } else { (ops.get(1), ops.first()) };
                let (Some(smem_op), Some(Operand::TensorCoords { addr: tmap_addr, coords, .. })) = (smem_op, tmap_op) else {
                    return self.err(i.span, format!("`{full}` expects [shared], [tensorMap, {{coordinates}}] operands"));
                };
                let (_, smem) = self.address(smem_op, Space::Shared)?;
                let (tspace, taddr) = self.address(tmap_addr, Space::Generic)?;
                let tmap = match (tspace, taddr.base) {
                    (_, Some(r)) if taddr.offset == 0 => r,
                    (Space::KernelParam, None) => self.const_reg(ScalarType::B64, taddr.offset as u64),
                    _ => return self.err(tmap_addr.span(), "the tensor map must be a 64-bit register or a kernel parameter"),
                };
                let coord_ops: Vec<Operand> = match coords.as_ref() {
                    Operand::Vector(v, _) => v.clone(),
                    other => vec![other.clone()],
                };
                if coord_ops.len() != dims as usize {
                    return self.err(coords.span(), format!("a {dims}d tensor copy takes {dims} coordinates"));
                }
                let mut cs = Vec::new();
                for c in &coord_ops {
                    cs.push(self.src(c, ScalarType::S32)?);
                }
                self.want_r32(i, &cs)?;
                let mbar = if to_shared {
                    let Some(m) = ops.get(2) else {
                        return self.err(i.span, format!("`{full}` needs an mbarrier operand"));
                    };
                    Some(self.address(m, Space::Shared)?.1)
                } else {
                    None
                };
                if to_shared && !mods.raw.iter().any(|m| m.starts_with("mbarrier::complete_tx")) {
                    return self.unsupported_mma(i, full, ": tensor loads complete on an mbarrier (.mbarrier::complete_tx::bytes)");
                }
                return Ok(MmaOp::BulkTensor { load: to_shared, dims, smem, tmap, coords: cs, mbar });
            }
            self.need_ops(i, full, 3)?;
            let dir = match (spaces[0], spaces[1]) {
                (Space::Shared, Space::Global) => BulkDir::GlobalToShared,
                (Space::Global, Space::Shared) => BulkDir::SharedToGlobal,
                (Space::Shared, Space::Shared) => BulkDir::SharedToShared,
                _ => return self.unsupported_mma(i, full, ""),
            };
            let (_, dst) = self.address(&ops[0], spaces[0])?;
            let (_, src) = self.address(&ops[1], spaces[1])?;
            let size = self.src(&ops[2], ScalarType::U32)?;
            self.want_r32(i, &[size])?;
            let mbar = if dir == BulkDir::SharedToGlobal {
                None
            } else {
                let Some(m) = ops.get(3) else {
                    return self.err(i.span, format!("`{full}` needs an mbarrier operand"));
                };
                Some(self.address(m, Space::Shared)?.1)
            };
            return Ok(MmaOp::Bulk { dir, dst, src, size, mbar });
        }
        if mods.has("commit_group") {
            return Ok(MmaOp::Sync(SyncKind::CpAsyncCommit));
        }
        if mods.has("wait_group") || mods.has("wait_all") {
            return Ok(MmaOp::Sync(SyncKind::CpAsyncWait));
        }
        if mods.has("mbarrier") && mods.has("arrive") {
            self.need_ops(i, full, 1)?;
            let (space, addr) = self.address(&ops[0], Self::space_of(mods))?;
            return Ok(MmaOp::CpAsyncMbarrierArrive { noinc: mods.has("noinc"), space, addr });
        }
        if !(mods.has("ca") || mods.has("cg")) {
            return self.unsupported_mma(i, full, "");
        }
        self.need_ops(i, full, 3)?;
        let size = self.imm(&ops[2], "the cp.async copy size")?;
        if !matches!(size, 4 | 8 | 16) || (mods.has("cg") && size != 16) {
            return self.err(ops[2].span(), format!("cp.async copies 4, 8 or 16 bytes (.cg: 16), not {size}"));
        }
        let (dst_space, dst) = self.address(&ops[0], Space::Shared)?;
        let (src_space, src) = self.address(&ops[1], Space::Global)?;
        let mut src_size = None;
        let mut ignore_src = None;
        let n_extra = ops.len() - 3 - mods.has("L2::cache_hint") as usize;
        if n_extra >= 1 {
            let o = &ops[3];
            let is_pred = match o {
                Operand::Not(..) => true,
                Operand::Name(..) => self.src(o, ScalarType::B32).map(|r| r.bank == Bank::Pred).unwrap_or(false),
                _ => false,
            };
            if is_pred {
                ignore_src = Some(self.src_pred(o)?);
            } else {
                let r = self.src(o, ScalarType::U32)?;
                self.want_r32(i, &[r])?;
                src_size = Some(r);
            }
        }
        Ok(MmaOp::CpAsync { size: size as u8, dst, dst_space, src, src_space, src_size, ignore_src })
    }

    fn mbarrier(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        let ops = &i.operands;
        let what = mods.raw.first().map(String::as_str).unwrap_or("");
        let space = Self::space_of(mods);
        let kind_addr = |l: &mut Self, k: usize| -> LResult<(Space, Addr)> {
            match ops.get(k) {
                Some(o) => l.address(o, space),
                None => l.err(i.span, format!("`{full}` needs an address operand")),
            }
        };
        let r32 = |l: &mut Self, k: usize, what: &str| -> LResult<RegRef> {
            let Some(o) = ops.get(k) else {
                return l.err(i.span, format!("`{full}` needs {what}"));
            };
            let r = l.src(o, ScalarType::U32)?;
            l.want_r32(i, &[r])?;
            Ok(r)
        };
        let (kind, (space, addr)) = match what {
            "init" => {
                let a = kind_addr(self, 0)?;
                (MbarKind::Init { count: r32(self, 1, "a count")? }, a)
            }
            "inval" => (MbarKind::Inval, kind_addr(self, 0)?),
            "arrive" | "arrive_drop" => {
                let state = match ops.first() {
                    Some(Operand::Sink(_)) | None => None,
                    Some(o) => {
                        let r = self.dst(o)?;
                        if r.bank != Bank::R64 {
                            return self.err(o.span(), "the mbarrier state is a 64-bit register");
                        }
                        Some(r)
                    }
                };
                let a = kind_addr(self, 1)?;
                let expect = mods.has("expect_tx");
                let extra = if ops.len() > 2 { Some(r32(self, 2, "a count")?) } else { None };
                if expect && extra.is_none() {
                    return self.err(i.span, format!("`{full}` needs a transaction count"));
                }
                let (count, expect_tx) = if expect { (None, extra) } else { (extra, None) };
                (MbarKind::Arrive { state, count, drop: what == "arrive_drop", expect_tx, no_complete: mods.has("noComplete") }, a)
            }
            "expect_tx" | "complete_tx" => {
                let a = kind_addr(self, 0)?;
                let tx = r32(self, 1, "a transaction count")?;
                (if what == "expect_tx" { MbarKind::ExpectTx { tx } } else { MbarKind::CompleteTx { tx } }, a)
            }
            "test_wait" | "try_wait" => {
                self.need_ops(i, full, 3)?;
                let p = self.dst_pred(&ops[0])?;
                let a = kind_addr(self, 1)?;
                let parity = mods.has("parity");
                let arg = self.src(&ops[2], if parity { ScalarType::U32 } else { ScalarType::B64 })?;
                if parity != (arg.bank == Bank::R32) {
                    let w = if parity { "a 32-bit phase parity" } else { "a 64-bit state" };
                    return self.err(ops[2].span(), format!("`{full}` expects {w}"));
                }
                (MbarKind::Wait { p, parity, arg }, a)
            }
            "pending_count" => {
                self.need_ops(i, full, 2)?;
                let d = self.dst(&ops[0])?;
                let state = self.src(&ops[1], ScalarType::B64)?;
                if d.bank != Bank::R32 || state.bank != Bank::R64 {
                    return self.err(i.span, format!("`{full}`: expected a 32-bit count and a 64-bit state"));
                }
                return Ok(MmaOp::MbarPendingCount { d, state });
            }
            _ => return self.unsupported_mma(i, full, ""),
        };
        if !matches!(space, Space::Shared | Space::Generic) {
            return self.err(i.span, format!("`{full}`: an mbarrier lives in shared memory"));
        }
        Ok(MmaOp::Mbarrier { kind, space, addr })
    }

    fn wgmma(&mut self, i: &Instruction, mods: &Mods, full: &str) -> LResult<MmaOp> {
        let what = mods.raw.first().map(String::as_str).unwrap_or("");
        match what {
            "fence" => return Ok(MmaOp::Sync(SyncKind::WgmmaFence)),
            "commit_group" => return Ok(MmaOp::Sync(SyncKind::WgmmaCommit)),
            "wait_group" => return Ok(MmaOp::Sync(SyncKind::WgmmaWait)),
            "mma_async" => {}
            _ => return self.unsupported_mma(i, full, ""),
        }
        if mods.has("sp") {
            return self.unsupported_mma(i, full, ": sparse wgmma is not supported");
        }
        let shape = self.shape_mod(i, mods, full)?;
        let t = self.mma_types(i, mods, full)?;
        if t.len() != 3 {
            return self.err(i.span, format!("`{full}` needs .dtype.atype.btype"));
        }
        let (dtype, atype) = (t[0], t[1]);
        let dfrag = Frag { family: Family::Wgmma, shape, mat: Mat::C, ty: dtype };
        let afrag = Frag { family: Family::Wgmma, shape, mat: Mat::A, ty: atype };
        let ok = t[1] == t[2] || (atype.is_int() && t[2].is_int());
        if !ok || !dfrag.supported() || !afrag.supported() || (atype.is_int() != dtype.is_int()) {
            return self.unsupported_mma(
                i,
                full,
                &format!(": wgmma {} with .{}.{}.{}", shape.name(), dtype.name(), t[1].name(), t[2].name()),
            );
        }
        let ops = &i.operands;
        self.need_ops(i, full, 4)?;
        let d = self.reg_vec(&ops[0], dfrag.regs(), false, true, "D")?;
        let a = match &ops[1] {
            Operand::Vector(..) => WgmmaA::Regs(self.reg_vec(&ops[1], afrag.regs(), false, false, "A")?),
            o => {
                let r = self.src(o, ScalarType::B64)?;
                if r.bank != Bank::R64 {
                    return self.err(o.span(), "the A matrix descriptor is a 64-bit register");
                }
                WgmmaA::Desc(r)
            }
        };
        let b_desc = self.src(&ops[2], ScalarType::B64)?;
        if b_desc.bank != Bank::R64 {
            return self.err(ops[2].span(), "the B matrix descriptor is a 64-bit register");
        }
        let scale_d = match &ops[3] {
            Operand::Imm(v, _) => Err(*v != 0),
            o => Ok(self.src_pred(o)?),
        };
        // Immediates after scale-d: imm-scale-a, imm-scale-b, then imm-trans-a (descriptor A only), imm-trans-b.
        let mut imms = Vec::new();
        for o in &ops[4..] {
            imms.push(self.imm(o, "wgmma's scale and transpose arguments")?);
        }
        let float = !atype.is_int();
        let trans_ok = matches!(atype, MmaType::F16 | MmaType::BF16);
        let want = match (&a, float, trans_ok) {
            (_, false, _) => 0,
            (WgmmaA::Desc(_), true, true) => 4,
            (WgmmaA::Regs(_), true, true) => 3,
            (_, true, false) => 2,
        };
        if imms.len() != want {
            return self.err(i.span, format!("`{full}` takes {want} immediate arguments after scale-d, found {}", imms.len()));
        }
        let get = |k: usize| imms.get(k).copied();
        let scale = |v: Option<i64>| -> LResult<bool> {
            match v {
                None | Some(1) => Ok(false),
                Some(-1) => Ok(true),
                Some(x) => self.err(i.span, format!("wgmma scale arguments are 1 or -1, not {x}")),
            }
        };
        let flag = |v: Option<i64>| -> LResult<bool> {
            match v {
                None | Some(0) => Ok(false),
                Some(1) => Ok(true),
                Some(x) => self.err(i.span, format!("wgmma transpose arguments are 0 or 1, not {x}")),
            }
        };
        let (neg_a, neg_b) = (scale(get(0))?, scale(get(1))?);
        let (trans_a, trans_b) = match (&a, want) {
            (WgmmaA::Desc(_), 4) => (flag(get(2))?, flag(get(3))?),
            (WgmmaA::Regs(_), 3) => (false, flag(get(2))?),
            _ => (false, false),
        };
        Ok(MmaOp::Wgmma(Box::new(Wgmma {
            shape,
            atype,
            btype: t[2],
            dtype,
            d,
            a,
            b_desc,
            scale_d,
            neg_a,
            neg_b,
            trans_a,
            trans_b,
            satfinite: mods.sat,
        })))
    }
}

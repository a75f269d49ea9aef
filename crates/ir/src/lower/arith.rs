//! Integer and floating-point arithmetic, carries, comparisons.

use super::*;

/// `setp`/`set`'s `.and|.or|.xor` with a (possibly negated) predicate.
type Combine = (BoolOp, u32, bool);

impl Lowerer<'_> {
    pub(super) fn need_ty(&self, ty: Option<ScalarType>, span: Span, full: &str) -> LResult<ScalarType> {
        match ty {
            Some(t) => Ok(t),
            None => self.err(span, format!("`{full}` has no type suffix")),
        }
    }

    pub(super) fn move_between(&mut self, d: RegRef, a: RegRef) -> Op {
        match (d.bank, a.bank) {
            (Bank::R64, Bank::R32) => Op::Extend32To64 { signed: false, d: d.slot, a: a.slot },
            (Bank::R32, Bank::R64) => Op::Trunc64To32 { d: d.slot, a: a.slot },
            _ => Op::Mov { d, a },
        }
    }

    pub(super) fn int_arith(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let o = i.opcode.as_str();
        let wide = mods.has("wide");
        let hi = mods.has("hi");
        let sat = mods.sat;
        let arity = match o {
            "abs" | "neg" => 2,
            "mad" => 4,
            _ => 3,
        };
        if ops.len() < arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        let relu = mods.has("relu");
        if relu && !(matches!(o, "min" | "max") && ty == ScalarType::S32) {
            return self.err(span, format!("`{full}`: `.relu` is defined only on min/max of .s32 and .s16x2"));
        }
        let op = match (o, wide, hi, sat) {
            ("min", ..) if relu => IntOp::MinRelu,
            ("max", ..) if relu => IntOp::MaxRelu,
            ("add", _, _, true) => IntOp::AddSat,
            ("add", ..) => IntOp::Add,
            ("sub", _, _, true) => IntOp::SubSat,
            ("sub", ..) => IntOp::Sub,
            ("mul", true, ..) => IntOp::MulWide,
            ("mul", _, true, _) => IntOp::MulHi,
            ("mul", ..) => IntOp::MulLo,
            ("mad", true, ..) => IntOp::MadWide,
            ("mad", _, true, true) => IntOp::MadHiSat,
            ("mad", _, true, _) => IntOp::MadHi,
            ("mad", ..) => IntOp::MadLo,
            ("div", ..) => IntOp::Div,
            ("rem", ..) => IntOp::Rem,
            ("abs", ..) => IntOp::Abs,
            ("neg", ..) => IntOp::Neg,
            ("min", ..) => IntOp::Min,
            ("max", ..) => IntOp::Max,
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        // Fast paths.
        let b32 = ty.bits() == 32;
        let b64 = ty.bits() == 64;
        let fast32 = match op {
            IntOp::Add => Some(Bin32::Add),
            IntOp::Sub => Some(Bin32::Sub),
            IntOp::MulLo => Some(Bin32::MulLo),
            IntOp::Min => Some(if ty.is_signed() { Bin32::MinS } else { Bin32::MinU }),
            IntOp::Max => Some(if ty.is_signed() { Bin32::MaxS } else { Bin32::MaxU }),
            _ => None,
        };
        if let Some(f) = fast32.filter(|_| b32) {
            let (d, [a, b]) = self.same_width_regs(ops, ty, false)?;
            self.push(Op::Bin32 { f, d, a, b }, guard, span, full);
            return Ok(());
        }
        let fast64 = match op {
            IntOp::Add => Some(Bin64::Add),
            IntOp::Sub => Some(Bin64::Sub),
            IntOp::MulLo => Some(Bin64::MulLo),
            _ => None,
        };
        if let Some(f) = fast64.filter(|_| b64) {
            let (d, [a, b]) = self.same_width_regs(ops, ty, true)?;
            self.push(Op::Bin64 { f, d, a, b }, guard, span, full);
            return Ok(());
        }
        if b32 && op == IntOp::MulWide {
            let d = self.d64(&ops[0])?;
            let a = self.r32(&ops[1], ty)?;
            let b = self.r32(&ops[2], ty)?;
            self.push(Op::MulWide32 { signed: ty.is_signed(), d, a, b }, guard, span, full);
            return Ok(());
        }
        if b32 && op == IntOp::MadLo {
            let (d, [a, b, c]) = self.same_width_regs(ops, ty, false)?;
            self.push(Op::Tern32 { f: Tern32::MadLo, d, a, b, c }, guard, span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let wide_ty = if op == IntOp::MulWide || op == IntOp::MadWide { double_width(ty) } else { ty };
        let mut s = [self.zero32(); 4];
        for k in 1..arity {
            let t = if k == 3 && op == IntOp::MadWide { wide_ty } else { ty };
            s[k - 1] = self.src(&ops[k], t)?;
        }
        self.push(Op::Int { op, ty, d, s }, guard, span, full);
        Ok(())
    }

    /// `min|max{.relu}.{s16x2,u16x2} d, a, b`: packed 16-bit pairs in 32-bit registers.
    pub(super) fn min_max_16x2(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let signed = mods.has("s16x2");
        let relu = mods.has("relu");
        if relu && !signed {
            return self.err(i.span, format!("`{full}`: `.relu` is defined only on .s16x2 and .s32"));
        }
        if i.operands.len() != 3 {
            return self.err(i.span, format!("`{full}` expects 3 operands"));
        }
        let op = IntOp::MinMax16x2 { max: i.opcode == "max", signed, relu };
        let ty = ScalarType::B32;
        let d = self.dst(&i.operands[0])?;
        let z = self.zero32();
        let s = [self.src(&i.operands[1], ty)?, self.src(&i.operands[2], ty)?, z, z];
        self.push(Op::Int { op, ty, d, s }, guard, i.span, full);
        Ok(())
    }

    pub(super) fn carry_op(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let (kind, arity) = match i.opcode.as_str() {
            "add" | "addc" => (CarryKind::Add, 3),
            "sub" | "subc" => (CarryKind::Sub, 3),
            "mad" | "madc" if mods.has("hi") => (CarryKind::MadHi, 4),
            "mad" | "madc" => (CarryKind::MadLo, 4),
            _ => return self.err(i.span, format!("unsupported instruction `{full}`")),
        };
        if ops.len() < arity {
            return self.err(i.span, format!("`{full}` expects {arity} operands"));
        }
        let carry_in = i.opcode.ends_with('c');
        let carry_out = mods.has("cc");
        let cc = match self.cc {
            Some(c) => c,
            None => {
                let r = self.alloc_reg(ScalarType::Pred);
                self.cc = Some(r.slot);
                r.slot
            }
        };
        let d = self.dst(&ops[0])?;
        let z = self.zero32();
        let mut s = [z; 3];
        for k in 1..arity {
            s[k - 1] = self.src(&ops[k], ty)?;
        }
        self.push(Op::IntCarry { kind, ty, d, s, cc, carry_in, carry_out }, guard, i.span, full);
        Ok(())
    }

    pub(super) fn int_misc(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let (op, arity) = match i.opcode.as_str() {
            "mul24" => (if mods.has("hi") { IntOp::Mul24Hi } else { IntOp::Mul24Lo }, 3),
            "mad24" => (if mods.has("hi") { IntOp::Mad24Hi } else { IntOp::Mad24Lo }, 4),
            "sad" => (IntOp::Sad, 4),
            "popc" => (IntOp::Popc, 2),
            "clz" => (IntOp::Clz, 2),
            "bfind" => (if mods.has("shiftamt") { IntOp::BfindShiftAmt } else { IntOp::Bfind }, 2),
            "brev" => (IntOp::Brev, 2),
            "bfe" => (IntOp::Bfe, 4),
            "bfi" => (IntOp::Bfi, 5),
            "bmsk" => (IntOp::Bmsk { wrap: mods.has("wrap") }, 3),
            "szext" => (IntOp::Szext { wrap: mods.has("wrap") }, 3),
            "fns" => (IntOp::Fns, 4),
            "prmt" => {
                use PrmtMode as P;
                let m =
                    mods.pick("f4e b4e rc8 ecl ecr rc16", [P::F4e, P::B4e, P::Rc8, P::Ecl, P::Ecr, P::Rc16]).unwrap_or(PrmtMode::Default);
                (IntOp::Prmt(m), 4)
            }
            "shf" => {
                let wrap = mods.has("wrap");
                (if mods.has("l") { IntOp::ShfL { wrap } } else { IntOp::ShfR { wrap } }, 4)
            }
            "and" => (IntOp::And, 3),
            "or" => (IntOp::Or, 3),
            "xor" => (IntOp::Xor, 3),
            "not" => (IntOp::Not, 2),
            "cnot" => (IntOp::Cnot, 2),
            "lop3" => {
                if ops.len() < 5 {
                    return self.err(span, format!("`{full}` expects 5 operands"));
                }
                let Operand::Imm(lut, _) = ops[4] else {
                    return self.err(ops[4].span(), "lop3 needs an immediate lookup table");
                };
                (IntOp::Lop3(lut as u8), 4)
            }
            "dp4a" | "dp2a" => {
                let b_signed = mods.types.get(1).is_some_and(|t| t.is_signed());
                let op = if i.opcode == "dp4a" { IntOp::Dp4a { b_signed } } else { IntOp::Dp2a { hi: mods.has("hi"), b_signed } };
                (op, 4)
            }
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        if ops.len() < arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        let ty = match op {
            IntOp::Dp4a { .. } | IntOp::Dp2a { .. } => mods.types[0],
            _ => ty,
        };
        // Fast bitwise paths.
        if matches!(op, IntOp::And | IntOp::Or | IntOp::Xor) && (ty.bits() == 32 || ty.bits() == 64) {
            let wide = ty.bits() == 64;
            let (d, [a, b]) = self.same_width_regs(ops, ty, wide)?;
            let fast = match (op, wide) {
                (IntOp::And, false) => Op::Bin32 { f: Bin32::And, d, a, b },
                (IntOp::Or, false) => Op::Bin32 { f: Bin32::Or, d, a, b },
                (_, false) => Op::Bin32 { f: Bin32::Xor, d, a, b },
                (IntOp::And, true) => Op::Bin64 { f: Bin64::And, d, a, b },
                (IntOp::Or, true) => Op::Bin64 { f: Bin64::Or, d, a, b },
                (_, true) => Op::Bin64 { f: Bin64::Xor, d, a, b },
            };
            self.push(fast, guard, span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let mut s = [self.zero32(); 4];
        for k in 1..arity {
            // Operand types: shift/position/length operands are u32.
            let t = match (op, k) {
                (IntOp::Bfe, 2 | 3) | (IntOp::Bfi, 3 | 4) | (IntOp::Bmsk { .. }, _) | (IntOp::ShfL { .. } | IntOp::ShfR { .. }, 3) => {
                    ScalarType::U32
                }
                (IntOp::Prmt(_), _) => ScalarType::B32,
                (IntOp::Dp4a { .. } | IntOp::Dp2a { .. }, _) => ScalarType::B32,
                (IntOp::Sad, 3) => ty,
                _ => ty,
            };
            s[k - 1] = self.src(&ops[k], t)?;
        }
        self.push(Op::Int { op, ty, d, s }, guard, span, full);
        Ok(())
    }

    pub(super) fn float_arith(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let approx = mods.has("approx");
        let (op, arity) = match i.opcode.as_str() {
            "add" => (FloatOp::Add, 3),
            "sub" => (FloatOp::Sub, 3),
            "mul" => (FloatOp::Mul, 3),
            "fma" | "mad" if mods.has("relu") => (FloatOp::FmaRelu, 4),
            "fma" | "mad" => (FloatOp::Fma, 4),
            "div" if approx => (FloatOp::DivApprox, 3),
            "div" if mods.has("full") => (FloatOp::DivFull, 3),
            "div" => (FloatOp::Div, 3),
            "rcp" if approx => (FloatOp::RcpApprox, 2),
            "rcp" => (FloatOp::Rcp, 2),
            "sqrt" if approx => (FloatOp::SqrtApprox, 2),
            "sqrt" => (FloatOp::Sqrt, 2),
            "rsqrt" => (FloatOp::RsqrtApprox, 2),
            "sin" => (FloatOp::SinApprox, 2),
            "cos" => (FloatOp::CosApprox, 2),
            "lg2" => (FloatOp::Lg2Approx, 2),
            "ex2" => (FloatOp::Ex2Approx, 2),
            "tanh" => (FloatOp::TanhApprox, 2),
            "abs" => (FloatOp::Abs, 2),
            "neg" => (FloatOp::Neg, 2),
            "min" if mods.has("xorsign") && mods.has("NaN") => (FloatOp::MinNanXorsignAbs, 3),
            "max" if mods.has("xorsign") && mods.has("NaN") => (FloatOp::MaxNanXorsignAbs, 3),
            "min" if mods.has("xorsign") => (FloatOp::MinXorsignAbs, 3),
            "max" if mods.has("xorsign") => (FloatOp::MaxXorsignAbs, 3),
            "min" if mods.has("NaN") => (FloatOp::MinNan, 3),
            "max" if mods.has("NaN") => (FloatOp::MaxNan, 3),
            "min" => (FloatOp::Min, 3),
            "max" => (FloatOp::Max, 3),
            "copysign" => (FloatOp::Copysign, 3),
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        if mods.has("relu") && op != FloatOp::FmaRelu {
            return self.err(span, format!("`{full}`: `.relu` is defined only on fma of f16/bf16 here"));
        }
        let three_input = matches!(op, FloatOp::Min | FloatOp::Max | FloatOp::MinNan | FloatOp::MaxNan) && ops.len() == 4;
        if (mods.has("xorsign") && (!mods.has("abs") || ty == ScalarType::F64))
            || (mods.has("abs") && !mods.has("xorsign") && !three_input && op != FloatOp::Abs)
        {
            return self.err(span, format!("`{full}`: `.xorsign` comes with `.abs`, on f32, f16 and bf16 only"));
        }
        if three_input {
            return self.min_max_3(i, mods, ty, op, guard, full);
        }
        if ops.len() != arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        if matches!(op, FloatOp::Div | FloatOp::Rcp | FloatOp::Sqrt) && mods.rnd.is_none() && ty == ScalarType::F64 {
            return self.err(span, format!("`{full}` needs a rounding modifier (.rn, .rz, .rm or .rp)"));
        }
        let mode = FMode { rnd: mods.rnd, ftz: mods.ftz, sat: mods.sat };
        let plain = !mode.ftz && !mode.sat && matches!(mode.rnd, None | Some(Rounding::Rn));
        if plain {
            if let Some(fast) = self.plain_float_fast_op(op, ty, ops)? {
                self.push(fast, guard, span, full);
                return Ok(());
            }
        }
        let d = self.dst(&ops[0])?;
        let z = self.zero32();
        let mut s = [z; 3];
        for k in 1..arity {
            s[k - 1] = self.src(&ops[k], ty)?;
        }
        self.push(Op::Float { op, ty, mode, d, s }, guard, span, full);
        Ok(())
    }

    /// `min|max{.ftz}{.NaN}{.abs}.f32 d, a, b, c` (sm_100): two two-input ops
    /// through a scratch register, `.abs` applied to each input first. The
    /// ISA's rules compose: without `.NaN` NaN inputs are skipped, all-NaN
    /// gives the canonical NaN; with `.NaN` any NaN gives NaN.
    fn min_max_3(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, op: FloatOp, guard: Option<Guard>, full: &str) -> LResult<()> {
        let span = i.span;
        if ty != ScalarType::F32 {
            return self.err(span, format!("`{full}`: three-input min/max is defined on .f32 only"));
        }
        let mode = FMode { rnd: None, ftz: mods.ftz, sat: false };
        let d = self.dst(&i.operands[0])?;
        let z = self.zero32();
        let mut s = [z; 3];
        for (sk, o) in s.iter_mut().zip(&i.operands[1..]) {
            *sk = self.src(o, ty)?;
            if mods.has("abs") {
                let t = self.alloc_reg(ty);
                self.push(Op::Float { op: FloatOp::Abs, ty, mode, d: t, s: [*sk, z, z] }, guard, span, full);
                *sk = t;
            }
        }
        let t = self.alloc_reg(ty);
        self.push(Op::Float { op, ty, mode, d: t, s: [s[0], s[1], z] }, guard, span, full);
        self.push(Op::Float { op, ty, mode, d, s: [t, s[2], z] }, guard, span, full);
        Ok(())
    }

    /// The register-only fast op of a plain (round to nearest, no `.ftz` or
    /// `.sat`) f32 or f64 `op`: `add`, `sub`, `mul` and `fma` on both widths,
    /// `min`/`max` on f32; `None` for every other op and type.
    fn plain_float_fast_op(&mut self, op: FloatOp, ty: ScalarType, ops: &[Operand]) -> LResult<Option<Op>> {
        let wide = match ty {
            ScalarType::F32 => false,
            ScalarType::F64 => true,
            _ => return Ok(None),
        };
        let (bin32, bin64) = match op {
            FloatOp::Add => (Bin32::AddF, Some(Bin64::AddF)),
            FloatOp::Sub => (Bin32::SubF, Some(Bin64::SubF)),
            FloatOp::Mul => (Bin32::MulF, Some(Bin64::MulF)),
            FloatOp::Min => (Bin32::MinF, None),
            FloatOp::Max => (Bin32::MaxF, None),
            FloatOp::Fma => {
                let (d, [a, b, c]) = self.same_width_regs(ops, ty, wide)?;
                return Ok(Some(if wide { Op::FmaF64 { d, a, b, c } } else { Op::Tern32 { f: Tern32::FmaF, d, a, b, c } }));
            }
            _ => return Ok(None),
        };
        let fast = match (wide, bin64) {
            (false, _) => {
                let (d, [a, b]) = self.same_width_regs(ops, ty, false)?;
                Op::Bin32 { f: bin32, d, a, b }
            }
            (true, Some(f)) => {
                let (d, [a, b]) = self.same_width_regs(ops, ty, true)?;
                Op::Bin64 { f, d, a, b }
            }
            (true, None) => return Ok(None),
        };
        Ok(Some(fast))
    }

    /// The destination and `N` sources of an op on registers of one width,
    /// 32 or 64 bits (`wide`).
    fn same_width_regs<const N: usize>(&mut self, ops: &[Operand], ty: ScalarType, wide: bool) -> LResult<(u32, [u32; N])> {
        let d = if wide { self.d64(&ops[0])? } else { self.d32(&ops[0])? };
        let mut s = [0; N];
        for (k, r) in s.iter_mut().enumerate() {
            *r = if wide { self.r64(&ops[k + 1], ty)? } else { self.r32(&ops[k + 1], ty)? };
        }
        Ok((d, s))
    }

    pub(super) fn cmp_and_combine(&mut self, i: &Instruction, mods: &Mods, first_src: usize) -> LResult<(CmpOp, Option<Combine>)> {
        let Some(cmp) = mods.cmp else {
            return self.err(i.span, "missing comparison operator");
        };
        let combine = match mods.boolop {
            Some(b) => {
                let Some(c) = i.operands.get(first_src + 2) else {
                    return self.err(i.span, "a boolean combine needs a predicate operand `c`");
                };
                let (c, neg) = self.src_pred(c)?;
                Some((b, c, neg))
            }
            None => None,
        };
        Ok((cmp, combine))
    }

    pub(super) fn setp(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 3 {
            return self.err(i.span, format!("`{full}` expects at least 3 operands"));
        }
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        let (cmp, combine) = self.cmp_and_combine(i, mods, 1)?;
        let (p, q) = match &ops[0] {
            Operand::Pair(p, q, _) => (self.dst_pred(p)?, Some(self.dst_pred(q)?)),
            p => (self.dst_pred(p)?, None),
        };
        let a = self.src(&ops[1], ty)?;
        let b = self.src(&ops[2], ty)?;
        self.push(Op::Setp(Setp { cmp, ty, ftz: mods.ftz, p, q, a, b, combine }), guard, i.span, full);
        Ok(())
    }

    pub(super) fn set(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 3 || mods.types.len() < 2 {
            return self.err(i.span, format!("`{full}` expects a destination type, a source type and 3 operands"));
        }
        let (dty, ty) = (mods.types[0], mods.types[1]);
        let (cmp, combine) = self.cmp_and_combine(i, mods, 1)?;
        let d = self.dst(&ops[0])?;
        let a = self.src(&ops[1], ty)?;
        let b = self.src(&ops[2], ty)?;
        self.push(Op::Set(Set { cmp, ty, dty, ftz: mods.ftz, d, a, b, combine }), guard, i.span, full);
        Ok(())
    }
}

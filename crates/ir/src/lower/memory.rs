//! Loads, stores and atomics: state spaces, vector widths, address forms.

use super::*;

impl Lowerer<'_> {
    pub(super) fn mem_space(&self, mods: &Mods, opcode: &str) -> Space {
        if opcode == "ldu" {
            return Space::Global;
        }
        use Space::*;
        mods.pick("global shared shared::cta local param const", [Global, Shared, Shared, Local, KernelParam, Const]).unwrap_or(Generic)
    }

    /// The type of a load or store (`what`), which has at least 2 operands.
    fn ld_st_type(&self, i: &Instruction, mods: &Mods, full: &str, what: &str) -> LResult<ScalarType> {
        if i.operands.len() < 2 {
            return self.err(i.span, format!("`{full}` expects 2 operands"));
        }
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        if ty.bits() > 64 {
            return self.err(i.span, format!("unsupported instruction `{full}`: 128-bit {what}"));
        }
        Ok(ty)
    }

    /// Checks a 256-bit vector access (`.v8` of 32-bit elements, `.v4` of
    /// 64-bit ones: PTX 8.8, `.global` only, sm_100 and later, as ptxas
    /// rejects it for earlier targets).
    fn check_256_bit(&self, i: &Instruction, mods: &Mods, ty: ScalarType, space: Space, full: &str) -> LResult<()> {
        let bits = mods.vec as u32 * ty.bits();
        if bits <= 128 && mods.vec < 8 {
            return Ok(());
        }
        if bits > 256 || (mods.vec == 8 && ty.bits() != 32) {
            return self.err(i.span, format!("`{full}`: vectors hold at most 256 bits (.v8 of 32-bit or .v4 of 64-bit elements)"));
        }
        if space != Space::Global {
            return self.err(i.span, format!("`{full}`: 256-bit vector accesses exist only in the .global state space"));
        }
        let sm = self.target_sm();
        if sm.is_some_and(|v| v < 100) {
            return self.err(
                i.span,
                format!("`{full}`: 256-bit vector accesses need sm_100 or later (the module's target is sm_{})", sm.unwrap_or(0)),
            );
        }
        Ok(())
    }

    /// The SM version of the module's `.target` (`sm_90a` is 90), if it names one.
    pub(super) fn target_sm(&self) -> Option<u32> {
        self.m.target.iter().find_map(|t| {
            let digits: String = t.strip_prefix("sm_")?.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().ok()
        })
    }

    /// The module's `.version` as (major, minor); (0, 0) when it has none.
    pub(super) fn ptx_version(&self) -> (u32, u32) {
        let v = self.m.version.as_deref().unwrap_or("0.0");
        let (a, b) = v.split_once('.').unwrap_or((v, "0"));
        (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
    }

    /// `isspacep.{global,shared{::cta,::cluster},local} p, a`: whether generic
    /// address `a` falls in that window ([`crate::window`]).
    pub(super) fn isspacep(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        use crate::window::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
        let at = self.at(i, full);
        at.nops(2)?;
        let Some(space) = mods.pick("global shared shared::cta shared::cluster local", [0u8, 1, 1, 1, 2]) else {
            return at.unsupported(": generic addresses of .const and .param are not modelled");
        };
        let p = self.dst_pred(&i.operands[0])?;
        let a = self.src(&i.operands[1], ScalarType::U64)?;
        let size = self.const_reg(ScalarType::U64, WINDOW_SIZE);
        // in(window) = a - base < size (unsigned)
        let inside = |l: &mut Self, base: u64, d: u32, combine: Option<(BoolOp, u32, bool)>| {
            let b = l.const_reg(ScalarType::U64, base);
            let t = l.alloc_reg(ScalarType::U64);
            l.emit(at, guard, Op::Bin64 { f: Bin64::Sub, d: t.slot, a: a.slot, b: b.slot });
            let cmp = if combine.is_some() { CmpOp::Ge } else { CmpOp::Lt };
            l.emit(at, guard, Op::Setp(Setp { cmp, ty: ScalarType::U64, ftz: false, p: d, q: None, a: t, b: size, combine }));
        };
        match space {
            1 => inside(self, SHARED_WINDOW, p, None),
            2 => inside(self, LOCAL_WINDOW, p, None),
            _ => {
                // Neither shared nor local: (a - local >= size) and not shared.
                let sh = self.alloc_reg(ScalarType::Pred).slot;
                inside(self, SHARED_WINDOW, sh, None);
                inside(self, LOCAL_WINDOW, p, Some((BoolOp::And, sh, true)));
            }
        }
        Ok(())
    }

    pub(super) fn load(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let ty = self.ld_st_type(i, mods, full, "loads")?;
        let space = self.mem_space(mods, &i.opcode);
        let (space, addr) = self.address(&ops[1], space)?;
        self.check_256_bit(i, mods, ty, space, full)?;
        let mut d = [None; 8];
        let n = match &ops[0] {
            Operand::Vector(parts, _) => {
                if parts.len() > 8 || parts.len() != mods.vec as usize {
                    return self.err(ops[0].span(), "vector size does not match .v2/.v4/.v8");
                }
                for (k, p) in parts.iter().enumerate() {
                    d[k] = match p {
                        Operand::Sink(_) => None,
                        p => Some(self.dst(p)?),
                    };
                }
                parts.len()
            }
            p => {
                if mods.vec > 1 {
                    return self.err(p.span(), "a vector load needs a `{...}` destination");
                }
                d[0] = Some(self.dst(p)?);
                1
            }
        };
        for r in d.iter().flatten() {
            if r.bank == Bank::R32 && ty.bits() > 32 {
                return self.err(ops[0].span(), "destination register narrower than the loaded type");
            }
            if r.bank == Bank::Pred {
                return self.err(ops[0].span(), "cannot load into a predicate");
            }
        }
        let size = ty.bytes() as u8;
        let signed = ty.is_signed();
        // A `.v8` load runs as its two 128-bit halves (a GPU issues it as one request).
        for (half, dh) in d.chunks(4).take(n.div_ceil(4)).enumerate() {
            let addr = Addr { base: addr.base, offset: addr.offset + 16 * half as i64 };
            let d = [dh[0], dh[1], dh[2], dh[3]];
            self.push(Op::Ld { space, size, signed, n: n.min(4) as u8, d, addr }, guard, i.span, full);
        }
        Ok(())
    }

    pub(super) fn store(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let ty = self.ld_st_type(i, mods, full, "stores")?;
        let space = self.mem_space(mods, "st");
        let (space, addr) = self.address(&ops[0], space)?;
        if space == Space::KernelParam {
            return self.err(i.span, "kernel parameters are read-only");
        }
        self.check_256_bit(i, mods, ty, space, full)?;
        let mut s = [self.zero32(); 8];
        let n = match &ops[1] {
            Operand::Vector(parts, _) => {
                if parts.len() > 8 || parts.len() != mods.vec as usize {
                    return self.err(ops[1].span(), "vector size does not match .v2/.v4/.v8");
                }
                for (k, p) in parts.iter().enumerate() {
                    s[k] = self.src(p, ty)?;
                }
                parts.len()
            }
            p => {
                s[0] = self.src(p, ty)?;
                1
            }
        };
        // A `.v8` store runs as its two 128-bit halves.
        for (half, sh) in s.chunks(4).take(n.div_ceil(4)).enumerate() {
            let addr = Addr { base: addr.base, offset: addr.offset + 16 * half as i64 };
            let s = [sh[0], sh[1], sh[2], sh[3]];
            self.push(Op::St { space, size: ty.bytes() as u8, n: n.min(4) as u8, s, addr }, guard, i.span, full);
        }
        Ok(())
    }

    pub(super) fn atom(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let is_red = i.opcode == "red";
        use AtomOp as A;
        let Some(op) = mods.pick(
            "add min max inc dec and or xor exch cas",
            [A::Add, A::Min, A::Max, A::Inc, A::Dec, A::And, A::Or, A::Xor, A::Exch, A::Cas],
        ) else {
            return self.err(i.span, format!("unsupported instruction `{full}`: missing operation"));
        };
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        if mods.vec > 1 || ty.bits() > 64 || ty.bits() < 16 {
            return self.err(i.span, format!("unsupported instruction `{full}`"));
        }
        let first = if is_red { 0 } else { 1 };
        let need = first + if op == AtomOp::Cas { 3 } else { 2 };
        if ops.len() < need {
            return self.err(i.span, format!("`{full}` expects {need} operands"));
        }
        let d = if is_red { None } else { Some(self.dst(&ops[0])?) };
        let space = self.mem_space(mods, "atom");
        let (space, addr) = self.address(&ops[first], space)?;
        let b = self.src(&ops[first + 1], ty)?;
        let c = if op == AtomOp::Cas { self.src(&ops[first + 2], ty)? } else { self.zero32() };
        self.push(Op::Atom { space, op, ty, d, addr, b, c }, guard, i.span, full);
        Ok(())
    }
}

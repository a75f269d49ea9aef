//! Moves (`mov`: copies, packing and unpacking, clocks), address-window
//! conversions (`cvta`) and conversions between types (`cvt`).

use super::*;
use warpsim_numerics::fp8::F8;

impl Lowerer<'_> {
    pub(super) fn cvt(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if mods.has("pack") {
            return self.cvt_pack_int(i, mods, guard, full);
        }
        let f8 = |s: &str| match s {
            "e4m3x2" => Some(F8::E4M3),
            "e5m2x2" => Some(F8::E5M2),
            _ => None,
        };
        let f8s: Vec<(usize, F8)> = mods.raw.iter().enumerate().filter_map(|(k, m)| f8(m).map(|f| (k, f))).collect();
        if let Some(&(k, fmt)) = f8s.first() {
            let relu = mods.has("relu");
            let other = mods.raw[k + 1..].iter().chain(&mods.raw[..k]).find_map(|m| ScalarType::from_ptx(m));
            let to_f8 = mods.raw[k + 1..].iter().any(|m| ScalarType::from_ptx(m).is_some());
            if f8s.len() > 1 || mods.rnd != Some(warpsim_numerics::Rounding::Rn) {
                return self.at(i, full).unsupported(": fp8 conversions are .rn between one fp8x2 type and f32 or f16x2");
            }
            if to_f8 && !mods.has("satfinite") {
                return self.err(i.span, format!("`{full}` needs .satfinite"));
            }
            let d = self.d32(&ops[0])?;
            match (to_f8, other) {
                (true, Some(ScalarType::F32)) if ops.len() == 3 => {
                    let a = self.r32(&ops[1], ScalarType::F32)?;
                    let b = self.r32(&ops[2], ScalarType::F32)?;
                    self.push(Op::CvtToF8x2 { fmt, relu, from_f16x2: false, d, a, b }, guard, i.span, full);
                }
                (true, Some(ScalarType::F16x2)) if ops.len() == 2 => {
                    let a = self.r32(&ops[1], ScalarType::F16x2)?;
                    self.push(Op::CvtToF8x2 { fmt, relu, from_f16x2: true, d, a, b: a }, guard, i.span, full);
                }
                (false, Some(ScalarType::F16x2)) if ops.len() == 2 => {
                    let a = self.r32(&ops[1], ScalarType::B16)?;
                    self.push(Op::CvtF8x2ToF16x2 { fmt, relu, d, a }, guard, i.span, full);
                }
                _ => return self.at(i, full).unsupported(": fp8 conversions are .rn between one fp8x2 type and f32 or f16x2"),
            }
            return Ok(());
        }
        if ops.len() < 2 || mods.types.len() < 2 {
            return self.err(i.span, format!("`{full}` expects two types and two operands"));
        }
        let (dty, sty) = (mods.types[0], mods.types[1]);
        // `.satfinite` is not `.sat` (which clamps float results to [0, 1]).
        let mode = FMode { rnd: mods.rnd, ftz: mods.ftz, sat: mods.has("sat") };
        let (relu, satfinite) = (mods.has("relu"), mods.has("satfinite"));
        if matches!(dty, ScalarType::F16x2 | ScalarType::BF16x2) {
            if ops.len() < 3 || sty != ScalarType::F32 {
                return self.err(i.span, format!("unsupported instruction `{full}`: packed cvt takes two f32 sources"));
            }
            let d = self.d32(&ops[0])?;
            let a = self.r32(&ops[1], sty)?;
            let b = self.r32(&ops[2], sty)?;
            self.push(Op::CvtPack { dty, mode, relu, satfinite, d, a, b }, guard, i.span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let a = self.src(&ops[1], sty)?;
        let plain = !mode.sat && !mode.ftz && mode.rnd.is_none() && !relu && !satfinite;
        if plain && d.bank == Bank::R64 && a.bank == Bank::R32 && dty.is_int() && sty.is_int() && sty.bits() == 32 {
            self.push(Op::Extend32To64 { signed: sty.is_signed(), d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        if plain && d.bank == Bank::R32 && a.bank == Bank::R64 && dty.is_int() && sty.is_int() && dty.bits() == 32 {
            self.push(Op::Trunc64To32 { d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        self.push(Op::Cvt { dty, sty, mode, relu, satfinite, d, a }, guard, i.span, full);
        Ok(())
    }

    /// `cvt.pack.sat.u8.s32.b32 d, a, b, c` (and `.u16`/`.s16` without c).
    fn cvt_pack_int(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let (Some(&cty), Some(&ScalarType::S32)) = (mods.types.first(), mods.types.get(1)) else {
            return self.at(i, full).unsupported(": cvt.pack converts .s32 sources");
        };
        let bits = match cty {
            ScalarType::U8 | ScalarType::S8 => 8,
            ScalarType::U16 | ScalarType::S16 => 16,
            _ => return self.at(i, full).unsupported(": cvt.pack to this type"),
        };
        let want = if bits == 16 { 3 } else { 4 };
        if ops.len() != want || !mods.sat {
            return self.err(i.span, format!("`{full}` expects .sat and {want} operands"));
        }
        let d = self.dst(&ops[0])?;
        let mut s = [self.zero32(); 4];
        for k in 1..want {
            s[k - 1] = self.src(&ops[k], ScalarType::B32)?;
        }
        self.push(Op::Int { op: IntOp::CvtPack { bits, signed: cty.is_signed() }, ty: ScalarType::B32, d, s }, guard, i.span, full);
        Ok(())
    }

    pub(super) fn mov(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let at = self.at(i, full);
        let ty = mods.ty();
        match i.opcode.as_str() {
            "mov" => {
                at.nops(2)?;
                let ty = ty.unwrap_or(ScalarType::B32);
                match (&ops[0], &ops[1]) {
                    (Operand::Vector(ds, _), Operand::Vector(srcs, _)) => {
                        // `mov.v4.u16 {a, b, c, d}, {b, c, d, a}`: element-wise, as
                        // one parallel assignment (sources read before any write).
                        if ds.len() != srcs.len() || !(ds.len() == 2 || ds.len() == 4) {
                            return self.err(ops[1].span(), "a vector move takes 2 or 4 elements on both sides");
                        }
                        let ety = mods.types.last().copied().unwrap_or(ScalarType::B32);
                        let mut pairs = Vec::with_capacity(ds.len());
                        for (d, a) in ds.iter().zip(srcs) {
                            let a = self.src(a, ety)?;
                            let d = match d {
                                Operand::Sink(_) => continue,
                                d => self.dst(d)?,
                            };
                            pairs.push((d, a));
                        }
                        let clobbers = pairs.iter().enumerate().any(|(k, (d, _))| pairs[k + 1..].iter().any(|(_, a)| a == d));
                        if clobbers {
                            // Copy the sources aside first.
                            for p in &mut pairs {
                                let t = self.alloc_reg(if p.1.bank == Bank::R64 { ScalarType::B64 } else { ScalarType::B32 });
                                self.emit(at, guard, Op::Mov { d: t, a: p.1 });
                                p.1 = t;
                            }
                        }
                        for (d, a) in pairs {
                            let op = self.move_between(d, a);
                            self.emit(at, guard, op);
                        }
                    }
                    (d, Operand::Vector(parts, _)) => {
                        let d = self.dst(d)?;
                        let n = parts.len();
                        if !(n == 2 || n == 4) {
                            return self.err(ops[1].span(), "a packed move takes 2 or 4 elements");
                        }
                        let elem_bits = (ty.bits() as usize / n) as u8;
                        let ety = elem_type(elem_bits as u32);
                        let mut p = [RegRef::r32(0); 4];
                        for (k, part) in parts.iter().enumerate() {
                            p[k] = self.src(part, ety)?;
                        }
                        self.emit(at, guard, Op::Pack { d, parts: p, n: n as u8, elem_bits });
                    }
                    (Operand::Vector(parts, _), a) => {
                        let n = parts.len();
                        if !(n == 2 || n == 4) {
                            return self.err(ops[0].span(), "an unpacking move takes 2 or 4 elements");
                        }
                        let a = self.src(a, ty)?;
                        let elem_bits = (ty.bits() as usize / n) as u8;
                        let mut ds = [None; 4];
                        for (k, part) in parts.iter().enumerate() {
                            ds[k] = match part {
                                Operand::Sink(_) => None,
                                p => Some(self.dst(p)?),
                            };
                        }
                        self.emit(at, guard, Op::Unpack { ds, a, n: n as u8, elem_bits });
                    }
                    (d, a) => {
                        if let Operand::Name(n, s) = a {
                            if let Some(k) = Self::clock_kind(n) {
                                let d = self.dst(d)?;
                                let _ = s;
                                self.emit(at, guard, Op::Clock { kind: k, d });
                                return Ok(());
                            }
                        }
                        let d = self.dst(d)?;
                        if d.bank == Bank::Pred {
                            let (a, neg) = self.src_pred(a)?;
                            self.emit(at, guard, Op::PredLogic { op: if neg { PredOp::Not } else { PredOp::Mov }, d: d.slot, a, b: a });
                            return Ok(());
                        }
                        let a = self.src(a, ty)?;
                        let op = self.move_between(d, a);
                        self.emit(at, guard, op);
                    }
                }
            }
            "cvta" => {
                at.nops(2)?;
                let to_generic = !mods.has("to");
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], ty.unwrap_or(ScalarType::U64))?;
                let window = mods.pick("shared local", [SHARED_WINDOW, LOCAL_WINDOW]).unwrap_or(0);
                if window == 0 {
                    let op = self.move_between(d, a);
                    self.emit(at, guard, op);
                } else {
                    self.emit(at, guard, Op::Cvta { to_generic, window, d, a });
                }
            }
            _ => return at.unsupported(""),
        }
        Ok(())
    }
}

//! Conversions between types (`cvt`).

use super::*;

impl Lowerer<'_> {
    pub(super) fn cvt(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 2 || mods.types.len() < 2 {
            return self.err(i.span, format!("`{full}` expects two types and two operands"));
        }
        let (dty, sty) = (mods.types[0], mods.types[1]);
        let mode = FMode { rnd: mods.rnd, ftz: mods.ftz, sat: mods.sat };
        if matches!(dty, ScalarType::F16x2 | ScalarType::BF16x2) {
            if ops.len() < 3 || sty != ScalarType::F32 {
                return self.err(i.span, format!("unsupported instruction `{full}`: packed cvt takes two f32 sources"));
            }
            let d = self.d32(&ops[0])?;
            let a = self.r32(&ops[1], sty)?;
            let b = self.r32(&ops[2], sty)?;
            self.push(Op::CvtPack { dty, mode, d, a, b }, guard, i.span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let a = self.src(&ops[1], sty)?;
        let plain = !mode.sat && !mode.ftz && mode.rnd.is_none();
        if plain && d.bank == Bank::R64 && a.bank == Bank::R32 && dty.is_int() && sty.is_int() && sty.bits() == 32 {
            self.push(Op::Extend32To64 { signed: sty.is_signed(), d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        if plain && d.bank == Bank::R32 && a.bank == Bank::R64 && dty.is_int() && sty.is_int() && dty.bits() == 32 {
            self.push(Op::Trunc64To32 { d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        self.push(Op::Cvt { dty, sty, mode, d, a }, guard, i.span, full);
        Ok(())
    }
}

//! Warp-level instructions: `shfl.sync`, `vote`, `match`, `activemask`,
//! `redux.sync`, `elect.sync`.

use super::*;

impl Lowerer<'_> {
    pub(super) fn warp(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let at = self.at(i, full);
        let ty = mods.ty();
        match i.opcode.as_str() {
            "shfl" => {
                if !mods.has("sync") {
                    return at.unsupported(": use shfl.sync (the form without .sync is removed since sm_70)");
                }
                at.nops(5)?;
                let Some(mode) = mods.pick("up down bfly idx", [ShflMode::Up, ShflMode::Down, ShflMode::Bfly, ShflMode::Idx]) else {
                    return at.unsupported(": missing mode");
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.r32(&ops[1], ScalarType::B32)?;
                let b = self.r32(&ops[2], ScalarType::B32)?;
                let c = self.r32(&ops[3], ScalarType::B32)?;
                let mask = self.r32(&ops[4], ScalarType::B32)?;
                self.emit(at, guard, Op::Shfl(Shfl { mode, d, p, a, b, c, mask }));
            }
            "vote" => {
                let Some(mode) = mods.pick("all any uni ballot", [VoteMode::All, VoteMode::Any, VoteMode::Uni, VoteMode::Ballot]) else {
                    return at.unsupported(": missing mode");
                };
                at.nops(2)?;
                let d = self.dst(&ops[0])?;
                let (a, negate) = self.src_pred(&ops[1])?;
                let mask = if mods.has("sync") {
                    at.nops(3)?;
                    self.r32(&ops[2], ScalarType::B32)?
                } else if self.target_sm().is_some_and(|v| v >= 70) && self.ptx_version() >= (6, 4) {
                    // As ptxas: the implicitly warp-wide form ends with PTX 6.4 on Volta and later.
                    return self.err(
                        span,
                        format!("`{full}` without `.sync` is not supported on sm_70 and later from PTX ISA 6.4 (use `vote.sync`)"),
                    );
                } else {
                    self.const_reg(ScalarType::B32, 0xFFFF_FFFF).slot
                };
                self.emit(at, guard, Op::Vote { mode, d, a, negate, mask });
            }
            "match" => {
                at.nops(3)?;
                let ty = self.need_ty(ty, span, full)?;
                let all = mods.has("all");
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.src(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                self.emit(at, guard, Op::Match { all, ty, d, p, a, mask });
            }
            "activemask" => {
                at.nops(1)?;
                let d = self.d32(&ops[0])?;
                self.emit(at, guard, Op::Activemask { d });
            }
            "redux" => {
                at.nops(3)?;
                let ty = self.need_ty(ty, span, full)?;
                let Some(op) = mods
                    .pick("add min max and or xor", [ReduxOp::Add, ReduxOp::Min, ReduxOp::Max, ReduxOp::And, ReduxOp::Or, ReduxOp::Xor])
                else {
                    return at.unsupported(": missing operation");
                };
                if ty.is_float() || ty.bits() != 32 {
                    return at.unsupported(": only 32-bit integer redux is supported");
                }
                let d = self.d32(&ops[0])?;
                let a = self.r32(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                self.emit(at, guard, Op::Redux { op, ty, d, a, mask });
            }
            "elect" => {
                at.nops(2)?;
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => {
                        let d = match &**d {
                            Operand::Sink(_) => None,
                            d => Some(self.d32(d)?),
                        };
                        (d, self.dst_pred(p)?)
                    }
                    p => (None, self.dst_pred(p)?),
                };
                let mask = self.r32(&ops[1], ScalarType::B32)?;
                self.emit(at, guard, Op::ElectSync { d, p, mask });
            }
            _ => return at.unsupported(""),
        }
        Ok(())
    }
}

//! Warp-level instructions: `shfl.sync`, `vote`, `match`, `activemask`,
//! `redux.sync`, `elect.sync`.

use super::*;

impl Lowerer<'_> {
    pub(super) fn warp(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let at = self.at(i, full);
        let (nops, unsupported) = (|n| at.nops(n), |what| at.unsupported(what));
        let ty = mods.ty();
        macro_rules! emit {
            ($op:expr) => {{
                let op = $op;
                self.push(op, guard, span, full);
            }};
        }
        match i.opcode.as_str() {
            "shfl" => {
                if !mods.has("sync") {
                    return unsupported(": use shfl.sync (the form without .sync is removed since sm_70)");
                }
                nops(5)?;
                let mode = if mods.has("up") {
                    ShflMode::Up
                } else if mods.has("down") {
                    ShflMode::Down
                } else if mods.has("bfly") {
                    ShflMode::Bfly
                } else if mods.has("idx") {
                    ShflMode::Idx
                } else {
                    return unsupported(": missing mode");
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.r32(&ops[1], ScalarType::B32)?;
                let b = self.r32(&ops[2], ScalarType::B32)?;
                let c = self.r32(&ops[3], ScalarType::B32)?;
                let mask = self.r32(&ops[4], ScalarType::B32)?;
                emit!(Op::Shfl { mode, d, p, a, b, c, mask });
            }
            "vote" => {
                let mode = if mods.has("all") {
                    VoteMode::All
                } else if mods.has("any") {
                    VoteMode::Any
                } else if mods.has("uni") {
                    VoteMode::Uni
                } else if mods.has("ballot") {
                    VoteMode::Ballot
                } else {
                    return unsupported(": missing mode");
                };
                nops(2)?;
                let d = self.dst(&ops[0])?;
                let (a, negate) = self.src_pred(&ops[1])?;
                let mask = if mods.has("sync") {
                    nops(3)?;
                    self.r32(&ops[2], ScalarType::B32)?
                } else {
                    self.const_reg(ScalarType::B32, 0xFFFF_FFFF).slot
                };
                emit!(Op::Vote { mode, d, a, negate, mask });
            }
            "match" => {
                nops(3)?;
                let ty = self.need_ty(ty, span, full)?;
                let all = mods.has("all");
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.src(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                emit!(Op::Match { all, ty, d, p, a, mask });
            }
            "activemask" => {
                nops(1)?;
                let d = self.d32(&ops[0])?;
                emit!(Op::Activemask { d });
            }
            "redux" => {
                nops(3)?;
                let ty = self.need_ty(ty, span, full)?;
                let op = if mods.has("add") {
                    ReduxOp::Add
                } else if mods.has("min") {
                    ReduxOp::Min
                } else if mods.has("max") {
                    ReduxOp::Max
                } else if mods.has("and") {
                    ReduxOp::And
                } else if mods.has("or") {
                    ReduxOp::Or
                } else if mods.has("xor") {
                    ReduxOp::Xor
                } else {
                    return unsupported(": missing operation");
                };
                if ty.is_float() || ty.bits() != 32 {
                    return unsupported(": only 32-bit integer redux is supported");
                }
                let d = self.d32(&ops[0])?;
                let a = self.r32(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                emit!(Op::Redux { op, ty, d, a, mask });
            }
            "elect" => {
                nops(2)?;
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
                emit!(Op::ElectSync { d, p, mask });
            }
            _ => return unsupported(""),
        }
        Ok(())
    }
}

//! One PTX instruction to decoded ops: the dispatch on the opcode to the
//! family files, and the few forms short enough to lower in place (logic,
//! shifts, selects, `testp`, fences, `exit`).

use super::*;

impl Lowerer<'_> {
    // Kept out of line: its locals would otherwise sit in every frame of the
    // `call` -> `scope_statements` recursion.
    #[inline(never)]
    pub(super) fn instruction(&mut self, i: &Instruction) -> LResult<()> {
        // Vector registers: `r` stands for `{r.x, r.y, ...}` (calls bind them whole).
        if self.has_vectors && i.opcode != "call" {
            let new: Vec<Option<Operand>> = i.operands.iter().map(|o| self.expand_vectors(o)).collect();
            if new.iter().any(Option::is_some) {
                let operands = new.into_iter().zip(&i.operands).map(|(n, o)| n.unwrap_or_else(|| o.clone())).collect();
                return self.instruction_of(&Instruction { operands, ..i.clone() });
            }
        }
        self.instruction_of(i)
    }

    #[inline(never)]
    fn instruction_of(&mut self, i: &Instruction) -> LResult<()> {
        let guard = match &i.guard {
            None => None,
            Some(g) => match self.lookup(&g.pred) {
                Some(Sym::Reg(r, _)) if r.bank == Bank::Pred => Some(Guard { pred: r.slot, negate: g.negate }),
                _ => return self.err(g.span, format!("`{}` is not a predicate register", g.pred)),
            },
        };
        let full = if i.mods.is_empty() { i.opcode.clone() } else { format!("{}.{}", i.opcode, i.mods.join(".")) };
        let mods = Mods::parse(&i.mods);
        let ops = &i.operands;
        let span = i.span;
        let at = self.at(i, &full);
        let ty = mods.ty();
        match i.opcode.as_str() {
            "mov" | "cvta" => self.mov(i, &mods, guard, &full)?,
            "min" | "max" if mods.has("s16x2") || mods.has("u16x2") => self.min_max_16x2(i, &mods, guard, &full)?,
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "abs" | "neg" | "min" | "max" => {
                let ty = self.need_ty(ty, span, &full)?;
                if mods.has("cc") || (i.opcode == "mad" && mods.has("cc")) {
                    return self.carry_op(i, &mods, ty, guard, &full);
                }
                if ty.is_float() {
                    self.float_arith(i, &mods, ty, guard, &full)?;
                } else {
                    self.int_arith(i, &mods, ty, guard, &full)?;
                }
            }
            "addc" | "subc" | "madc" => {
                let ty = self.need_ty(ty, span, &full)?;
                return self.carry_op(i, &mods, ty, guard, &full);
            }
            "mul24" | "mad24" | "sad" | "popc" | "clz" | "bfind" | "brev" | "bfe" | "bfi" | "bmsk" | "szext" | "fns" | "prmt" | "shf" | "cnot" | "lop3"
            | "dp4a" | "dp2a" => {
                let ty = self.need_ty(ty, span, &full)?;
                self.int_misc(i, &mods, ty, guard, &full)?;
            }
            "and" | "or" | "xor" | "not" => {
                let ty = self.need_ty(ty, span, &full)?;
                if ty == ScalarType::Pred {
                    let n = if i.opcode == "not" { 2 } else { 3 };
                    at.nops(n)?;
                    let d = self.dst_pred(&ops[0])?;
                    let (a, na) = self.src_pred(&ops[1])?;
                    let (b, nb) = if n == 3 { self.src_pred(&ops[2])? } else { (a, false) };
                    if na || nb {
                        return self.err(span, "negated predicate operands are only allowed in setp/selp");
                    }
                    let op = match i.opcode.as_str() {
                        "and" => PredOp::And,
                        "or" => PredOp::Or,
                        "xor" => PredOp::Xor,
                        _ => PredOp::Not,
                    };
                    self.emit(at, guard, Op::PredLogic { op, d, a, b });
                } else {
                    self.int_misc(i, &mods, ty, guard, &full)?;
                }
            }
            "shl" | "shr" => {
                let ty = self.need_ty(ty, span, &full)?;
                at.nops(3)?;
                if ty.bits() == 64 {
                    let d = self.d64(&ops[0])?;
                    let a = self.r64(&ops[1], ty)?;
                    let b = self.r32(&ops[2], ScalarType::U32)?;
                    self.emit(at, guard, Op::Shift64 { left: i.opcode == "shl", signed: ty.is_signed(), d, a, b });
                } else if ty.bits() == 32 {
                    let d = self.d32(&ops[0])?;
                    let a = self.r32(&ops[1], ty)?;
                    let b = self.r32(&ops[2], ScalarType::U32)?;
                    let f = match (i.opcode.as_str(), ty.is_signed()) {
                        ("shl", _) => Bin32::Shl,
                        ("shr", true) => Bin32::ShrS,
                        _ => Bin32::ShrU,
                    };
                    self.emit(at, guard, Op::Bin32 { f, d, a, b });
                } else {
                    let op = if i.opcode == "shl" { IntOp::Shl } else { IntOp::Shr };
                    let d = self.dst(&ops[0])?;
                    let a = self.src(&ops[1], ty)?;
                    let b = self.src(&ops[2], ScalarType::U32)?;
                    let z = self.zero32();
                    self.emit(at, guard, Op::Int { op, ty, d, s: [a, b, z, z] });
                }
            }
            "setp" => self.setp(i, &mods, guard, &full)?,
            "set" => self.set(i, &mods, guard, &full)?,
            "selp" => {
                at.nops(4)?;
                let ty = self.need_ty(ty, span, &full)?;
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                let b = self.src(&ops[2], ty)?;
                let (c, negate) = self.src_pred(&ops[3])?;
                self.emit(at, guard, Op::Selp { d, a, b, c, negate });
            }
            "slct" => {
                at.nops(4)?;
                let (dty, cty) = (mods.types.first().copied(), mods.types.get(1).copied());
                let (Some(dty), Some(cty)) = (dty, cty) else { return at.unsupported(": slct needs two types") };
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], dty)?;
                let b = self.src(&ops[2], dty)?;
                let c = self.src(&ops[3], cty)?;
                self.emit(at, guard, Op::Slct { cty, ftz: mods.ftz, d, a, b, c });
            }
            "testp" => {
                at.nops(2)?;
                let ty = self.need_ty(ty, span, &full)?;
                use TestpClass as C;
                let Some(class) = mods.pick(
                    "finite infinite number notanumber normal subnormal",
                    [C::Finite, C::Infinite, C::Number, C::NotANumber, C::Normal, C::Subnormal],
                ) else {
                    return at.unsupported(": unknown testp class");
                };
                let p = self.dst_pred(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                self.emit(at, guard, Op::Testp { class, ty, p, a });
            }
            "copysign" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
                let ty = self.need_ty(ty, span, &full)?;
                self.float_arith(i, &mods, ty, guard, &full)?;
            }
            "cvt" => self.cvt(i, &mods, guard, &full)?,
            "ld" | "ldu" => self.load(i, &mods, guard, &full)?,
            "st" => self.store(i, &mods, guard, &full)?,
            "atom" | "red" => self.atom(i, &mods, guard, &full)?,
            "prefetch" | "prefetchu" | "membar" | "fence" | "nanosleep" | "pmevent" | "discard" | "applypriority"
            // Programmatic dependent launch: launches run one after another here, so a
            // grid's prerequisites have always completed and there is nothing to signal.
            | "griddepcontrol" => {
                self.emit(at, guard, Op::Fence)
            }
            "isspacep" => self.isspacep(i, &mods, guard, &full)?,
            // An L2 cache policy: opaque to the program, read only by loads' cache
            // hints, which the model does not follow.
            "createpolicy" => {
                at.nops(2)?;
                let d = self.dst(&ops[0])?;
                let a = self.const_reg(ScalarType::B64, 0);
                let op = self.move_between(d, a);
                self.emit(at, guard, op);
            }
            // The address in CTA `b` of the cluster: warpsim runs clusters of one CTA,
            // so rank 0's address is the address itself.
            "mapa" => {
                at.nops(3)?;
                if !matches!(ops[2], Operand::Imm(0, _)) {
                    return at.unsupported(": a CTA rank that is not an immediate 0 (warpsim runs clusters of one CTA)");
                }
                let ty = self.need_ty(ty, span, &full)?;
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                let op = self.move_between(d, a);
                self.emit(at, guard, op);
            }
            "bra" | "brx" | "ret" => self.branch(i, guard, &full)?,
            "call" => self.call(i, guard, &full)?,
            "exit" => self.emit(at, guard, Op::Exit),
            "trap" => self.emit(at, guard, Op::Trap),
            "bar" | "barrier" => self.barrier(i, &mods, guard, &full)?,
            "shfl" | "vote" | "match" | "activemask" | "redux" | "elect" => self.warp(i, &mods, guard, &full)?,
            "mma" | "wmma" | "ldmatrix" | "stmatrix" | "movmatrix" | "cp" | "mbarrier" | "wgmma" | "setmaxnreg" => {
                return self.lower_mma(i, &mods, guard, &full);
            }
            _ => return at.unsupported(""),
        }
        Ok(())
    }
}

//! Control: branches, returns, barriers and calls (`.func` bodies are inlined
//! where they can be; `calls.rs` has the others).

use super::*;

impl Lowerer<'_> {
    pub(super) fn barrier(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if mods.has("warp") {
            if ops.is_empty() {
                return self.err(i.span, "bar.warp.sync needs a mask");
            }
            let mask = self.src(&ops[0], ScalarType::B32)?;
            self.push(Op::BarWarpSync { mask }, guard, i.span, full);
            return Ok(());
        }
        if mods.has("cluster") {
            return self.err(i.span, format!("unsupported instruction `{full}`: cluster barriers"));
        }
        let aligned = i.opcode == "bar" || mods.has("aligned");
        if mods.has("red") {
            // bar.red.op.type d, a{, b}, {!}c
            if ops.len() < 3 {
                return self.err(i.span, format!("`{full}` expects 3 or 4 operands"));
            }
            let d = self.dst(&ops[0])?;
            let Some(kind) = mods.pick("popc and or", [BarRed::Popc { d }, BarRed::And { d }, BarRed::Or { d }]) else {
                return self.err(i.span, format!("unsupported instruction `{full}`"));
            };
            let id = self.src(&ops[1], ScalarType::U32)?;
            let (count, pidx) = if ops.len() >= 4 { (Some(self.src(&ops[2], ScalarType::U32)?), 3) } else { (None, 2) };
            let p = self.src_pred(&ops[pidx])?;
            self.push(Op::Bar { kind: BarKind::Red(kind), id, count, aligned, pred: Some(p) }, guard, i.span, full);
            return Ok(());
        }
        let kind = if mods.has("arrive") { BarKind::Arrive } else { BarKind::Sync };
        let id = match ops.first() {
            Some(o) => self.src(o, ScalarType::U32)?,
            None => self.zero32(),
        };
        let count = match ops.get(1) {
            Some(o) => Some(self.src(o, ScalarType::U32)?),
            None => None,
        };
        if kind == BarKind::Arrive && count.is_none() {
            return self.err(i.span, "bar.arrive needs a thread count");
        }
        self.push(Op::Bar { kind, id, count, aligned, pred: None }, guard, i.span, full);
        Ok(())
    }

    /// `vprintf` and `__assertfail`, the external functions CUDA's device
    /// `printf` and `assert` call: their `.param` arguments are read by the
    /// engine from the lane's local memory.
    fn known_extern(
        &mut self,
        i: &Instruction,
        callee: &str,
        rets: &[Operand],
        args: &[Operand],
        guard: Option<Guard>,
        full: &str,
    ) -> LResult<()> {
        let want = if callee == "vprintf" { 2 } else { 5 };
        if args.len() != want {
            return self.err(i.span, format!("`{callee}` takes {want} arguments"));
        }
        let mut offs = [0u32; 5];
        for (k, a) in args.iter().enumerate() {
            offs[k] = match a {
                Operand::Name(n, s) => match self.lookup(n) {
                    Some(Sym::Local(off)) => off,
                    _ => return self.err(*s, format!("`{callee}` arguments must be .param variables")),
                },
                _ => return self.err(a.span(), format!("`{callee}` arguments must be .param variables")),
            };
        }
        if callee != "vprintf" {
            self.push(Op::AssertFail { params: [offs[0], offs[1], offs[2], offs[3]] }, guard, i.span, full);
            return Ok(());
        }
        // The return value goes to its `.param` as a store, so that the checkers see it written.
        let ret = match rets {
            [] => None,
            [Operand::Name(n, s)] => match self.lookup(n) {
                Some(Sym::Local(off)) => Some(off),
                _ => return self.err(*s, "`vprintf`'s return value must be a .param variable"),
            },
            _ => return self.err(i.span, "`vprintf` returns one value"),
        };
        let d = ret.map(|_| self.alloc_reg(ScalarType::B32));
        self.push(Op::Printf { format: offs[0], args: offs[1], d: d.map(|r| r.slot) }, guard, i.span, full);
        if let (Some(off), Some(d)) = (ret, d) {
            let (space, addr) = self.local_address(off, 0, Space::Local, i.span);
            let z = self.zero32();
            self.push(Op::St { space, size: 4, n: 1, s: [d, z, z, z], addr }, guard, i.span, full);
        }
        Ok(())
    }

    pub(super) fn call(&mut self, i: &Instruction, guard: Option<Guard>, full: &str) -> LResult<()> {
        // call{.uni} (rets), name, (args){, prototype};
        let ops = &i.operands;
        let mut k = 0;
        let rets: &[Operand] = match ops.first() {
            Some(Operand::List(r, _)) => {
                k = 1;
                r
            }
            _ => &[],
        };
        let Some(Operand::Name(callee, cspan)) = ops.get(k) else {
            return self.err(i.span, "call needs a function name");
        };
        let args: &[Operand] = match ops.get(k + 1) {
            Some(Operand::List(a, _)) => a,
            _ => &[],
        };
        if let Some(Sym::Reg(..)) = self.lookup(callee) {
            // Through a function pointer (`call (r), %rd, (a), prototype;`).
            return self.real_call(i, callee, rets, args, guard, full);
        }
        if ops.len() > k + 2 || self.lookup(callee).is_some() {
            return self.err(*cspan, format!("`{callee}` is not a function"));
        }
        let m = self.m;
        if m.function(callee).is_none() && matches!(callee.as_str(), "vprintf" | "__assertfail") {
            return self.known_extern(i, callee, rets, args, guard, full);
        }
        let Some(f) = m.function(callee) else {
            let known = m.functions.iter().any(|f| &f.name == callee);
            let msg = if known {
                format!("`{callee}` is declared without a body (external functions cannot be simulated)")
            } else {
                format!("unknown function `{callee}`")
            };
            return self.err(*cspan, msg);
        };
        let body = f.body.as_ref().unwrap();
        let cost = (body.len() + f.params.len() + f.rets.len()) as u64;
        // Recursion, deep nesting and call trees too large to inline: a real call.
        if self.calls.recursive.contains(callee)
            || self.call_stack.iter().any(|n| n == callee)
            || self.call_stack.len() >= MAX_INLINE_DEPTH
            || self.inline_counter >= MAX_INLINED_CALLS
            || self.statements + cost > MAX_LOWERED_STATEMENTS
        {
            return self.real_call(i, callee, rets, args, guard, full);
        }
        if f.params.len() != args.len() || f.rets.len() != rets.len() {
            return self.err(i.span, format!("`{callee}` takes {} arguments and {} results", f.params.len(), f.rets.len()));
        }
        // A guarded call: branch around the inlined body.
        self.inline_counter += 1;
        let prefix = format!("{}@{}:", callee, self.inline_counter);
        // `#` cannot appear in a PTX label, so no label of the callee can clash.
        let end_key = format!("{prefix}#end");
        if let Some(g) = guard {
            let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, Some(Guard { pred: g.pred, negate: !g.negate }), i.span, full);
            self.fixups.push((pc, vec![end_key.clone()], i.span));
        }
        let mut scope = Scope::default();
        self.statements += (f.params.len() + f.rets.len()) as u64;
        for (decl, arg) in f.params.iter().chain(f.rets.iter()).zip(args.iter().chain(rets.iter())) {
            if decl.vector > 1 {
                // A vector parameter binds element by element: a vector
                // register `r` or a braced list `{a, b}`.
                let n = decl.vector as usize;
                let elems: Vec<Operand> = match arg {
                    Operand::Name(an, aspan) => match self.lookup(an) {
                        Some(Sym::Vector(k)) if k as usize == n => {
                            VECTOR_ELEMS[..n].iter().map(|e| Operand::Name(format!("{an}.{e}"), *aspan)).collect()
                        }
                        _ => return self.err(*aspan, format!("`{an}` is not a .v{n} vector register")),
                    },
                    Operand::Vector(items, _) if items.len() == n => items.clone(),
                    _ => return self.err(arg.span(), format!("`{}` takes a .v{n} vector argument", decl.name)),
                };
                for (e, op) in VECTOR_ELEMS.iter().zip(&elems) {
                    let Operand::Name(en, espan) = op else {
                        return self.err(op.span(), "vector call arguments must be registers");
                    };
                    let Some(sym @ Sym::Reg(..)) = self.lookup(en) else {
                        return self.err(*espan, format!("`{en}` is not a register"));
                    };
                    scope.names.insert(format!("{}.{e}", decl.name), sym);
                }
                scope.names.insert(decl.name.clone(), Sym::Vector(decl.vector));
                self.has_vectors = true;
                continue;
            }
            let Operand::Name(an, aspan) = arg else {
                return self.err(arg.span(), "call arguments must be named variables or registers");
            };
            let sym = match self.lookup(an) {
                Some(s @ (Sym::Local(_) | Sym::Reg(..))) => s,
                Some(_) | None => return self.err(*aspan, format!("`{an}` is not a local .param variable or register")),
            };
            scope.names.insert(decl.name.clone(), sym);
        }
        let module_scope = std::mem::take(&mut self.scopes[0]);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![module_scope, scope]);
        // Module scope was moved into the new stack; restore it after.
        self.frames.push(Frame { prefix: prefix.clone(), ret_label: Some(end_key.clone()) });
        self.call_stack.push(callee.clone());
        // Pragmas are looked for in the callee's own text while inlining it.
        let resume_at = std::mem::replace(&mut self.prev_inst_end, f.span.start);
        let r = self.scope_statements(body);
        self.prev_inst_end = resume_at;
        self.call_stack.pop();
        self.frames.pop();
        let mut inner = std::mem::replace(&mut self.scopes, saved_scopes);
        self.scopes[0] = std::mem::take(&mut inner[0]);
        r?;
        self.labels.insert(end_key, self.code.len() as Pc);
        Ok(())
    }

    pub(super) fn branch(&mut self, i: &Instruction, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let at = self.at(i, full);
        match i.opcode.as_str() {
            "bra" => {
                at.nops(1)?;
                let Operand::Name(label, s) = &ops[0] else {
                    return self.err(ops[0].span(), "expected a label");
                };
                let key = format!("{}{}", self.frames.last().unwrap().prefix, label);
                let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, guard, span, full);
                self.fixups.push((pc, vec![key], *s));
            }
            "brx" => {
                at.nops(2)?;
                let index = self.src(&ops[0], ScalarType::U32)?;
                let Operand::Name(list, s) = &ops[1] else {
                    return self.err(ops[1].span(), "expected a .branchtargets label");
                };
                let Some(Sym::BranchTargets(keys)) = self.lookup(list) else {
                    return self.err(*s, format!("`{list}` is not a .branchtargets list"));
                };
                let pc = self.push(Op::BrxIdx { index, targets: Box::new([]), reconv: NO_RECONV }, guard, span, full);
                self.fixups.push((pc, keys, *s));
            }
            "ret" => {
                let ret_label = self.frames.last().unwrap().ret_label.clone();
                match ret_label {
                    Some(key) => {
                        let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, guard, span, full);
                        self.fixups.push((pc, vec![key], span));
                    }
                    None => self.emit(at, guard, Op::Exit),
                }
            }
            _ => return at.unsupported(""),
        }
        Ok(())
    }
}

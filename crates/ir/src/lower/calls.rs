//! Real calls: functions that cannot be inlined get code of their own.
//!
//! Most `.func` calls are inlined (`control.rs`). A function that is part of
//! a cycle of the call graph (recursion), whose address is taken (called
//! through a pointer), or whose inlining would exceed the inliner's limits
//! is lowered once, after the kernel's code, and called with [`Op::Call`].
//! Its `.param` and `.local` variables live in a frame of the thread's
//! local memory, addressed from the frame-pointer registers the engine sets
//! on call and return (so each call has its own `.local` arrays); its `ret`s
//! branch to one [`Op::Ret`] at its end, which is where its paths
//! reconverge. Function addresses are [`function_addr`] of the function's
//! position in the module.

use super::*;
use std::collections::HashSet;

/// What lowering needs to know about the module's call graph, found once.
#[derive(Default)]
pub(super) struct ModuleCalls {
    /// Functions on a cycle of direct calls.
    pub recursive: HashSet<String>,
    /// Functions with a body whose address is taken (a non-call operand or an initialiser names them).
    pub address_taken: Vec<String>,
}

/// Position of the first function called `name` in the module (its address index).
pub(super) fn function_index(m: &Module, name: &str) -> Option<usize> {
    m.functions.iter().position(|f| f.name == name)
}

/// The callee named by a `call` instruction's operands, if it is a name.
fn callee_name(i: &Instruction) -> Option<&str> {
    let k = usize::from(matches!(i.operands.first(), Some(Operand::List(..))));
    match i.operands.get(k) {
        Some(Operand::Name(n, _)) => Some(n),
        _ => None,
    }
}

/// Every instruction of `stmts`, nested scopes included.
fn instructions<'m>(stmts: &'m [Statement], out: &mut Vec<&'m Instruction>) {
    let mut open = vec![stmts.iter()];
    while let Some(it) = open.last_mut() {
        match it.next() {
            None => {
                open.pop();
            }
            Some(Statement::Inst(i)) => out.push(i),
            Some(Statement::Scope(inner)) => open.push(inner.iter()),
            Some(_) => {}
        }
    }
}

impl ModuleCalls {
    pub(super) fn new(m: &Module) -> ModuleCalls {
        let defined: HashMap<&str, usize> =
            m.functions.iter().enumerate().filter(|(_, f)| f.body.is_some() && !f.is_entry).map(|(k, f)| (f.name.as_str(), k)).collect();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); m.functions.len()];
        let mut taken: HashSet<&str> = HashSet::new();
        let mut insts = Vec::new();
        for (k, f) in m.functions.iter().enumerate() {
            let Some(body) = &f.body else { continue };
            insts.clear();
            instructions(body, &mut insts);
            for i in &insts {
                let callee = if i.opcode == "call" { callee_name(i) } else { None };
                if let Some(&t) = callee.and_then(|c| defined.get(c)) {
                    edges[k].push(t);
                }
                let mut names: Vec<&Operand> = i.operands.iter().collect();
                while let Some(o) = names.pop() {
                    match o {
                        Operand::Name(n, _) if Some(n.as_str()) != callee && defined.contains_key(n.as_str()) => {
                            taken.insert(n);
                        }
                        Operand::List(v, _) | Operand::Vector(v, _) => names.extend(v.iter()),
                        _ => {}
                    }
                }
            }
        }
        for g in &m.globals {
            for v in g.init.iter().flatten() {
                if let ast::InitValue::Symbol(s, _) = v {
                    if defined.contains_key(s.as_str()) {
                        taken.insert(s);
                    }
                }
            }
        }
        let mut recursive = HashSet::new();
        for scc in strongly_connected(&edges) {
            if scc.len() > 1 || edges[scc[0]].contains(&scc[0]) {
                recursive.extend(scc.iter().map(|&k| m.functions[k].name.clone()));
            }
        }
        let mut address_taken: Vec<String> = taken.into_iter().map(str::to_string).collect();
        address_taken.sort();
        ModuleCalls { recursive, address_taken }
    }
}

/// Strongly connected components of a graph (Tarjan's, iterative).
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const NONE: usize = usize::MAX;
    let n = edges.len();
    let (mut index, mut low, mut on) = (vec![NONE; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = edges[v].get(*i) {
                *i += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(scc);
            }
        }
    }
    out
}

/// A function with code of its own in the kernel being lowered.
pub(super) struct RealFn {
    pub info: FuncInfo,
    pub lowered: bool,
}

impl Lowerer<'_> {
    /// The index of `name` among the kernel's real functions (added, to be lowered, on first use).
    pub(super) fn real_fn(&mut self, name: &str) -> u32 {
        if let Some(&k) = self.real_by_name.get(name) {
            return k;
        }
        let k = self.real_fns.len() as u32;
        let addr = function_index(self.m, name).map_or(0, function_addr);
        self.real_fns.push(RealFn {
            info: FuncInfo {
                name: name.to_string(),
                entry: 0,
                frame_bytes: 0,
                params: Vec::new(),
                rets: Vec::new(),
                saved: [(0, 0); 3],
                addr,
            },
            lowered: false,
        });
        self.real_by_name.insert(name.to_string(), k);
        k
    }

    /// The caller's side of a real call's arguments or results.
    fn caller_slots(&mut self, ops: &[Operand], decls: Option<&[ast::VarDecl]>) -> LResult<Vec<CallSlot>> {
        let mut out = Vec::with_capacity(ops.len());
        for (k, o) in ops.iter().enumerate() {
            let Operand::Name(n, s) = o else {
                return self.err(o.span(), "call arguments must be named variables or registers");
            };
            let size = decls.and_then(|d| d.get(k)).and_then(|d| d.size_bytes()).unwrap_or(0) as u32;
            out.push(match self.lookup(n) {
                Some(Sym::Local(off)) => CallSlot::Frame { off, size },
                Some(Sym::Reg(r, _)) => CallSlot::Reg(r),
                Some(Sym::Vector(_)) => return self.err(*s, "vector arguments of a function that is not inlined are not supported"),
                _ => return self.err(*s, format!("`{n}` is not a local .param variable or register")),
            });
        }
        Ok(out)
    }

    /// `call` of a function that gets code of its own: `target` names it
    /// (a function, or a register holding its address).
    pub(super) fn real_call(
        &mut self,
        i: &Instruction,
        target: &str,
        rets: &[Operand],
        args: &[Operand],
        guard: Option<Guard>,
        full: &str,
    ) -> LResult<()> {
        let (target, decls) = match self.lookup(target) {
            Some(Sym::Reg(r, _)) => {
                if r.bank != Bank::R64 {
                    return self.err(i.span, format!("`{target}`: an indirect call takes a 64-bit function address"));
                }
                // Any function whose address is taken may be called: all get code.
                for name in self.calls.address_taken.clone() {
                    self.real_fn(&name);
                }
                (CallTarget::Indirect(r), None)
            }
            Some(_) => return self.err(i.span, format!("`{target}` is not a function or a register holding one")),
            None => {
                let m = self.m;
                let Some(f) = m.function(target) else {
                    return self.err(i.span, format!("unknown function `{target}`"));
                };
                if f.params.len() != args.len() || f.rets.len() != rets.len() {
                    return self.err(i.span, format!("`{target}` takes {} arguments and {} results", f.params.len(), f.rets.len()));
                }
                (CallTarget::Direct(self.real_fn(target)), Some(f))
            }
        };
        let args = self.caller_slots(args, decls.map(|f| &f.params[..]))?;
        let rets = self.caller_slots(rets, decls.map(|f| &f.rets[..]))?;
        let pc = self.push(Op::Call(Box::new(CallSite { target, caller_frame: 0, args, rets })), guard, i.span, full);
        self.frame_patches.push((pc, self.current_real));
        Ok(())
    }

    /// Lowers the body of real function `k` after the code so far.
    pub(super) fn lower_real(&mut self, k: u32) -> LResult<()> {
        let m = self.m;
        let name = self.real_fns[k as usize].info.name.clone();
        let Some(f) = m.function(&name) else {
            return self.err(Span::default(), format!("`{name}` is declared without a body (external functions cannot be simulated)"));
        };
        if self.fp.is_none() {
            // Outside every function's saved ranges: one pair serves them all.
            self.fp = Some((self.alloc_reg(ScalarType::B64), self.alloc_reg(ScalarType::B32)));
        }
        let start = [self.n32, self.n64, self.npred];
        let entry = self.code.len() as Pc;
        let saved_local = std::mem::replace(&mut self.local_bytes, 0);
        let mut scope = Scope::default();
        let mut slots = [Vec::new(), Vec::new()];
        for (side, decls) in [&f.params, &f.rets].into_iter().enumerate() {
            for d in decls {
                let slot = match d.space {
                    StateSpace::Reg if d.vector == 1 && d.ty != ScalarType::B128 => {
                        let r = self.alloc_reg(d.ty);
                        scope.names.insert(d.name.clone(), Sym::Reg(r, d.ty));
                        CallSlot::Reg(r)
                    }
                    StateSpace::Param if d.vector == 1 => {
                        let size = d.size_bytes();
                        let Some(off) = place(&mut self.local_bytes, size, d.alignment()) else {
                            return self.err(d.span, "function parameters too large");
                        };
                        scope.names.insert(d.name.clone(), Sym::Local(off));
                        CallSlot::Frame { off, size: size.unwrap_or(0) as u32 }
                    }
                    _ => return self.err(d.span, "parameters of a function that is not inlined must be scalar .param or .reg"),
                };
                slots[side].push(slot);
            }
        }
        let module_scope = std::mem::take(&mut self.scopes[0]);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![module_scope, scope]);
        let prefix = format!("{name}#fn:");
        let ret_key = format!("{prefix}#ret");
        let saved_frames = std::mem::replace(&mut self.frames, vec![Frame { prefix, ret_label: Some(ret_key.clone()) }]);
        let saved_stack = std::mem::replace(&mut self.call_stack, vec![name.clone()]);
        let saved_real = self.current_real.replace(k);
        let (saved_loc, saved_inlined) = (self.cur_loc.take(), self.cur_inlined.take());
        self.prev_inst_end = f.span.start;
        let r = self.scope_statements(f.body.as_deref().unwrap_or(&[]));
        self.current_real = saved_real;
        self.call_stack = saved_stack;
        self.frames = saved_frames;
        let mut inner = std::mem::replace(&mut self.scopes, saved_scopes);
        self.scopes[0] = std::mem::take(&mut inner[0]);
        r?;
        self.labels.insert(ret_key, self.code.len() as Pc);
        self.push(Op::Ret, None, f.span, "ret");
        self.cur_loc = saved_loc;
        self.cur_inlined = saved_inlined;
        let frame = align_up(self.local_bytes, 16);
        self.local_bytes = saved_local;
        let Some(frame_bytes) = frame else {
            return self.err(f.span, "local memory too large");
        };
        let [rets, params] = [std::mem::take(&mut slots[1]), std::mem::take(&mut slots[0])];
        let end = [self.n32, self.n64, self.npred];
        let rf = &mut self.real_fns[k as usize];
        rf.lowered = true;
        rf.info.entry = entry;
        rf.info.frame_bytes = frame_bytes;
        rf.info.params = params;
        rf.info.rets = rets;
        rf.info.saved = [(start[0], end[0]), (start[1], end[1]), (start[2], end[2])];
        Ok(())
    }

    /// Lowers every real function called so far (and those they call), then
    /// gives each call its caller's frame size.
    pub(super) fn finish_real_calls(&mut self) -> LResult<()> {
        while let Some(k) = self.real_fns.iter().position(|f| !f.lowered) {
            self.lower_real(k as u32)?;
        }
        for (pc, owner) in std::mem::take(&mut self.frame_patches) {
            let frame = match owner {
                Some(k) => self.real_fns[k as usize].info.frame_bytes,
                None => self.local_bytes,
            };
            if let Op::Call(c) = &mut self.code[pc].op {
                c.caller_frame = frame;
            }
        }
        Ok(())
    }

    /// The address of local variable `off` of the function being lowered
    /// as a `ty`-wide register: a constant in the kernel and in inlined
    /// bodies, frame pointer + `off` in a real function.
    pub(super) fn local_value(&mut self, off: i64, ty: ScalarType, span: Span) -> RegRef {
        match (self.current_real, self.fp) {
            (Some(_), Some((fp64, fp32))) => {
                let wide = bank_of(ty) == Bank::R64;
                let d = self.alloc_reg(if wide { ScalarType::B64 } else { ScalarType::B32 });
                if wide {
                    let k = self.const_reg(ScalarType::B64, off as u64);
                    self.push(Op::Bin64 { f: Bin64::Add, d: d.slot, a: fp64.slot, b: k.slot }, None, span, "mov");
                } else {
                    let k = self.const_reg(ScalarType::B32, off as u64);
                    self.push(Op::Bin32 { f: Bin32::Add, d: d.slot, a: fp32.slot, b: k.slot }, None, span, "mov");
                }
                d
            }
            _ => self.const_reg(ty, off as u64),
        }
    }

    /// The address of local variable `off` (+ `offset`) as a memory operand in `space`.
    pub(super) fn local_address(&mut self, off: u32, offset: i64, space: Space, span: Span) -> (Space, Addr) {
        let at = (off as i64).wrapping_add(offset);
        match (self.current_real, self.fp, space) {
            (Some(_), Some((fp64, _)), Space::Generic) => {
                let g = self.alloc_reg(ScalarType::B64);
                let k = self.const_reg(ScalarType::B64, LOCAL_WINDOW);
                self.push(Op::Bin64 { f: Bin64::Add, d: g.slot, a: fp64.slot, b: k.slot }, None, span, "cvta");
                (Space::Generic, Addr { base: Some(g), offset: at })
            }
            (Some(_), Some((fp64, _)), _) => (Space::Local, Addr { base: Some(fp64), offset: at }),
            (_, _, Space::Generic) => (Space::Generic, Addr { base: None, offset: (LOCAL_WINDOW as i64).wrapping_add(at) }),
            _ => (Space::Local, Addr { base: None, offset: at }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_of_the_call_graph_are_found() {
        // 0 -> 1 -> 2 -> 1, 3 -> 3, 4 -> 0.
        let edges = vec![vec![1], vec![2], vec![1], vec![3], vec![0]];
        let mut sccs: Vec<Vec<usize>> = strongly_connected(&edges)
            .into_iter()
            .map(|mut s| {
                s.sort();
                s
            })
            .collect();
        sccs.sort();
        assert_eq!(sccs, [vec![0], vec![1, 2], vec![3], vec![4]]);
    }
}

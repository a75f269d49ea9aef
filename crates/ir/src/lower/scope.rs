//! Names and scopes: registers allocated on first use, variables laid out in
//! shared, local and parameter memory, nested `{ }` blocks, labels and the
//! pragmas written between statements.

use super::*;

impl Lowerer<'_> {
    pub(super) fn declare_shared(&mut self, d: &ast::VarDecl) -> LResult<()> {
        if d.is_extern || d.size_bytes().is_none() {
            self.extern_shared.push((d.name.clone(), d.alignment()));
            self.scopes[0].names.insert(d.name.clone(), Sym::Shared(EXTERN_SHARED));
            return Ok(());
        }
        let Some(off) = place(&mut self.shared_bytes, d.size_bytes(), d.alignment()) else {
            return self.err(d.span, "shared memory too large");
        };
        self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Shared(off));
        Ok(())
    }

    pub(super) fn alloc_reg(&mut self, ty: ScalarType) -> RegRef {
        match bank_of(ty) {
            Bank::Pred => {
                self.npred += 1;
                RegRef::pred(self.npred - 1)
            }
            Bank::R64 => {
                self.n64 += 1;
                RegRef::r64(self.n64 - 1)
            }
            Bank::R32 => {
                self.n32 += 1;
                RegRef::r32(self.n32 - 1)
            }
        }
    }

    pub(super) fn lookup(&mut self, name: &str) -> Option<Sym> {
        for i in (0..self.scopes.len()).rev() {
            if let Some(s) = self.scopes[i].names.get(name) {
                return Some(s.clone());
            }
            // `%r<N>` ranges.
            if let Some(ty) = self.scopes[i].range_type(name) {
                let r = self.alloc_reg(ty);
                if r.bank != Bank::Pred {
                    self.declared32 += if r.bank == Bank::R64 { 2 } else { 1 };
                }
                self.scopes[i].names.insert(name.to_string(), Sym::Reg(r, ty));
                return Some(Sym::Reg(r, ty));
            }
        }
        None
    }

    /// Lowers a function body. Nested `{ }` scopes are walked with an explicit
    /// stack rather than recursion, so that only inlined calls (at most
    /// `MAX_INLINE_DEPTH`) deepen the native stack.
    pub(super) fn scope_statements(&mut self, stmts: &[Statement]) -> LResult<()> {
        self.open_block(stmts);
        let mut open: Vec<std::slice::Iter<'_, Statement>> = vec![stmts.iter()];
        while let Some(it) = open.last_mut() {
            let Some(s) = it.next() else {
                open.pop();
                if !open.is_empty() {
                    self.scopes.pop();
                }
                continue;
            };
            match s {
                Statement::Decl(d) => self.declare(d)?,
                Statement::Label(name, span) => {
                    let key = format!("{}{}", self.frames.last().unwrap().prefix, name);
                    if self.labels.insert(key, self.code.len() as Pc).is_some() {
                        return self.err(*span, format!("label `{name}` defined twice"));
                    }
                }
                Statement::Loc(loc) => {
                    self.cur_loc = Some(SourceLoc { file: loc.file, line: loc.line, col: loc.col });
                    self.cur_inlined = loc.inlined_at.map(|(file, line, col)| SourceLoc { file, line, col });
                }
                Statement::Scope(inner) => {
                    self.scopes.push(Scope::default());
                    self.open_block(inner);
                    open.push(inner.iter());
                }
                Statement::BranchTargets { .. } | Statement::CallPrototype { .. } => {}
                Statement::Inst(i) => {
                    self.note_pragmas(i.span);
                    self.instruction(i)?
                }
            }
        }
        Ok(())
    }

    /// Records the pragmas written between the previous instruction and the
    /// one at `span` (the parser skips `.pragma` statements).
    pub(super) fn note_pragmas(&mut self, span: Span) {
        let (start, end) = (self.prev_inst_end as usize, span.start as usize);
        if start < end {
            if let Some(gap) = self.src.get(start..end) {
                if gap.contains(".pragma") && gap.contains("nounroll") {
                    self.pending_nounroll = true;
                }
            }
        }
        self.prev_inst_end = span.end;
    }

    /// Entering a block: count its statements and declare its branch-target
    /// lists (labels are visible before their definition).
    pub(super) fn open_block(&mut self, stmts: &[Statement]) {
        self.statements += stmts.len() as u64;
        for s in stmts {
            if let Statement::BranchTargets { name, targets, .. } = s {
                let prefix = self.frames.last().unwrap().prefix.clone();
                let keys = targets.iter().map(|t| format!("{prefix}{t}")).collect();
                self.scopes.last_mut().unwrap().names.insert(name.clone(), Sym::BranchTargets(keys));
            }
        }
    }

    /// `.reg .v2 .u32 r;`: one scalar register per element, named `r.x`,
    /// `r.y`, ..., and `r` itself, which operands expand into `{r.x, r.y}`.
    fn declare_vector(&mut self, d: &ast::VarDecl) -> LResult<()> {
        if d.range.is_some() || !d.dims.is_empty() || !(d.vector == 2 || d.vector == 4) {
            return self.err(d.span, "vector registers are .v2 or .v4 scalars (no ranges or arrays)");
        }
        if d.ty == ScalarType::B128 || d.ty == ScalarType::Pred {
            return self.err(d.span, "vector registers of .b128 or .pred are not supported");
        }
        for e in &VECTOR_ELEMS[..d.vector as usize] {
            let r = self.alloc_reg(d.ty);
            self.declared32 += if r.bank == Bank::R64 { 2 } else { 1 };
            self.scopes.last_mut().unwrap().names.insert(format!("{}.{e}", d.name), Sym::Reg(r, d.ty));
        }
        self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Vector(d.vector));
        self.has_vectors = true;
        Ok(())
    }

    /// `op` with every name of a vector register replaced by the braced list
    /// of its elements (`r` -> `{r.x, r.y}`), or `None` if it names none.
    pub(super) fn expand_vectors(&mut self, op: &Operand) -> Option<Operand> {
        match op {
            Operand::Name(n, span) => match self.lookup(n) {
                Some(Sym::Vector(k)) => Some(Operand::Vector(
                    VECTOR_ELEMS[..k as usize].iter().map(|e| Operand::Name(format!("{n}.{e}"), *span)).collect(),
                    *span,
                )),
                _ => None,
            },
            Operand::Vector(items, span) => {
                let new: Vec<Option<Operand>> = items.iter().map(|o| self.expand_vectors(o)).collect();
                if new.iter().all(Option::is_none) {
                    return None;
                }
                Some(Operand::Vector(new.into_iter().zip(items).map(|(n, o)| n.unwrap_or_else(|| o.clone())).collect(), *span))
            }
            _ => None,
        }
    }

    pub(super) fn declare(&mut self, d: &ast::VarDecl) -> LResult<()> {
        match d.space {
            StateSpace::Reg => {
                if d.vector != 1 {
                    return self.declare_vector(d);
                }
                if d.ty == ScalarType::B128 {
                    return self.err(d.span, "128-bit registers are not supported");
                }
                let scope = self.scopes.last_mut().unwrap();
                match d.range {
                    Some(n) => scope.declare_range(&d.name, d.ty, n),
                    None => {
                        let r = self.alloc_reg(d.ty);
                        if r.bank != Bank::Pred {
                            self.declared32 += if r.bank == Bank::R64 { 2 } else { 1 };
                        }
                        self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Reg(r, d.ty));
                    }
                }
            }
            StateSpace::Shared => self.declare_shared(d)?,
            StateSpace::Local | StateSpace::Param => {
                let Some(size) = d.size_bytes() else {
                    return self.err(d.span, "local array without a size");
                };
                let Some(off) = place(&mut self.local_bytes, Some(size), d.alignment()) else {
                    return self.err(d.span, "local memory too large");
                };
                self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Local(off));
            }
            StateSpace::Global | StateSpace::Const => {
                if d.is_extern {
                    return self.err(d.span, "function-scoped .extern .global/.const variables are not supported");
                }
                self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Global(scoped_global_name(d)));
            }
            _ => return self.err(d.span, "unsupported state space in a declaration"),
        }
        Ok(())
    }
}

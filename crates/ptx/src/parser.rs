//! Recursive-descent parser from tokens to the syntax tree. It accepts the
//! module forms nvcc, clang and Triton emit; anything it does not recognise
//! is a [`ParseError`] with a span, never a panic.

use crate::ast::*;
use crate::error::ParseError;
use crate::lexer::{tokenize, Tok, Token};
use warpsim_numerics::ScalarType;

type PResult<T> = Result<T, ParseError>;

/// Parses a whole PTX module. `file` names the source in error messages.
pub fn parse_module(file: &str, src: &str) -> PResult<Module> {
    let toks = tokenize(src).map_err(|off| {
        if src[off as usize..].starts_with("/*") {
            return ParseError::new(file, src, Span { start: off, end: off + 2 }, "unterminated comment: `/*` without `*/`");
        }
        let ch = src[off as usize..].chars().next().unwrap_or(' ');
        ParseError::new(file, src, Span { start: off, end: off + ch.len_utf8() as u32 }, format!("unexpected character {ch:?}"))
    })?;
    let mut p = Parser { file, src, toks, pos: 0 };
    p.module()
}

struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
}

const MAX_DEPTH: u32 = 64;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|t| t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<Tok> {
        self.toks.get(self.pos + k).map(|t| t.tok)
    }

    fn text(&self, t: &Token) -> &'a str {
        &self.src[t.start as usize..t.end as usize]
    }

    fn cur_text(&self) -> &'a str {
        self.toks.get(self.pos).map_or("", |t| self.text(t))
    }

    fn cur_span(&self) -> Span {
        match self.toks.get(self.pos) {
            Some(t) => Span { start: t.start, end: t.end },
            None => {
                let e = self.src.len() as u32;
                Span { start: e.saturating_sub(1), end: e }
            }
        }
    }

    fn err<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError::new(self.file, self.src, span, msg))
    }

    fn unexpected<T>(&self, what: &str) -> PResult<T> {
        match self.toks.get(self.pos) {
            Some(t) => self.err(self.cur_span(), format!("expected {what}, found `{}`", self.text(t))),
            None => self.err(self.cur_span(), format!("expected {what}, found end of file")),
        }
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        self.pos += 1;
        t
    }

    fn eat(&mut self, tok: Tok) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Tok, what: &str) -> PResult<Token> {
        if self.peek() == Some(tok) {
            Ok(self.bump())
        } else {
            self.unexpected(what)
        }
    }

    fn is_dot(&self, name: &str) -> bool {
        self.peek() == Some(Tok::Dot) && &self.cur_text()[1..] == name
    }

    fn eat_dot(&mut self, name: &str) -> bool {
        if self.is_dot(name) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        let t = self.expect(Tok::Ident, what)?;
        Ok((self.text(&t).to_string(), Span { start: t.start, end: t.end }))
    }

    fn int_literal(&self, t: &Token) -> PResult<i64> {
        let s = self.text(t).trim_end_matches('U');
        let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
            u64::from_str_radix(b, 2)
        } else if s.len() > 1 && s.starts_with('0') {
            u64::from_str_radix(&s[1..], 8)
        } else {
            s.parse::<u64>()
        };
        match v {
            Ok(v) => Ok(v as i64),
            Err(_) => self.err(Span { start: t.start, end: t.end }, format!("invalid integer literal `{s}`")),
        }
    }

    fn uint(&mut self, what: &str) -> PResult<u64> {
        let t = self.expect(Tok::Int, what)?;
        Ok(self.int_literal(&t)? as u64)
    }

    /// An integer literal that must fit in 32 bits (counts, sizes, indices).
    fn uint32(&mut self, what: &str) -> PResult<u32> {
        let t = self.expect(Tok::Int, what)?;
        let v = self.int_literal(&t)? as u64;
        match u32::try_from(v) {
            Ok(v) => Ok(v),
            Err(_) => self.err(Span { start: t.start, end: t.end }, format!("{what} must be below 2^32, found {v}")),
        }
    }

    /// Skips to just past the next `;` at this nesting level (for ignored directives).
    fn skip_statement(&mut self) {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            self.pos += 1;
            match t {
                Tok::LBrace | Tok::LParen => depth += 1,
                Tok::RBrace | Tok::RParen => depth -= 1,
                Tok::Semi if depth <= 0 => return,
                _ => {}
            }
        }
    }

    fn skip_braced(&mut self) -> PResult<()> {
        let open = self.expect(Tok::LBrace, "`{`")?;
        let mut depth = 1;
        while let Some(t) = self.peek() {
            self.pos += 1;
            match t {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        self.err(Span { start: open.start, end: open.end }, "unclosed `{`")
    }

    fn module(&mut self) -> PResult<Module> {
        let mut m = Module::default();
        while let Some(t) = self.peek() {
            if t != Tok::Dot {
                return self.unexpected("a directive");
            }
            let name = &self.cur_text()[1..];
            match name {
                "version" => {
                    self.pos += 1;
                    let t = self.bump_any("a version number")?;
                    m.version = Some(self.text(&t).to_string());
                }
                "target" => {
                    self.pos += 1;
                    loop {
                        let (n, _) = self.ident("a target name")?;
                        m.target.push(n);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                }
                "address_size" => {
                    self.pos += 1;
                    m.address_size = Some(self.uint32("an address size")?);
                }
                "file" => {
                    self.pos += 1;
                    let idx = self.uint32("a file index")?;
                    let s = self.expect(Tok::Str, "a file name")?;
                    let raw = self.text(&s);
                    m.files.push((idx, raw[1..raw.len() - 1].to_string()));
                    while self.eat(Tok::Comma) {
                        self.bump_any("a file attribute")?;
                    }
                }
                "section" => {
                    self.pos += 1;
                    while self.peek().is_some() && self.peek() != Some(Tok::LBrace) {
                        self.pos += 1;
                    }
                    self.skip_braced()?;
                }
                "pragma" => self.skip_statement(),
                _ => self.module_item(&mut m)?,
            }
        }
        Ok(m)
    }

    fn bump_any(&mut self, what: &str) -> PResult<Token> {
        if self.pos < self.toks.len() {
            Ok(self.bump())
        } else {
            self.unexpected(what)
        }
    }

    fn module_item(&mut self, m: &mut Module) -> PResult<()> {
        let start = self.cur_span();
        let mut is_extern = false;
        loop {
            if self.eat_dot("visible") || self.eat_dot("weak") || self.eat_dot("common") {
                continue;
            }
            if self.eat_dot("extern") {
                is_extern = true;
                continue;
            }
            break;
        }
        if self.eat_dot("entry") {
            let f = self.function(true, start)?;
            m.functions.push(f);
        } else if self.eat_dot("func") {
            let f = self.function(false, start)?;
            m.functions.push(f);
        } else if self.peek() == Some(Tok::Dot) && StateSpace::from_ptx(&self.cur_text()[1..]).is_some() {
            let decls = self.var_decl(is_extern)?;
            m.globals.extend(decls);
        } else {
            return self.unexpected("`.entry`, `.func` or a variable declaration");
        }
        Ok(())
    }

    fn function(&mut self, is_entry: bool, start: Span) -> PResult<Function> {
        let mut f = Function { is_entry, span: start, ..Default::default() };
        if !is_entry && self.peek() == Some(Tok::LParen) {
            f.rets = self.param_list()?;
        }
        let (name, span) = self.ident("a function name")?;
        f.name = name;
        f.span = Span { start: start.start, end: span.end };
        if self.peek() == Some(Tok::LParen) {
            f.params = self.param_list()?;
        }
        loop {
            if self.eat_dot("noreturn") {
                f.noreturn = true;
            } else if self.eat_dot("reqntid") {
                f.tuning.reqntid = Some(self.dims3()?);
            } else if self.eat_dot("maxntid") {
                f.tuning.maxntid = Some(self.dims3()?);
            } else if self.eat_dot("minnctapersm") {
                f.tuning.minnctapersm = Some(self.uint32("a number")?);
            } else if self.eat_dot("maxnreg") {
                f.tuning.maxnreg = Some(self.uint32("a number")?);
            } else if self.eat_dot("maxnctapersm") || self.eat_dot("maxclusterrank") {
                self.uint("a number")?;
            } else if self.eat_dot("reqnctapercluster") {
                f.tuning.reqnctapercluster = Some(self.dims3()?);
            } else if self.eat_dot("explicitcluster") {
            } else if self.eat_dot("attribute") {
                self.expect(Tok::LParen, "`(`")?;
                while self.peek().is_some() && !self.eat(Tok::RParen) {
                    self.pos += 1;
                }
            } else if self.eat_dot("pragma") {
                self.skip_statement();
            } else {
                break;
            }
        }
        if self.eat(Tok::Semi) {
            return Ok(f);
        }
        self.expect(Tok::LBrace, "`{` or `;` after the function header")?;
        f.body = Some(self.statements(0)?);
        Ok(f)
    }

    fn dims3(&mut self) -> PResult<[u32; 3]> {
        let mut d = [1u32; 3];
        d[0] = self.uint32("a number")?;
        for slot in d.iter_mut().skip(1) {
            if !self.eat(Tok::Comma) {
                break;
            }
            *slot = self.uint32("a number")?;
        }
        Ok(d)
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut out = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(out);
        }
        loop {
            let start = self.cur_span();
            let space = if self.eat_dot("param") {
                StateSpace::Param
            } else if self.eat_dot("reg") {
                StateSpace::Reg
            } else {
                return self.unexpected("`.param` or `.reg`");
            };
            let mut d = self.decl_body(space, false, start, false)?;
            out.append(&mut d);
            if self.eat(Tok::RParen) {
                return Ok(out);
            }
            self.expect(Tok::Comma, "`,` or `)`")?;
        }
    }

    /// `.space [.attrs] .type name[dims] [= init] [, name2 ...];` after the leading modifiers.
    fn var_decl(&mut self, is_extern: bool) -> PResult<Vec<VarDecl>> {
        let start = self.cur_span();
        let sp = self.bump();
        let space = StateSpace::from_ptx(&self.text(&sp)[1..]).unwrap_or(StateSpace::Global);
        let d = self.decl_body(space, is_extern, start, true)?;
        self.expect(Tok::Semi, "`;` after the declaration")?;
        Ok(d)
    }

    fn decl_body(&mut self, space: StateSpace, is_extern: bool, start: Span, multi: bool) -> PResult<Vec<VarDecl>> {
        let mut align = None;
        let mut managed = false;
        let mut vector = 1u8;
        let mut ty = None;
        while self.peek() == Some(Tok::Dot) {
            let name = &self.cur_text()[1..];
            let span = self.cur_span();
            self.pos += 1;
            match name {
                "align" => align = Some(self.uint32("an alignment")?),
                "v2" => vector = 2,
                "v4" => vector = 4,
                "v8" => vector = 8,
                "ptr" | "global" | "shared" | "const" | "local" => {}
                "attribute" => {
                    self.expect(Tok::LParen, "`(`")?;
                    while self.peek().is_some() && !self.eat(Tok::RParen) {
                        managed |= self.is_dot("managed");
                        self.pos += 1;
                    }
                }
                _ => match ScalarType::from_ptx(name) {
                    Some(t) => ty = Some(t),
                    None => {
                        if name == "texref" || name == "samplerref" || name == "surfref" {
                            return self.err(span, format!("`.{name}` variables are not supported"));
                        }
                        return self.err(span, format!("unknown type or attribute `.{name}` in a declaration"));
                    }
                },
            }
        }
        let Some(ty) = ty else {
            return self.unexpected("a type such as `.u32`");
        };
        let mut out = Vec::new();
        loop {
            let (name, nspan) = self.ident("a variable name")?;
            let mut d = VarDecl {
                space,
                align,
                ty,
                vector,
                name,
                range: None,
                dims: Vec::new(),
                init: None,
                is_extern,
                managed,
                span: Span { start: start.start, end: nspan.end },
            };
            if self.eat(Tok::Lt) {
                d.range = Some(self.uint32("a register count")?);
                self.expect(Tok::Gt, "`>`")?;
            }
            while self.eat(Tok::LBracket) {
                if self.eat(Tok::RBracket) {
                    d.dims.push(None);
                } else {
                    let n = self.const_expr()?;
                    if n < 0 {
                        return self.err(nspan, "negative array size");
                    }
                    d.dims.push(Some(n as u64));
                    self.expect(Tok::RBracket, "`]`")?;
                }
            }
            if self.eat(Tok::Eq) {
                let mut vals = Vec::new();
                self.init_values(&mut vals, 0)?;
                // `[]` sized by the initialiser.
                let per = d.vector as u64;
                if let Some(last) = d.dims.last_mut() {
                    if last.is_none() {
                        *last = Some(vals.len() as u64 / per.max(1));
                    }
                }
                d.init = Some(vals);
            }
            out.push(d);
            if !multi || !self.eat(Tok::Comma) {
                return Ok(out);
            }
        }
    }

    fn init_values(&mut self, out: &mut Vec<InitValue>, depth: u32) -> PResult<()> {
        if depth > MAX_DEPTH {
            return self.err(self.cur_span(), "initialiser nested too deeply");
        }
        if self.eat(Tok::LBrace) {
            if self.eat(Tok::RBrace) {
                return Ok(());
            }
            loop {
                self.init_values(out, depth + 1)?;
                if self.eat(Tok::RBrace) {
                    return Ok(());
                }
                self.expect(Tok::Comma, "`,` or `}`")?;
            }
        }
        match self.peek() {
            Some(Tok::F32Bits) | Some(Tok::F64Bits) | Some(Tok::Float) => {
                let t = self.bump();
                let v = self.float_operand(&t)?;
                out.push(InitValue::Float(match v {
                    Operand::F32(b, _) => f32::from_bits(b) as f64,
                    Operand::F64(b, _) => f64::from_bits(b),
                    _ => 0.0,
                }));
            }
            Some(Tok::Minus) if matches!(self.peek_at(1), Some(Tok::Float | Tok::F32Bits | Tok::F64Bits)) => {
                self.pos += 1;
                let t = self.bump();
                if let Operand::F64(b, _) = self.float_operand(&t)?.map_f32_widen() {
                    out.push(InitValue::Float(-f64::from_bits(b)));
                }
            }
            Some(Tok::Ident) => {
                let (mut name, _) = self.ident("a symbol")?;
                if (name == "generic" || name == "global") && self.eat(Tok::LParen) {
                    name = self.ident("a symbol")?.0;
                    self.expect(Tok::RParen, "`)`")?;
                }
                let off = if self.peek() == Some(Tok::Plus) || self.peek() == Some(Tok::Minus) { self.const_expr()? } else { 0 };
                out.push(InitValue::Symbol(name, off));
            }
            _ => out.push(InitValue::Int(self.const_expr()?)),
        }
        Ok(())
    }

    fn float_operand(&self, t: &Token) -> PResult<Operand> {
        let s = self.text(t);
        let span = Span { start: t.start, end: t.end };
        Ok(match t.tok {
            Tok::F32Bits => Operand::F32(u32::from_str_radix(&s[2..], 16).unwrap_or(0), span),
            Tok::F64Bits => Operand::F64(u64::from_str_radix(&s[2..], 16).unwrap_or(0), span),
            _ => match s.parse::<f64>() {
                Ok(v) => Operand::F64(v.to_bits(), span),
                Err(_) => return self.err(span, format!("invalid float literal `{s}`")),
            },
        })
    }

    /// Integer constant expression: `+ - * / % << >> & | ^ ~ !` and parentheses.
    fn const_expr(&mut self) -> PResult<i64> {
        self.expr_bin(0, 0)
    }

    fn expr_bin(&mut self, min_prec: u8, depth: u32) -> PResult<i64> {
        if depth > MAX_DEPTH {
            return self.err(self.cur_span(), "expression nested too deeply");
        }
        let mut lhs = self.expr_unary(depth)?;
        loop {
            let (prec, tok) = match self.peek() {
                Some(t @ (Tok::Star | Tok::Slash | Tok::Percent)) => (5, t),
                Some(t @ (Tok::Plus | Tok::Minus)) => (4, t),
                Some(t @ (Tok::Shl | Tok::Shr)) => (3, t),
                Some(t @ Tok::Amp) => (2, t),
                Some(t @ Tok::Caret) => (1, t),
                Some(t @ Tok::Pipe) => (0, t),
                _ => return Ok(lhs),
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            let span = self.cur_span();
            self.pos += 1;
            let rhs = self.expr_bin(prec + 1, depth + 1)?;
            lhs = match tok {
                Tok::Star => lhs.wrapping_mul(rhs),
                Tok::Slash | Tok::Percent if rhs == 0 => return self.err(span, "division by zero in a constant"),
                Tok::Slash => lhs.wrapping_div(rhs),
                Tok::Percent => lhs.wrapping_rem(rhs),
                Tok::Plus => lhs.wrapping_add(rhs),
                Tok::Minus => lhs.wrapping_sub(rhs),
                Tok::Shl => lhs.wrapping_shl(rhs as u32),
                Tok::Shr => lhs.wrapping_shr(rhs as u32),
                Tok::Amp => lhs & rhs,
                Tok::Caret => lhs ^ rhs,
                _ => lhs | rhs,
            };
        }
    }

    fn expr_unary(&mut self, depth: u32) -> PResult<i64> {
        if depth > MAX_DEPTH {
            return self.err(self.cur_span(), "expression nested too deeply");
        }
        match self.peek() {
            Some(Tok::Minus) => {
                self.pos += 1;
                Ok(self.expr_unary(depth + 1)?.wrapping_neg())
            }
            Some(Tok::Plus) => {
                self.pos += 1;
                self.expr_unary(depth + 1)
            }
            Some(Tok::Tilde) => {
                self.pos += 1;
                Ok(!self.expr_unary(depth + 1)?)
            }
            Some(Tok::Bang) => {
                self.pos += 1;
                Ok((self.expr_unary(depth + 1)? == 0) as i64)
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                let v = self.expr_bin(0, depth + 1)?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(v)
            }
            Some(Tok::Int) => {
                let t = self.bump();
                self.int_literal(&t)
            }
            _ => self.unexpected("an integer constant"),
        }
    }

    fn statements(&mut self, depth: u32) -> PResult<Vec<Statement>> {
        if depth > MAX_DEPTH {
            return self.err(self.cur_span(), "scopes nested too deeply");
        }
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return self.unexpected("`}`"),
                Some(Tok::RBrace) => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(Tok::LBrace) => {
                    self.pos += 1;
                    out.push(Statement::Scope(self.statements(depth + 1)?));
                }
                Some(Tok::Semi) => self.pos += 1,
                Some(Tok::Dot) => self.directive_stmt(&mut out)?,
                Some(Tok::Ident) if self.peek_at(1) == Some(Tok::Colon) => {
                    let (name, span) = self.ident("a label")?;
                    self.pos += 1;
                    if self.eat_dot("branchtargets") {
                        let mut targets = Vec::new();
                        loop {
                            targets.push(self.ident("a label")?.0);
                            if !self.eat(Tok::Comma) {
                                break;
                            }
                        }
                        self.expect(Tok::Semi, "`;`")?;
                        out.push(Statement::BranchTargets { name, targets, span });
                    } else if self.eat_dot("callprototype") {
                        self.skip_statement();
                        out.push(Statement::CallPrototype { name, span });
                    } else {
                        out.push(Statement::Label(name, span));
                    }
                }
                Some(Tok::Ident) | Some(Tok::At) => out.push(Statement::Inst(self.instruction()?)),
                _ => return self.unexpected("an instruction, label or directive"),
            }
        }
    }

    fn directive_stmt(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        let name = &self.cur_text()[1..];
        match name {
            "loc" => {
                self.pos += 1;
                let file = self.uint32("a file index")?;
                let line = self.uint32("a line number")?;
                let col = self.uint32("a column number")?;
                let mut inlined_at = None;
                while self.eat(Tok::Comma) {
                    let (key, _) = self.ident("`function_name` or `inlined_at`")?;
                    if key == "inlined_at" {
                        let f = self.uint32("a file index")?;
                        let l = self.uint32("a line number")?;
                        let c = self.uint32("a column number")?;
                        inlined_at = Some((f, l, c));
                    } else {
                        self.bump_any("a value")?;
                        if self.eat(Tok::Plus) {
                            self.bump_any("an offset")?;
                        }
                    }
                }
                out.push(Statement::Loc(Loc { file, line, col, inlined_at }));
            }
            "pragma" | "section" => self.skip_statement(),
            "extern" => {
                self.pos += 1;
                if self.peek() == Some(Tok::Dot) && StateSpace::from_ptx(&self.cur_text()[1..]).is_some() {
                    for d in self.var_decl(true)? {
                        out.push(Statement::Decl(d));
                    }
                } else {
                    return self.unexpected("a state space after `.extern`");
                }
            }
            _ if StateSpace::from_ptx(name).is_some() => {
                for d in self.var_decl(false)? {
                    out.push(Statement::Decl(d));
                }
            }
            _ => return self.err(self.cur_span(), format!("unknown directive `.{name}` in a function body")),
        }
        Ok(())
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.cur_span();
        let mut guard = None;
        if self.eat(Tok::At) {
            let negate = self.eat(Tok::Bang);
            let (pred, span) = self.ident("a predicate register after `@`")?;
            guard = Some(Guard { pred, negate, span });
        }
        let op = self.expect(Tok::Ident, "an instruction")?;
        let opcode = self.text(&op).to_string();
        let mut mods = Vec::new();
        let mut end = op.end;
        while let Some(t) = self.toks.get(self.pos) {
            if t.tok == Tok::Dot && t.start == end {
                mods.push(self.text(t)[1..].to_string());
                end = t.end;
                self.pos += 1;
            } else {
                break;
            }
        }
        let mut operands = Vec::new();
        if !self.eat(Tok::Semi) {
            loop {
                operands.push(self.operand(0)?);
                if self.eat(Tok::Semi) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return self.unexpected("`,` or `;` between operands");
                }
            }
        }
        let end = self.toks[self.pos - 1].end;
        Ok(Instruction { guard, opcode, mods, operands, span: Span { start: start.start, end } })
    }

    fn operand(&mut self, depth: u32) -> PResult<Operand> {
        if depth > MAX_DEPTH {
            return self.err(self.cur_span(), "operand nested too deeply");
        }
        let start = self.cur_span();
        let first = match self.peek() {
            Some(Tok::Ident) => {
                let t = self.bump();
                let mut name = self.text(&t).to_string();
                let mut end = t.end;
                // `%tid.x`: a component suffix written right after the name.
                if let Some(n) = self.toks.get(self.pos) {
                    if n.tok == Tok::Dot && n.start == t.end {
                        name.push_str(self.text(n));
                        end = n.end;
                        self.pos += 1;
                    }
                }
                let span = Span { start: t.start, end };
                if name == "_" {
                    Operand::Sink(span)
                } else if self.peek() == Some(Tok::Plus) && self.peek_at(1) == Some(Tok::Int) {
                    // `sym+4` outside brackets (mov of an address)
                    self.pos += 1;
                    let off = self.expr_unary(depth + 1)?;
                    Operand::Addr { base: AddrBase::Name(name), offset: off, span: self.span_from(start) }
                } else {
                    Operand::Name(name, span)
                }
            }
            Some(Tok::Int) | Some(Tok::Minus) | Some(Tok::LParen) | Some(Tok::Tilde)
                if !matches!(self.peek_at(1), Some(Tok::Float | Tok::F32Bits | Tok::F64Bits)) =>
            {
                if self.peek() == Some(Tok::LParen) && self.paren_is_list() {
                    return self.paren_list(depth);
                }
                let v = self.const_expr()?;
                Operand::Imm(v, self.span_from(start))
            }
            Some(Tok::Minus) => {
                self.pos += 1;
                let t = self.bump();
                match self.float_operand(&t)? {
                    Operand::F32(b, _) => Operand::F32(b ^ 0x8000_0000, self.span_from(start)),
                    Operand::F64(b, _) => Operand::F64(b ^ (1 << 63), self.span_from(start)),
                    o => o,
                }
            }
            Some(Tok::F32Bits) | Some(Tok::F64Bits) | Some(Tok::Float) => {
                let t = self.bump();
                self.float_operand(&t)?
            }
            Some(Tok::Bang) => {
                self.pos += 1;
                let inner = self.operand(depth + 1)?;
                Operand::Not(Box::new(inner), self.span_from(start))
            }
            Some(Tok::LBracket) => self.address()?,
            Some(Tok::LBrace) => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    items.push(self.operand(depth + 1)?);
                    if self.eat(Tok::RBrace) {
                        break;
                    }
                    self.expect(Tok::Comma, "`,` or `}` in a vector operand")?;
                }
                Operand::Vector(items, self.span_from(start))
            }
            _ => return self.unexpected("an operand"),
        };
        if self.eat(Tok::Pipe) {
            let second = self.operand(depth + 1)?;
            return Ok(Operand::Pair(Box::new(first), Box::new(second), self.span_from(start)));
        }
        Ok(first)
    }

    fn paren_is_list(&self) -> bool {
        // `(name, ...)` or `(name)` in call; `(1+2)` is an expression.
        matches!(self.peek_at(1), Some(Tok::Ident) | Some(Tok::RParen))
    }

    fn paren_list(&mut self, depth: u32) -> PResult<Operand> {
        let start = self.cur_span();
        self.expect(Tok::LParen, "`(`")?;
        let mut items = Vec::new();
        if !self.eat(Tok::RParen) {
            loop {
                items.push(self.operand(depth + 1)?);
                if self.eat(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "`,` or `)`")?;
            }
        }
        Ok(Operand::List(items, self.span_from(start)))
    }

    fn span_from(&self, start: Span) -> Span {
        let end = self.toks.get(self.pos.wrapping_sub(1)).map_or(start.end, |t| t.end);
        Span { start: start.start, end: end.max(start.start) }
    }

    fn address(&mut self) -> PResult<Operand> {
        let start = self.cur_span();
        self.expect(Tok::LBracket, "`[`")?;
        let base = match self.peek() {
            Some(Tok::Ident) => {
                let t = self.bump();
                let mut name = self.text(&t).to_string();
                if let Some(n) = self.toks.get(self.pos) {
                    if n.tok == Tok::Dot && n.start == t.end {
                        name.push_str(self.text(n));
                        self.pos += 1;
                    }
                }
                AddrBase::Name(name)
            }
            _ => AddrBase::Imm(self.const_expr()?),
        };
        let mut offset = 0i64;
        if matches!(base, AddrBase::Name(_)) && matches!(self.peek(), Some(Tok::Plus | Tok::Minus)) {
            offset = self.const_expr_after_sign()?;
        }
        if self.peek() == Some(Tok::Comma) && self.peek_at(1) == Some(Tok::LBrace) {
            // `[tensorMap, {c0, c1}]`
            let addr = Operand::Addr { base, offset, span: self.span_from(start) };
            self.pos += 1;
            let coords = self.operand(1)?;
            self.expect(Tok::RBracket, "`]` closing the address")?;
            return Ok(Operand::TensorCoords { addr: Box::new(addr), coords: Box::new(coords), span: self.span_from(start) });
        }
        self.expect(Tok::RBracket, "`]` closing the address")?;
        Ok(Operand::Addr { base, offset, span: self.span_from(start) })
    }

    /// `+ expr` or `- expr` (also `+-4`).
    fn const_expr_after_sign(&mut self) -> PResult<i64> {
        let neg = self.peek() == Some(Tok::Minus);
        self.pos += 1;
        let v = self.expr_bin(4, 1)?;
        let mut v = if neg { v.wrapping_neg() } else { v };
        // further `+ k` terms
        while matches!(self.peek(), Some(Tok::Plus | Tok::Minus)) {
            let neg = self.peek() == Some(Tok::Minus);
            self.pos += 1;
            let k = self.expr_bin(5, 1)?;
            v = if neg { v.wrapping_sub(k) } else { v.wrapping_add(k) };
        }
        Ok(v)
    }
}

trait WidenF32 {
    fn map_f32_widen(self) -> Operand;
}

impl WidenF32 for Operand {
    fn map_f32_widen(self) -> Operand {
        match self {
            Operand::F32(b, s) => Operand::F64((f32::from_bits(b) as f64).to_bits(), s),
            o => o,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

    // Counts, alignments and indices were parsed as u64 and cast with `as u32`:
    // `%r<4294967297>` silently became `%r<1>`, `.align 4294967296` became 0.
    #[test]
    fn thirty_two_bit_numbers_are_checked() {
        let m = parse_module("t.ptx", &format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4294967295>;\n}}\n")).unwrap();
        let Some(Statement::Decl(d)) = m.functions[0].body.as_ref().unwrap().first() else { panic!() };
        assert_eq!(d.range, Some(u32::MAX));
        for (src, what) in [
            (format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4294967296>;\n}}\n"), "a register count"),
            (format!("{HEAD}.global .align 0x100000000 .b8 g;\n"), "an alignment"),
            (format!("{HEAD}.visible .entry k() .maxntid 1, 0x1FFFFFFFF\n{{\n}}\n"), "a number"),
            (format!("{HEAD}.visible .entry k()\n{{\n.loc 1 99999999999 1\n}}\n"), "a line number"),
        ] {
            let e = parse_module("t.ptx", &src).unwrap_err();
            assert!(e.message.starts_with(&format!("{what} must be below 2^32")), "{e}");
        }
    }

    #[test]
    fn array_sizes_saturate() {
        let m = parse_module("t.ptx", &format!("{HEAD}.global .u64 g[0x4000000000000000][4];\n")).unwrap();
        assert_eq!(m.globals[0].size_bytes(), Some(u64::MAX));
        let m = parse_module("t.ptx", &format!("{HEAD}.extern .global .u64 g[];\n")).unwrap();
        assert_eq!(m.globals[0].size_bytes(), None);
    }
}

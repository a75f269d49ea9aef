//! Tokens of PTX source. Opcode modifiers and state spaces come out as
//! `Dot` tokens (`.global`); the parser joins an opcode with the modifiers
//! written right after it.

use logos::Logos;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    /// `/* ... */`, skipped by its callback (never produced). A regex for the
    /// whole comment made the lexer rescan to the end of the file at every
    /// unterminated `/*`: quadratic time on `/* /* /* ...`.
    #[token("/*", block_comment)]
    BlockComment,
    #[regex(r"\.[a-zA-Z0-9_][a-zA-Z0-9_$]*(::[a-zA-Z0-9_]+)*")]
    Dot,
    /// Names; `_` alone is the sink operand (`mov.b64 {%r1, _}, %rd1;`).
    #[regex(r"[a-zA-Z][a-zA-Z0-9_$]*|[_$%][a-zA-Z0-9_$]+|_")]
    Ident,
    #[regex(r"0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|[0-9]+U?")]
    Int,
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    F32Bits,
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    F64Bits,
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")]
    Float,
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("!")]
    Bang,
    #[token("~")]
    Tilde,
    #[token("@")]
    At,
    #[token("|")]
    Pipe,
    #[token("&")]
    Amp,
    #[token("^")]
    Caret,
    #[token("=")]
    Eq,
}

/// Skips a block comment; an error at its `/*` when it is never closed.
fn block_comment(lex: &mut logos::Lexer<Tok>) -> logos::FilterResult<(), ()> {
    match lex.remainder().find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            logos::FilterResult::Skip
        }
        None => logos::FilterResult::Error(()),
    }
}

/// A token with its byte range in the source.
#[derive(Debug, Clone, Copy)]
pub struct Token {
    pub tok: Tok,
    pub start: u32,
    pub end: u32,
}

/// Splits `src` into tokens; `Err(offset)` at the first byte no token matches.
pub fn tokenize(src: &str) -> Result<Vec<Token>, u32> {
    let mut out = Vec::with_capacity(src.len() / 4);
    let mut lex = Tok::lexer(src);
    while let Some(t) = lex.next() {
        let span = lex.span();
        match t {
            Ok(tok) => out.push(Token { tok, start: span.start as u32, end: span.end as u32 }),
            Err(()) => return Err(span.start as u32),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Result<Vec<Tok>, u32> {
        tokenize(src).map(|v| v.into_iter().map(|t| t.tok).collect())
    }

    #[test]
    fn block_comments() {
        assert_eq!(kinds("a /* x */ b"), Ok(vec![Tok::Ident, Tok::Ident]));
        assert_eq!(kinds("a /**/ b /***/ c /* * / ** \n */"), Ok(vec![Tok::Ident, Tok::Ident, Tok::Ident]));
        assert_eq!(kinds("a /* x **/ / b"), Ok(vec![Tok::Ident, Tok::Slash, Tok::Ident]));
        assert_eq!(kinds("// /* \na"), Ok(vec![Tok::Ident]));
        assert_eq!(kinds("a /*/ b"), Err(2));
        assert_eq!(kinds("1 / * 2"), Ok(vec![Tok::Int, Tok::Slash, Tok::Star, Tok::Int]));
    }

    // `_` alone did not lex, so the parser's sink operand was unreachable.
    #[test]
    fn sink_underscore() {
        assert_eq!(kinds("{%r1, _}"), Ok(vec![Tok::LBrace, Tok::Ident, Tok::Comma, Tok::Ident, Tok::RBrace]));
        assert_eq!(kinds("_a __ _"), Ok(vec![Tok::Ident, Tok::Ident, Tok::Ident]));
        let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nmov.b64 {%r1, _}, %rd1;\n}\n";
        let m = crate::parse_module("s.ptx", src).unwrap();
        let Some(crate::Statement::Inst(i)) = m.functions[0].body.as_ref().unwrap().first() else { panic!() };
        let crate::Operand::Vector(parts, _) = &i.operands[0] else { panic!("{:?}", i.operands) };
        assert!(matches!(parts[1], crate::Operand::Sink(_)), "{parts:?}");
    }

    // Each unterminated `/*` used to be lexed by scanning to the end of the
    // file and then falling back to `/` `*`: 120 KB of `/* ` took 3 s.
    #[test]
    fn unterminated_comments_are_linear() {
        let src = "/* ".repeat(400_000);
        let t = std::time::Instant::now();
        assert_eq!(tokenize(&src).unwrap_err(), 0);
        let e = crate::parse_module("c.ptx", &src).unwrap_err();
        assert!(e.message.contains("unterminated comment"), "{}", e.message);
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
    }
}

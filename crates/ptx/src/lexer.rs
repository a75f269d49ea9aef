//! Tokens of PTX source. Opcode modifiers and state spaces come out as
//! `Dot` tokens (`.global`); the parser joins an opcode with the modifiers
//! written right after it.

use logos::Logos;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Tok {
    #[regex(r"\.[a-zA-Z0-9_][a-zA-Z0-9_$]*(::[a-zA-Z0-9_]+)*")]
    Dot,
    #[regex(r"[a-zA-Z][a-zA-Z0-9_$]*|[_$%][a-zA-Z0-9_$]+")]
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

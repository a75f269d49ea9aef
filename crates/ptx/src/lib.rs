//! PTX front end: source text to a syntax tree with spans.
//!
//! The parser accepts modules as nvcc 12/13, clang 17+ and Triton 3 emit them
//! (PTX ISA 6.0 to 9.0). It does not judge instructions: the lowering
//! (`warpsim-ir`) decides what each opcode and modifier means, so a legal but
//! unsupported instruction is reported there, by name and line.

#![forbid(unsafe_code)]

pub mod ast;
pub mod error;
pub mod lexer;
pub mod parser;

pub use ast::*;
pub use error::{Diagnostic, ParseError, SourcePos};
pub use parser::parse_module;

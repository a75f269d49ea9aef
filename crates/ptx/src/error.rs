//! Errors that point at PTX text: `file:line:col`, the line, and a caret.

use crate::ast::Span;

/// Where an error happened, resolved to line and column (both 1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePos {
    pub line: u32,
    pub col: u32,
    /// The whole source line, without its newline.
    pub text: String,
    /// Caret width in characters (at least 1).
    pub width: u32,
}

impl SourcePos {
    pub fn locate(src: &str, span: Span) -> SourcePos {
        let start = (span.start as usize).min(src.len());
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let line = src[..start].bytes().filter(|&b| b == b'\n').count() as u32 + 1;
        let col = src[line_start..start].chars().count() as u32 + 1;
        let end = (span.end as usize).clamp(start, line_end);
        let width = src[start..end].chars().count().max(1) as u32;
        SourcePos { line, col, text: src[line_start..line_end].to_string(), width }
    }

    /// Renders `file:line:col: message` with the line and a caret under the span.
    pub fn render(&self, file: &str, message: &str) -> String {
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        let prefix: String =
            self.text.chars().take(self.col as usize - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        format!(
            "{file}:{}:{}: {message}\n{pad} |\n{num} | {}\n{pad} | {prefix}{}",
            self.line,
            self.col,
            self.text,
            "^".repeat(self.width as usize)
        )
    }
}

/// A PTX syntax error.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{rendered}")]
pub struct ParseError {
    pub message: String,
    pub file: String,
    pub pos: SourcePos,
    pub span: Span,
    rendered: String,
}

impl ParseError {
    pub fn new(file: &str, src: &str, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        let pos = SourcePos::locate(src, span);
        let rendered = pos.render(file, &format!("error: {message}"));
        ParseError { message, file: file.to_string(), pos, span, rendered }
    }
}

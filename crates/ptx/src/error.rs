//! Errors that point at PTX text: `file:line:col`, the line, and a caret.

use crate::ast::Span;

/// The most columns of a source line an error shows.
pub const SHOWN_COLUMNS: usize = 200;

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
        // Spans are byte offsets; one that ends (or starts) inside a multi-byte
        // character is widened to whole characters rather than sliced.
        let start = floor_char_boundary(src, span.start as usize);
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let line = src[..start].bytes().filter(|&b| b == b'\n').count() as u32 + 1;
        let col = src[line_start..start].chars().count() as u32 + 1;
        let end = ceil_char_boundary(src, (span.end as usize).clamp(start, line_end));
        let width = src[start..end].chars().count().max(1) as u32;
        // A CRLF file's `\r` is not part of the line shown.
        let text = src[line_start..line_end].strip_suffix('\r').unwrap_or(&src[line_start..line_end]);
        SourcePos { line, col, text: text.to_string(), width }
    }

    /// Renders `file:line:col: message` with the line and a caret under the span.
    /// A line longer than [`SHOWN_COLUMNS`] is shown as a window around the caret, marked with `…`.
    pub fn render(&self, file: &str, message: &str) -> String {
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        let chars: Vec<char> = self.text.chars().collect();
        let col = (self.col as usize - 1).min(chars.len());
        let (from, to) = if chars.len() <= SHOWN_COLUMNS {
            (0, chars.len())
        } else {
            let from = col.saturating_sub(SHOWN_COLUMNS / 2).min(chars.len() - SHOWN_COLUMNS);
            (from, from + SHOWN_COLUMNS)
        };
        let (open, close) = (if from > 0 { "…" } else { "" }, if to < chars.len() { "…" } else { "" });
        let shown: String = chars[from..to].iter().collect();
        let prefix: String = open.chars().chain(chars[from..col].iter().copied()).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        let width = (self.width as usize).min(to.saturating_sub(col)).max(1);
        format!(
            "{file}:{}:{}: {message}\n{pad} |\n{num} | {open}{shown}{close}\n{pad} | {prefix}{}",
            self.line,
            self.col,
            "^".repeat(width)
        )
    }
}

/// The largest char boundary of `s` at or before `i` (clamped to `s.len()`).
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or after `i` (clamped to `s.len()`).
fn ceil_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A message about a place in a PTX file, rendered with the line and a caret.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub message: String,
    pub file: String,
    pub pos: SourcePos,
    pub span: Span,
    rendered: String,
}

impl Diagnostic {
    pub fn new(file: &str, src: &str, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        let pos = SourcePos::locate(src, span);
        let rendered = pos.render(file, &format!("error: {message}"));
        Diagnostic { message, file: file.to_string(), pos, span, rendered }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered)
    }
}

/// Declares an error type that is a [`Diagnostic`] (`ParseError` here,
/// `LowerError` in the lowering): its fields read through `Deref`.
#[macro_export]
macro_rules! diagnostic_error {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Debug, thiserror::Error)]
        #[error("{0}")]
        pub struct $name(pub $crate::Diagnostic);

        impl $name {
            pub fn new(file: &str, src: &str, span: $crate::Span, message: impl Into<String>) -> Self {
                $name($crate::Diagnostic::new(file, src, span, message))
            }
        }

        impl std::ops::Deref for $name {
            type Target = $crate::Diagnostic;
            fn deref(&self) -> &$crate::Diagnostic {
                &self.0
            }
        }
    };
}

diagnostic_error!(
    /// A PTX syntax error.
    ParseError
);

#[cfg(test)]
mod tests {
    use super::*;

    // Fuzzer find: a lexer error at a multi-byte character gave a span ending
    // inside it, and slicing the caret text panicked.
    #[test]
    fn span_inside_a_multibyte_char_does_not_panic() {
        let src = "ab\u{FFFD}cd\nx";
        for start in 0..=src.len() as u32 + 2 {
            for end in start..=src.len() as u32 + 2 {
                let p = SourcePos::locate(src, Span { start, end });
                assert!(p.width >= 1);
                let r = p.render("t.ptx", "error: x");
                assert!(r.starts_with("t.ptx:"), "{r}");
            }
        }
        let p = SourcePos::locate(src, Span { start: 2, end: 3 });
        assert_eq!((p.line, p.col, p.width), (1, 3, 1));
    }

    #[test]
    fn unexpected_multibyte_character_is_an_error() {
        let e = crate::parse_module("u.ptx", ".version 8.0\n\u{e9}\n").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 1));
        assert!(e.to_string().contains("unexpected character '\u{e9}'"), "{e}");
        let e = crate::parse_module("u.ptx", "\u{FFFD}").unwrap_err();
        assert!(e.to_string().starts_with("u.ptx:1:1:"), "{e}");
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_caret() {
        let line = format!("{}@{}", "a".repeat(100_000), "b".repeat(100_000));
        let p = SourcePos::locate(&line, Span { start: 100_000, end: 100_001 });
        let r = p.render("t.ptx", "error: x");
        assert!(r.len() < 1000, "{} bytes", r.len());
        let lines: Vec<&str> = r.lines().collect();
        let at = lines[2].chars().position(|c| c == '@').unwrap();
        assert_eq!(lines[3].chars().position(|c| c == '^'), Some(at), "{r}");
        assert!(lines[2].contains('…'));
        let short = SourcePos::locate("ab@cd", Span { start: 2, end: 3 }).render("t.ptx", "e");
        assert!(short.ends_with("1 | ab@cd\n  |   ^"), "{short}");
    }
}

//! Lowering errors, rendered with the PTX line and a caret.

use warpsim_ptx::{SourcePos, Span};

#[derive(Clone, Debug, thiserror::Error)]
#[error("{rendered}")]
pub struct LowerError {
    pub message: String,
    pub file: String,
    pub pos: SourcePos,
    rendered: String,
}

impl LowerError {
    pub fn new(file: &str, src: &str, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        let pos = SourcePos::locate(src, span);
        let rendered = pos.render(file, &format!("error: {message}"));
        LowerError { message, file: file.to_string(), pos, rendered }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FrontEndError {
    #[error(transparent)]
    Parse(#[from] warpsim_ptx::ParseError),
    #[error(transparent)]
    Lower(#[from] LowerError),
    #[error("no kernel named `{name}` in {file}; entries: {available}")]
    NoSuchKernel { name: String, file: String, available: String },
    #[error("kernel name `{name}` matches several entries in {file}: {candidates}; give more of the name (or the mangled name)")]
    AmbiguousKernel { name: String, file: String, candidates: String },
}

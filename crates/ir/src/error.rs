//! Lowering errors, rendered with the PTX line and a caret.

warpsim_ptx::diagnostic_error!(
    /// An instruction or declaration the lowering rejects.
    LowerError
);

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

use std::fmt;
use std::path::PathBuf;

/// Every failure of this crate. Manifest errors name the case and the field.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    /// The manifest file is not JSON.
    #[error("{}: not valid JSON: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },

    /// The manifest is JSON but says something invalid. `case` is the case's
    /// name when it has one, `index` its position in `cases`; `field` is the
    /// path inside the case (`params[1].dtype`, `expect.out.sha256`, ...).
    #[error("{}", ManifestLoc { case: case.as_deref(), index: *index, field, message })]
    Manifest { case: Option<String>, index: Option<usize>, field: String, message: String },

    /// A `warpsim run` parameter argument could not be parsed.
    #[error("parameter {arg:?}: {message}")]
    ParamArg { arg: String, message: String },

    /// A `.npy` file this crate cannot read.
    #[error("{}: {message}", path.display())]
    Npy { path: PathBuf, message: String },

    /// A buffer initialiser that cannot produce the buffer (wrong length, bad file, ...).
    #[error("buffer {buffer:?}: {message}")]
    Init { buffer: String, message: String },

    /// An output check that could not be carried out (as opposed to one that
    /// ran and found a mismatch, which is a [`crate::CheckResult`]).
    #[error("check of {buffer:?}: {message}")]
    Check { buffer: String, message: String },

    #[error("{0}")]
    Other(String),
}

struct ManifestLoc<'a> {
    case: Option<&'a str>,
    index: Option<usize>,
    field: &'a str,
    message: &'a str,
}

impl fmt::Display for ManifestLoc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.case, self.index) {
            (Some(c), _) => write!(f, "case {c:?}: ")?,
            (None, Some(i)) => write!(f, "cases[{i}]: ")?,
            (None, None) => {}
        }
        if self.field.is_empty() {
            f.write_str(self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl LaunchError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LaunchError::Io { path: path.into(), source }
    }
}

//! NumPy `.npy` files: write a buffer, read one back.
//!
//! Written files are format 1.0, C order, one dimension, little-endian, with
//! the header padded so the data starts on a 64-byte boundary (as NumPy does).
//! `bf16` has no NumPy dtype: it is written as `'<u2'` holding the raw bits
//! ([`BF16_NOTE`]), and a `'<u2'` file is accepted wherever a `bf16` buffer is
//! initialised from a file.
//!
//! Reading accepts versions 1.0, 2.0 and 3.0, the twelve element types of
//! [`Dtype`] in little-endian (or byte-order-free one-byte) form, C order of
//! any shape (flattened; Fortran order only where it is the same thing: at most
//! one dimension larger than 1). Anything else is an error, never a panic.

use std::io::{self, Read, Write};
use std::path::Path;

use crate::{Dtype, LaunchError};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Longest header accepted when reading.
const MAX_HEADER: usize = 1 << 20;

/// What [`write_npy`] returns for `bf16` buffers.
pub const BF16_NOTE: &str =
    "bf16 has no NumPy dtype: written as '<u2' raw bits (view with ml_dtypes.bfloat16, or shift left 16 into '<u4' and view as '<f4')";

/// The NumPy `descr` for a dtype (`bf16` as `'<u2'`, see [`BF16_NOTE`]).
pub const fn descr_of(d: Dtype) -> &'static str {
    match d {
        Dtype::F16 => "<f2",
        Dtype::Bf16 => "<u2",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
        Dtype::I8 => "|i1",
        Dtype::U8 => "|u1",
        Dtype::I16 => "<i2",
        Dtype::U16 => "<u2",
        Dtype::I32 => "<i4",
        Dtype::U32 => "<u4",
        Dtype::I64 => "<i8",
        Dtype::U64 => "<u8",
    }
}

/// The dtype of a NumPy `descr`, if this crate can read it.
pub fn dtype_of_descr(descr: &str) -> Result<Dtype, NpyError> {
    let (order, code) = match descr.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
        _ => ('=', descr),
    };
    let d = match code {
        "f2" | "e" => Dtype::F16,
        "f4" | "f" => Dtype::F32,
        "f8" | "d" => Dtype::F64,
        "i1" | "b" => Dtype::I8,
        "u1" | "B" => Dtype::U8,
        "i2" | "h" => Dtype::I16,
        "u2" | "H" => Dtype::U16,
        "i4" | "i" => Dtype::I32,
        "u4" | "I" => Dtype::U32,
        "i8" | "q" => Dtype::I64,
        "u8" | "Q" => Dtype::U64,
        _ => return fmt_err(format!("unsupported dtype descr {descr:?}")),
    };
    let little = match order {
        '<' | '|' => true,
        '>' => false,
        _ => cfg!(target_endian = "little"),
    };
    if !little && d.size_bytes() > 1 {
        return fmt_err(format!("big-endian dtype {descr:?} is not supported"));
    }
    Ok(d)
}

/// Errors from the streaming readers (the file functions wrap them with the path).
#[derive(Debug)]
pub enum NpyError {
    Io(io::Error),
    Format(String),
}

impl std::fmt::Display for NpyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NpyError::Io(e) => e.fmt(f),
            NpyError::Format(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for NpyError {}

impl From<io::Error> for NpyError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            NpyError::Format("file ends inside the header or data".to_string())
        } else {
            NpyError::Io(e)
        }
    }
}

fn fmt_err<T>(m: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError::Format(m.into()))
}

/// A parsed `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    pub version: (u8, u8),
    /// As written in the file (`'<f4'`).
    pub descr: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    /// Product of `shape` (1 for a 0-d array).
    pub count: u64,
    /// Where the data starts in the file.
    pub data_offset: u64,
}

impl NpyHeader {
    /// Whether a buffer of `want` can take this file's data (`'<u2'` is accepted for `bf16`).
    pub fn dtype_matches(&self, want: Dtype) -> bool {
        self.dtype == want || (want == Dtype::Bf16 && self.dtype == Dtype::U16)
    }

    pub fn data_len(&self) -> u64 {
        self.count.saturating_mul(self.dtype.size_bytes() as u64)
    }
}

/// Reads the magic, version and header dict; leaves `r` at the data.
pub fn read_header<R: Read>(r: &mut R) -> Result<NpyHeader, NpyError> {
    let mut pre = [0u8; 8];
    r.read_exact(&mut pre)?;
    if &pre[..6] != MAGIC {
        return fmt_err("not a .npy file (bad magic)");
    }
    let version = (pre[6], pre[7]);
    let (hlen, prefix) = match version.0 {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b)?;
            (u16::from_le_bytes(b) as usize, 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b)?;
            (u32::from_le_bytes(b) as usize, 12)
        }
        v => return fmt_err(format!("unsupported .npy version {v}.{}", version.1)),
    };
    if hlen > MAX_HEADER {
        return fmt_err(format!("header of {hlen} bytes is too long"));
    }
    let mut hb = vec![0u8; hlen];
    r.read_exact(&mut hb)?;
    let text = match (version.0, std::str::from_utf8(&hb)) {
        (_, Ok(t)) if version.0 == 3 || t.is_ascii() => t,
        _ => return fmt_err("header is not ASCII (or UTF-8 for version 3)"),
    };
    let dict = HeaderParser { s: text.as_bytes(), pos: 0 }.dict()?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (k, v) in dict {
        match (k.as_str(), v) {
            ("descr", Lit::Str(s)) => descr = Some(s),
            ("fortran_order", Lit::Bool(b)) => fortran = Some(b),
            ("shape", Lit::Tuple(t)) => shape = Some(t),
            ("descr", _) => return fmt_err("unsupported descr (structured or not a string)"),
            ("fortran_order", _) => return fmt_err("fortran_order is not True or False"),
            ("shape", _) => return fmt_err("shape is not a tuple of integers"),
            (k, _) => return fmt_err(format!("unexpected header key {k:?}")),
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return fmt_err("header lacks one of 'descr', 'fortran_order', 'shape'");
    };
    let dtype = dtype_of_descr(&descr)?;
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return fmt_err("Fortran-order arrays of more than one dimension are not supported");
    }
    let mut count: u64 = 1;
    for &d in &shape {
        count = count.checked_mul(d).ok_or_else(|| NpyError::Format("shape overflows".into()))?;
    }
    if count.checked_mul(dtype.size_bytes() as u64).is_none() {
        return fmt_err("shape overflows");
    }
    Ok(NpyHeader { version, descr, dtype, shape, count, data_offset: (prefix + hlen) as u64 })
}

enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    Other,
}

/// The subset of Python literals `.npy` headers use.
struct HeaderParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl HeaderParser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            fmt_err(format!("malformed header: expected '{}' at byte {}", c as char, self.pos))
        }
    }

    fn string(&mut self) -> Result<String, NpyError> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return fmt_err(format!("malformed header: expected a string at byte {}", self.pos)),
        };
        self.pos += 1;
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos] != q {
            if self.s[self.pos] == b'\\' {
                return fmt_err("malformed header: escapes in strings are not supported");
            }
            self.pos += 1;
        }
        if self.pos >= self.s.len() {
            return fmt_err("malformed header: unterminated string");
        }
        let out = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        self.pos += 1;
        Ok(out)
    }

    fn word(&mut self) -> &[u8] {
        self.ws();
        let start = self.pos;
        while self.pos < self.s.len() && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_') {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn value(&mut self) -> Result<Lit, NpyError> {
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Lit::Str),
            Some(b'(') => {
                self.pos += 1;
                let mut v = Vec::new();
                loop {
                    if self.peek() == Some(b')') {
                        self.pos += 1;
                        return Ok(Lit::Tuple(v));
                    }
                    let w = self.word();
                    let txt = std::str::from_utf8(w).unwrap_or("");
                    let txt = txt.strip_suffix('L').unwrap_or(txt);
                    let n: u64 = txt.parse().map_err(|_| NpyError::Format(format!("malformed header: bad dimension {txt:?} in shape")))?;
                    v.push(n);
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b')') => {}
                        _ => return fmt_err("malformed header: bad shape tuple"),
                    }
                }
            }
            Some(b'[') | Some(b'{') => {
                // Skip a nested structure (structured dtypes), balanced.
                let mut depth = 0usize;
                while let Some(&c) = self.s.get(self.pos) {
                    self.pos += 1;
                    match c {
                        b'[' | b'{' | b'(' => depth += 1,
                        b']' | b'}' | b')' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(Lit::Other);
                            }
                        }
                        _ => {}
                    }
                }
                fmt_err("malformed header: unbalanced brackets")
            }
            _ => match self.word() {
                b"True" => Ok(Lit::Bool(true)),
                b"False" => Ok(Lit::Bool(false)),
                b"" => fmt_err(format!("malformed header: unexpected byte at {}", self.pos)),
                _ => Ok(Lit::Other),
            },
        }
    }

    fn dict(mut self) -> Result<Vec<(String, Lit)>, NpyError> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.pos += 1;
                break;
            }
            let k = self.string()?;
            self.expect(b':')?;
            let v = self.value()?;
            if out.iter().any(|(ok, _): &(String, Lit)| *ok == k) {
                return fmt_err(format!("malformed header: key {k:?} twice"));
            }
            out.push((k, v));
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return fmt_err(format!("malformed header: expected ',' or '}}' at byte {}", self.pos)),
            }
        }
        if self.peek().is_some() {
            return fmt_err("malformed header: text after the dict");
        }
        Ok(out)
    }
}

/// An array read from a `.npy` file: its dtype and little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyArray {
    pub dtype: Dtype,
    pub descr: String,
    pub shape: Vec<u64>,
    pub count: u64,
    pub data: Vec<u8>,
}

/// Reads a whole `.npy`: header and exactly `count` elements (trailing bytes are an error).
pub fn read_npy<R: Read>(mut r: R) -> Result<NpyArray, NpyError> {
    let h = read_header(&mut r)?;
    let len = usize::try_from(h.data_len()).map_err(|_| NpyError::Format("array too large".into()))?;
    let mut data = Vec::new();
    // Read in bounded steps so a lying header cannot make us allocate the world.
    let got = r.by_ref().take(len as u64).read_to_end(&mut data)?;
    if got != len {
        return fmt_err(format!("data has {got} bytes, the header says {len}"));
    }
    let mut extra = [0u8; 1];
    if r.read(&mut extra)? != 0 {
        return fmt_err(format!("file has bytes after the {len} bytes of data"));
    }
    Ok(NpyArray { dtype: h.dtype, descr: h.descr, shape: h.shape, count: h.count, data })
}

pub fn read_npy_file(path: impl AsRef<Path>) -> Result<NpyArray, LaunchError> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|e| LaunchError::io(path, e))?;
    read_npy(io::BufReader::new(f)).map_err(|e| match e {
        NpyError::Io(e) => LaunchError::io(path, e),
        NpyError::Format(message) => LaunchError::Npy { path: path.to_path_buf(), message },
    })
}

/// The format 1.0 header for `count` elements of `d`, padded to 64 bytes.
pub fn header_bytes(d: Dtype, count: u64) -> Vec<u8> {
    let dict = format!("{{'descr': '{}', 'fortran_order': False, 'shape': ({count},), }}", descr_of(d));
    let unpadded = MAGIC.len() + 2 + 2 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let hlen = dict.len() + pad + 1;
    let mut out = Vec::with_capacity(10 + hlen);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(hlen as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    out
}

/// Writes `bytes` (little-endian elements of `d`) as a 1-D `.npy`. Returns a
/// note for the reader when the dtype had to be stood in for (`bf16`).
pub fn write_npy<W: Write>(mut w: W, d: Dtype, bytes: &[u8]) -> io::Result<Option<&'static str>> {
    if bytes.len() / d.size_bytes() * d.size_bytes() != bytes.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} bytes is not a whole number of {d} elements", bytes.len())));
    }
    w.write_all(&header_bytes(d, (bytes.len() / d.size_bytes()) as u64))?;
    w.write_all(bytes)?;
    w.flush()?;
    Ok((d == Dtype::Bf16).then_some(BF16_NOTE))
}

pub fn write_npy_file(path: impl AsRef<Path>, d: Dtype, bytes: &[u8]) -> Result<Option<&'static str>, LaunchError> {
    let path = path.as_ref();
    let f = std::fs::File::create(path).map_err(|e| LaunchError::io(path, e))?;
    write_npy(io::BufWriter::new(f), d, bytes).map_err(|e| LaunchError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn npy_with_header(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[version, 0]);
        if version == 1 {
            v.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
        } else {
            v.extend_from_slice(&((dict.len() + 1) as u32).to_le_bytes());
        }
        v.extend_from_slice(dict.as_bytes());
        v.push(b'\n');
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn roundtrip_every_dtype() {
        for d in Dtype::ALL {
            let bytes: Vec<u8> = (0..d.size_bytes() * 5).map(|i| i as u8).collect();
            let mut f = Vec::new();
            let note = write_npy(&mut f, d, &bytes).unwrap();
            assert_eq!(note.is_some(), d == Dtype::Bf16);
            let hlen = u16::from_le_bytes([f[8], f[9]]) as usize;
            assert_eq!((10 + hlen) % 64, 0);
            assert_eq!(f[10 + hlen - 1], b'\n');
            let a = read_npy(&f[..]).unwrap();
            assert_eq!(a.data, bytes);
            assert_eq!(a.count, 5);
            assert_eq!(a.shape, vec![5]);
            assert_eq!(a.dtype, if d == Dtype::Bf16 { Dtype::U16 } else { d });
        }
    }

    #[test]
    fn header_text_is_numpys() {
        let h = header_bytes(Dtype::F32, 1024);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1024,), }"));
        assert_eq!(h.len(), 128);
    }

    #[test]
    fn reads_other_versions_and_shapes() {
        let data = [1u8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0];
        let f = npy_with_header(2, "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 2)}", &data);
        let a = read_npy(&f[..]).unwrap();
        assert_eq!((a.dtype, a.count, a.shape.clone()), (Dtype::I32, 4, vec![2, 2]));
        let f = npy_with_header(3, "{'descr': '<u8', 'fortran_order': True, 'shape': (2,)}", &data);
        assert_eq!(read_npy(&f[..]).unwrap().count, 2);
        let f = npy_with_header(1, "{'descr': '|u1', 'fortran_order': False, 'shape': ()}", &[7]);
        assert_eq!(read_npy(&f[..]).unwrap().count, 1);
    }

    #[test]
    fn rejects_unsupported() {
        let d = [0u8; 8];
        let bad = [
            ("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", "big-endian"),
            ("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", "unsupported dtype"),
            ("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured"),
            ("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2)}", "Fortran"),
            ("{'descr': '<f4', 'shape': (2,)}", "lacks"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unexpected header key"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "malformed"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "data has"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "after"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}", "overflow"),
        ];
        for (hdr, want) in bad {
            let f = npy_with_header(1, hdr, &d);
            let e = read_npy(&f[..]).unwrap_err().to_string();
            assert!(e.contains(want), "{hdr}: {e}");
        }
        assert!(read_npy(&b"\x93NUMPY\x04\x00"[..]).unwrap_err().to_string().contains("version"));
        assert!(read_npy(&b"PK\x03\x04xxxxxxxx"[..]).unwrap_err().to_string().contains("magic"));
        assert!(read_npy(&b"\x93NUM"[..]).is_err());
        assert!(write_npy(Vec::new(), Dtype::F32, &[0u8; 3]).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let mut f = MAGIC.to_vec();
            f.extend_from_slice(&[1, 0]);
            f.extend_from_slice(&bytes);
            let _ = read_npy(&f[..]);
            let _ = read_npy(&bytes[..]);
        }

        #[test]
        fn never_panics_on_headers(s in "[{}()\\[\\]',: a-z0-9<>|TrueFals]{0,80}") {
            let f = npy_with_header(1, &s, &[0u8; 16]);
            let _ = read_npy(&f[..]);
        }
    }
}

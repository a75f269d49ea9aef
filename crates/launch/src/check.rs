//! Checking output buffers against their expectations.
//!
//! Which check runs is decided by the [`Expectation`]:
//!
//! | expectation | check ([`CheckMethod`]) |
//! |---|---|
//! | `property` | [`CheckMethod::WarpUniformClock`]: u64 per thread, every lane of a warp (consecutive groups of 32 threads of the block) holds the same value; the number of distinct values is reported |
//! | `file` and `rel_tol > 0` | [`CheckMethod::RelTol`]: `‖out − ref‖₂ / ‖ref‖₂ <= rel_tol`, in `f64` over the elements |
//! | `file` (no or zero `rel_tol`) | [`CheckMethod::File`]: the bytes must be equal (and the `sha256`, if also given, must match) |
//! | `sha256` only | [`CheckMethod::Sha256`]: exact; a `rel_tol` cannot be applied without the reference |
//! | nothing checkable | [`CheckMethod::Unchecked`]: reported as matched |
//!
//! Outputs can be given whole ([`check_bytes`]) or streamed ([`Checker`],
//! [`check_with`] taking a `read(offset, buf)` closure such as the engine's
//! `GlobalMemory::read`, [`check_reader`]) so that a 4 GiB output is never held
//! in memory. A check that ran and found a difference is a [`CheckResult`]
//! with `matched == false`; a check that could not run (missing file, wrong
//! size) is an error.

use std::collections::HashSet;
use std::fmt::Display;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::manifest::{Case, Expectation, Property};
use crate::value::{decode_f64, decode_int, format_elem};
use crate::{Dtype, LaunchError};

/// Bytes read per step by the streaming checkers.
pub const CHUNK_BYTES: usize = 1 << 20;

/// How an output was checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CheckMethod {
    Sha256,
    File,
    RelTol,
    WarpUniformClock,
    Unchecked,
}

impl CheckMethod {
    pub const fn name(self) -> &'static str {
        match self {
            CheckMethod::Sha256 => "sha256",
            CheckMethod::File => "file",
            CheckMethod::RelTol => "rel_tol",
            CheckMethod::WarpUniformClock => "warp_uniform_clock",
            CheckMethod::Unchecked => "unchecked",
        }
    }
}

/// The outcome of checking one buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    pub buffer: String,
    pub method: CheckMethod,
    pub matched: bool,
    /// One line: what was checked and, on a mismatch, how it differs (first
    /// differing element, got vs expected as values of the dtype, how many differ).
    pub message: String,
    /// Index of the first differing element (file/rel_tol), or of the first
    /// thread whose value differs from its warp's lane 0 (clock).
    pub first_mismatch: Option<u64>,
    /// Differing elements (file/rel_tol), or warps that are not uniform (clock).
    pub mismatches: Option<u64>,
    /// Elements compared (file/rel_tol/clock).
    pub elements: u64,
    /// `‖out − ref‖ / ‖ref‖` (rel_tol, and file checks of float buffers).
    pub rel_err: Option<f64>,
    /// Distinct values in the buffer (clock).
    pub distinct_values: Option<u64>,
    /// Lowercase hex SHA-256 of the output, where it was computed.
    pub sha256: Option<String>,
}

impl std::fmt::Display for CheckResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.matched { "ok" } else { "MISMATCH" };
        write!(f, "{}: {verdict} ({}): {}", self.buffer, self.method.name(), self.message)
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 of `len` bytes obtained through `read(offset, buf)`, a chunk at a time.
pub fn sha256_hex_with<E: Display>(len: u64, mut read: impl FnMut(u64, &mut [u8]) -> Result<(), E>) -> Result<String, LaunchError> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES.min(len as usize)];
    let mut off = 0u64;
    while off < len {
        let n = (len - off).min(buf.len() as u64) as usize;
        read(off, &mut buf[..n]).map_err(|e| LaunchError::Other(format!("reading at offset {off}: {e}")))?;
        h.update(&buf[..n]);
        off += n as u64;
    }
    Ok(hex(&h.finalize()))
}

/// SHA-256 of everything `r` yields.
pub fn sha256_hex_reader(mut r: impl Read) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&h.finalize()));
        }
        h.update(&buf[..n]);
    }
}

fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    b.iter().fold(String::with_capacity(b.len() * 2), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// Checks a whole output held in memory.
pub fn check_bytes(buffer: &str, exp: &Expectation, dtype: Dtype, block_threads: u64, out: &[u8]) -> Result<CheckResult, LaunchError> {
    let mut c = Checker::new(buffer, exp, dtype, out.len() as u64, block_threads)?;
    c.update(out)?;
    c.finish()
}

/// Checks `byte_len` bytes obtained through `read(offset, buf)` (for example
/// `|off, buf| mem.read(base + off, buf)`), a chunk at a time.
pub fn check_with<E: Display>(
    buffer: &str,
    exp: &Expectation,
    dtype: Dtype,
    block_threads: u64,
    byte_len: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> Result<(), E>,
) -> Result<CheckResult, LaunchError> {
    let mut c = Checker::new(buffer, exp, dtype, byte_len, block_threads)?;
    let mut buf = vec![0u8; CHUNK_BYTES.min(byte_len as usize)];
    let mut off = 0u64;
    while off < byte_len {
        let n = (byte_len - off).min(buf.len() as u64) as usize;
        read(off, &mut buf[..n]).map_err(|e| c.err(format!("reading the output at offset {off}: {e}")))?;
        c.update(&buf[..n])?;
        off += n as u64;
    }
    c.finish()
}

/// Checks `byte_len` bytes read from `r`.
pub fn check_reader(
    buffer: &str,
    exp: &Expectation,
    dtype: Dtype,
    block_threads: u64,
    byte_len: u64,
    mut r: impl Read,
) -> Result<CheckResult, LaunchError> {
    let mut c = Checker::new(buffer, exp, dtype, byte_len, block_threads)?;
    let mut buf = vec![0u8; CHUNK_BYTES.min(byte_len as usize)];
    let mut left = byte_len;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        let got = r.read(&mut buf[..n]).map_err(|e| c.err(format!("reading the output: {e}")))?;
        if got == 0 {
            return Err(c.err(format!("the output ended after {} of {byte_len} bytes", byte_len - left)));
        }
        c.update(&buf[..got])?;
        left -= got as u64;
    }
    c.finish()
}

/// Checks output buffer `buffer` of `case` against its expectation (an
/// unchecked result if it has none).
pub fn check_case_output(case: &Case, buffer: &str, out: &[u8]) -> Result<CheckResult, LaunchError> {
    let spec = case
        .buffer(buffer)
        .ok_or_else(|| LaunchError::Check { buffer: buffer.to_string(), message: format!("case {:?} has no such buffer", case.name) })?;
    let none = Expectation::default();
    let exp = case.expect.get(buffer).unwrap_or(&none);
    check_bytes(buffer, exp, spec.dtype, case.block_threads(), out)
}

struct Diff {
    count: u64,
    first: Option<(u64, u64, u64)>, // (index, got bits, expected bits)
    diff2: f64,
    ref2: f64,
}

struct Clock {
    block_threads: u64,
    warp_first: u64,
    bad_warps: u64,
    current_bad: bool,
    first: Option<(u64, u64, u64)>, // (thread, value, lane-0 value)
    distinct: HashSet<u64>,
}

/// Streaming checker: [`Checker::new`], any number of [`Checker::update`]
/// with consecutive chunks of any size, then [`Checker::finish`].
pub struct Checker {
    buffer: String,
    method: CheckMethod,
    dtype: Dtype,
    byte_len: u64,
    seen: u64,
    want_sha: Option<String>,
    rel_tol: f64,
    hasher: Option<Sha256>,
    reference: Option<(BufReader<File>, PathBuf)>,
    ref_buf: Vec<u8>,
    carry_out: [u8; 8],
    carry_ref: [u8; 8],
    carry_len: usize,
    index: u64,
    diff: Diff,
    clock: Option<Clock>,
    h200_distinct: Option<u64>,
}

impl Checker {
    /// `byte_len` is the output's size; `block_threads` the launch's threads
    /// per block (used by the clock property to find warps).
    pub fn new(buffer: &str, exp: &Expectation, dtype: Dtype, byte_len: u64, block_threads: u64) -> Result<Checker, LaunchError> {
        let err = |m: String| LaunchError::Check { buffer: buffer.to_string(), message: m };
        let size = dtype.size_bytes() as u64;
        if let Some(d) = exp.dtype {
            if d != dtype {
                return Err(err(format!("the expectation is for {d}, the output is {dtype}")));
            }
        }
        if byte_len / size * size != byte_len {
            return Err(err(format!("{byte_len} bytes is not a whole number of {dtype} elements")));
        }
        if let Some(c) = exp.count {
            if c.checked_mul(size) != Some(byte_len) {
                return Err(err(format!("the output has {} elements, the expectation {c}", byte_len / size)));
            }
        }
        let rel_tol = exp.rel_tol.unwrap_or(0.0);
        let method = match (exp.property, &exp.file, &exp.sha256) {
            (Some(Property::WarpUniformClock), _, _) => CheckMethod::WarpUniformClock,
            (None, Some(_), _) if rel_tol > 0.0 => CheckMethod::RelTol,
            (None, Some(_), _) => CheckMethod::File,
            (None, None, Some(_)) => CheckMethod::Sha256,
            (None, None, None) => CheckMethod::Unchecked,
        };
        let mut clock = None;
        if method == CheckMethod::WarpUniformClock {
            if size != 8 {
                return Err(err(format!("the clock property needs 64-bit elements, the output is {dtype}")));
            }
            if block_threads == 0 {
                return Err(err("block size 0".to_string()));
            }
            clock = Some(Clock { block_threads, warp_first: 0, bad_warps: 0, current_bad: false, first: None, distinct: HashSet::new() });
        }
        let mut reference = None;
        if matches!(method, CheckMethod::File | CheckMethod::RelTol) {
            let path = exp.file.clone().unwrap_or_default();
            let f = File::open(&path).map_err(|e| err(format!("expected file {}: {e}", path.display())))?;
            let len = f.metadata().map_err(|e| err(format!("expected file {}: {e}", path.display())))?.len();
            if len != byte_len {
                return Err(err(format!("expected file {} has {len} bytes, the output {byte_len}", path.display())));
            }
            reference = Some((BufReader::with_capacity(1 << 16, f), path));
        }
        let hash = exp.sha256.is_some() && method != CheckMethod::WarpUniformClock;
        Ok(Checker {
            buffer: buffer.to_string(),
            method,
            dtype,
            byte_len,
            seen: 0,
            want_sha: exp.sha256.clone(),
            rel_tol,
            hasher: hash.then(Sha256::new),
            reference,
            ref_buf: Vec::new(),
            carry_out: [0; 8],
            carry_ref: [0; 8],
            carry_len: 0,
            index: 0,
            diff: Diff { count: 0, first: None, diff2: 0.0, ref2: 0.0 },
            clock,
            h200_distinct: exp.h200_distinct_values,
        })
    }

    fn err(&self, message: String) -> LaunchError {
        LaunchError::Check { buffer: self.buffer.clone(), message }
    }

    pub fn method(&self) -> CheckMethod {
        self.method
    }

    /// Feeds the next bytes of the output.
    pub fn update(&mut self, chunk: &[u8]) -> Result<(), LaunchError> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.seen + chunk.len() as u64 > self.byte_len {
            return Err(self.err(format!("more than the {} bytes announced", self.byte_len)));
        }
        self.seen += chunk.len() as u64;
        if let Some(h) = &mut self.hasher {
            h.update(chunk);
        }
        if matches!(self.method, CheckMethod::Sha256 | CheckMethod::Unchecked) {
            return Ok(());
        }
        // The reference bytes for the same range.
        let mut rbuf = std::mem::take(&mut self.ref_buf);
        if let Some((r, path)) = &mut self.reference {
            rbuf.resize(chunk.len(), 0);
            if let Err(e) = r.read_exact(&mut rbuf) {
                let msg = format!("reading expected file {}: {e}", path.display());
                return Err(self.err(msg));
            }
        }
        let has_ref = self.reference.is_some();
        let size = self.dtype.size_bytes();
        let mut pos = 0;
        // Complete an element split across chunks.
        if self.carry_len > 0 {
            let take = (size - self.carry_len).min(chunk.len());
            self.carry_out[self.carry_len..self.carry_len + take].copy_from_slice(&chunk[..take]);
            if has_ref {
                self.carry_ref[self.carry_len..self.carry_len + take].copy_from_slice(&rbuf[..take]);
            }
            self.carry_len += take;
            pos = take;
            if self.carry_len == size {
                let o = u64::from_le_bytes(self.carry_out);
                let r = u64::from_le_bytes(self.carry_ref);
                self.element(o, r);
                self.carry_out = [0; 8];
                self.carry_ref = [0; 8];
                self.carry_len = 0;
            }
        }
        let whole = (chunk.len() - pos) / size * size;
        let mut ob = [0u8; 8];
        let mut rb = [0u8; 8];
        for k in (pos..pos + whole).step_by(size) {
            ob[..size].copy_from_slice(&chunk[k..k + size]);
            if has_ref {
                rb[..size].copy_from_slice(&rbuf[k..k + size]);
            }
            self.element(u64::from_le_bytes(ob), u64::from_le_bytes(rb));
        }
        let tail = pos + whole;
        if tail < chunk.len() {
            let n = chunk.len() - tail;
            self.carry_out[..n].copy_from_slice(&chunk[tail..]);
            if has_ref {
                self.carry_ref[..n].copy_from_slice(&rbuf[tail..]);
            }
            self.carry_len = n;
        }
        self.ref_buf = rbuf;
        Ok(())
    }

    fn element(&mut self, o: u64, r: u64) {
        let i = self.index;
        self.index += 1;
        match self.method {
            CheckMethod::File | CheckMethod::RelTol => {
                let d = self.dtype;
                if o != r {
                    self.diff.count += 1;
                    if self.diff.first.is_none() {
                        self.diff.first = Some((i, o, r));
                    }
                    let delta =
                        if d.is_float() { decode_f64(d, o) - decode_f64(d, r) } else { (decode_int(d, o) - decode_int(d, r)) as f64 };
                    self.diff.diff2 += delta * delta;
                }
                let rv = decode_f64(d, r);
                self.diff.ref2 += rv * rv;
            }
            CheckMethod::WarpUniformClock => {
                let Some(c) = self.clock.as_mut() else { return };
                let lane = (i % c.block_threads) % 32;
                if lane == 0 {
                    c.warp_first = o;
                    c.current_bad = false;
                } else if o != c.warp_first {
                    if !c.current_bad {
                        c.current_bad = true;
                        c.bad_warps += 1;
                    }
                    if c.first.is_none() {
                        c.first = Some((i, o, c.warp_first));
                    }
                }
                c.distinct.insert(o);
            }
            CheckMethod::Sha256 | CheckMethod::Unchecked => {}
        }
    }

    /// Ends the check; errors if fewer bytes than announced were given.
    pub fn finish(mut self) -> Result<CheckResult, LaunchError> {
        if self.seen != self.byte_len {
            return Err(self.err(format!("got {} of the {} bytes announced", self.seen, self.byte_len)));
        }
        let got_sha = self.hasher.take().map(|h| hex(&h.finalize()));
        let sha_ok = match (&got_sha, &self.want_sha) {
            (Some(g), Some(w)) => Some(g == w),
            _ => None,
        };
        let d = self.dtype;
        let n = self.index;
        let mut res = CheckResult {
            buffer: self.buffer.clone(),
            method: self.method,
            matched: true,
            message: String::new(),
            first_mismatch: None,
            mismatches: None,
            elements: n,
            rel_err: None,
            distinct_values: None,
            sha256: got_sha.clone(),
        };
        let describe_first = |first: Option<(u64, u64, u64)>| match first {
            Some((i, o, r)) => format!("; first at [{i}]: got {}, expected {}", format_elem(d, o), format_elem(d, r)),
            None => String::new(),
        };
        let rel = if self.diff.diff2 == 0.0 {
            0.0
        } else if self.diff.ref2 > 0.0 {
            (self.diff.diff2 / self.diff.ref2).sqrt()
        } else {
            f64::INFINITY
        };
        let ref_name = self.reference.as_ref().map(|(_, p)| p.display().to_string()).unwrap_or_default();
        match self.method {
            CheckMethod::Unchecked => {
                res.message = "no expectation to check".to_string();
            }
            CheckMethod::Sha256 => {
                let w = self.want_sha.clone().unwrap_or_default();
                let g = got_sha.unwrap_or_default();
                res.matched = sha_ok == Some(true);
                res.message = if res.matched { format!("sha256 {g} matches") } else { format!("sha256 {g}, expected {w}") };
            }
            CheckMethod::File | CheckMethod::RelTol => {
                res.first_mismatch = self.diff.first.map(|f| f.0);
                res.mismatches = Some(self.diff.count);
                if d.is_float() || self.method == CheckMethod::RelTol {
                    res.rel_err = Some(rel);
                }
                let differ = if self.diff.count == 0 {
                    format!("all {n} elements equal {ref_name}")
                } else {
                    format!("{} of {n} elements differ from {ref_name}{}", self.diff.count, describe_first(self.diff.first))
                };
                if self.method == CheckMethod::File {
                    res.matched = self.diff.count == 0;
                    res.message = differ;
                } else {
                    res.matched = rel <= self.rel_tol; // NaN compares false
                    let cmp = if res.matched { "<=" } else { ">" };
                    res.message = format!("relative error {rel:.3e} {cmp} tolerance {:e}; {differ}", self.rel_tol);
                }
                if sha_ok == Some(false) {
                    res.matched = false;
                    res.message.push_str(&format!(
                        "; sha256 {} differs from the manifest's {}",
                        got_sha.unwrap_or_default(),
                        self.want_sha.clone().unwrap_or_default()
                    ));
                }
            }
            CheckMethod::WarpUniformClock => {
                let Some(c) = self.clock.as_ref() else {
                    return Err(self.err("internal: no clock state".into()));
                };
                let distinct = c.distinct.len() as u64;
                res.distinct_values = Some(distinct);
                res.mismatches = Some(c.bad_warps);
                res.first_mismatch = c.first.map(|f| f.0);
                res.matched = c.bad_warps == 0;
                let h200 = self.h200_distinct.map(|h| format!(" (H200: {h})")).unwrap_or_default();
                let warps = n / c.block_threads * c.block_threads.div_ceil(32) + (n % c.block_threads).div_ceil(32);
                res.message = match c.first {
                    None => format!("all {warps} warps read one value each; {distinct} distinct values{h200}"),
                    Some((t, v, v0)) => {
                        let (b, w) = (t / c.block_threads, (t % c.block_threads) / 32);
                        format!(
                            "{} of {warps} warps are not uniform; first: thread {t} (block {b}, warp {w}, lane {}) read {v}, lane 0 read {v0}; {distinct} distinct values{h200}",
                            c.bad_warps,
                            (t % c.block_threads) % 32
                        )
                    }
                };
            }
        }
        Ok(res)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tmpdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("warpsim-launch-check-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn sha_known_value() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        let want = sha256_hex(&data);
        let got = sha256_hex_with(data.len() as u64, |off, buf: &mut [u8]| -> Result<(), LaunchError> {
            buf.copy_from_slice(&data[off as usize..off as usize + buf.len()]);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(sha256_hex_reader(&data[..]).unwrap(), want);
    }

    #[test]
    fn sha_check() {
        let out = f32s(&[1.0, 2.0]);
        let exp = Expectation { sha256: Some(sha256_hex(&out)), ..Default::default() };
        let r = check_bytes("out", &exp, Dtype::F32, 32, &out).unwrap();
        assert!(r.matched, "{r}");
        assert_eq!(r.method, CheckMethod::Sha256);
        let r = check_bytes("out", &exp, Dtype::F32, 32, &f32s(&[1.0, 2.5])).unwrap();
        assert!(!r.matched);
        assert!(r.message.contains("expected"), "{r}");
        // wrong sizes are errors, not mismatches
        let exp2 = Expectation { count: Some(3), ..exp.clone() };
        assert!(check_bytes("out", &exp2, Dtype::F32, 32, &out).is_err());
        assert!(check_bytes("out", &exp, Dtype::F32, 32, &out[..5]).is_err());
    }

    #[test]
    fn file_check_reports_first_difference() {
        let dir = tmpdir();
        let want = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let p = dir.join("ref.bin");
        std::fs::write(&p, &want).unwrap();
        let exp = Expectation { file: Some(p.clone()), rel_tol: Some(0.0), sha256: Some(sha256_hex(&want)), ..Default::default() };
        let r = check_bytes("out", &exp, Dtype::F32, 32, &want).unwrap();
        assert!(r.matched, "{r}");
        assert_eq!((r.method, r.mismatches, r.rel_err), (CheckMethod::File, Some(0), Some(0.0)));
        let got = f32s(&[1.0, 2.5, 3.0, -4.0]);
        let r = check_bytes("out", &exp, Dtype::F32, 32, &got).unwrap();
        assert!(!r.matched);
        assert_eq!((r.first_mismatch, r.mismatches), (Some(1), Some(2)));
        assert!(r.message.starts_with("2 of 4 elements differ"), "{}", r.message);
        assert!(r.message.contains("first at [1]: got 2.5 (0x40200000), expected 2.0 (0x40000000)"), "{}", r.message);
        // -0.0 vs 0.0 is a difference in bytes
        std::fs::write(&p, f32s(&[0.0])).unwrap();
        let exp1 = Expectation { file: Some(p.clone()), ..Default::default() };
        assert!(!check_bytes("z", &exp1, Dtype::F32, 32, &f32s(&[-0.0])).unwrap().matched);
        // integer buffers print integers
        std::fs::write(&p, (-7i32).to_le_bytes()).unwrap();
        let r = check_bytes("i", &exp1, Dtype::I32, 32, &5i32.to_le_bytes()).unwrap();
        assert!(r.message.contains("got 5, expected -7"), "{}", r.message);
        // a missing or wrong-sized file is an error
        assert!(check_bytes("i", &exp1, Dtype::I32, 32, &[0u8; 8]).is_err());
        let exp_missing = Expectation { file: Some(dir.join("none.bin")), ..Default::default() };
        assert!(check_bytes("i", &exp_missing, Dtype::I32, 32, &[0u8; 4]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rel_tol_check() {
        let dir = tmpdir();
        let p = dir.join("ref.bin");
        std::fs::write(&p, f32s(&[3.0, 4.0])).unwrap(); // norm 5
        let exp = Expectation { file: Some(p.clone()), rel_tol: Some(0.01), ..Default::default() };
        let r = check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[3.0, 4.04])).unwrap();
        assert!(r.matched, "{r}");
        assert_eq!(r.method, CheckMethod::RelTol);
        assert!((r.rel_err.unwrap() - 0.008).abs() < 1e-6);
        assert_eq!(r.mismatches, Some(1));
        let r = check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[3.0, 4.1])).unwrap();
        assert!(!r.matched);
        assert!(r.message.starts_with("relative error 2.000e-2 > tolerance"), "{}", r.message);
        let r = check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[f32::NAN, 4.0])).unwrap();
        assert!(!r.matched);
        // equal NaNs and infinities are not differences
        std::fs::write(&p, f32s(&[f32::NAN, f32::INFINITY, 1.0])).unwrap();
        let r = check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[f32::NAN, f32::INFINITY, 1.0])).unwrap();
        assert!(r.matched, "{r}");
        // zero reference: only exact zeros match
        std::fs::write(&p, f32s(&[0.0, 0.0])).unwrap();
        assert!(check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[0.0, 0.0])).unwrap().matched);
        assert!(!check_bytes("o", &exp, Dtype::F32, 32, &f32s(&[0.0, 1e-30])).unwrap().matched);
        // f16 and integer dtypes
        std::fs::write(&p, [0x00, 0x3c, 0x00, 0x40]).unwrap(); // 1.0, 2.0
        let r = check_bytes("h", &exp, Dtype::F16, 32, &[0x00, 0x3c, 0x01, 0x40]).unwrap();
        assert!(r.matched, "{r}");
        std::fs::write(&p, [100u8, 0, 0, 0]).unwrap();
        let r = check_bytes("u", &exp, Dtype::U32, 32, &[101u8, 0, 0, 0]).unwrap();
        assert!(r.matched && r.rel_err == Some(0.01), "{r}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn clocks(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn clock_property() {
        let exp = Expectation { property: Some(Property::WarpUniformClock), h200_distinct_values: Some(2), ..Default::default() };
        // block of 48: warp 0 = threads 0..32, warp 1 = 32..48
        let mut v = vec![100u64; 32];
        v.extend(vec![104u64; 16]);
        let r = check_bytes("clk", &exp, Dtype::U64, 48, &clocks(&v)).unwrap();
        assert!(r.matched, "{r}");
        assert_eq!(r.distinct_values, Some(2));
        assert!(r.message.contains("all 2 warps"), "{}", r.message);
        assert!(r.message.contains("(H200: 2)"));
        v[37] = 105;
        let r = check_bytes("clk", &exp, Dtype::U64, 48, &clocks(&v)).unwrap();
        assert!(!r.matched);
        assert_eq!((r.first_mismatch, r.mismatches, r.distinct_values), (Some(37), Some(1), Some(3)));
        assert!(r.message.contains("thread 37 (block 0, warp 1, lane 5) read 105, lane 0 read 104"), "{}", r.message);
        // two blocks of 33: warps are [0,32) [32,33) [33,65) [65,66)
        let mut v = vec![1u64; 32];
        v.push(2);
        v.extend(vec![3u64; 32]);
        v.push(4);
        let r = check_bytes("clk", &exp, Dtype::U64, 33, &clocks(&v)).unwrap();
        assert!(r.matched, "{r}");
        assert_eq!(r.distinct_values, Some(4));
        assert!(r.message.contains("all 4 warps"), "{}", r.message);
        assert!(check_bytes("clk", &exp, Dtype::U32, 33, &[0u8; 4]).is_err());
        assert!(check_bytes("clk", &exp, Dtype::U64, 0, &[0u8; 8]).is_err());
    }

    #[test]
    fn unchecked_and_streaming_errors() {
        let r = check_bytes("x", &Expectation::default(), Dtype::U8, 32, &[1, 2]).unwrap();
        assert!(r.matched && r.method == CheckMethod::Unchecked);
        let exp = Expectation { sha256: Some(sha256_hex(&[1, 2])), ..Default::default() };
        let mut c = Checker::new("x", &exp, Dtype::U8, 2, 32).unwrap();
        c.update(&[1]).unwrap();
        assert!(c.finish().is_err());
        let mut c = Checker::new("x", &exp, Dtype::U8, 2, 32).unwrap();
        assert!(c.update(&[1, 2, 3]).is_err());
        let r = check_with("x", &exp, Dtype::U8, 32, 2, |_, _buf: &mut [u8]| Err("fault")).unwrap_err();
        assert!(r.to_string().contains("fault"));
        let r = check_reader("x", &exp, Dtype::U8, 32, 3, &[1u8, 2][..]).unwrap_err();
        assert!(r.to_string().contains("ended after 2 of 3"), "{r}");
    }

    proptest! {
        #[test]
        fn chunking_does_not_matter(
            vals in prop::collection::vec(any::<u16>(), 1..200),
            flips in prop::collection::vec(any::<u16>(), 0..5),
            cuts in prop::collection::vec(1usize..50, 0..20),
            tol in prop::sample::select(vec![0.0, 0.001, 0.5]),
        ) {
            let dir = tmpdir();
            let p = dir.join(format!("ref-{}.bin", vals.len()));
            let want: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(&p, &want).unwrap();
            let mut got = want.clone();
            for f in &flips {
                let i = *f as usize % got.len();
                got[i] ^= 1;
            }
            let exp = Expectation { file: Some(p.clone()), rel_tol: Some(tol), ..Default::default() };
            for d in [Dtype::F16, Dtype::I16, Dtype::U8, Dtype::Bf16] {
                let whole = check_bytes("b", &exp, d, 32, &got).unwrap();
                let mut c = Checker::new("b", &exp, d, got.len() as u64, 32).unwrap();
                let mut pos = 0;
                for k in &cuts {
                    let end = (pos + k).min(got.len());
                    c.update(&got[pos..end]).unwrap();
                    pos = end;
                }
                c.update(&got[pos..]).unwrap();
                let parts = c.finish().unwrap();
                prop_assert_eq!(&whole.message, &parts.message);
                prop_assert_eq!(whole.matched, parts.matched);
                prop_assert_eq!(whole.mismatches, parts.mismatches);
                let n = d.size_bytes();
                let differing = (0..got.len() / n).filter(|i| got[i * n..i * n + n] != want[i * n..i * n + n]).count() as u64;
                prop_assert_eq!(whole.mismatches, Some(differing));
                if tol == 0.0 {
                    prop_assert_eq!(whole.matched, differing == 0);
                }
            }
        }
    }
}

//! Buffer initialisers, exactly as the corpus README defines them.
//!
//! Every named initialiser is a pure function of the element index, so
//! [`BufferInit`] implements [`Filler`] by computing any byte range on demand:
//! the engine's global memory asks for a page at a time and a 4 GiB input costs
//! only the pages a kernel touches. All integer arithmetic is modulo 2^32 (the
//! index is taken modulo 2^32 for `hash_u32` and what is built on it).
//!
//! The value each initialiser names is converted to the buffer's dtype by the
//! rule in [`crate::value`]: integers wrap to the width, reals round to nearest
//! even, reals stored into integer buffers truncate toward zero.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use warpsim_engine::memory::Filler;

use crate::value::{check_fits, encode, Value};
use crate::{Dtype, LaunchError};

/// Files up to this size are read into memory when the initialiser is built;
/// larger ones are read page by page as the engine asks (unit tests use a
/// tiny limit so that both paths run).
const INLINE_FILE_LIMIT: u64 = if cfg!(test) { 8 } else { 16 << 20 };

/// `fmix32` from MurmurHash3.
pub const fn fmix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    x
}

/// The multiplier [`hash_u32`] applies before [`fmix32`].
const HASH_MUL: u32 = 0x9E37_79B1;

/// `fmix32(i * 0x9E3779B1)`, arithmetic modulo 2^32.
pub const fn hash_u32(i: u64) -> u32 {
    fmix32((i as u32).wrapping_mul(HASH_MUL))
}

/// `(hash_u32(i) >> 8) * 2^-24`, in [0, 1), exact in `f32`.
pub fn unit_f32(i: u64) -> f32 {
    unit_of_hash(hash_u32(i))
}

/// [`unit_f32`] from the element's hash.
#[inline(always)]
fn unit_of_hash(h: u32) -> f32 {
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// `unit_f32(i) - 0.5` (exact in `f32`) rounded to `f16`, nearest even.
pub fn sym_f16(i: u64) -> half::f16 {
    half::f16::from_f32(unit_f32(i) - 0.5)
}

/// `unit_f32(i)` as `f64` (exact).
pub fn unit_f64(i: u64) -> f64 {
    unit_f32(i) as f64
}

/// The initialisers named by a string in the manifest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NamedInit {
    Zeros,
    Iota,
    HashU32,
    UnitF32,
    SymF16,
    UnitF64,
}

impl NamedInit {
    pub const ALL: [NamedInit; 6] =
        [NamedInit::Zeros, NamedInit::Iota, NamedInit::HashU32, NamedInit::UnitF32, NamedInit::SymF16, NamedInit::UnitF64];

    pub const fn name(self) -> &'static str {
        match self {
            NamedInit::Zeros => "zeros",
            NamedInit::Iota => "iota",
            NamedInit::HashU32 => "hash_u32",
            NamedInit::UnitF32 => "unit_f32",
            NamedInit::SymF16 => "sym_f16",
            NamedInit::UnitF64 => "unit_f64",
        }
    }

    pub fn parse(s: &str) -> Option<NamedInit> {
        NamedInit::ALL.into_iter().find(|n| n.name() == s)
    }

    /// The value element `i` names, before conversion to a dtype.
    pub fn value(self, i: u64) -> Value {
        match self {
            NamedInit::Zeros => Value::Int(0),
            NamedInit::Iota => Value::Int(i as i128),
            NamedInit::HashU32 => Value::Int(hash_u32(i) as i128),
            NamedInit::UnitF32 | NamedInit::UnitF64 => Value::Float(unit_f64(i)),
            NamedInit::SymF16 => Value::Float(sym_f16(i).to_f64()),
        }
    }
}

/// A buffer's initialiser as the manifest gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `"zeros"`, `"iota"`, ...
    Named(NamedInit),
    /// `{"values": [...]}`: exactly `count` elements.
    Values(Vec<Value>),
    /// `{"file": "path"}`: raw little-endian bytes of exactly `count` elements,
    /// or a `.npy` file (by extension) of the buffer's dtype and `count` elements.
    File(PathBuf),
}

impl Init {
    /// Reads the manifest form: a name, `{"values": [...]}` or `{"file": "..."}`.
    /// A relative file path is joined to `base`. Errors carry the sub-field
    /// (`values[3]`, `file`) and the message.
    pub fn from_json(v: &serde_json::Value, base: &Path) -> Result<Init, (String, String)> {
        use serde_json::Value as J;
        match v {
            J::String(s) => NamedInit::parse(s).map(Init::Named).ok_or_else(|| {
                let names: Vec<_> = NamedInit::ALL.iter().map(|n| n.name()).collect();
                (
                    String::new(),
                    format!("unknown init {s:?} (expected one of {}, {{\"values\": [..]}} or {{\"file\": ..}})", names.join(", ")),
                )
            }),
            J::Object(m) => {
                if m.len() != 1 {
                    let keys: Vec<_> = m.keys().map(|k| k.as_str()).collect();
                    return Err((String::new(), format!("expected exactly one of \"values\" or \"file\", found keys {keys:?}")));
                }
                if let Some(vals) = m.get("values") {
                    let arr = vals
                        .as_array()
                        .ok_or_else(|| ("values".to_string(), format!("expected an array, found {}", crate::value::json_kind(vals))))?;
                    let mut out = Vec::with_capacity(arr.len());
                    for (k, e) in arr.iter().enumerate() {
                        out.push(Value::from_json(e).map_err(|msg| (format!("values[{k}]"), msg.to_string()))?);
                    }
                    Ok(Init::Values(out))
                } else if let Some(f) = m.get("file") {
                    let s = f
                        .as_str()
                        .ok_or_else(|| ("file".to_string(), format!("expected a path string, found {}", crate::value::json_kind(f))))?;
                    if s.is_empty() {
                        return Err(("file".to_string(), "empty path".to_string()));
                    }
                    Ok(Init::File(base.join(s)))
                } else {
                    let k = m.keys().next().map(|k| k.as_str()).unwrap_or("");
                    Err((String::new(), format!("unknown init key {k:?} (expected \"values\" or \"file\")")))
                }
            }
            other => Err((String::new(), format!("expected an init name or object, found {}", crate::value::json_kind(other)))),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Init::Named(n) => n.name().into(),
            Init::Values(v) => {
                serde_json::json!({ "values": v.iter().map(Value::to_json).collect::<Vec<_>>() })
            }
            Init::File(p) => serde_json::json!({ "file": p.to_string_lossy() }),
        }
    }

    /// Short human description (`unit_f32`, `values[4]`, `file:x.bin`).
    pub fn describe(&self) -> String {
        match self {
            Init::Named(n) => n.name().to_string(),
            Init::Values(v) => format!("values[{}]", v.len()),
            Init::File(p) => format!("file:{}", p.display()),
        }
    }
}

impl serde::Serialize for Init {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Init {
    /// Paths stay as written (relative to the current directory).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Init, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Init::from_json(&v, Path::new(""))
            .map_err(|(field, msg)| serde::de::Error::custom(if field.is_empty() { msg } else { format!("{field}: {msg}") }))
    }
}

enum Source {
    Named(NamedInit),
    Bytes(Vec<u8>),
    /// Read with positioned reads (`pread`): no seek, no lock, so blocks on several
    /// threads read at once.
    File {
        file: File,
        data_offset: u64,
        path: PathBuf,
        id: u64,
    },
}

/// A buffer's initial contents, computed lazily: a [`Filler`] for the engine.
pub struct BufferInit {
    pub dtype: Dtype,
    pub init: Init,
    pub count: u64,
    byte_len: u64,
    source: Source,
    error: OnceLock<String>,
}

impl std::fmt::Debug for BufferInit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferInit").field("dtype", &self.dtype).field("init", &self.init.describe()).field("count", &self.count).finish()
    }
}

impl BufferInit {
    /// Checks the initialiser against the buffer (values length, raw bits
    /// widths, file size and `.npy` header) and opens files.
    pub fn new(dtype: Dtype, init: Init, count: u64) -> Result<BufferInit, LaunchError> {
        let byte_len = count
            .checked_mul(dtype.size_bytes() as u64)
            .ok_or_else(|| LaunchError::Other(format!("{count} elements of {dtype} overflow 64-bit sizes")))?;
        let source = match &init {
            Init::Named(n) => Source::Named(*n),
            Init::Values(vals) => {
                if vals.len() as u64 != count {
                    return Err(LaunchError::Other(format!("init values has {} elements, the buffer has {count}", vals.len())));
                }
                let mut bytes = Vec::with_capacity(byte_len as usize);
                for (k, v) in vals.iter().enumerate() {
                    check_fits(dtype, *v).map_err(|m| LaunchError::Other(format!("init values[{k}]: {m}")))?;
                    bytes.extend_from_slice(&encode(dtype, *v).to_le_bytes()[..dtype.size_bytes()]);
                }
                Source::Bytes(bytes)
            }
            Init::File(path) => open_file_source(path, dtype, count, byte_len)?,
        };
        Ok(BufferInit { dtype, init, count, byte_len, source, error: OnceLock::new() })
    }

    /// [`BufferInit::new`] for a manifest buffer; errors name the buffer.
    pub fn from_spec(spec: &crate::BufferSpec) -> Result<BufferInit, LaunchError> {
        BufferInit::new(spec.dtype, spec.init.clone(), spec.count).map_err(|e| match e {
            LaunchError::Other(message) => LaunchError::Init { buffer: spec.name.clone(), message },
            other => other,
        })
    }

    /// `count * dtype.size_bytes()`.
    pub fn byte_len(&self) -> u64 {
        self.byte_len
    }

    /// Element `i`'s bits (little-endian, in the low `dtype.bits()`).
    pub fn element(&self, i: u64) -> u64 {
        let mut b = [0u8; 8];
        let n = self.dtype.size_bytes();
        self.fill_bytes(i.saturating_mul(n as u64), &mut b[..n]);
        u64::from_le_bytes(b)
    }

    /// The whole buffer (for small buffers and tests).
    pub fn to_bytes(&self) -> Result<Vec<u8>, LaunchError> {
        let n = usize::try_from(self.byte_len).map_err(|_| LaunchError::Other(format!("{} bytes do not fit in memory", self.byte_len)))?;
        let mut v = Vec::new();
        v.try_reserve_exact(n).map_err(|_| LaunchError::Other(format!("cannot allocate {n} bytes")))?;
        v.resize(n, 0);
        self.fill_bytes(0, &mut v);
        match self.take_error() {
            Some(e) => Err(LaunchError::Other(e)),
            None => Ok(v),
        }
    }

    /// The first I/O error met while filling from a file (after which the
    /// bytes that could not be read were filled with zeros), if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.get().cloned()
    }

    pub fn into_filler(self) -> Arc<dyn Filler> {
        Arc::new(self)
    }

    /// [`Filler::gather_columns32`] through `gather_affine`, 64 elements at a time, narrowed.
    #[cold]
    fn gather_columns32_narrowed(&self, size: u32, first: u64, gap: u64, step: u64, out: &mut [&mut [u32]]) {
        let mut wide = [0u64; 64];
        for (k, col) in out.iter_mut().enumerate() {
            let start = first.wrapping_add(gap.wrapping_mul(k as u64));
            for (c, chunk) in col.chunks_mut(64).enumerate() {
                let wide = &mut wide[..chunk.len()];
                self.gather_affine(size, start.wrapping_add(step.wrapping_mul(c as u64 * 64)), step, wide);
                for (o, &x) in chunk.iter_mut().zip(wide.iter()) {
                    *o = x as u32;
                }
            }
        }
    }

    /// Writes bytes `[offset, offset + out.len())`; bytes past the end are 0.
    pub fn fill_bytes(&self, offset: u64, out: &mut [u8]) {
        let total = self.byte_len;
        let avail = total.saturating_sub(offset).min(out.len() as u64) as usize;
        let (head, tail) = out.split_at_mut(avail);
        tail.fill(0);
        if head.is_empty() {
            return;
        }
        match &self.source {
            Source::Bytes(b) => {
                let o = offset as usize; // offset < total <= b.len()
                head.copy_from_slice(&b[o..o + head.len()]);
            }
            Source::File { file, data_offset, path, id } => {
                let r = read_cached(*id, file, *data_offset, *data_offset + offset, head);
                if let Err(e) = r {
                    head.fill(0);
                    let _ = self.error.set(format!("{}: {e}", path.display()));
                }
            }
            Source::Named(NamedInit::Zeros) => head.fill(0),
            Source::Named(n) => fill_named(*n, self.dtype, offset, head),
        }
    }
}

/// `low[j] = bits(first + j * step)`: a loop on 32-bit values only, kept out
/// of line so that it runs eight lanes to a vector, not four as beside the
/// 64-bit results. The progression is a running sum (one vector add per
/// eight lanes, not a multiply).
#[inline(never)]
fn progression_bits(bits: impl Fn(u32) -> u32, first: u32, step: u32, low: &mut [u32]) {
    let mut x = first;
    for b in low.iter_mut() {
        *b = bits(x);
        x = x.wrapping_add(step);
    }
}

/// [`progression_bits`] for each column `cols[k]`, whose progression starts at
/// `first + k * gap`: a warp's vector load in one call (the constants set up once).
#[inline(never)]
fn progression_columns(bits: impl Fn(u32) -> u32, first: u32, gap: u32, step: u32, cols: &mut [&mut [u32]]) {
    let mut at = first;
    for col in cols.iter_mut() {
        let mut x = at;
        for b in col.iter_mut() {
            *b = bits(x);
            x = x.wrapping_add(step);
        }
        at = at.wrapping_add(gap);
    }
}

/// The (initialiser, dtype) pairs common enough to skip the general value
/// conversion: [`FastElement::bits`] gives an element's bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FastElement {
    Zeros,
    UnitF32,
    UnitF64,
    HashU32,
    Iota32,
    Iota64,
}

impl FastElement {
    fn of(n: NamedInit, dtype: Dtype) -> Option<FastElement> {
        Some(match (n, dtype) {
            (NamedInit::Zeros, _) => FastElement::Zeros,
            (NamedInit::UnitF32, Dtype::F32) => FastElement::UnitF32,
            (NamedInit::UnitF64, Dtype::F64) => FastElement::UnitF64,
            (NamedInit::HashU32, Dtype::I32 | Dtype::U32) => FastElement::HashU32,
            (NamedInit::Iota, Dtype::I32 | Dtype::U32) => FastElement::Iota32,
            (NamedInit::Iota, Dtype::I64 | Dtype::U64) => FastElement::Iota64,
            _ => return None,
        })
    }

    /// Element `i`'s bits.
    #[inline(always)]
    fn bits(self, i: u64) -> u64 {
        match self {
            FastElement::Zeros => 0,
            FastElement::UnitF32 => unit_f32(i).to_bits() as u64,
            FastElement::UnitF64 => unit_f64(i).to_bits(),
            FastElement::HashU32 => hash_u32(i) as u64,
            FastElement::Iota32 => i as u32 as u64,
            FastElement::Iota64 => i,
        }
    }

    /// Element bits from [`progression_bits`]' 32: `unit_f64`'s are
    /// `unit_f32`'s widened (exactly), the rest zero-extended.
    #[inline(always)]
    fn widen(self, low: u32) -> u64 {
        match self {
            FastElement::UnitF64 => (f32::from_bits(low) as f64).to_bits(),
            _ => low as u64,
        }
    }

    /// `out[j]` = the bits of element `offsets[j] >> shift`, in a loop with
    /// `self` a constant (so it vectorises).
    #[inline(always)]
    fn each(self, shift: u32, offsets: &[u64], out: &mut [u64]) {
        for (o, &off) in out.iter_mut().zip(offsets) {
            *o = self.bits(off >> shift);
        }
    }

    /// The low 32 bits of elements `first + k * gap + j * step` into
    /// `out[k][j]` (the whole element for the 32-bit kinds), with `self` a
    /// constant: indices modulo 2^32, eight at a time on vector lanes.
    #[inline(always)]
    fn columns32(self, first: u64, gap: u64, step: u64, out: &mut [&mut [u32]]) {
        let (at, gap32, step32) = (first as u32, gap as u32, step as u32);
        // As in `each_affine`, the hash's first multiply applied to the progressions.
        let hashed = (at.wrapping_mul(HASH_MUL), gap32.wrapping_mul(HASH_MUL), step32.wrapping_mul(HASH_MUL));
        match self {
            FastElement::UnitF32 => progression_columns(|x| unit_of_hash(fmix32(x)).to_bits(), hashed.0, hashed.1, hashed.2, out),
            FastElement::HashU32 => progression_columns(fmix32, hashed.0, hashed.1, hashed.2, out),
            FastElement::Iota32 | FastElement::Iota64 => progression_columns(|i| i, at, gap32, step32, out),
            FastElement::Zeros => out.iter_mut().for_each(|c| c.fill(0)),
            FastElement::UnitF64 => {
                for (k, c) in out.iter_mut().enumerate() {
                    for (j, o) in c.iter_mut().enumerate() {
                        *o = self.bits(first.wrapping_add(gap.wrapping_mul(k as u64)).wrapping_add(step.wrapping_mul(j as u64))) as u32;
                    }
                }
            }
        }
    }

    /// `out[j]` = the bits of element `first + j * step`, with `self` a
    /// constant: indices modulo 2^32 (all but `Iota64` read only those bits),
    /// eight at a time on vector lanes.
    #[inline(always)]
    fn each_affine(self, first: u64, step: u64, out: &mut [u64]) {
        if self == FastElement::Iota64 {
            for (j, o) in out.iter_mut().enumerate() {
                *o = first.wrapping_add(step.wrapping_mul(j as u64));
            }
            return;
        }
        let (mut at, step) = (first as u32, step as u32);
        let mut low = [0u32; 64];
        for o in out.chunks_mut(64) {
            let low = &mut low[..o.len()];
            // One closure type per kind: each its own vectorised loop.
            match self {
                // The hash's first multiply applied to the progression instead of each element:
                // `(at + j * step) * HASH_MUL = at * HASH_MUL + j * (step * HASH_MUL)` modulo 2^32.
                FastElement::UnitF32 | FastElement::UnitF64 => {
                    progression_bits(|x| unit_of_hash(fmix32(x)).to_bits(), at.wrapping_mul(HASH_MUL), step.wrapping_mul(HASH_MUL), low)
                }
                FastElement::HashU32 => progression_bits(fmix32, at.wrapping_mul(HASH_MUL), step.wrapping_mul(HASH_MUL), low),
                FastElement::Iota32 | FastElement::Iota64 => progression_bits(|i| i, at, step, low),
                FastElement::Zeros => low.fill(0),
            }
            for (o, &b) in o.iter_mut().zip(low.iter()) {
                *o = self.widen(b);
            }
            at = at.wrapping_add(step.wrapping_mul(64));
        }
    }
}

fn fill_named(n: NamedInit, dtype: Dtype, offset: u64, out: &mut [u8]) {
    let size = dtype.size_bytes();
    let mut i = offset / size as u64;
    let mut within = (offset % size as u64) as usize;
    let mut k = 0;
    let fast = FastElement::of(n, dtype);
    while k < out.len() {
        let bits = match fast {
            Some(f) => f.bits(i),
            None => encode(dtype, n.value(i)),
        };
        let bytes = bits.to_le_bytes();
        let take = (size - within).min(out.len() - k);
        out[k..k + take].copy_from_slice(&bytes[within..within + take]);
        k += take;
        within = 0;
        i += 1;
    }
}

fn open_file_source(path: &Path, dtype: Dtype, count: u64, byte_len: u64) -> Result<Source, LaunchError> {
    let mut file = File::open(path).map_err(|e| LaunchError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| LaunchError::io(path, e))?.len();
    let is_npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let data_offset = if is_npy {
        let h = crate::npy::read_header(&mut file).map_err(|e| match e {
            crate::npy::NpyError::Io(e) => LaunchError::io(path, e),
            crate::npy::NpyError::Format(m) => LaunchError::Npy { path: path.to_path_buf(), message: m },
        })?;
        if !h.dtype_matches(dtype) {
            return Err(LaunchError::Other(format!("{}: holds {} ('{}'), the buffer is {dtype}", path.display(), h.dtype, h.descr)));
        }
        if h.count != count {
            return Err(LaunchError::Other(format!("{}: holds {} elements, the buffer has {count}", path.display(), h.count)));
        }
        h.data_offset
    } else {
        0
    };
    let data_len = file_len.saturating_sub(data_offset);
    if data_len != byte_len {
        return Err(LaunchError::Other(format!(
            "{}: has {data_len} bytes of data, the buffer needs {byte_len} ({count} x {dtype})",
            path.display()
        )));
    }
    if byte_len <= INLINE_FILE_LIMIT {
        let mut bytes = vec![0u8; byte_len as usize];
        file.seek(SeekFrom::Start(data_offset)).map_err(|e| LaunchError::io(path, e))?;
        file.read_exact(&mut bytes).map_err(|e| LaunchError::io(path, e))?;
        return Ok(Source::Bytes(bytes));
    }
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    Ok(Source::File { file, data_offset, path: path.to_path_buf(), id: NEXT_ID.fetch_add(1, Ordering::Relaxed) })
}

/// Bytes a file source reads at a time into its thread's cache: the engine asks for a warp's
/// bytes at a time, and a system call per warp access made a launch on a 34 MB file 5x slower
/// than the same launch on a named initialiser.
const FILE_CHUNK: u64 = 64 << 10;

thread_local! {
    /// This thread's last chunk of a file source: (source id, file offset, bytes).
    static FILE_CACHE: RefCell<(u64, u64, Vec<u8>)> = const { RefCell::new((0, 0, Vec::new())) };
}

/// Reads `out.len()` bytes at file offset `at` of source `id` (data from `data_offset` on),
/// through this thread's chunk cache.
fn read_cached(id: u64, file: &File, data_offset: u64, at: u64, out: &mut [u8]) -> std::io::Result<()> {
    FILE_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let mut done = 0usize;
        while done < out.len() {
            let pos = at + done as u64;
            let start = data_offset + (pos - data_offset) / FILE_CHUNK * FILE_CHUNK;
            if c.0 != id || c.1 != start || c.2.is_empty() {
                let len = file.metadata()?.len().saturating_sub(start).min(FILE_CHUNK) as usize;
                c.2.resize(len, 0);
                std::os::unix::fs::FileExt::read_exact_at(file, &mut c.2, start)?;
                (c.0, c.1) = (id, start);
            }
            let from = (pos - start) as usize;
            if from >= c.2.len() {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
            }
            let take = (c.2.len() - from).min(out.len() - done);
            out[done..done + take].copy_from_slice(&c.2[from..from + take]);
            done += take;
        }
        Ok(())
    })
}

impl Filler for BufferInit {
    fn fill(&self, byte_offset: u64, out: &mut [u8]) {
        self.fill_bytes(byte_offset, out)
    }

    /// Whole aligned elements of a named initialiser, all inside the buffer,
    /// come from the element function over the index progression.
    fn gather_affine(&self, size: u32, first: u64, step: u64, out: &mut [u64]) {
        let size64 = size as u64;
        let fast = match &self.source {
            Source::Named(n) if size as usize == self.dtype.size_bytes() => FastElement::of(*n, self.dtype),
            _ => None,
        };
        let span = step.checked_mul(out.len().saturating_sub(1) as u64);
        let end = span.and_then(|s| s.checked_add(first)).and_then(|t| t.checked_add(size64));
        match fast {
            Some(f) if (first | step) & (size64 - 1) == 0 && end.is_some_and(|e| e <= self.byte_len) => {
                let shift = size.trailing_zeros();
                let (i, d) = (first >> shift, step >> shift);
                match f {
                    FastElement::Zeros => out.fill(0),
                    FastElement::UnitF32 => FastElement::UnitF32.each_affine(i, d, out),
                    FastElement::UnitF64 => FastElement::UnitF64.each_affine(i, d, out),
                    FastElement::HashU32 => FastElement::HashU32.each_affine(i, d, out),
                    FastElement::Iota32 => FastElement::Iota32.each_affine(i, d, out),
                    FastElement::Iota64 => FastElement::Iota64.each_affine(i, d, out),
                }
            }
            _ => warpsim_engine::memory::gather_progression(self, size, first, step, out),
        }
    }

    fn gather_affine32(&self, size: u32, first: u64, step: u64, out: &mut [u32]) {
        self.gather_columns32(size, first, 0, step, &mut [out])
    }

    /// 32-bit elements of a named initialiser, aligned and inside the buffer,
    /// come from the element function straight into the columns; the rest as
    /// `gather_affine`'s, narrowed.
    fn gather_columns32(&self, size: u32, first: u64, gap: u64, step: u64, out: &mut [&mut [u32]]) {
        let fast = match &self.source {
            Source::Named(n) if size == 4 && self.dtype.size_bytes() == 4 => FastElement::of(*n, self.dtype),
            _ => None,
        };
        // Every column as long as the first; the last column's last element ends inside the buffer.
        let len = out.first().map_or(0, |c| c.len());
        let last = gap.checked_mul(out.len().saturating_sub(1) as u64).and_then(|g| g.checked_add(first));
        let end = step.checked_mul(len.saturating_sub(1) as u64).and_then(|s| s.checked_add(last?)).and_then(|t| t.checked_add(4));
        match fast {
            Some(f) if (first | gap | step) & 3 == 0 && end.is_some_and(|e| e <= self.byte_len) && out.iter().all(|c| c.len() == len) => {
                let (i, g, d) = (first >> 2, gap >> 2, step >> 2);
                match f {
                    FastElement::UnitF32 => FastElement::UnitF32.columns32(i, g, d, out),
                    FastElement::HashU32 => FastElement::HashU32.columns32(i, g, d, out),
                    FastElement::Iota32 => FastElement::Iota32.columns32(i, g, d, out),
                    other => other.columns32(i, g, d, out),
                }
            }
            _ => self.gather_columns32_narrowed(size, first, gap, step, out),
        }
    }

    /// Whole aligned elements of a named initialiser come straight from its
    /// element function, inline bytes straight from the bytes; the rest byte by byte.
    fn gather(&self, size: u32, offsets: &[u64], out: &mut [u64]) {
        let size64 = size as u64;
        let fast = match &self.source {
            Source::Named(n) if size as usize == self.dtype.size_bytes() => FastElement::of(*n, self.dtype),
            _ => None,
        };
        let in_bounds = |off: u64| off.checked_add(size64).is_some_and(|end| end <= self.byte_len);
        if let Some(f) = fast {
            // `size` is a power of two: a mask, not a division, per offset; one branch for all.
            let (misaligned, top) = offsets.iter().fold((0u64, 0u64), |(m, t), &off| (m | off & (size64 - 1), t.max(off)));
            if misaligned == 0 && in_bounds(top) {
                let shift = size.trailing_zeros();
                match f {
                    FastElement::Zeros => out.fill(0),
                    FastElement::UnitF32 => FastElement::UnitF32.each(shift, offsets, out),
                    FastElement::UnitF64 => FastElement::UnitF64.each(shift, offsets, out),
                    FastElement::HashU32 => FastElement::HashU32.each(shift, offsets, out),
                    FastElement::Iota32 => FastElement::Iota32.each(shift, offsets, out),
                    FastElement::Iota64 => FastElement::Iota64.each(shift, offsets, out),
                }
                return;
            }
        }
        for (o, &off) in out.iter_mut().zip(offsets) {
            let mut x = [0u8; 8];
            match &self.source {
                Source::Bytes(b) if in_bounds(off) => x[..size as usize].copy_from_slice(&b[off as usize..(off + size64) as usize]),
                _ => self.fill_bytes(off, &mut x[..size as usize]),
            }
            *o = u64::from_le_bytes(x);
        }
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn fast_elements_equal_the_general_conversion() {
        for n in NamedInit::ALL {
            for d in Dtype::ALL {
                if let Some(f) = FastElement::of(n, d) {
                    for i in [0u64, 1, 2, 3, 1000, 1 << 20, (1 << 32) + 5] {
                        assert_eq!(f.bits(i), encode(d, n.value(i)), "{n:?} {d:?} {i}");
                    }
                }
            }
        }
    }

    /// `each(init, dtype, buffer, size)` for every named initialiser and a
    /// list of values, every dtype that takes it, and every access size.
    fn each_buffer(count: u64, mut each: impl FnMut(&Init, Dtype, &BufferInit, u32)) {
        let values = Init::Values((0..count as i64).map(|i| Value::Int(i as i128 * 3)).collect());
        for init in NamedInit::ALL.iter().map(|n| Init::Named(*n)).chain([values]) {
            for d in Dtype::ALL {
                let Ok(b) = BufferInit::new(d, init.clone(), count) else { continue };
                for size in [1u32, 2, 4, 8] {
                    each(&init, d, &b, size);
                }
            }
        }
    }

    #[test]
    fn gather_equals_fill() {
        each_buffer(10, |init, d, b, size| {
            // In bounds and aligned (the fast path), then with one past the end and one misaligned.
            let inside: Vec<u64> = (0..10 * d.size_bytes() as u64 / size as u64).rev().map(|k| k * size as u64).collect();
            let outside = inside.iter().copied().chain([!(size as u64 - 1), 1]);
            for offs in [inside.clone(), outside.collect()] {
                let mut got = vec![0; offs.len()];
                b.gather(size, &offs, &mut got);
                for (&o, &g) in offs.iter().zip(&got) {
                    let mut x = [0u8; 8];
                    b.fill(o, &mut x[..size as usize]);
                    assert_eq!(g, u64::from_le_bytes(x), "{init:?} {d:?} size {size} offset {o}");
                }
            }
        });
    }

    /// A progression gives what `gather` gives at the same offsets: aligned and in
    /// bounds (the vector path, with a remainder), misaligned, past the end and wrapping.
    #[test]
    fn gather_affine_equals_gather() {
        each_buffer(40, |init, d, b, size| {
            let sz = d.size_bytes() as u64;
            let cases =
                [(0, sz), (sz, 2 * sz), (3 * sz, 0), (1, sz), (0, sz + 1), (sz * 20, sz), (sz * 39, sz.wrapping_neg()), (u64::MAX - 3, 8)];
            for (first, step) in cases {
                for len in [1usize, 8, 13, 32, 70] {
                    let mut got = vec![0; len];
                    b.gather_affine(size, first, step, &mut got);
                    let offs: Vec<u64> = (0..len as u64).map(|j| first.wrapping_add(step.wrapping_mul(j))).collect();
                    let mut want = vec![0; len];
                    b.gather(size, &offs, &mut want);
                    assert_eq!(got, want, "{init:?} {d:?} size {size} first {first} step {step} len {len}");
                    if size <= 4 {
                        let mut got32 = vec![0u32; len];
                        b.gather_affine32(size, first, step, &mut got32);
                        let want32: Vec<u32> = want.iter().map(|&x| x as u32).collect();
                        assert_eq!(got32, want32, "32-bit: {init:?} {d:?} size {size} first {first} step {step} len {len}");
                        // Columns `gap` apart, as a vector load asks: each column its own progression.
                        for (ncols, gap) in [(2usize, size as u64), (4, size as u64), (3, 40 * sz), (4, 1)] {
                            let mut cols = vec![vec![0u32; len]; ncols];
                            b.gather_columns32(size, first, gap, step, &mut cols.iter_mut().map(|c| c.as_mut_slice()).collect::<Vec<_>>());
                            for (k, col) in cols.iter().enumerate() {
                                let mut want = vec![0u32; len];
                                b.gather_affine32(size, first.wrapping_add(k as u64 * gap), step, &mut want);
                                assert_eq!(
                                    col, &want,
                                    "column {k} of {ncols}, gap {gap}: {init:?} {d:?} size {size} first {first} step {step}"
                                );
                            }
                        }
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const UNIT_F32_1: f64 = 0.07026684284210205;

    #[test]
    fn readme_check_values() {
        assert_eq!(hash_u32(0), 0x0000_0000);
        assert_eq!(hash_u32(1), 0x11FD_02EB);
        assert_eq!(hash_u32(2), 0xBB2A_AFDE);
        assert_eq!(hash_u32(3), 0xD6A3_DEEC);
        // The README's value is exact in f32 (and printed as an f64).
        assert_eq!(unit_f32(1) as f64, UNIT_F32_1);
        assert_eq!(unit_f64(1), UNIT_F32_1);
        // index arithmetic is modulo 2^32
        assert_eq!(hash_u32(1 << 32 | 1), hash_u32(1));
    }

    fn bytes_of(d: Dtype, init: NamedInit, count: u64) -> Vec<u8> {
        BufferInit::new(d, Init::Named(init), count).unwrap().to_bytes().unwrap()
    }

    #[test]
    fn named_inits_per_dtype() {
        let b = bytes_of(Dtype::U32, NamedInit::HashU32, 4);
        assert_eq!(b[4..8], 0x11FD_02EBu32.to_le_bytes());
        let b = bytes_of(Dtype::I32, NamedInit::HashU32, 4);
        assert_eq!(b[8..12], 0xBB2A_AFDEu32.to_le_bytes()); // the same 32 bits
        let b = bytes_of(Dtype::U8, NamedInit::HashU32, 2);
        assert_eq!(b, [0x00, 0xEB]);
        let b = bytes_of(Dtype::I64, NamedInit::HashU32, 3);
        assert_eq!(b[16..24], 0xBB2A_AFDEu64.to_le_bytes()); // the value, zero-extended
        let b = bytes_of(Dtype::U8, NamedInit::Iota, 300);
        assert_eq!(b[299], (299 % 256) as u8);
        let b = bytes_of(Dtype::F16, NamedInit::Iota, 3000);
        let v = |i: usize| half::f16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f32();
        assert_eq!(v(2049), 2048.0);
        assert_eq!(v(2051), 2052.0);
        let b = bytes_of(Dtype::F32, NamedInit::UnitF32, 2);
        assert_eq!(f32::from_le_bytes(b[4..8].try_into().unwrap()) as f64, UNIT_F32_1);
        let b = bytes_of(Dtype::F64, NamedInit::UnitF64, 2);
        assert_eq!(f64::from_le_bytes(b[8..16].try_into().unwrap()), UNIT_F32_1);
        let b = bytes_of(Dtype::F16, NamedInit::SymF16, 2);
        let want = half::f16::from_f32(UNIT_F32_1 as f32 - 0.5);
        assert_eq!(b[2..4], want.to_le_bytes());
        assert_eq!(b[0..2], half::f16::from_f32(-0.5).to_le_bytes());
        // sym_f16 into f32 is the f16 value, exactly
        let b = bytes_of(Dtype::F32, NamedInit::SymF16, 2);
        assert_eq!(f32::from_le_bytes(b[4..8].try_into().unwrap()), want.to_f32());
        // floats into integers truncate toward zero
        assert!(bytes_of(Dtype::I32, NamedInit::UnitF32, 100).iter().all(|&x| x == 0));
        // bf16 from unit_f32 rounds to nearest even
        let b = bytes_of(Dtype::Bf16, NamedInit::UnitF32, 2);
        assert_eq!(b[2..4], half::bf16::from_f32(unit_f32(1)).to_le_bytes());
        assert!(bytes_of(Dtype::F64, NamedInit::Zeros, 10).iter().all(|&x| x == 0));
    }

    #[test]
    fn values_and_errors() {
        let init = Init::Values(vec![Value::Int(-1), Value::Float(1.5), Value::Bits(0x7fff)]);
        let b = BufferInit::new(Dtype::I16, init.clone(), 3).unwrap().to_bytes().unwrap();
        assert_eq!(b, [0xff, 0xff, 1, 0, 0xff, 0x7f]);
        let f = BufferInit::new(Dtype::F16, init.clone(), 3).unwrap();
        assert_eq!(f.element(0), 0xbc00);
        assert_eq!(f.element(1), 0x3e00);
        assert_eq!(f.element(2), 0x7fff);
        assert!(BufferInit::new(Dtype::I16, init.clone(), 4).is_err());
        assert!(BufferInit::new(Dtype::U8, init, 3).is_err()); // 0x7fff does not fit
        assert!(BufferInit::new(Dtype::U64, Init::Named(NamedInit::Iota), u64::MAX).is_err());
        let e = BufferInit::new(Dtype::U8, Init::File("/nonexistent/x.bin".into()), 3).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.bin"), "{e}");
    }

    #[test]
    fn files_raw_and_npy() {
        let dir = std::env::temp_dir().join(format!("warpsim-launch-init-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = dir.join("a.bin");
        let data: Vec<u8> = (0..16u8).collect();
        std::fs::write(&raw, &data).unwrap();
        let bi = BufferInit::new(Dtype::U32, Init::File(raw.clone()), 4).unwrap();
        assert_eq!(bi.to_bytes().unwrap(), data);
        let mut part = [0u8; 5];
        bi.fill(3, &mut part);
        assert_eq!(part, [3, 4, 5, 6, 7]);
        assert!(BufferInit::new(Dtype::U32, Init::File(raw.clone()), 5).is_err());
        let npy = dir.join("a.npy");
        crate::npy::write_npy_file(&npy, Dtype::U32, &data).unwrap();
        let bi = BufferInit::new(Dtype::U32, Init::File(npy.clone()), 4).unwrap();
        assert_eq!(bi.to_bytes().unwrap(), data);
        assert!(BufferInit::new(Dtype::F32, Init::File(npy.clone()), 4).is_err());
        assert!(BufferInit::new(Dtype::U32, Init::File(npy), 3).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn file_reads_across_chunks_and_between_two_files_on_one_thread() {
        let dir = std::env::temp_dir().join(format!("warpsim-launch-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let n = (3 * FILE_CHUNK / 4 + 5) as usize; // u32s: 3 chunks and a bit
        let (pa, pb) = (dir.join("a.npy"), dir.join("b.npy"));
        let a: Vec<u8> = (0..n as u32).flat_map(|v| v.to_le_bytes()).collect();
        let b: Vec<u8> = (0..n as u32).flat_map(|v| (v ^ 0xDEAD_BEEF).to_le_bytes()).collect();
        crate::npy::write_npy_file(&pa, Dtype::U32, &a).unwrap();
        crate::npy::write_npy_file(&pb, Dtype::U32, &b).unwrap();
        let (ia, ib) = (
            BufferInit::new(Dtype::U32, Init::File(pa), n as u64).unwrap(),
            BufferInit::new(Dtype::U32, Init::File(pb), n as u64).unwrap(),
        );
        for off in [0u64, FILE_CHUNK - 3, FILE_CHUNK, 2 * FILE_CHUNK - 100, a.len() as u64 - 7] {
            let mut x = [0u8; 200];
            let mut y = [0u8; 200];
            ia.fill(off, &mut x);
            ib.fill(off, &mut y);
            let end = (off as usize + 200).min(a.len());
            let len = end - off as usize;
            assert_eq!(&x[..len], &a[off as usize..end], "a at {off}");
            assert_eq!(&y[..len], &b[off as usize..end], "b at {off}");
            assert!(x[len..].iter().all(|&v| v == 0), "past the end reads zeros");
        }
        assert!(ia.error.get().is_none() && ib.error.get().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn big_buffer_is_lazy() {
        // 4 GiB of f32 through the engine's memory: only touched pages exist.
        let bi = BufferInit::new(Dtype::F32, Init::Named(NamedInit::UnitF32), 1 << 30).unwrap();
        assert_eq!(bi.byte_len(), 4 << 30);
        let mut m = warpsim_engine::memory::GlobalMemory::new();
        let a = m.alloc("in", bi.byte_len(), Some(bi.into_filler()));
        let i = (1u64 << 30) - 1;
        let v = m.load(a + 4 * i, 4).unwrap();
        assert_eq!(v as u32, unit_f32(i).to_bits());
        let mut b = [0u8; 4];
        m.read(a + 4 * 12345, &mut b).unwrap();
        assert_eq!(f32::from_le_bytes(b), unit_f32(12345));
        // Loads read through the filler; only a store materialises a page.
        assert_eq!(m.resident_bytes(), 0);
        m.store(a + 4 * i, 4, 7).unwrap();
        assert_eq!(m.resident_bytes(), warpsim_engine::memory::PAGE_SIZE);
        assert_eq!(m.load(a + 4 * i, 4), Ok(7));
        assert_eq!(m.load(a + 4 * (i - 1), 4).unwrap() as u32, unit_f32(i - 1).to_bits());
    }

    fn arb_init() -> impl Strategy<Value = NamedInit> {
        prop::sample::select(NamedInit::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn any_byte_range_matches_whole(
            d in prop::sample::select(Dtype::ALL.to_vec()),
            n in arb_init(),
            count in 1u64..200,
            off in 0u64..2000,
            len in 0usize..100,
        ) {
            let bi = BufferInit::new(d, Init::Named(n), count).unwrap();
            let whole = bi.to_bytes().unwrap();
            let mut out = vec![0xAAu8; len];
            bi.fill(off, &mut out);
            for (k, b) in out.iter().enumerate() {
                let want = whole.get(off as usize + k).copied().unwrap_or(0);
                prop_assert_eq!(*b, want);
            }
            for i in 0..count {
                let s = d.size_bytes();
                let mut e = [0u8; 8];
                e[..s].copy_from_slice(&whole[i as usize * s..(i as usize + 1) * s]);
                prop_assert_eq!(bi.element(i), u64::from_le_bytes(e));
                prop_assert_eq!(bi.element(i), encode(d, n.value(i)));
            }
        }
    }
}

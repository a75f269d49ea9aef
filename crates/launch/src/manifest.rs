//! The launch manifest: `{note?, gpu?, cases: [...]}`, as the corpus README
//! defines it.
//!
//! The manifest is read as JSON and then converted field by field, so that
//! every error names the case and the field:
//! `case "warp_sum": params[1].dtype: unknown dtype "f128"`. Relative paths
//! (`ptx`, init and expected files) are resolved against the manifest's folder
//! by [`load_manifest`]; [`Manifest::from_json`] takes the folder explicitly.
//!
//! Lenient where the README is: `grid`/`block` may be shorter than three (or a
//! bare number; missing dimensions are 1), `dynamic_shared_bytes` defaults to 0,
//! `expect` and any of its entries may be absent or null, a buffer's `init`
//! defaults to `zeros` and its `role` to `inout`, and unknown keys are ignored.
//! Strict where a mistake would silently change the launch: unknown dtypes,
//! inits, roles and kinds, zero or over-limit launch dimensions, scalar values
//! out of their type's range, duplicate names, expectations that name no buffer
//! or disagree with its dtype or count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as J};

use crate::init::Init;
use crate::value::{decode_f64, decode_int, json_kind, scalar_bits, Value, ValueError};
use crate::{Dtype, LaunchError};

/// Device memory of the H200 as `nvidia-smi` reports it (143771 MiB): no single
/// buffer, and no case's buffers together, may be larger.
pub const MAX_DEVICE_BYTES: u64 = 143_771 << 20;

/// The text of the one property the corpus uses.
pub const WARP_UNIFORM_CLOCK_TEXT: &str = "every lane of a warp reads the same clock64 value";

/// A parsed manifest file.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub note: Option<String>,
    pub gpu: Option<String>,
    pub cases: Vec<Case>,
    /// The folder relative paths were resolved against.
    pub dir: PathBuf,
}

/// One launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    /// The PTX file, resolved against the manifest's folder.
    pub ptx: PathBuf,
    /// The `.entry` to launch.
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// The kernel's parameters, in order.
    pub params: Vec<ParamSpec>,
    /// Buffer name -> what it must hold afterwards. Buffers without an entry
    /// (or with a null one) are not checked.
    pub expect: BTreeMap<String, Expectation>,
    /// For the deliberately buggy kernels: the class of bug and what
    /// compute-sanitizer said, kept as written.
    pub expect_diagnostic: Option<J>,
    /// What the H200 measured, kept as written; see [`Case::h200_ncu`].
    pub h200: Option<J>,
}

/// A kernel parameter: the same type for the manifest and the command line.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamSpec {
    Scalar(ScalarParam),
    Buffer(BufferSpec),
    /// A C struct passed by value: its fields in order, laid out as C does.
    Struct(StructParam),
}

/// A struct parameter: scalar fields, each at its natural alignment, the whole
/// padded to the largest alignment (the layout nvcc and clang give a plain C struct).
#[derive(Clone, Debug, PartialEq)]
pub struct StructParam {
    pub name: Option<String>,
    /// Fields of any element type (`u8` ... `f64`, `f16`); their names are not kept.
    pub fields: Vec<ScalarParam>,
}

impl StructParam {
    /// The struct's bytes as the kernel reads them, and its alignment.
    pub fn layout(&self) -> (Vec<u8>, usize) {
        let mut bytes = Vec::new();
        let mut align = 1;
        for f in &self.fields {
            let n = f.ty.size_bytes();
            align = align.max(n);
            bytes.resize(bytes.len().next_multiple_of(n), 0);
            bytes.extend_from_slice(&f.bits.to_le_bytes()[..n]);
        }
        bytes.resize(bytes.len().next_multiple_of(align), 0);
        (bytes, align)
    }
}

/// A scalar parameter, held as the exact bits passed to the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarParam {
    /// Optional; the corpus does not name scalars.
    pub name: Option<String>,
    /// One of `i32 u32 i64 u64 f32 f64`.
    pub ty: Dtype,
    /// Little-endian bits in the low `ty.bits()`.
    pub bits: u64,
}

/// A buffer parameter: a fresh allocation passed as a 64-bit global address.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    pub name: String,
    pub dtype: Dtype,
    pub count: u64,
    pub init: Init,
    pub role: Role,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    In,
    Out,
    Inout,
}

/// A property an output must have instead of a value it must equal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// u64 per thread: every lane of a warp (consecutive groups of 32 threads
    /// of a block) holds the same value (`clock64` read by the whole warp at once).
    WarpUniformClock,
}

/// What one output buffer must hold.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Expectation {
    pub dtype: Option<Dtype>,
    pub count: Option<u64>,
    /// Lowercase hex SHA-256 of the little-endian bytes.
    pub sha256: Option<String>,
    /// Raw little-endian expected bytes, resolved against the manifest's folder.
    pub file: Option<PathBuf>,
    /// `||out - ref|| / ||ref|| <= rel_tol`; 0 means exact bytes.
    pub rel_tol: Option<f64>,
    pub property: Option<Property>,
    /// For the clock property: how many distinct values the H200's block saw.
    pub h200_distinct_values: Option<u64>,
    /// For the clock property: warps per block.
    pub warps: Option<u64>,
}

/// Reads, validates and resolves a manifest file. Besides the format, checks
/// that every init and expected file exists and has the right size.
pub fn load_manifest(path: impl AsRef<Path>) -> Result<Manifest, LaunchError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| LaunchError::io(path, e))?;
    let v: J = serde_json::from_str(&text).map_err(|e| LaunchError::Json { path: path.to_path_buf(), source: e })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let m = Manifest::from_json(&v, &dir)?;
    m.check_files()?;
    Ok(m)
}

/// Why `name` cannot name a buffer, if it cannot: output buffers are written
/// as `NAME.npy` in the output folder, so a name must be one plain file name.
pub fn bad_buffer_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("empty")
    } else if name.contains(['/', '\\']) {
        Some("a buffer name is used as a file name and may not contain '/' or '\\'")
    } else if name.contains("..") {
        Some("a buffer name is used as a file name and may not contain '..'")
    } else if name.chars().any(char::is_control) {
        Some("a buffer name may not contain control characters")
    } else {
        None
    }
}

// ---------------------------------------------------------------- errors

#[derive(Clone, Copy)]
struct Ctx<'a> {
    case: Option<&'a str>,
    index: Option<usize>,
}

impl Ctx<'_> {
    fn err(&self, field: impl Into<String>, message: impl std::fmt::Display) -> LaunchError {
        LaunchError::Manifest { case: self.case.map(str::to_string), index: self.index, field: field.into(), message: message.to_string() }
    }
}

fn join_field(prefix: &str, sub: &str) -> String {
    match (prefix.is_empty(), sub.is_empty()) {
        (_, true) => prefix.to_string(),
        (true, false) => sub.to_string(),
        (false, false) if sub.starts_with('[') => format!("{prefix}{sub}"),
        (false, false) => format!("{prefix}.{sub}"),
    }
}

/// A JSON non-negative integer (integral floats accepted).
fn as_u64(v: &J) -> Result<u64, ValueError> {
    match v {
        J::Number(n) => {
            if let Some(u) = n.as_u64() {
                Ok(u)
            } else if n.as_i64().is_some() {
                Err(ValueError::Negative(n.to_string()))
            } else {
                match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Ok(f as u64),
                    _ => Err(ValueError::NotACount(n.to_string())),
                }
            }
        }
        other => Err(ValueError::Kind { expected: "a non-negative integer", found: json_kind(other) }),
    }
}

fn as_str(v: &J) -> Result<&str, ValueError> {
    v.as_str().ok_or_else(|| ValueError::Kind { expected: "a string", found: json_kind(v) })
}

fn as_object(v: &J) -> Result<&Map<String, J>, ValueError> {
    v.as_object().ok_or_else(|| ValueError::Kind { expected: "an object", found: json_kind(v) })
}

/// A present, non-null field.
fn field<'v>(m: &'v Map<String, J>, k: &str) -> Option<&'v J> {
    m.get(k).filter(|v| !v.is_null())
}

// ---------------------------------------------------------------- manifest

impl Manifest {
    /// Converts and validates a parsed manifest; relative paths are joined to `dir`.
    /// Does not touch the file system (see [`Manifest::check_files`]).
    pub fn from_json(v: &J, dir: &Path) -> Result<Manifest, LaunchError> {
        let top = Ctx { case: None, index: None };
        let m = as_object(v).map_err(|e| top.err("", format!("manifest: {e}")))?;
        let opt_string = |k: &str| -> Result<Option<String>, LaunchError> {
            field(m, k).map(|v| as_str(v).map(str::to_string).map_err(|e| top.err(k, e))).transpose()
        };
        let note = opt_string("note")?;
        let gpu = opt_string("gpu")?;
        let cases_v = field(m, "cases").ok_or_else(|| top.err("cases", "missing"))?;
        let arr = cases_v.as_array().ok_or_else(|| top.err("cases", format!("expected an array, found {}", json_kind(cases_v))))?;
        let mut cases: Vec<Case> = Vec::with_capacity(arr.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, cv) in arr.iter().enumerate() {
            let c = Case::from_json_at(cv, dir, Some(i))?;
            if let Some(j) = seen.insert(c.name.clone(), i) {
                let ctx = Ctx { case: Some(&c.name), index: Some(i) };
                return Err(ctx.err("name", format!("duplicate case name (also cases[{j}])")));
            }
            cases.push(c);
        }
        Ok(Manifest { note, gpu, cases, dir: dir.to_path_buf() })
    }

    /// Parses manifest text; relative paths are joined to `dir`.
    pub fn from_json_str(text: &str, dir: &Path) -> Result<Manifest, LaunchError> {
        let v: J = serde_json::from_str(text).map_err(|e| LaunchError::Json { path: PathBuf::from("<manifest>"), source: e })?;
        Manifest::from_json(&v, dir)
    }

    /// Checks every case's files (see [`Case::check_files`]).
    pub fn check_files(&self) -> Result<(), LaunchError> {
        self.cases.iter().enumerate().try_for_each(|(i, c)| c.check_files_at(Some(i)))
    }

    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.name == name)
    }

    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        if let Some(n) = &self.note {
            m.insert("note".into(), n.clone().into());
        }
        if let Some(g) = &self.gpu {
            m.insert("gpu".into(), g.clone().into());
        }
        m.insert("cases".into(), J::Array(self.cases.iter().map(Case::to_json).collect()));
        J::Object(m)
    }
}

// ---------------------------------------------------------------- case

const BLOCK_MAX: [u32; 3] = [1024, 1024, 64];
const GRID_MAX: [u32; 3] = [i32::MAX as u32, 65535, 65535];

fn parse_dims(v: &J) -> Result<[u32; 3], ValueError> {
    let items: Vec<&J> = match v {
        J::Array(a) => a.iter().collect(),
        J::Number(_) => vec![v],
        other => return Err(ValueError::Kind { expected: "[x, y, z]", found: json_kind(other) }),
    };
    if items.len() > 3 {
        return Err(ValueError::TooManyDims(items.len()));
    }
    let mut d = [1u32; 3];
    for (index, it) in items.iter().enumerate() {
        let n = as_u64(it).map_err(|e| ValueError::Dim { index, source: Box::new(e) })?;
        d[index] = u32::try_from(n).map_err(|_| ValueError::DimTooLarge { index, value: n })?;
    }
    Ok(d)
}

impl Case {
    /// Converts one case; relative paths are joined to `dir`.
    pub fn from_json(v: &J, dir: &Path) -> Result<Case, LaunchError> {
        Case::from_json_at(v, dir, None)
    }

    fn from_json_at(v: &J, dir: &Path, index: Option<usize>) -> Result<Case, LaunchError> {
        let ctx0 = Ctx { case: None, index };
        let m = as_object(v).map_err(|e| ctx0.err("", e))?;
        let name = match field(m, "name") {
            None => return Err(ctx0.err("name", "missing")),
            Some(n) => as_str(n).map_err(|e| ctx0.err("name", e))?.to_string(),
        };
        if name.is_empty() {
            return Err(ctx0.err("name", "empty"));
        }
        let ctx = Ctx { case: Some(&name), index };
        let req_str = |k: &str| -> Result<&str, LaunchError> {
            let v = field(m, k).ok_or_else(|| ctx.err(k, "missing"))?;
            let s = as_str(v).map_err(|e| ctx.err(k, e))?;
            if s.is_empty() {
                return Err(ctx.err(k, "empty"));
            }
            Ok(s)
        };
        let ptx = dir.join(req_str("ptx")?);
        let kernel = req_str("kernel")?.to_string();

        let dims = |k: &str, max: [u32; 3]| -> Result<[u32; 3], LaunchError> {
            let v = field(m, k).ok_or_else(|| ctx.err(k, "missing"))?;
            let d = parse_dims(v).map_err(|e| ctx.err(k, e))?;
            if d.contains(&0) {
                return Err(ctx.err(k, format!("zero-sized {k} {d:?}: every dimension must be at least 1")));
            }
            for a in 0..3 {
                if d[a] > max[a] {
                    return Err(ctx.err(format!("{k}[{a}]"), format!("{} exceeds the limit {}", d[a], max[a])));
                }
            }
            Ok(d)
        };
        let grid = dims("grid", GRID_MAX)?;
        let block = dims("block", BLOCK_MAX)?;
        let threads = block.iter().map(|&x| x as u64).product::<u64>();
        if threads > 1024 {
            return Err(ctx.err("block", format!("{block:?} is {threads} threads, more than 1024")));
        }
        let dynamic_shared_bytes = match field(m, "dynamic_shared_bytes") {
            None => 0,
            Some(v) => {
                let n = as_u64(v).map_err(|e| ctx.err("dynamic_shared_bytes", e))?;
                u32::try_from(n).map_err(|_| ctx.err("dynamic_shared_bytes", format!("{n} is too large")))?
            }
        };

        let params = match field(m, "params") {
            None => Vec::new(),
            Some(pv) => {
                let arr = pv.as_array().ok_or_else(|| ctx.err("params", format!("expected an array, found {}", json_kind(pv))))?;
                let mut out = Vec::with_capacity(arr.len());
                for (k, p) in arr.iter().enumerate() {
                    let p = ParamSpec::from_json(p, dir).map_err(|(f, msg)| ctx.err(join_field(&format!("params[{k}]"), &f), msg))?;
                    out.push(p);
                }
                out
            }
        };
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        let mut total: u64 = 0;
        for (k, p) in params.iter().enumerate() {
            let pname = match p {
                ParamSpec::Buffer(b) => {
                    total = total.saturating_add(b.byte_len());
                    Some(b.name.as_str())
                }
                ParamSpec::Scalar(s) => s.name.as_deref(),
                ParamSpec::Struct(s) => s.name.as_deref(),
            };
            if let Some(n) = pname {
                if let Some(j) = names.insert(n, k) {
                    return Err(ctx.err(format!("params[{k}].name"), format!("duplicate parameter name {n:?} (also params[{j}])")));
                }
            }
        }
        if total > MAX_DEVICE_BYTES {
            return Err(ctx.err("params", format!("buffers total {total} bytes, more than the H200's {MAX_DEVICE_BYTES}")));
        }

        let mut expect = BTreeMap::new();
        if let Some(ev) = field(m, "expect") {
            let em = as_object(ev).map_err(|e| ctx.err("expect", e))?;
            for (bname, entry) in em {
                if entry.is_null() {
                    continue;
                }
                let f = format!("expect.{bname}");
                let buf = params.iter().find_map(|p| match p {
                    ParamSpec::Buffer(b) if b.name == *bname => Some(b),
                    _ => None,
                });
                let buf = buf.ok_or_else(|| ctx.err(&f, format!("no buffer parameter named {bname:?}")))?;
                let e = Expectation::from_json(entry, dir, buf).map_err(|(sub, msg)| ctx.err(join_field(&f, &sub), msg))?;
                expect.insert(bname.clone(), e);
            }
        }

        let expect_diagnostic = field(m, "expect_diagnostic").cloned();
        let h200 = field(m, "h200").cloned();
        if let Some(h) = &h200 {
            let hm = as_object(h).map_err(|e| ctx.err("h200", e))?;
            if let Some(ncu) = field(hm, "ncu") {
                let nm = as_object(ncu).map_err(|e| ctx.err("h200.ncu", e))?;
                for (k, v) in nm {
                    if !(v.is_number() || v.is_null()) {
                        return Err(ctx.err(format!("h200.ncu.{k}"), format!("expected a number, found {}", json_kind(v))));
                    }
                }
            }
        }

        Ok(Case { name, ptx, kernel, grid, block, dynamic_shared_bytes, params, expect, expect_diagnostic, h200 })
    }

    /// Checks that init files and expected files exist and have the right size
    /// (and that `.npy` inits have the right dtype and count).
    pub fn check_files(&self) -> Result<(), LaunchError> {
        self.check_files_at(None)
    }

    fn check_files_at(&self, index: Option<usize>) -> Result<(), LaunchError> {
        let ctx = Ctx { case: Some(&self.name), index };
        for (k, p) in self.params.iter().enumerate() {
            if let ParamSpec::Buffer(b) = p {
                if let Init::File(_) = b.init {
                    crate::init::BufferInit::new(b.dtype, b.init.clone(), b.count).map_err(|e| {
                        let msg = match e {
                            LaunchError::Other(m) => m,
                            other => other.to_string(),
                        };
                        ctx.err(format!("params[{k}].init.file"), msg)
                    })?;
                }
            }
        }
        for (name, e) in &self.expect {
            let Some(f) = &e.file else { continue };
            let field = format!("expect.{name}.file");
            let meta = std::fs::metadata(f).map_err(|err| ctx.err(&field, format!("{}: {err}", f.display())))?;
            if let Some(b) = self.buffer(name) {
                if meta.len() != b.byte_len() {
                    return Err(ctx.err(
                        &field,
                        format!("{} has {} bytes, the buffer has {} ({} x {})", f.display(), meta.len(), b.byte_len(), b.count, b.dtype),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The buffer parameter called `name`.
    pub fn buffer(&self, name: &str) -> Option<&BufferSpec> {
        self.buffers().find(|b| b.name == name)
    }

    pub fn buffers(&self) -> impl Iterator<Item = &BufferSpec> {
        self.params.iter().filter_map(ParamSpec::as_buffer)
    }

    /// Threads per block.
    pub fn block_threads(&self) -> u64 {
        self.block.iter().map(|&x| x as u64).product()
    }

    /// Blocks in the grid.
    pub fn grid_blocks(&self) -> u64 {
        self.grid.iter().map(|&x| x as u64).product()
    }

    /// `h200.ncu`: metric name -> value (empty when absent; null metrics left out).
    pub fn h200_ncu(&self) -> BTreeMap<String, f64> {
        self.h200
            .as_ref()
            .and_then(|h| h.get("ncu"))
            .and_then(J::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()?))).collect())
            .unwrap_or_default()
    }

    /// One Nsight Compute metric of the H200 launch.
    pub fn ncu_metric(&self, metric: &str) -> Option<f64> {
        self.h200.as_ref()?.get("ncu")?.get(metric)?.as_f64()
    }

    /// `h200.time_us_median`.
    pub fn h200_time_us(&self) -> Option<f64> {
        self.h200.as_ref()?.get("time_us_median")?.as_f64()
    }

    /// `h200.num_regs`.
    pub fn h200_num_regs(&self) -> Option<u64> {
        self.h200.as_ref()?.get("num_regs")?.as_u64()
    }

    /// `h200.static_shared_bytes`.
    pub fn h200_static_shared_bytes(&self) -> Option<u64> {
        self.h200.as_ref()?.get("static_shared_bytes")?.as_u64()
    }

    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone().into());
        m.insert("ptx".into(), self.ptx.to_string_lossy().into_owned().into());
        m.insert("kernel".into(), self.kernel.clone().into());
        m.insert("grid".into(), serde_json::json!(self.grid));
        m.insert("block".into(), serde_json::json!(self.block));
        m.insert("dynamic_shared_bytes".into(), self.dynamic_shared_bytes.into());
        m.insert("params".into(), J::Array(self.params.iter().map(ParamSpec::to_json).collect()));
        if !self.expect.is_empty() {
            let e: Map<String, J> = self.expect.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
            m.insert("expect".into(), J::Object(e));
        }
        if let Some(d) = &self.expect_diagnostic {
            m.insert("expect_diagnostic".into(), d.clone());
        }
        if let Some(h) = &self.h200 {
            m.insert("h200".into(), h.clone());
        }
        J::Object(m)
    }
}

// ---------------------------------------------------------------- params

impl Role {
    pub const fn name(self) -> &'static str {
        match self {
            Role::In => "in",
            Role::Out => "out",
            Role::Inout => "inout",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "in" => Some(Role::In),
            "out" => Some(Role::Out),
            "inout" => Some(Role::Inout),
            _ => None,
        }
    }

    /// The kernel reads the initial contents (`in`, `inout`).
    pub const fn is_input(self) -> bool {
        matches!(self, Role::In | Role::Inout)
    }

    /// The contents afterwards are a result (`out`, `inout`).
    pub const fn is_output(self) -> bool {
        matches!(self, Role::Out | Role::Inout)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl ScalarParam {
    /// A scalar from a value; integers must be in range, raw bits must fit.
    pub fn new(ty: Dtype, v: Value) -> Result<ScalarParam, ValueError> {
        if !ty.is_scalar_type() {
            return Err(ValueError::NotAScalarType(ty));
        }
        Ok(ScalarParam { name: None, ty, bits: scalar_bits(ty, v)? })
    }

    /// The bytes passed in the parameter buffer.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.bits.to_le_bytes()[..self.ty.size_bytes()].to_vec()
    }

    /// The value (integers sign-extended per type, reals widened to `f64`).
    pub fn value(&self) -> Value {
        if self.ty.is_float() {
            Value::Float(decode_f64(self.ty, self.bits))
        } else {
            Value::Int(decode_int(self.ty, self.bits))
        }
    }

    fn value_json(&self) -> J {
        match self.value() {
            Value::Float(f) if !f.is_finite() => format!("0x{:x}", self.bits).into(),
            v => v.to_json(),
        }
    }
}

impl BufferSpec {
    /// `count * dtype.size_bytes()` (validated not to overflow when parsed).
    pub fn byte_len(&self) -> u64 {
        self.count.saturating_mul(self.dtype.size_bytes() as u64)
    }
}

impl ParamSpec {
    /// Converts one param; errors are `(field inside the param, message)`.
    pub fn from_json(v: &J, dir: &Path) -> Result<ParamSpec, (String, String)> {
        let e = |f: &str, m: String| (f.to_string(), m);
        let m = as_object(v).map_err(|x| e("", x.to_string()))?;
        let kind = match field(m, "kind") {
            Some(k) => as_str(k).map_err(|x| e("kind", x.to_string()))?,
            None if m.contains_key("type") => "scalar",
            None if m.contains_key("dtype") => "buffer",
            None if m.contains_key("fields") => "struct",
            None => return Err(e("kind", "missing".into())),
        };
        let name = field(m, "name").map(|n| as_str(n).map(str::to_string).map_err(|x| e("name", x.to_string()))).transpose()?;
        match kind {
            "scalar" => {
                let tv = field(m, "type").ok_or_else(|| e("type", "missing".into()))?;
                let ts = as_str(tv).map_err(|x| e("type", x.to_string()))?;
                let ty = Dtype::parse(ts)
                    .filter(|d| d.is_scalar_type())
                    .ok_or_else(|| e("type", format!("unknown scalar type {ts:?} (expected i32, u32, i64, u64, f32 or f64)")))?;
                let vv = field(m, "value").ok_or_else(|| e("value", "missing".into()))?;
                let val = Value::from_json(vv).map_err(|x| e("value", x.to_string()))?;
                let mut s = ScalarParam::new(ty, val).map_err(|x| e("value", x.to_string()))?;
                s.name = name;
                Ok(ParamSpec::Scalar(s))
            }
            "buffer" => {
                let name = name.ok_or_else(|| e("name", "missing".into()))?;
                if let Some(why) = bad_buffer_name(&name) {
                    return Err(e("name", why.into()));
                }
                let dv = field(m, "dtype").ok_or_else(|| e("dtype", "missing".into()))?;
                let ds = as_str(dv).map_err(|x| e("dtype", x.to_string()))?;
                let dtype = Dtype::parse(ds).ok_or_else(|| e("dtype", format!("unknown dtype {ds:?}")))?;
                let cv = field(m, "count").ok_or_else(|| e("count", "missing".into()))?;
                let count = as_u64(cv).map_err(|x| e("count", x.to_string()))?;
                match count.checked_mul(dtype.size_bytes() as u64) {
                    Some(b) if b <= MAX_DEVICE_BYTES => {}
                    _ => {
                        return Err(e("count", format!("{count} x {dtype} is more than the H200's {MAX_DEVICE_BYTES} bytes")));
                    }
                }
                let init = match field(m, "init") {
                    None => Init::Named(crate::init::NamedInit::Zeros),
                    Some(iv) => Init::from_json(iv, dir).map_err(|(f, msg)| (join_field("init", &f), msg))?,
                };
                if let Init::Values(vals) = &init {
                    if vals.len() as u64 != count {
                        return Err(e("init.values", format!("has {} elements, count is {count}", vals.len())));
                    }
                    for (k, v) in vals.iter().enumerate() {
                        crate::value::check_fits(dtype, *v).map_err(|x| (format!("init.values[{k}]"), x.to_string()))?;
                    }
                }
                let role = match field(m, "role") {
                    None => Role::Inout,
                    Some(rv) => {
                        let rs = as_str(rv).map_err(|x| e("role", x.to_string()))?;
                        Role::parse(rs).ok_or_else(|| e("role", format!("unknown role {rs:?} (expected in, out or inout)")))?
                    }
                };
                Ok(ParamSpec::Buffer(BufferSpec { name, dtype, count, init, role }))
            }
            "struct" => {
                let fv = field(m, "fields").ok_or_else(|| e("fields", "missing".into()))?;
                let list = fv.as_array().ok_or_else(|| e("fields", "expected an array of {\"type\": ..., \"value\": ...}".into()))?;
                if list.is_empty() {
                    return Err(e("fields", "a struct needs at least one field".into()));
                }
                let mut fields = Vec::new();
                for (k, f) in list.iter().enumerate() {
                    let at = |sub: &str, msg: String| (format!("fields[{k}]{sub}"), msg);
                    let fm = as_object(f).map_err(|x| at("", x.to_string()))?;
                    let ts = field(fm, "type").ok_or_else(|| at(".type", "missing".into()))?;
                    let ts = as_str(ts).map_err(|x| at(".type", x.to_string()))?;
                    let ty = Dtype::parse(ts).ok_or_else(|| at(".type", format!("unknown type {ts:?}")))?;
                    let vv = field(fm, "value").ok_or_else(|| at(".value", "missing".into()))?;
                    let val = Value::from_json(vv).map_err(|x| at(".value", x.to_string()))?;
                    let bits = scalar_bits(ty, val).map_err(|x| at(".value", x.to_string()))?;
                    fields.push(ScalarParam { name: None, ty, bits });
                }
                Ok(ParamSpec::Struct(StructParam { name, fields }))
            }
            other => Err(e("kind", format!("unknown kind {other:?} (expected scalar, buffer or struct)"))),
        }
    }

    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        match self {
            ParamSpec::Scalar(s) => {
                m.insert("kind".into(), "scalar".into());
                if let Some(n) = &s.name {
                    m.insert("name".into(), n.clone().into());
                }
                m.insert("type".into(), s.ty.name().into());
                m.insert("value".into(), s.value_json());
            }
            ParamSpec::Buffer(b) => {
                m.insert("kind".into(), "buffer".into());
                m.insert("name".into(), b.name.clone().into());
                m.insert("dtype".into(), b.dtype.name().into());
                m.insert("count".into(), b.count.into());
                m.insert("init".into(), b.init.to_json());
                m.insert("role".into(), b.role.name().into());
            }
            ParamSpec::Struct(st) => {
                m.insert("kind".into(), "struct".into());
                if let Some(n) = &st.name {
                    m.insert("name".into(), n.clone().into());
                }
                let fields = st
                    .fields
                    .iter()
                    .map(|f| {
                        let mut fm = Map::new();
                        fm.insert("type".into(), f.ty.name().into());
                        fm.insert("value".into(), f.value_json());
                        J::Object(fm)
                    })
                    .collect();
                m.insert("fields".into(), J::Array(fields));
            }
        }
        J::Object(m)
    }

    pub fn as_buffer(&self) -> Option<&BufferSpec> {
        match self {
            ParamSpec::Buffer(b) => Some(b),
            ParamSpec::Scalar(_) | ParamSpec::Struct(_) => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&ScalarParam> {
        match self {
            ParamSpec::Scalar(s) => Some(s),
            ParamSpec::Buffer(_) | ParamSpec::Struct(_) => None,
        }
    }

    /// Bytes this parameter takes in the kernel's parameter space (8 for a buffer's address).
    pub fn param_size(&self) -> usize {
        match self {
            ParamSpec::Scalar(s) => s.ty.size_bytes(),
            ParamSpec::Buffer(_) => 8,
            ParamSpec::Struct(s) => s.layout().0.len(),
        }
    }

    /// The name, if it has one (buffers always do).
    pub fn name(&self) -> Option<&str> {
        match self {
            ParamSpec::Scalar(s) => s.name.as_deref(),
            ParamSpec::Buffer(b) => Some(&b.name),
            ParamSpec::Struct(s) => s.name.as_deref(),
        }
    }
}

// ---------------------------------------------------------------- expectations

impl Property {
    pub fn parse(s: &str) -> Option<Property> {
        match s {
            WARP_UNIFORM_CLOCK_TEXT | "warp_uniform" | "warp_uniform_clock" => Some(Property::WarpUniformClock),
            _ => None,
        }
    }

    pub const fn text(self) -> &'static str {
        match self {
            Property::WarpUniformClock => WARP_UNIFORM_CLOCK_TEXT,
        }
    }
}

impl Expectation {
    /// Converts one `expect` entry for buffer `buf`; errors are `(field inside the entry, message)`.
    pub fn from_json(v: &J, dir: &Path, buf: &BufferSpec) -> Result<Expectation, (String, String)> {
        let e = |f: &str, m: String| (f.to_string(), m);
        let m = as_object(v).map_err(|x| e("", x.to_string()))?;
        let mut out = Expectation::default();
        if let Some(dv) = field(m, "dtype") {
            let ds = as_str(dv).map_err(|x| e("dtype", x.to_string()))?;
            let d = Dtype::parse(ds).ok_or_else(|| e("dtype", format!("unknown dtype {ds:?}")))?;
            if d != buf.dtype {
                return Err(e("dtype", format!("{d} disagrees with the buffer's dtype {}", buf.dtype)));
            }
            out.dtype = Some(d);
        }
        if let Some(cv) = field(m, "count") {
            let c = as_u64(cv).map_err(|x| e("count", x.to_string()))?;
            if c != buf.count {
                return Err(e("count", format!("{c} disagrees with the buffer's count {}", buf.count)));
            }
            out.count = Some(c);
        }
        if let Some(sv) = field(m, "sha256") {
            let s = as_str(sv).map_err(|x| e("sha256", x.to_string()))?;
            if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(e("sha256", format!("{s:?} is not 64 hexadecimal digits")));
            }
            out.sha256 = Some(s.to_ascii_lowercase());
        }
        if let Some(fv) = field(m, "file") {
            let s = as_str(fv).map_err(|x| e("file", x.to_string()))?;
            if s.is_empty() {
                return Err(e("file", "empty path".into()));
            }
            out.file = Some(dir.join(s));
        }
        if let Some(tv) = field(m, "rel_tol") {
            let t = tv.as_f64().ok_or_else(|| e("rel_tol", format!("expected a number, found {}", json_kind(tv))))?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(e("rel_tol", format!("{t} is not a finite non-negative number")));
            }
            out.rel_tol = Some(t);
        }
        if let Some(pv) = field(m, "property") {
            let s = as_str(pv).map_err(|x| e("property", x.to_string()))?;
            let p =
                Property::parse(s).ok_or_else(|| e("property", format!("unknown property {s:?} (known: {WARP_UNIFORM_CLOCK_TEXT:?})")))?;
            if buf.dtype.size_bytes() != 8 {
                return Err(e("property", format!("the clock property needs a 64-bit buffer, {:?} is {}", buf.name, buf.dtype)));
            }
            out.property = Some(p);
        }
        for (k, slot) in [("h200_distinct_values", &mut out.h200_distinct_values), ("warps", &mut out.warps)] {
            if let Some(v) = field(m, k) {
                *slot = Some(as_u64(v).map_err(|x| e(k, x.to_string()))?);
            }
        }
        Ok(out)
    }

    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        if let Some(d) = self.dtype {
            m.insert("dtype".into(), d.name().into());
        }
        if let Some(c) = self.count {
            m.insert("count".into(), c.into());
        }
        if let Some(p) = self.property {
            m.insert("property".into(), p.text().into());
        }
        if let Some(n) = self.h200_distinct_values {
            m.insert("h200_distinct_values".into(), n.into());
        }
        if let Some(n) = self.warps {
            m.insert("warps".into(), n.into());
        }
        if let Some(s) = &self.sha256 {
            m.insert("sha256".into(), s.clone().into());
        }
        if let Some(f) = &self.file {
            m.insert("file".into(), f.to_string_lossy().into_owned().into());
        }
        if let Some(t) = self.rel_tol {
            m.insert("rel_tol".into(), t.into());
        }
        J::Object(m)
    }

    /// Whether anything is checked at all.
    pub fn is_checkable(&self) -> bool {
        self.property.is_some() || self.sha256.is_some() || self.file.is_some()
    }
}

// ---------------------------------------------------------------- serde

macro_rules! serde_via_json {
    ($t:ty, $from:expr) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.to_json().serialize(s)
            }
        }
        /// Deserialising validates like [`load_manifest`]; relative paths stay
        /// relative (to the current directory).
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let v = J::deserialize(d)?;
                let f: fn(&J) -> Result<$t, LaunchError> = $from;
                f(&v).map_err(serde::de::Error::custom)
            }
        }
    };
}

serde_via_json!(Manifest, |v| Manifest::from_json(v, Path::new("")));
serde_via_json!(Case, |v| Case::from_json(v, Path::new("")));
serde_via_json!(ParamSpec, |v| ParamSpec::from_json(v, Path::new("")).map_err(|(field, message)| LaunchError::Manifest {
    case: None,
    index: None,
    field,
    message
}));

impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl serde::Serialize for Expectation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// Names of all buffers with an expectation that is actually checked.
pub fn checked_buffers(case: &Case) -> BTreeSet<&str> {
    case.expect.iter().filter(|(_, e)| e.is_checkable()).map(|(k, _)| k.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case_json() -> J {
        json!({
            "name": "warp_sum", "ptx": "kernels.ptx", "kernel": "gt_warp_sum",
            "grid": [256, 1, 1], "block": [256],
            "params": [
                {"kind": "buffer", "name": "in", "dtype": "f32", "count": 4, "init": "unit_f32", "role": "in"},
                {"kind": "buffer", "name": "out", "dtype": "f32", "count": 4, "init": {"values": [1, 2.5, "0x3f800000", -1]}, "role": "out"},
                {"kind": "scalar", "type": "i32", "value": -5},
                {"kind": "scalar", "type": "f32", "value": "0x7fc00000"}
            ],
            "expect": {"out": {"dtype": "f32", "count": 4, "sha256": "CC33D30382F98486C3C47193EB35258B42D84C74CAEFD6606F9F4DB984524D75"}, "in": null},
            "h200": {"time_us_median": 7.5, "num_regs": 18, "ncu": {"a.sum": 3, "b.ratio": 0.5, "c": null}}
        })
    }

    fn err_of(mutate: impl FnOnce(&mut J)) -> String {
        let mut v = case_json();
        mutate(&mut v);
        Case::from_json(&v, Path::new("/m")).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_case() {
        let c = Case::from_json(&case_json(), Path::new("/m")).unwrap();
        assert_eq!(c.ptx, Path::new("/m/kernels.ptx"));
        assert_eq!(c.block, [256, 1, 1]);
        assert_eq!(c.dynamic_shared_bytes, 0);
        assert_eq!(c.block_threads(), 256);
        assert_eq!(c.params.len(), 4);
        let s = c.params[2].as_scalar().unwrap();
        assert_eq!(s.to_le_bytes(), (-5i32).to_le_bytes());
        assert_eq!(c.params[3].as_scalar().unwrap().bits, 0x7fc0_0000);
        assert_eq!(c.expect.len(), 1);
        assert_eq!(c.expect["out"].sha256.as_deref().unwrap().len(), 64);
        assert!(c.expect["out"].sha256.as_deref().unwrap().starts_with("cc33"));
        assert_eq!(c.ncu_metric("b.ratio"), Some(0.5));
        assert_eq!(c.h200_ncu().len(), 2);
        assert_eq!(c.h200_time_us(), Some(7.5));
        assert_eq!(c.h200_num_regs(), Some(18));
        assert_eq!(c.buffer("in").unwrap().role, Role::In);
        // round trip through JSON and serde
        let again = Case::from_json(&c.to_json(), Path::new("")).unwrap();
        assert_eq!(again, c);
        let text = serde_json::to_string(&c).unwrap();
        let back: Case = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn errors_name_case_and_field() {
        assert_eq!(err_of(|v| v["params"][1]["dtype"] = json!("f128")), r#"case "warp_sum": params[1].dtype: unknown dtype "f128""#);
        assert_eq!(
            err_of(|v| v["params"][0]["init"] = json!("ones")).split(" (").next().unwrap(),
            r#"case "warp_sum": params[0].init: unknown init "ones""#
        );
        assert_eq!(
            err_of(|v| v["params"][0]["role"] = json!("output")),
            r#"case "warp_sum": params[0].role: unknown role "output" (expected in, out or inout)"#
        );
        assert!(err_of(|v| v["grid"] = json!([0, 1, 1])).starts_with(r#"case "warp_sum": grid: zero-sized grid"#));
        assert!(err_of(|v| v["block"] = json!([2048])).contains("block[0]: 2048 exceeds"));
        assert!(err_of(|v| v["block"] = json!([64, 32])).contains("2048 threads"));
        assert!(err_of(|v| v["block"] = json!([1, 1, 1, 1])).contains("block: has 4 dimensions"));
        assert!(err_of(|v| v["grid"] = json!("x")).contains("grid: expected [x, y, z]"));
        assert!(err_of(|v| v["grid"] = json!([1, -1])).contains("grid: [1]: -1 is negative"));
        assert!(err_of(|v| v["params"][1]["init"]["values"][2] = json!(true)).contains("params[1].init.values[2]: expected a number"));
        assert!(err_of(|v| v["params"][1]["init"]["values"] = json!([1])).contains("params[1].init.values: has 1 elements"));
        assert!(err_of(|v| v["params"][2]["value"] = json!(1u64 << 31)).contains("params[2].value: 2147483648 is out of range for i32"));
        assert!(err_of(|v| v["params"][2]["type"] = json!("f16")).contains("params[2].type: unknown scalar type \"f16\""));
        assert!(err_of(|v| v["params"][2]["kind"] = json!("texture")).contains("params[2].kind: unknown kind"));
        assert!(err_of(|v| v["params"][1]["name"] = json!("in")).contains("params[1].name: duplicate parameter name"));
        assert!(err_of(|v| v["params"][1]["count"] = json!(u64::MAX)).contains("params[1].count"));
        assert!(err_of(|v| v["expect"]["nope"] = json!({"sha256": "00"})).contains("expect.nope: no buffer parameter"));
        assert!(err_of(|v| v["expect"]["out"]["sha256"] = json!("00")).contains("expect.out.sha256: \"00\" is not 64"));
        assert!(err_of(|v| v["expect"]["out"]["count"] = json!(5)).contains("expect.out.count: 5 disagrees"));
        assert!(err_of(|v| v["expect"]["out"]["rel_tol"] = json!(-1.0)).contains("expect.out.rel_tol"));
        assert!(err_of(|v| v["expect"]["out"]["property"] = json!("every lane of a warp reads the same clock64 value"))
            .contains("expect.out.property: the clock property needs a 64-bit buffer"));
        assert!(err_of(|v| v["expect"]["out"]["property"] = json!("monotone")).contains("unknown property"));
        assert!(err_of(|v| v["h200"]["ncu"]["x"] = json!("fast")).contains("h200.ncu.x: expected a number"));
        assert!(err_of(|v| v["dynamic_shared_bytes"] = json!(1.5)).contains("dynamic_shared_bytes: 1.5 is not"));
        assert_eq!(err_of(|v| v["kernel"] = json!(3)), r#"case "warp_sum": kernel: expected a string, found a number"#);
        // no name: the position is used
        let e = Manifest::from_json(&json!({"cases": [case_json(), {"ptx": "x"}]}), Path::new("")).unwrap_err();
        assert_eq!(e.to_string(), "cases[1]: name: missing");
        let e = Manifest::from_json(&json!({"cases": [case_json(), case_json()]}), Path::new("")).unwrap_err();
        assert!(e.to_string().starts_with(r#"case "warp_sum": name: duplicate case name"#));
        let e = Manifest::from_json(&json!({"note": 1, "cases": []}), Path::new("")).unwrap_err();
        assert_eq!(e.to_string(), "note: expected a string, found a number");
        let e = Manifest::from_json(&json!([]), Path::new("")).unwrap_err();
        assert!(e.to_string().starts_with("manifest: expected an object"));
    }

    #[test]
    fn lenient_defaults() {
        let v = json!({"name": "a", "ptx": "k.ptx", "kernel": "k", "grid": 4, "block": [],
            "params": [{"name": "b", "dtype": "u8", "count": 3}, {"type": "u64", "value": "0x10"}],
            "expect": null});
        let c = Case::from_json(&v, Path::new("")).unwrap();
        assert_eq!(c.grid, [4, 1, 1]);
        assert_eq!(c.block, [1, 1, 1]);
        let b = c.params[0].as_buffer().unwrap();
        assert_eq!((b.role, &b.init), (Role::Inout, &Init::Named(crate::init::NamedInit::Zeros)));
        assert_eq!(c.params[1].as_scalar().unwrap().bits, 16);
        assert!(c.expect.is_empty());
    }

    #[test]
    fn deserialize_param_spec() {
        let p: ParamSpec = serde_json::from_value(json!({"kind": "scalar", "type": "f64", "value": 0.1})).unwrap();
        assert_eq!(p.as_scalar().unwrap().bits, 0.1f64.to_bits());
        let e = serde_json::from_value::<ParamSpec>(json!({"kind": "buffer", "name": "x", "dtype": "q8", "count": 1})).unwrap_err();
        assert!(e.to_string().contains("dtype: unknown dtype \"q8\""));
    }

    #[test]
    fn deserialize_manifest() {
        let text = serde_json::to_string(&json!({"gpu": "H200", "cases": [case_json()]})).unwrap();
        let m: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(m.cases[0].ptx, Path::new("kernels.ptx"));
        assert_eq!(m.gpu.as_deref(), Some("H200"));
        let bad = text.replace("\"f32\"", "\"f128\"");
        let e = serde_json::from_str::<Manifest>(&bad).unwrap_err().to_string();
        assert!(e.contains(r#"case "warp_sum": params[0].dtype: unknown dtype "f128""#), "{e}");
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = J> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::from),
            any::<i64>().prop_map(J::from),
            any::<u64>().prop_map(J::from),
            any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(J::Number).unwrap_or(J::Null)),
            "(0x[0-9a-f]{0,20}|[a-z_0-9]{0,8}|f32|u64|in|out|zeros|unit_f32)".prop_map(J::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
                prop::collection::btree_map("(values|file|kind|name|dtype|count|x)", inner, 0..3)
                    .prop_map(|m| J::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_field(
            path in proptest::sample::select(vec![
                "/name", "/ptx", "/grid", "/block", "/dynamic_shared_bytes", "/params", "/params/0",
                "/params/0/init", "/params/1/init/values", "/params/1/init/values/0", "/params/2/value",
                "/params/3/type", "/expect", "/expect/out", "/expect/out/rel_tol", "/h200", "/h200/ncu",
                "/params/0/count", "/expect/out/property",
            ]),
            val in arb_json(),
        ) {
            let mut v = case_json();
            if let Some(slot) = v.pointer_mut(path) {
                *slot = val;
            }
            let _ = Case::from_json(&v, Path::new(""));
            let _ = Manifest::from_json(&json!({"cases": [v]}), Path::new(""));
        }
    }

    #[test]
    fn missing_files_are_errors() {
        let mut v = case_json();
        v["expect"]["out"]["file"] = json!("expected/none.bin");
        let c = Case::from_json(&v, Path::new("/nonexistent")).unwrap();
        let e = c.check_files().unwrap_err().to_string();
        assert!(e.starts_with(r#"case "warp_sum": expect.out.file: /nonexistent/expected/none.bin"#), "{e}");
        v["params"][0]["init"] = json!({"file": "in.bin"});
        let c = Case::from_json(&v, Path::new("/nonexistent")).unwrap();
        let e = c.check_files().unwrap_err().to_string();
        assert!(e.starts_with(r#"case "warp_sum": params[0].init.file: "#), "{e}");
    }
}

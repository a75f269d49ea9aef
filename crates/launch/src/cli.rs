//! The `warpsim run` command-line form of a kernel parameter.

use std::path::PathBuf;

use crate::init::{Init, NamedInit};
use crate::manifest::{BufferSpec, ParamSpec, Role, ScalarParam, StructParam, MAX_DEVICE_BYTES};
use crate::value::{check_fits, parse_scalar_text, Value, ValueError};
use crate::{Dtype, LaunchError};

/// Parses one parameter of `warpsim run`:
///
/// * a scalar, `TYPE=VALUE` (`u32=5`, `f32=1.5`, `i64=-3`, `u64=0x10`; `0x...`
///   is the raw bits, reals are rounded once, to nearest even), optionally
///   named: `n:i32=1024`;
/// * a buffer, `NAME:DTYPE[COUNT]=INIT[:ROLE]`, where INIT is an initialiser
///   name (`zeros`, `iota`, `hash_u32`, `unit_f32`, `sym_f16`, `unit_f64`),
///   `file:PATH` (a `.npy` file by extension, else raw little-endian bytes;
///   relative to the current directory) or `values:V,V,...` (exactly COUNT
///   values), and ROLE is `in`, `out` or `inout` (the default). Examples:
///   `in:f32[1048576]=unit_f32:in`, `out:f32[1024]=zeros:out`,
///   `w:f16[4096]=file:w.npy:in`.
///
/// * a struct passed by value, `{TYPE=VALUE,TYPE=VALUE,...}`, optionally named
///   (`cfg:{f32=0.5,i32=3,u8=1}`): any element type, each field at its natural
///   alignment and the whole padded, as C lays out a plain struct;
///
/// The result is the same [`ParamSpec`] a manifest yields. Files are not
/// opened here; [`crate::BufferInit::from_spec`] checks them.
pub fn parse_param_arg(s: &str) -> Result<ParamSpec, LaunchError> {
    let err = |m: String| LaunchError::ParamArg { arg: s.to_string(), message: m };
    let Some((lhs, rhs)) = s.split_once('=') else {
        return Err(err("expected TYPE=VALUE (a scalar) or NAME:DTYPE[COUNT]=INIT[:ROLE] (a buffer)".into()));
    };
    let lhs = lhs.trim();
    if let Some(open) = lhs.find('[') {
        // Buffer.
        let Some(count_str) = lhs[open + 1..].strip_suffix(']') else {
            return Err(err(format!("expected NAME:DTYPE[COUNT] before '=', found {lhs:?}")));
        };
        let Some((name, dts)) = lhs[..open].rsplit_once(':') else {
            return Err(err(format!("expected NAME:DTYPE[COUNT] before '=', found {lhs:?}")));
        };
        if name.is_empty() {
            return Err(err("empty buffer name".into()));
        }
        if let Some(why) = crate::manifest::bad_buffer_name(name) {
            return Err(err(format!("buffer name {name:?}: {why}")));
        }
        let dtype = Dtype::parse(dts).ok_or_else(|| err(format!("unknown dtype {dts:?}")))?;
        let count = parse_count(count_str).map_err(|e| err(e.to_string()))?;
        match count.checked_mul(dtype.size_bytes() as u64) {
            Some(b) if b <= MAX_DEVICE_BYTES => {}
            _ => return Err(err(format!("{count} x {dtype} is more than the H200's {MAX_DEVICE_BYTES} bytes"))),
        }
        let (init_str, role) = match rhs.rsplit_once(':') {
            Some((a, r)) if Role::parse(r).is_some() && !a.is_empty() => (a, Role::parse(r).unwrap_or(Role::Inout)),
            // `zeros:output`: a known init and a word that is no role.
            Some((a, r)) if NamedInit::parse(a).is_some() => {
                return Err(err(format!("unknown role {r:?} after init {a:?} (expected in, out or inout)")));
            }
            _ => (rhs, Role::Inout),
        };
        let init = if let Some(path) = init_str.strip_prefix("file:") {
            if path.is_empty() {
                return Err(err("file: needs a path".into()));
            }
            Init::File(PathBuf::from(path))
        } else if let Some(list) = init_str.strip_prefix("values:") {
            let mut vals = Vec::new();
            for (k, t) in list.split(',').enumerate() {
                let v = Value::parse_text(t).map_err(|m| err(format!("values[{k}]: {m}")))?;
                check_fits(dtype, v).map_err(|m| err(format!("values[{k}]: {m}")))?;
                vals.push(v);
            }
            if vals.len() as u64 != count {
                return Err(err(format!("{} values for {count} elements", vals.len())));
            }
            Init::Values(vals)
        } else {
            let n = NamedInit::parse(init_str).ok_or_else(|| {
                let names: Vec<_> = NamedInit::ALL.iter().map(|n| n.name()).collect();
                err(format!("unknown init {init_str:?} (expected {}, file:PATH or values:V,V,..)", names.join(", ")))
            })?;
            Init::Named(n)
        };
        return Ok(ParamSpec::Buffer(BufferSpec { name: name.to_string(), dtype, count, init, role }));
    }
    // Struct by value, optionally named: `[NAME:]{TYPE=VALUE,...}` (no `=` before the brace).
    if let Some(open) = s.find('{').filter(|&o| !s[..o].contains('=')) {
        let prefix = s[..open].trim();
        if !prefix.is_empty() && !prefix.ends_with(':') {
            return Err(err("expected NAME:{TYPE=VALUE,...} for a struct".into()));
        }
        let name = prefix.strip_suffix(':').map(str::trim);
        let Some(body) = s[open + 1..].trim_end().strip_suffix('}') else {
            return Err(err("a struct is {TYPE=VALUE,TYPE=VALUE,...}: missing the closing '}'".into()));
        };
        let mut fields = Vec::new();
        for (k, f) in body.split(',').enumerate() {
            let Some((ts, vs)) = f.split_once('=') else {
                return Err(err(format!("field {k}: expected TYPE=VALUE, found {:?}", f.trim())));
            };
            let ty = Dtype::parse(ts.trim()).ok_or_else(|| err(format!("field {k}: unknown type {:?}", ts.trim())))?;
            let bits = parse_scalar_text(ty, vs).map_err(|e| err(format!("field {k}: {e}")))?;
            fields.push(ScalarParam { name: None, ty, bits });
        }
        return Ok(ParamSpec::Struct(StructParam { name: name.filter(|n| !n.is_empty()).map(str::to_string), fields }));
    }
    // Scalar, optionally named.
    let (name, ts) = match lhs.rsplit_once(':') {
        Some((n, t)) if !n.is_empty() => (Some(n.to_string()), t),
        Some((_, t)) => (None, t),
        None => (None, lhs),
    };
    let ty = Dtype::parse(ts).filter(|d| d.is_scalar_type()).ok_or_else(|| {
        err(format!("unknown scalar type {ts:?} (expected i32, u32, i64, u64, f32 or f64; a buffer is NAME:DTYPE[COUNT]=INIT)"))
    })?;
    let bits = parse_scalar_text(ty, rhs).map_err(|e| err(e.to_string()))?;
    Ok(ParamSpec::Scalar(ScalarParam { name, ty, bits }))
}

fn parse_count(s: &str) -> Result<u64, ValueError> {
    let t: String = s.trim().chars().filter(|&c| c != '_').collect();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    };
    r.map_err(|_| ValueError::NotACount(format!("count {s:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn buf(s: &str) -> BufferSpec {
        parse_param_arg(s).unwrap().as_buffer().unwrap().clone()
    }

    fn scalar(s: &str) -> ScalarParam {
        parse_param_arg(s).unwrap().as_scalar().unwrap().clone()
    }

    #[test]
    fn scalars() {
        assert_eq!(scalar("u32=5").bits, 5);
        assert_eq!(scalar("f32=1.5").bits, 1.5f32.to_bits() as u64);
        assert_eq!(scalar("i64=-3").to_le_bytes(), (-3i64).to_le_bytes());
        assert_eq!(scalar("u64=0x10").bits, 16);
        assert_eq!(scalar("f64=0x3ff0000000000000").bits, 1.0f64.to_bits());
        assert_eq!(scalar("i32=-2147483648").bits, 0x8000_0000);
        let n = scalar("n:i32=1024");
        assert_eq!((n.name.as_deref(), n.bits), (Some("n"), 1024));
        for bad in ["u32=-1", "i32=2147483648", "u32=1.5", "f16=1", "x=1", "u32=", "u32", "u32=0x1_0000_0000"] {
            let e = parse_param_arg(bad).unwrap_err();
            assert!(matches!(e, LaunchError::ParamArg { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bad_role_is_called_a_role() {
        let e = parse_param_arg("out:f32[4]=zeros:output").unwrap_err().to_string();
        assert!(e.contains("unknown role \"output\"") && e.contains("in, out or inout"), "{e}");
    }

    #[test]
    fn buffer_names_are_plain_file_names() {
        for bad in ["../../evil:u32[256]=zeros:out", "a/b:u32[4]=zeros", "a\\b:u32[4]=zeros", "..:u32[4]=zeros"] {
            let e = parse_param_arg(bad).unwrap_err().to_string();
            assert!(e.contains("used as a file name"), "{bad}: {e}");
        }
        assert_eq!(buf("out.v2:u32[4]=zeros").name, "out.v2");
    }

    #[test]
    fn buffers() {
        let b = buf("in:f32[1048576]=unit_f32:in");
        assert_eq!((b.name.as_str(), b.dtype, b.count, b.role), ("in", Dtype::F32, 1 << 20, Role::In));
        assert_eq!(b.init, Init::Named(NamedInit::UnitF32));
        let b = buf("out:f32[1024]=zeros:out");
        assert_eq!((b.role, b.count), (Role::Out, 1024));
        let b = buf("x:u8[0x10]=iota");
        assert_eq!((b.role, b.count), (Role::Inout, 16));
        let b = buf("w:f16[4]=file:data/w.npy:in");
        assert_eq!((b.init.clone(), b.role), (Init::File("data/w.npy".into()), Role::In));
        let b = buf("w:u8[2]=file:raw.bin");
        assert_eq!((b.init.clone(), b.role), (Init::File("raw.bin".into()), Role::Inout));
        let b = buf("v:i16[3]=values:-1,2,0x7fff:out");
        assert_eq!(b.init, Init::Values(vec![Value::Int(-1), Value::Int(2), Value::Bits(0x7fff)]));
        assert_eq!(b.role, Role::Out);
        let b = buf("a:b:u32[1_000]=hash_u32");
        assert_eq!((b.name.as_str(), b.count), ("a:b", 1000));
        let e = parse_param_arg("in:f128[4]=zeros").unwrap_err().to_string();
        assert_eq!(e, r#"parameter "in:f128[4]=zeros": unknown dtype "f128""#);
        for bad in [
            "in:f32[4=zeros",
            "f32[4]=zeros",
            ":f32[4]=zeros",
            "in:f32[x]=zeros",
            "in:f32[-1]=zeros",
            "in:f32[4]=ones",
            "in:f32[4]=zeros:sideways",
            "in:f32[4]=file:",
            "in:u8[2]=values:1,2,3",
            "in:u8[1]=values:0x100",
            "in:u64[99999999999999]=zeros",
        ] {
            let e = parse_param_arg(bad).unwrap_err();
            assert!(matches!(e, LaunchError::ParamArg { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn same_type_as_manifest() {
        let from_cli = parse_param_arg("out:f32[1024]=zeros:out").unwrap();
        let from_json: ParamSpec = serde_json::from_value(serde_json::json!(
            {"kind": "buffer", "name": "out", "dtype": "f32", "count": 1024, "init": "zeros", "role": "out"}
        ))
        .unwrap();
        assert_eq!(from_cli, from_json);
        let from_cli = parse_param_arg("i32=1024").unwrap();
        let from_json: ParamSpec = serde_json::from_value(serde_json::json!({"kind": "scalar", "type": "i32", "value": 1024})).unwrap();
        assert_eq!(from_cli, from_json);
    }

    proptest! {
        #[test]
        fn never_panics(s in "[a-z0-9:\\[\\]=,._x-]{0,40}") {
            let _ = parse_param_arg(&s);
        }
    }

    #[test]
    fn structs_by_value_are_laid_out_as_c_does() {
        let ParamSpec::Struct(st) = parse_param_arg("cfg:{f32=0.5, u8=7, f64=2, i16=-1}").unwrap() else { panic!("not a struct") };
        assert_eq!(st.name.as_deref(), Some("cfg"));
        let (bytes, align) = st.layout();
        // f32 at 0, u8 at 4, f64 at 8, i16 at 16, padded to 24.
        let mut want = vec![0u8; 24];
        want[..4].copy_from_slice(&0.5f32.to_le_bytes());
        want[4] = 7;
        want[8..16].copy_from_slice(&2.0f64.to_le_bytes());
        want[16..18].copy_from_slice(&(-1i16).to_le_bytes());
        assert_eq!((bytes, align), (want, 8));
        assert!(matches!(parse_param_arg("{u32=1,u32=2}"), Ok(ParamSpec::Struct(StructParam { name: None, .. }))));
        for bad in ["{u32=1", "{u32}", "{x32=1}", "{u8=300}", "a b{u32=1}"] {
            assert!(matches!(parse_param_arg(bad), Err(LaunchError::ParamArg { .. })), "{bad}");
        }
    }
}

//! Kernel parameter bytes, laid out as the PTX parameter list says (each
//! parameter at its aligned offset, as lowering computed it).

use crate::{DevicePtr, HostError, Kernel};
use warpsim_launch::{Dtype, ScalarParam, Value};
use warpsim_numerics::ScalarType;

/// The parameter block of one launch.
#[derive(Clone, Debug)]
pub struct Args {
    kernel: String,
    /// (offset, size, name) per parameter.
    layout: Vec<(u32, u32, String)>,
    bytes: Vec<u8>,
}

impl Args {
    /// A zeroed parameter block for `kernel`.
    pub fn new(kernel: &Kernel) -> Args {
        let k = kernel.ir();
        Args {
            kernel: kernel.name().to_string(),
            layout: k.params.iter().map(|p| (p.offset, p.size, p.name.clone())).collect(),
            bytes: vec![0u8; k.param_bytes as usize],
        }
    }

    /// How many parameters the kernel declares.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    fn slot(&mut self, index: usize) -> Result<(&mut [u8], &str), HostError> {
        let (off, size, name) = self.layout.get(index).ok_or_else(|| HostError::NoParam { kernel: self.kernel.clone(), index })?;
        Ok((&mut self.bytes[*off as usize..(*off + *size) as usize], name))
    }

    /// Parameter `index` from little-endian bytes (cut or zero-extended to its size).
    pub fn set_scalar(&mut self, index: usize, le_bytes: &[u8]) -> Result<(), HostError> {
        let (slot, _) = self.slot(index)?;
        let n = le_bytes.len().min(slot.len());
        slot[..n].copy_from_slice(&le_bytes[..n]);
        slot[n..].fill(0);
        Ok(())
    }

    /// Parameter `index` as a buffer's 64-bit device address.
    pub fn set_ptr(&mut self, index: usize, ptr: DevicePtr) -> Result<(), HostError> {
        let (slot, name) = self.slot(index)?;
        if slot.len() != 8 {
            let (name, size) = (name.to_string(), slot.len() as u32);
            return Err(HostError::NotAnAddress { index, name, size });
        }
        slot.copy_from_slice(&ptr.0.to_le_bytes());
        Ok(())
    }

    /// The parameter block as the kernel reads it.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The block for by-value parameters no setter expresses (a 128-byte tensor map).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Where parameter `index` starts in the block.
    pub fn offset(&self, index: usize) -> Option<u32> {
        self.layout.get(index).map(|p| p.0)
    }
}

/// The bytes of scalar `s` for a kernel parameter of PTX type `ty` and `size`
/// bytes: the same value, converted only when the conversion is exact (an
/// integer that fits, an integral real for an integer, a real or integer the
/// float type holds exactly). `Err` says why not. Parameters whose type does
/// not say how to convert (`.b8` arrays, `.f16`, ...) take the bits as given.
pub fn scalar_bytes(ty: ScalarType, size: u32, s: &ScalarParam) -> Result<Vec<u8>, String> {
    use ScalarType::*;
    let raw = || {
        let mut b = s.to_le_bytes();
        b.resize(size as usize, 0);
        b
    };
    if ty.bytes() != size || !matches!(ty, B8 | B16 | B32 | B64 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64 | F32 | F64) {
        return Ok(raw());
    }
    let same = match ty {
        F32 => s.ty == Dtype::F32,
        F64 => s.ty == Dtype::F64,
        _ => {
            !s.ty.is_float()
                && s.ty.bits() == ty.bits()
                && (ty.is_signed() == s.ty.is_signed_int() || !ty.is_signed() && !matches!(ty, U8 | U16 | U32 | U64))
        }
    };
    if same {
        return Ok(raw());
    }
    let bits = ty.bits();
    let out: u64 = match (ty, s.value()) {
        (F32, Value::Float(f)) => {
            let g = f as f32;
            if g as f64 != f && !f.is_nan() {
                return Err(format!("{f} is not exactly representable as f32"));
            }
            g.to_bits() as u64
        }
        (F32, Value::Int(v)) => {
            let g = v as f32;
            if g as i128 != v {
                return Err(format!("{v} is not exactly representable as f32"));
            }
            g.to_bits() as u64
        }
        (F64, Value::Float(f)) => f.to_bits(),
        (F64, Value::Int(v)) => {
            let g = v as f64;
            if g as i128 != v {
                return Err(format!("{v} is not exactly representable as f64"));
            }
            g.to_bits()
        }
        (_, v) => {
            let v = match v {
                Value::Int(v) => v,
                Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.9e19 => f as i128,
                Value::Float(f) => return Err(format!("{f} is not an integer")),
                Value::Bits(b) => b as i128,
            };
            // nvcc and clang declare a C++ `int` as `.u32` (and `long` as `.u64`), so an
            // unsigned parameter takes a negative value as its two's complement, as `.bN` does.
            let (lo, hi) = match ty {
                S8 | S16 | S32 | S64 => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
                _ => (-(1i128 << (bits - 1)), (1i128 << bits) - 1),
            };
            if v < lo || v > hi {
                return Err(format!("{v} is out of range ({lo} to {hi})"));
            }
            v as u64
        }
    };
    Ok(out.to_le_bytes()[..size as usize].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    const PTX: &str = ".version 7.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u8 a, .param .u64 p, .param .f32 x)\n{\nret;\n}\n";

    #[test]
    fn parameters_sit_at_their_aligned_offsets() {
        let k = Module::from_ptx("t.ptx", PTX).kernel("k").unwrap();
        let mut args = Args::new(&k);
        assert_eq!((args.len(), args.offset(0), args.offset(1), args.offset(2)), (3, Some(0), Some(8), Some(16)));
        args.set_scalar(0, &[7, 9]).unwrap();
        args.set_ptr(1, DevicePtr(0x1122_3344_5566_7788)).unwrap();
        args.set_scalar(2, &1.5f32.to_le_bytes()).unwrap();
        let b = args.bytes();
        assert_eq!((b[0], &b[8..16], &b[16..20]), (7, &0x1122_3344_5566_7788u64.to_le_bytes()[..], &1.5f32.to_le_bytes()[..]));
        assert!(matches!(args.set_ptr(0, DevicePtr(1)), Err(HostError::NotAnAddress { index: 0, size: 1, .. })));
        assert!(matches!(args.set_scalar(3, &[0]), Err(HostError::NoParam { index: 3, .. })));
    }

    #[test]
    fn scalars_convert_only_when_exact() {
        use warpsim_launch::parse_param_arg;
        let s = |a: &str| parse_param_arg(a).unwrap().as_scalar().unwrap().clone();
        let int = |v: &[u8]| i32::from_le_bytes(v.try_into().unwrap());
        assert_eq!(int(&scalar_bytes(ScalarType::S32, 4, &s("f64=1000")).unwrap()), 1000);
        assert_eq!(int(&scalar_bytes(ScalarType::S32, 4, &s("f32=1000")).unwrap()), 1000);
        assert_eq!(int(&scalar_bytes(ScalarType::U32, 4, &s("i32=1024")).unwrap()), 1024);
        assert_eq!(scalar_bytes(ScalarType::S64, 8, &s("i32=-3")).unwrap(), (-3i64).to_le_bytes());
        assert_eq!(scalar_bytes(ScalarType::F32, 4, &s("u32=3")).unwrap(), 3f32.to_le_bytes());
        assert_eq!(scalar_bytes(ScalarType::F64, 8, &s("f32=1.5")).unwrap(), 1.5f64.to_le_bytes());
        assert_eq!(scalar_bytes(ScalarType::B32, 4, &s("i32=-1")).unwrap(), [0xff; 4]);
        assert!(scalar_bytes(ScalarType::S32, 4, &s("i64=5000000000")).unwrap_err().contains("out of range"));
        assert!(scalar_bytes(ScalarType::S32, 4, &s("f64=1.5")).unwrap_err().contains("not an integer"));
        // A C++ `int` is `.u32` in nvcc's and clang's PTX: a negative value is its two's complement.
        assert_eq!(int(&scalar_bytes(ScalarType::U32, 4, &s("i32=-3")).unwrap()), -3);
        assert_eq!(int(&scalar_bytes(ScalarType::U32, 4, &s("f64=-3")).unwrap()), -3);
        assert_eq!(int(&scalar_bytes(ScalarType::U32, 4, &s("i64=-3")).unwrap()), -3);
        assert!(scalar_bytes(ScalarType::U32, 4, &s("i64=-2147483649")).unwrap_err().contains("out of range"));
        assert!(scalar_bytes(ScalarType::U32, 4, &s("i64=4294967296")).unwrap_err().contains("out of range"));
        assert!(scalar_bytes(ScalarType::F32, 4, &s("f64=0.1")).unwrap_err().contains("f32"));
        // The same type passes its bits untouched (a NaN's payload included).
        assert_eq!(scalar_bytes(ScalarType::F32, 4, &s("f32=0x7fc00001")).unwrap(), 0x7fc0_0001u32.to_le_bytes());
    }
}

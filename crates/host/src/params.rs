//! Kernel parameter bytes, laid out as the PTX parameter list says (each
//! parameter at its aligned offset, as lowering computed it).

use crate::{DevicePtr, HostError, Kernel};

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
}

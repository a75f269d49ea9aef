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

//! wgmma shared-memory matrix descriptors and the tensor maps of bulk tensor copies.

// ---- shared-memory matrix descriptors (wgmma) ---------------------------------------------

/// A decoded `wgmma` shared-memory matrix descriptor (PTX ISA, "Matrix
/// Descriptor Format").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Start address in shared memory (bytes).
    pub start: u32,
    /// Leading dimension byte offset.
    pub lbo: u32,
    /// Stride dimension byte offset.
    pub sbo: u32,
    pub base_offset: u32,
    /// Swizzle width in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
}

impl MatrixDesc {
    pub fn decode(d: u64) -> MatrixDesc {
        MatrixDesc {
            start: ((d & 0x3FFF) << 4) as u32,
            lbo: (((d >> 16) & 0x3FFF) << 4) as u32,
            sbo: (((d >> 32) & 0x3FFF) << 4) as u32,
            base_offset: ((d >> 49) & 7) as u32,
            swizzle: match d >> 62 {
                0 => 0,
                1 => 128,
                2 => 64,
                _ => 32,
            },
        }
    }

    /// Shared-memory byte address of element (`mn`, `k`) of an operand with
    /// `elem_bytes`-byte elements: `mn` indexes M (for A) or N (for B).
    /// `k_major`: K is the contiguous dimension (imm-trans = 0). The
    /// canonical layouts of the PTX ISA ("Shared Memory Matrix Layout"):
    /// with T = 16 / elem_bytes elements per 16 bytes and S = swizzle / 16,
    ///
    /// * K-major, no swizzle: ((8,m),(T,2k)):((1T,SBO),(1,LBO))
    /// * K-major, swizzled:   ((8,m),(T,2k)):((S*T,SBO),(1,T))
    /// * MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
    /// * MN-major, swizzled:  ((T,S,m),(8,k)):((1,T,LBO),(S*T,SBO))
    ///
    /// followed by the swizzle on the address bits: bits [4, 4+log2 S)
    /// are XORed with the bits 3 places above them.
    pub fn address(&self, mn: u32, k: u32, elem_bytes: u32, k_major: bool) -> u32 {
        let t = 16 / elem_bytes;
        let s = self.swizzle / 16;
        let (lbo, sbo) = (self.lbo / elem_bytes, self.sbo / elem_bytes);
        let el = if k_major {
            if s == 0 {
                (mn % 8) * t + (mn / 8) * sbo + (k % t) + (k / t) * lbo
            } else {
                // Within one swizzle atom along K (an instruction's K extent never exceeds it).
                (mn % 8) * s * t + (mn / 8) * sbo + k
            }
        } else if s == 0 {
            (mn % t) + (mn / t) * sbo + (k % 8) * t + (k / 8) * lbo
        } else {
            (mn % (s * t)) + (mn / (s * t)) * lbo + (k % 8) * s * t + (k / 8) * sbo
        };
        let addr = self.start.wrapping_add(el.wrapping_mul(elem_bytes));
        let mask = s.saturating_sub(1);
        addr ^ (((addr >> 7) & mask) << 4)
    }
}

/// Why 128 bytes are not a tensor map warpsim can use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TensorMapError {
    #[error(
        "the tensor map is not in warpsim's encoding (NVIDIA's CUtensorMap contents are opaque and not supported; \
         build the 128 bytes with warpsim_ir::mma::TensorMap::encode, magic `WSTMAP01`)"
    )]
    NotOurs,
    #[error("tensor map swizzle code {0} is not one of 0..3")]
    Swizzle(u8),
    #[error("tensor map rank {rank} or element size {elem_bytes} is invalid")]
    RankOrElement { rank: u32, elem_bytes: u32 },
    #[error("tensor map box dimension {dim} is {size} (1..256)")]
    BoxDim { dim: usize, size: u32 },
    #[error("tensor map element strides other than 1 are not supported")]
    ElementStride,
    #[error("tensor map inner box of {bytes} bytes exceeds the {swizzle}-byte swizzle")]
    InnerBox { bytes: u32, swizzle: u32 },
}

// ---- tensor maps ---------------------------------------------------------------------------

/// warpsim's encoding of a tensor map (the 128-byte `CUtensorMap` kernel
/// parameter of `cp.async.bulk.tensor`). NVIDIA's own encoding is opaque
/// (the CUDA driver fills it in `cuTensorMapEncodeTiled`), so warpsim reads
/// this documented one instead; [`TensorMap::encode`] builds it. Little-endian:
///
/// | bytes | field |
/// |---|---|
/// | 0..8 | magic `WSTMAP01` |
/// | 8..16 | global address |
/// | 16 | rank (1..5) |
/// | 17 | element size in bytes (1, 2, 4, 8) |
/// | 18 | swizzle: 0 none, 1 32B, 2 64B, 3 128B |
/// | 19 | out-of-bounds fill: 0 zeros, 1 NaN (floats) |
/// | 20..40 | global dimensions (u32 x 5, elements) |
/// | 40..72 | global strides of dimensions 1..4 (u64 x 4, bytes) |
/// | 72..82 | box dimensions (u16 x 5, elements) |
/// | 82..87 | element strides (u8 x 5) |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub address: u64,
    pub rank: u32,
    pub elem_bytes: u32,
    /// Swizzle width in bytes: 0, 32, 64, 128.
    pub swizzle: u32,
    pub nan_fill: bool,
    pub dims: [u64; 5],
    /// Byte strides; `strides[0]` is the element size.
    pub strides: [u64; 5],
    pub box_dims: [u32; 5],
    pub elem_strides: [u32; 5],
}

pub const TENSOR_MAP_MAGIC: &[u8; 8] = b"WSTMAP01";

impl TensorMap {
    /// A tiled tensor map of `dims` (innermost first) with byte `strides` for
    /// dimensions 1.., copying boxes of `box_dims`.
    pub fn tiled(address: u64, elem_bytes: u32, dims: &[u64], strides: &[u64], box_dims: &[u32], swizzle: u32) -> TensorMap {
        let mut t = TensorMap {
            address,
            rank: dims.len() as u32,
            elem_bytes,
            swizzle,
            nan_fill: false,
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            elem_strides: [1; 5],
        };
        t.dims[..dims.len()].copy_from_slice(dims);
        t.strides[0] = elem_bytes as u64;
        t.strides[1..1 + strides.len()].copy_from_slice(strides);
        t.box_dims[..box_dims.len()].copy_from_slice(box_dims);
        t
    }

    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[..8].copy_from_slice(TENSOR_MAP_MAGIC);
        b[8..16].copy_from_slice(&self.address.to_le_bytes());
        b[16] = self.rank as u8;
        b[17] = self.elem_bytes as u8;
        b[18] = match self.swizzle {
            32 => 1,
            64 => 2,
            128 => 3,
            _ => 0,
        };
        b[19] = self.nan_fill as u8;
        for i in 0..5 {
            b[20 + 4 * i..24 + 4 * i].copy_from_slice(&(self.dims[i] as u32).to_le_bytes());
            b[72 + 2 * i..74 + 2 * i].copy_from_slice(&(self.box_dims[i] as u16).to_le_bytes());
            b[82 + i] = self.elem_strides[i] as u8;
        }
        for i in 0..4 {
            b[40 + 8 * i..48 + 8 * i].copy_from_slice(&self.strides[i + 1].to_le_bytes());
        }
        b
    }

    pub fn decode(b: &[u8; 128]) -> Result<TensorMap, TensorMapError> {
        if &b[..8] != TENSOR_MAP_MAGIC {
            return Err(TensorMapError::NotOurs);
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let mut t = TensorMap {
            address: u64::from_le_bytes(b[8..16].try_into().unwrap()),
            rank: b[16] as u32,
            elem_bytes: b[17] as u32,
            swizzle: match b[18] {
                0 => 0,
                1 => 32,
                2 => 64,
                3 => 128,
                s => return Err(TensorMapError::Swizzle(s)),
            },
            nan_fill: b[19] != 0,
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            elem_strides: [1; 5],
        };
        if !(1..=5).contains(&t.rank) || ![1, 2, 4, 8].contains(&t.elem_bytes) {
            return Err(TensorMapError::RankOrElement { rank: t.rank, elem_bytes: t.elem_bytes });
        }
        t.strides[0] = t.elem_bytes as u64;
        for i in 0..5 {
            t.dims[i] = u32_at(20 + 4 * i) as u64;
            t.box_dims[i] = u16::from_le_bytes(b[72 + 2 * i..74 + 2 * i].try_into().unwrap()) as u32;
            t.elem_strides[i] = b[82 + i] as u32;
        }
        for i in 0..4 {
            t.strides[i + 1] = u64::from_le_bytes(b[40 + 8 * i..48 + 8 * i].try_into().unwrap());
        }
        for i in 0..t.rank as usize {
            if t.box_dims[i] == 0 || t.box_dims[i] > 256 {
                return Err(TensorMapError::BoxDim { dim: i, size: t.box_dims[i] });
            }
            if t.elem_strides[i] != 1 {
                return Err(TensorMapError::ElementStride);
            }
        }
        if t.swizzle != 0 && t.box_dims[0] * t.elem_bytes > t.swizzle {
            return Err(TensorMapError::InnerBox { bytes: t.box_dims[0] * t.elem_bytes, swizzle: t.swizzle });
        }
        Ok(t)
    }

    /// Bytes in one box.
    pub fn box_bytes(&self) -> u64 {
        self.box_dims[..self.rank as usize].iter().map(|&d| d as u64).product::<u64>() * self.elem_bytes as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_and_swizzles() {
        // 128B swizzle, K-major f16: row r of 64 elements at r*128, 16-byte chunks XOR (r % 8).
        let d = MatrixDesc { start: 1024, lbo: 16, sbo: 1024, base_offset: 0, swizzle: 128 };
        assert_eq!(d.address(0, 0, 2, true), 1024);
        assert_eq!(d.address(1, 0, 2, true), 1024 + 128 + 16);
        assert_eq!(d.address(3, 9, 2, true), 1024 + 3 * 128 + ((1 ^ 3) << 4) + 2);
        assert_eq!(d.address(9, 0, 2, true), 1024 + 1024 + 128 + 16);
        let raw = (1024u64 >> 4) | (1 << 16) | (64 << 32) | (1 << 62);
        assert_eq!(MatrixDesc::decode(raw), d);
        // No swizzle, K-major: core matrices of 8 rows x 16 bytes.
        let d = MatrixDesc { start: 0, lbo: 128, sbo: 256, base_offset: 0, swizzle: 0 };
        assert_eq!(d.address(1, 1, 2, true), 16 + 2);
        assert_eq!(d.address(8, 8, 2, true), 256 + 128);
    }

    #[test]
    fn tensor_maps_round_trip() {
        let t = TensorMap::tiled(0x7f00_0000_1000, 2, &[64, 120], &[128], &[64, 64], 128);
        let b = t.encode();
        assert_eq!(TensorMap::decode(&b).unwrap(), t);
        assert_eq!(t.box_bytes(), 8192);
        let mut bad = b;
        bad[0] = 0;
        assert!(TensorMap::decode(&bad).unwrap_err().to_string().contains("not in warpsim's encoding"));
    }
}

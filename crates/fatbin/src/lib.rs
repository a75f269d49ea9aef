//! The code images a CUDA program hands the driver, read without NVIDIA's
//! tools: the fatbin wrapper nvcc registers (`__cudaRegisterFatBinary`), the
//! fatbin container and its entries (PTX, ELF/SASS; PTX zstd- or
//! LZ4-compressed), and raw PTX text. warpsim runs PTX, so the question this
//! crate answers is "which PTX does this image carry for this device".
//!
//! Reading is lazy: [`Fatbin::parse`] lists the entries from their headers;
//! only [`Entry::contents`] decompresses, so a library with tens of MB of PTX
//! costs only the entry chosen.
//!
//! Layouts (little-endian), as nvcc 13 writes them:
//! * wrapper: `u32 magic 0x466243B1, u32 version, u64 data, u64 prelinked`;
//!   version 1: `data` is one fatbin; version 2 (`-rdc`): `prelinked` is a
//!   NULL-terminated array of fatbin pointers.
//! * fatbin: `u32 magic 0xBA55ED50, u16 version, u16 header_size, u64
//!   files_size`, then entries of `header_size + payload_size` bytes each.
//! * entry header: `u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size,
//!   u64 payload_size, u32 compressed_size, u32, u16 minor, u16 major,
//!   u32 sm, u32, u32, u64 flags, u64, u64 uncompressed_size`;
//!   flags 0x2000: LZ4 raw block, 0x8000: zstd.
#![forbid(unsafe_code)]

use std::io::Read;

/// `__cudaRegisterFatBinary`'s argument.
pub const WRAPPER_MAGIC: u32 = 0x466243B1;
/// A fatbin container.
pub const FATBIN_MAGIC: u32 = 0xBA55ED50;
/// Bytes of the wrapper struct.
pub const WRAPPER_LEN: usize = 24;
/// Bytes of the fatbin header.
pub const FATBIN_HEADER_LEN: usize = 16;
/// Bytes of an ELF64 header.
pub const ELF_HEADER_LEN: usize = 64;

const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
/// Entry headers are at least this long (the fields read below).
const ENTRY_MIN_HEADER: usize = 64;
/// No PTX in a real image comes near this; a larger size is a corrupt header.
const MAX_UNCOMPRESSED: u64 = 1 << 32;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FatbinError {
    #[error("the image is truncated: {what} needs {need} bytes, {have} present")]
    Truncated { what: &'static str, need: u64, have: u64 },
    #[error("bad magic {found:#x} for {what} (expected {expected:#x})")]
    BadMagic { what: &'static str, found: u32, expected: u32 },
    #[error("unsupported fatbin wrapper version {0} (known: 1, 2)")]
    WrapperVersion(u32),
    #[error("fatbin entry {index}: {why}")]
    BadEntry { index: usize, why: String },
    #[error("fatbin entry {index}: decompressing {method}: {why}")]
    Decompress { index: usize, method: &'static str, why: String },
    #[error("fatbin entry {index}: the PTX is not UTF-8 text")]
    NotText { index: usize },
    #[error(
        "the code image has no PTX, only machine code (SASS) for {sass}; warpsim runs PTX: rebuild with -arch=sm_90 \
         (which keeps PTX beside the SASS) or add -gencode arch=compute_90,code=compute_90"
    )]
    NoPtx { sass: String },
    #[error("the code image has PTX only for {have}, newer than the device (sm_{device}); rebuild for -arch=sm_{device}")]
    NoPtxForDevice { have: String, device: u32 },
}

/// The wrapper struct nvcc registers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wrapper {
    pub version: u32,
    /// Address of the fatbin (the program's own memory).
    pub data: u64,
    /// Version 2: address of the NULL-terminated array of prelinked fatbins (0 if none).
    pub prelinked: u64,
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

fn need(b: &[u8], n: usize, what: &'static str) -> Result<(), FatbinError> {
    if b.len() < n {
        return Err(FatbinError::Truncated { what, need: n as u64, have: b.len() as u64 });
    }
    Ok(())
}

/// Reads the wrapper struct from its first [`WRAPPER_LEN`] bytes.
pub fn parse_wrapper(b: &[u8]) -> Result<Wrapper, FatbinError> {
    need(b, WRAPPER_LEN, "the fatbin wrapper")?;
    let magic = u32_at(b, 0);
    if magic != WRAPPER_MAGIC {
        return Err(FatbinError::BadMagic { what: "the fatbin wrapper", found: magic, expected: WRAPPER_MAGIC });
    }
    let version = u32_at(b, 4);
    if version != 1 && version != 2 {
        return Err(FatbinError::WrapperVersion(version));
    }
    Ok(Wrapper { version, data: u64_at(b, 8), prelinked: if version == 2 { u64_at(b, 16) } else { 0 } })
}

/// What the first bytes of a code image say it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Wrapper,
    Fatbin,
    Elf,
    /// Anything else is taken as NUL-terminated PTX text.
    Text,
}

/// The kind of image starting with `first4` (fewer bytes: text).
pub fn image_kind(first4: &[u8]) -> ImageKind {
    if first4.len() < 4 {
        return ImageKind::Text;
    }
    match u32_at(first4, 0) {
        WRAPPER_MAGIC => ImageKind::Wrapper,
        FATBIN_MAGIC => ImageKind::Fatbin,
        0x464c_457f => ImageKind::Elf,
        _ => ImageKind::Text,
    }
}

/// The whole length of a fatbin from its first [`FATBIN_HEADER_LEN`] bytes.
pub fn fatbin_len(header: &[u8]) -> Result<u64, FatbinError> {
    need(header, FATBIN_HEADER_LEN, "the fatbin header")?;
    let magic = u32_at(header, 0);
    if magic != FATBIN_MAGIC {
        return Err(FatbinError::BadMagic { what: "the fatbin", found: magic, expected: FATBIN_MAGIC });
    }
    Ok(u16_at(header, 6) as u64 + u64_at(header, 8))
}

/// The length of an ELF64 file from its header: the end of its section and program header tables.
pub fn elf_len(header: &[u8]) -> Result<u64, FatbinError> {
    need(header, ELF_HEADER_LEN, "the ELF header")?;
    let (phoff, shoff) = (u64_at(header, 32), u64_at(header, 40));
    let (phentsize, phnum) = (u16_at(header, 54) as u64, u16_at(header, 56) as u64);
    let (shentsize, shnum) = (u16_at(header, 58) as u64, u16_at(header, 60) as u64);
    Ok((shoff + shentsize * shnum).max(phoff + phentsize * phnum).max(ELF_HEADER_LEN as u64))
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Ptx,
    /// Machine code (SASS) in an ELF.
    Elf,
    Other(u16),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Lz4,
}

/// One entry of a fatbin, its payload not yet decompressed.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub index: usize,
    pub kind: EntryKind,
    /// `sm_XY` as XY (90 for sm_90 / compute_90).
    pub sm: u32,
    pub compression: Compression,
    uncompressed_size: u64,
    payload: &'a [u8],
}

impl Entry<'_> {
    /// The payload, decompressed.
    pub fn contents(&self) -> Result<Vec<u8>, FatbinError> {
        let index = self.index;
        let err = |method, why: String| FatbinError::Decompress { index, method, why };
        match self.compression {
            Compression::None => Ok(self.payload.to_vec()),
            Compression::Zstd => {
                let mut out = Vec::with_capacity(self.uncompressed_size as usize);
                let mut d = ruzstd::decoding::StreamingDecoder::new(self.payload).map_err(|e| err("zstd", e.to_string()))?;
                d.read_to_end(&mut out).map_err(|e| err("zstd", e.to_string()))?;
                Ok(out)
            }
            Compression::Lz4 => {
                lz4_flex::block::decompress(self.payload, self.uncompressed_size as usize).map_err(|e| err("LZ4", e.to_string()))
            }
        }
    }

    /// A PTX entry's text (NUL padding removed).
    pub fn ptx_text(&self) -> Result<String, FatbinError> {
        let mut bytes = self.contents()?;
        if let Some(end) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(end);
        }
        String::from_utf8(bytes).map_err(|_| FatbinError::NotText { index: self.index })
    }
}

/// A fatbin container: its entries' headers.
#[derive(Clone, Debug)]
pub struct Fatbin<'a> {
    entries: Vec<Entry<'a>>,
}

impl<'a> Fatbin<'a> {
    /// Lists the entries of the fatbin at the start of `b` (`b` may run past its end).
    pub fn parse(b: &'a [u8]) -> Result<Fatbin<'a>, FatbinError> {
        let total = fatbin_len(b)?;
        need(b, total.min(usize::MAX as u64) as usize, "the fatbin")?;
        let b = &b[..total as usize];
        let mut off = u16_at(b, 6) as usize;
        let mut entries = Vec::new();
        while off < b.len() {
            let index = entries.len();
            let bad = |why: String| FatbinError::BadEntry { index, why };
            let rest = &b[off..];
            if rest.len() < ENTRY_MIN_HEADER {
                return Err(bad(format!("{} bytes left, less than an entry header", rest.len())));
            }
            let header_size = u32_at(rest, 4) as usize;
            let payload_size = u64_at(rest, 8);
            if header_size < ENTRY_MIN_HEADER || (header_size as u64).saturating_add(payload_size) > rest.len() as u64 {
                return Err(bad(format!("header of {header_size} and payload of {payload_size} bytes overrun the fatbin")));
            }
            let payload = &rest[header_size..header_size + payload_size as usize];
            let compressed = u32_at(rest, 16) as usize;
            let flags = u64_at(rest, 40);
            let uncompressed_size = u64_at(rest, 56);
            let compression = if flags & FLAG_ZSTD != 0 {
                Compression::Zstd
            } else if flags & FLAG_LZ4 != 0 {
                Compression::Lz4
            } else {
                Compression::None
            };
            if compression != Compression::None && (compressed > payload.len() || uncompressed_size > MAX_UNCOMPRESSED) {
                return Err(bad(format!("compressed size {compressed} or uncompressed size {uncompressed_size} is impossible")));
            }
            let kind = match u16_at(rest, 0) {
                1 => EntryKind::Ptx,
                2 => EntryKind::Elf,
                k => EntryKind::Other(k),
            };
            let payload = if compression == Compression::None { payload } else { &payload[..compressed] };
            entries.push(Entry { index, kind, sm: u32_at(rest, 28), compression, uncompressed_size, payload });
            off += header_size + payload_size as usize;
        }
        Ok(Fatbin { entries })
    }

    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// The PTX entry a device of compute capability `sm` (90 for 9.0) runs:
    /// the newest not newer than the device.
    pub fn ptx_entry(&self, sm: u32) -> Result<&Entry<'a>, FatbinError> {
        let ptx = || self.entries.iter().filter(|e| e.kind == EntryKind::Ptx);
        if let Some(e) = ptx().filter(|e| e.sm <= sm).max_by_key(|e| e.sm) {
            return Ok(e);
        }
        let names = |kind, prefix| {
            let mut v: Vec<String> = self.entries.iter().filter(|e| e.kind == kind).map(|e| format!("{prefix}_{}", e.sm)).collect();
            v.dedup();
            v.join(", ")
        };
        if ptx().next().is_some() {
            return Err(FatbinError::NoPtxForDevice { have: names(EntryKind::Ptx, "compute"), device: sm });
        }
        let sass = names(EntryKind::Elf, "sm");
        Err(FatbinError::NoPtx { sass: if sass.is_empty() { "no architecture".into() } else { sass } })
    }

    /// The text of [`Fatbin::ptx_entry`].
    pub fn ptx_for(&self, sm: u32) -> Result<String, FatbinError> {
        self.ptx_entry(sm)?.ptx_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";

    /// One entry as nvcc lays it out: an 80-byte header, the payload padded to 8 bytes.
    fn entry(kind: u16, sm: u32, flags: u64, payload: &[u8], uncompressed: u64) -> Vec<u8> {
        let padded = payload.len().div_ceil(8) * 8;
        let mut h = vec![0u8; 80];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x101u16.to_le_bytes());
        h[4..8].copy_from_slice(&80u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        let compressed = if flags & (FLAG_LZ4 | FLAG_ZSTD) != 0 { payload.len() as u32 } else { 0 };
        h[16..20].copy_from_slice(&compressed.to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        h[40..48].copy_from_slice(&(flags | 0x11).to_le_bytes());
        h[56..64].copy_from_slice(&uncompressed.to_le_bytes());
        h.extend_from_slice(payload);
        h.resize(80 + padded, 0);
        h
    }

    fn fatbin(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut f = FATBIN_MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&16u16.to_le_bytes());
        f.extend_from_slice(&(body.len() as u64).to_le_bytes());
        f.extend(body);
        f
    }

    #[test]
    fn plain_lz4_and_zstd_ptx_read_back() {
        let lz4 = lz4_flex::block::compress(PTX.as_bytes());
        let plain = fatbin(&[entry(2, 90, 0, b"\x7fELF....", 0), entry(1, 90, 0, PTX.as_bytes(), 0)]);
        let f = Fatbin::parse(&plain).unwrap();
        assert_eq!(f.entries().len(), 2);
        assert_eq!(f.ptx_for(90).unwrap(), PTX);
        let packed = fatbin(&[entry(1, 90, FLAG_LZ4, &lz4, PTX.len() as u64)]);
        assert_eq!(Fatbin::parse(&packed).unwrap().ptx_for(90).unwrap(), PTX);
        assert_eq!(fatbin_len(&packed).unwrap(), packed.len() as u64);
        // A fatbin past which other bytes follow still reads only its own length.
        let mut longer = packed.clone();
        longer.extend_from_slice(&[0xff; 40]);
        assert_eq!(Fatbin::parse(&longer).unwrap().entries().len(), 1);
    }

    #[test]
    fn zstd_frames_decompress() {
        // A zstd frame of raw blocks (no entropy coding): magic, header, one last raw block.
        let data = PTX.as_bytes();
        let mut z = vec![0x28, 0xb5, 0x2f, 0xfd, 0x20, data.len() as u8];
        let block = ((data.len() as u32) << 3) | 1; // last block, raw
        z.extend_from_slice(&block.to_le_bytes()[..3]);
        z.extend_from_slice(data);
        let f = fatbin(&[entry(1, 90, FLAG_ZSTD, &z, data.len() as u64)]);
        let fb = Fatbin::parse(&f).unwrap();
        assert_eq!(fb.entries()[0].compression, Compression::Zstd);
        assert_eq!(fb.ptx_for(90).unwrap(), PTX);
        let broken = fatbin(&[entry(1, 90, FLAG_ZSTD, &z[..8], data.len() as u64)]);
        assert!(matches!(Fatbin::parse(&broken).unwrap().ptx_for(90), Err(FatbinError::Decompress { method: "zstd", .. })));
    }

    #[test]
    fn the_device_gets_the_newest_ptx_it_can_run() {
        let f = fatbin(&[entry(1, 70, 0, b"seventy", 0), entry(1, 80, 0, b"eighty", 0), entry(1, 100, 0, b"hundred", 0)]);
        let fb = Fatbin::parse(&f).unwrap();
        assert_eq!(fb.ptx_for(90).unwrap(), "eighty");
        assert_eq!(fb.ptx_for(75).unwrap(), "seventy");
        let e = fb.ptx_for(60).unwrap_err();
        assert_eq!(e, FatbinError::NoPtxForDevice { have: "compute_70, compute_80, compute_100".into(), device: 60 });
    }

    #[test]
    fn sass_only_images_name_the_fix() {
        let f = fatbin(&[entry(2, 90, 0, b"\x7fELF", 0)]);
        let e = Fatbin::parse(&f).unwrap().ptx_for(90).unwrap_err();
        assert!(e.to_string().contains("only machine code (SASS) for sm_90"), "{e}");
        assert!(e.to_string().contains("-arch=sm_90") && e.to_string().contains("code=compute_90"), "{e}");
    }

    #[test]
    fn corrupt_headers_are_errors_not_panics() {
        let good = fatbin(&[entry(1, 90, 0, PTX.as_bytes(), 0)]);
        for cut in [0, 4, 15, 16, 40, good.len() - 1] {
            assert!(Fatbin::parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = good.clone();
        huge[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(Fatbin::parse(&huge), Err(FatbinError::BadEntry { .. })));
        let mut magic = good;
        magic[0] = 0;
        assert!(matches!(Fatbin::parse(&magic), Err(FatbinError::BadMagic { .. })));
    }

    #[test]
    fn wrappers_and_image_kinds() {
        let mut w = WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&2u32.to_le_bytes());
        w.extend_from_slice(&0x1000u64.to_le_bytes());
        w.extend_from_slice(&0x2000u64.to_le_bytes());
        assert_eq!(parse_wrapper(&w).unwrap(), Wrapper { version: 2, data: 0x1000, prelinked: 0x2000 });
        w[4] = 1;
        assert_eq!(parse_wrapper(&w).unwrap().prelinked, 0);
        w[4] = 3;
        assert_eq!(parse_wrapper(&w), Err(FatbinError::WrapperVersion(3)));
        assert_eq!(image_kind(&w), ImageKind::Wrapper);
        assert_eq!(image_kind(&FATBIN_MAGIC.to_le_bytes()), ImageKind::Fatbin);
        assert_eq!(image_kind(b"\x7fELF"), ImageKind::Elf);
        assert_eq!(image_kind(b".version"), ImageKind::Text);
        let mut elf = vec![0u8; 64];
        elf[40..48].copy_from_slice(&1000u64.to_le_bytes());
        elf[58..60].copy_from_slice(&64u16.to_le_bytes());
        elf[60..62].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(elf_len(&elf).unwrap(), 1192);
    }

    /// A fatbin nvcc made, when nvcc is on PATH (or in WARPSIM_NVCC): sm_90 SASS plus zstd PTX.
    #[test]
    fn reads_what_nvcc_writes() {
        let nvcc = std::env::var("WARPSIM_NVCC").unwrap_or_else(|_| "nvcc".into());
        let dir = std::env::temp_dir().join(format!("warpsim-fatbin-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cu = dir.join("k.cu");
        std::fs::write(&cu, "__global__ void twice(float *a) { a[threadIdx.x] *= 2.0f; }\n").unwrap();
        let out = dir.join("k.fatbin");
        let run = std::process::Command::new(&nvcc).arg("-fatbin").arg("-arch=sm_90").arg(&cu).arg("-o").arg(&out).output();
        let Ok(o) = run else {
            eprintln!("nvcc not found ({nvcc}): skipping the real-fatbin test");
            return;
        };
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&out).unwrap();
        let f = Fatbin::parse(&bytes).unwrap();
        let kinds: Vec<_> = f.entries().iter().map(|e| (e.kind, e.sm)).collect();
        assert!(kinds.contains(&(EntryKind::Elf, 90)) && kinds.contains(&(EntryKind::Ptx, 90)), "{kinds:?}");
        let ptx = f.ptx_for(90).unwrap();
        assert!(ptx.contains(".entry _Z5twicePf"), "{ptx}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

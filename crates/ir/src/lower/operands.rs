//! Operands: registers, immediates as constant registers, special registers,
//! symbols and addresses (refined to the state space they name).

use super::*;

impl Lowerer<'_> {
    pub(super) fn const_reg(&mut self, ty: ScalarType, bits: u64) -> RegRef {
        match bank_of(ty) {
            Bank::R64 => {
                if let Some(&s) = self.const64.get(&bits) {
                    return RegRef::r64(s);
                }
                let r = self.alloc_reg(ScalarType::B64);
                self.const64.insert(bits, r.slot);
                r
            }
            _ => {
                let v = bits as u32;
                if let Some(&s) = self.const32.get(&v) {
                    return RegRef::r32(s);
                }
                let r = self.alloc_reg(ScalarType::B32);
                self.const32.insert(v, r.slot);
                r
            }
        }
    }

    pub(super) fn zero32(&mut self) -> RegRef {
        self.const_reg(ScalarType::B32, 0)
    }

    pub(super) fn special(&mut self, name: &str) -> Option<(RegRef, ScalarType)> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some(which) = name.strip_prefix("%reserved_smem_offset_") {
            return self.reserved_smem(which).map(|r| (r, ScalarType::U32));
        }
        // Clusters: warpsim runs clusters of one CTA (kernels that ask for more are
        // refused), so a cluster is its CTA and the grid of clusters the grid.
        match name.split_once('.').map_or(name, |(b, _)| b) {
            "%cluster_ctarank" | "%cluster_ctaid" => return Some((self.const_reg(ScalarType::U32, 0), ScalarType::U32)),
            "%cluster_nctarank" | "%cluster_nctaid" => return Some((self.const_reg(ScalarType::U32, 1), ScalarType::U32)),
            _ => {}
        }
        let sp = if let Some((base, c)) = name.split_once('.') {
            let d = dim(c)?;
            match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                "%ctaid" | "%clusterid" => Special::Ctaid(d),
                "%nctaid" | "%nclusterid" => Special::Nctaid(d),
                _ => return None,
            }
        } else {
            match name {
                "%laneid" => Special::LaneId,
                "%warpid" => Special::WarpId,
                "%nwarpid" => Special::NWarpId,
                "%smid" => Special::SmId,
                "%nsmid" => Special::NSmId,
                "%lanemask_eq" => Special::LanemaskEq,
                "%lanemask_le" => Special::LanemaskLe,
                "%lanemask_lt" => Special::LanemaskLt,
                "%lanemask_ge" => Special::LanemaskGe,
                "%lanemask_gt" => Special::LanemaskGt,
                "WARP_SZ" => Special::WarpSize,
                "%gridid" => Special::GridId,
                "%dynamic_smem_size" => Special::DynamicSmemSize,
                "%total_smem_size" => Special::TotalSmemSize,
                _ => return None,
            }
        };
        let ty = if sp == Special::GridId { ScalarType::U64 } else { ScalarType::U32 };
        if let Some(r) = self.specials.get(&sp) {
            return Some((*r, ty));
        }
        let r = self.alloc_reg(ty);
        self.specials.insert(sp, r);
        Some((r, ty))
    }

    /// `%reserved_smem_offset_{begin,end,cap,0,1}`: the shared memory the
    /// system reserves for cooperative groups (`block_tile_memory`). Modelled
    /// as [`RESERVED_SMEM_BYTES`] of the block's shared memory laid out on
    /// first use, `_0` and `_1` its two halves.
    fn reserved_smem(&mut self, which: &str) -> Option<RegRef> {
        let base = match self.reserved_smem {
            Some(b) => b,
            None => {
                let b = place(&mut self.shared_bytes, Some(RESERVED_SMEM_BYTES as u64), 16)?;
                self.reserved_smem = Some(b);
                b
            }
        };
        let v = match which {
            "begin" | "0" => base,
            "1" => base + RESERVED_SMEM_BYTES / 2,
            "end" => base + RESERVED_SMEM_BYTES,
            "cap" => RESERVED_SMEM_BYTES,
            _ => return None,
        };
        Some(self.const_reg(ScalarType::U32, v as u64))
    }

    pub(super) fn clock_kind(name: &str) -> Option<ClockKind> {
        Some(match name {
            "%clock" => ClockKind::Clock32,
            "%clock64" => ClockKind::Clock64,
            "%globaltimer" => ClockKind::GlobalTimer,
            "%globaltimer_lo" => ClockKind::GlobalTimerLo,
            "%globaltimer_hi" => ClockKind::GlobalTimerHi,
            _ => return None,
        })
    }

    /// Address of a variable as a register value (for `mov r, var`).
    pub(super) fn symbol_value(&mut self, name: &str, offset: i64, ty: ScalarType, span: Span) -> LResult<RegRef> {
        match self.lookup(name) {
            Some(Sym::Shared(off)) => {
                if off == EXTERN_SHARED {
                    // A constant register of its own, filled once the layout is known.
                    let r = self.alloc_reg(if bank_of(ty) == Bank::R64 { ScalarType::B64 } else { ScalarType::B32 });
                    self.extern_patches.push((r, offset));
                    Ok(r)
                } else {
                    Ok(self.const_reg(ty, (off as i64).wrapping_add(offset) as u64))
                }
            }
            Some(Sym::Local(off)) => Ok(self.local_value((off as i64).wrapping_add(offset), ty, span)),
            Some(Sym::KParam(off)) => Ok(self.const_reg(ty, (off as i64).wrapping_add(offset) as u64)),
            Some(Sym::Global(g)) => {
                let slot = match self.symbol_addrs.get(&g) {
                    Some(&s) => s,
                    None => {
                        let r = self.alloc_reg(ScalarType::B64);
                        self.symbol_addrs.insert(g.clone(), r.slot);
                        r.slot
                    }
                };
                if offset == 0 {
                    Ok(RegRef::r64(slot))
                } else {
                    let d = self.alloc_reg(ScalarType::B64);
                    let k = self.const_reg(ScalarType::B64, offset as u64);
                    self.push(Op::Bin64 { f: Bin64::Add, d: d.slot, a: slot, b: k.slot }, None, span, "mov");
                    Ok(d)
                }
            }
            Some(Sym::Reg(..)) | Some(Sym::BranchTargets(_)) | Some(Sym::Vector(_)) | None => {
                self.err(span, format!("`{name}` is not a variable"))
            }
        }
    }

    /// A source operand of type `ty`, as a register.
    pub(super) fn src(&mut self, op: &Operand, ty: ScalarType) -> LResult<RegRef> {
        match op {
            Operand::Name(name, span) => {
                if let Some(sym) = self.lookup(name) {
                    return match sym {
                        Sym::Reg(r, _) => Ok(r),
                        _ => self.symbol_value(name, 0, ty, *span),
                    };
                }
                if let Some((r, _)) = self.special(name) {
                    return Ok(r);
                }
                if let Some(k) = Self::clock_kind(name) {
                    let cty = if k == ClockKind::Clock64 || k == ClockKind::GlobalTimer { ScalarType::U64 } else { ScalarType::U32 };
                    let d = self.alloc_reg(cty);
                    self.push(Op::Clock { kind: k, d }, None, *span, "mov");
                    return Ok(d);
                }
                // A function's address (a function pointer).
                if self.m.function(name).is_some() {
                    let addr = calls::function_index(self.m, name).map_or(0, function_addr);
                    return Ok(self.const_reg(if bank_of(ty) == Bank::R64 { ty } else { ScalarType::U64 }, addr));
                }
                self.err(*span, format!("unknown register or symbol `{name}`"))
            }
            Operand::Imm(v, span) => {
                if ty == ScalarType::Pred {
                    let r = self.alloc_reg(ScalarType::Pred);
                    let (a, b) = (r.slot, r.slot);
                    // p = (v != 0): xor p,p gives 0; not of that gives 1.
                    self.push(Op::PredLogic { op: PredOp::Xor, d: r.slot, a, b }, None, *span, "mov.pred");
                    if *v != 0 {
                        self.push(Op::PredLogic { op: PredOp::Not, d: r.slot, a: r.slot, b: r.slot }, None, *span, "mov.pred");
                    }
                    return Ok(r);
                }
                let bits = match ty {
                    ScalarType::F32 => (*v as f32).to_bits() as u64,
                    ScalarType::F64 => (*v as f64).to_bits(),
                    _ => *v as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::F32(b, _) => {
                let bits = match ty {
                    ScalarType::F64 => (f32::from_bits(*b) as f64).to_bits(),
                    ScalarType::F16 => half::f16::from_f32(f32::from_bits(*b)).to_bits() as u64,
                    ScalarType::BF16 => half::bf16::from_f32(f32::from_bits(*b)).to_bits() as u64,
                    _ => *b as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::F64(b, _) => {
                let f = f64::from_bits(*b);
                let bits = match ty {
                    ScalarType::F32 => (f as f32).to_bits() as u64,
                    ScalarType::F16 => half::f16::from_f64(f).to_bits() as u64,
                    ScalarType::BF16 => half::bf16::from_f64(f).to_bits() as u64,
                    ScalarType::F64 => *b,
                    _ => f as i64 as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::Addr { base: AddrBase::Name(n), offset, span } => match self.lookup(n) {
                // `r + 1` as a source: ptxas folds it into an add.
                Some(Sym::Reg(r, _)) if r.bank != Bank::Pred => {
                    let d = self.alloc_reg(if r.bank == Bank::R64 { ScalarType::B64 } else { ScalarType::B32 });
                    if r.bank == Bank::R64 {
                        let k = self.const_reg(ScalarType::B64, *offset as u64);
                        self.push(Op::Bin64 { f: Bin64::Add, d: d.slot, a: r.slot, b: k.slot }, None, *span, "add");
                    } else {
                        let k = self.const_reg(ScalarType::B32, *offset as u64);
                        self.push(Op::Bin32 { f: Bin32::Add, d: d.slot, a: r.slot, b: k.slot }, None, *span, "add");
                    }
                    Ok(d)
                }
                _ => self.symbol_value(n, *offset, ty, *span),
            },
            _ => self.err(op.span(), "expected a register or constant"),
        }
    }

    /// A destination register.
    pub(super) fn dst(&mut self, op: &Operand) -> LResult<RegRef> {
        match op {
            Operand::Name(name, span) => match self.lookup(name) {
                Some(Sym::Reg(r, _)) => Ok(r),
                _ if self.special(name).is_some() => self.err(*span, format!("`{name}` is read-only")),
                _ => self.err(*span, format!("unknown register `{name}`")),
            },
            Operand::Sink(_) => Ok(self.alloc_sink()),
            _ => self.err(op.span(), "expected a destination register"),
        }
    }

    pub(super) fn alloc_sink(&mut self) -> RegRef {
        // A fresh scratch register per use keeps things simple.
        self.alloc_reg(ScalarType::B64)
    }

    pub(super) fn dst_pred(&mut self, op: &Operand) -> LResult<u32> {
        match op {
            Operand::Sink(_) => Ok(self.alloc_reg(ScalarType::Pred).slot),
            _ => {
                let r = self.dst(op)?;
                if r.bank != Bank::Pred {
                    return self.err(op.span(), "expected a predicate register");
                }
                Ok(r.slot)
            }
        }
    }

    /// A predicate source, possibly negated with `!`.
    pub(super) fn src_pred(&mut self, op: &Operand) -> LResult<(u32, bool)> {
        match op {
            Operand::Not(inner, _) => {
                let (p, n) = self.src_pred(inner)?;
                Ok((p, !n))
            }
            _ => {
                let r = self.src(op, ScalarType::Pred)?;
                if r.bank != Bank::Pred {
                    return self.err(op.span(), "expected a predicate");
                }
                Ok((r.slot, false))
            }
        }
    }

    pub(super) fn r32(&mut self, op: &Operand, ty: ScalarType) -> LResult<u32> {
        let r = self.src(op, ty)?;
        self.want_bank(op, r, Bank::R32)
    }

    pub(super) fn r64(&mut self, op: &Operand, ty: ScalarType) -> LResult<u32> {
        let r = self.src(op, ty)?;
        self.want_bank(op, r, Bank::R64)
    }

    pub(super) fn want_bank(&self, op: &Operand, r: RegRef, bank: Bank) -> LResult<u32> {
        if r.bank != bank {
            let want = match bank {
                Bank::R32 => "a register of at most 32 bits",
                Bank::R64 => "a 64-bit register",
                Bank::Pred => "a predicate",
            };
            return self.err(op.span(), format!("operand size mismatch: expected {want}"));
        }
        Ok(r.slot)
    }

    pub(super) fn d32(&mut self, op: &Operand) -> LResult<u32> {
        let r = self.dst(op)?;
        self.want_bank(op, r, Bank::R32)
    }

    pub(super) fn d64(&mut self, op: &Operand) -> LResult<u32> {
        let r = self.dst(op)?;
        self.want_bank(op, r, Bank::R64)
    }

    /// The address of a memory operand and the space it names, refining `space`.
    pub(super) fn address(&mut self, op: &Operand, space: Space) -> LResult<(Space, Addr)> {
        let Operand::Addr { base, offset, span } = op else {
            return self.err(op.span(), "expected an address `[...]`");
        };
        match base {
            AddrBase::Imm(v) => Ok((space, Addr { base: None, offset: v.wrapping_add(*offset) })),
            AddrBase::Name(name) => match self.lookup(name) {
                Some(Sym::Reg(r, _)) => {
                    if r.bank == Bank::Pred {
                        return self.err(*span, "a predicate cannot be an address");
                    }
                    let in_function = self.frames.len() > 1 || self.current_real.is_some();
                    let space = if space == Space::KernelParam && in_function { Space::Local } else { space };
                    Ok((space, Addr { base: Some(r), offset: *offset }))
                }
                Some(Sym::Shared(off)) => {
                    let base_off = if off == EXTERN_SHARED {
                        let r = self.symbol_value(name, 0, ScalarType::U32, *span)?;
                        return Ok(match space {
                            Space::Generic => {
                                let g = self.alloc_reg(ScalarType::B64);
                                let w = self.alloc_reg(ScalarType::B64);
                                self.push(Op::Extend32To64 { signed: false, d: w.slot, a: r.slot }, None, *span, "cvta");
                                let k = self.const_reg(ScalarType::B64, SHARED_WINDOW);
                                self.push(Op::Bin64 { f: Bin64::Add, d: g.slot, a: w.slot, b: k.slot }, None, *span, "cvta");
                                (Space::Generic, Addr { base: Some(g), offset: *offset })
                            }
                            _ => (Space::Shared, Addr { base: Some(r), offset: *offset }),
                        });
                    } else {
                        off as i64
                    };
                    match space {
                        Space::Generic => {
                            Ok((Space::Generic, Addr { base: None, offset: (SHARED_WINDOW as i64 + base_off).wrapping_add(*offset) }))
                        }
                        _ => Ok((Space::Shared, Addr { base: None, offset: base_off.wrapping_add(*offset) })),
                    }
                }
                Some(Sym::Local(off)) => Ok(self.local_address(off, *offset, space, *span)),
                Some(Sym::KParam(off)) => Ok((Space::KernelParam, Addr { base: None, offset: (off as i64).wrapping_add(*offset) })),
                Some(Sym::Global(_)) => {
                    let r = self.symbol_value(name, 0, ScalarType::U64, *span)?;
                    let sp = if space == Space::Const {
                        Space::Const
                    } else if space == Space::Generic {
                        Space::Generic
                    } else {
                        Space::Global
                    };
                    Ok((sp, Addr { base: Some(r), offset: *offset }))
                }
                Some(Sym::BranchTargets(_)) => self.err(*span, "a branch-target list is not an address"),
                Some(Sym::Vector(_)) => self.err(*span, "a vector register is not an address"),
                None => self.err(*span, format!("unknown symbol `{name}` in address")),
            },
        }
    }
}

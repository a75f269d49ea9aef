//! Device `printf` (`vprintf`) and `assert` (`__assertfail`), the two
//! external functions CUDA kernels call: the format string and `%s`
//! arguments are read from global memory, the argument buffer (each value
//! at its natural alignment, floats promoted to double) from the lane's
//! local memory. Output is kept per launch in execution order (blocks in
//! order, then each `printf` instruction's lanes in ascending order) and
//! flushed when the launch ends, as the GPU's buffer is.

use super::*;

/// Longest string read for `%s`, a format or an assert message.
const MAX_STR: u64 = 4096;

impl<const W: usize> Warp<W> {
    fn param_u64(&mut self, ctx: &WarpCtx<'_>, off: u32, size: u32, lane: usize) -> Result<u64, FaultKind> {
        // The `.param` variables are in the calling function's frame.
        let at = self.frame_base(ctx, lane).wrapping_add(off as u64);
        self.load(ctx, Space::Local, at, size, lane)
    }

    fn c_string(&mut self, ctx: &WarpCtx<'_>, addr: u64, lane: usize) -> Result<String, FaultKind> {
        if addr == 0 {
            return Ok("(null)".into());
        }
        let mut bytes = Vec::new();
        for i in 0..MAX_STR {
            let b = self.load(ctx, Space::Generic, addr.wrapping_add(i), 1, lane)? as u8;
            if b == 0 {
                break;
            }
            bytes.push(b);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `__assertfail(message, file, line, function, charSize)`: the message is
    /// read in the first executing lane and the launch ends with a fault naming
    /// it and every executing lane (each prints the message on a GPU).
    pub(super) fn assert_fail(&mut self, ctx: &WarpCtx<'_>, pc: u32, exec: u64, params: &[u32; 4]) -> WarpFault {
        let lane = exec.trailing_zeros() as usize;
        let r = (|| -> Result<FaultKind, FaultKind> {
            let message = self.param_u64(ctx, params[0], 8, lane)?;
            let file = self.param_u64(ctx, params[1], 8, lane)?;
            let line = self.param_u64(ctx, params[2], 4, lane)? as u32;
            let function = self.param_u64(ctx, params[3], 8, lane)?;
            Ok(FaultKind::AssertFailed {
                message: self.c_string(ctx, message, lane)?,
                file: self.c_string(ctx, file, lane)?,
                line,
                function: self.c_string(ctx, function, lane)?,
                lanes: exec,
            })
        })();
        WarpFault { pc, lane: Some(lane as u32), kind: r.unwrap_or_else(|e| e) }
    }

    /// `vprintf(format, args)` in every executing lane, in lane order.
    pub(super) fn printf(
        &mut self,
        ctx: &WarpCtx<'_>,
        pc: u32,
        exec: u64,
        format: u32,
        args: u32,
        d: Option<u32>,
    ) -> Result<(), WarpFault> {
        let mut m = exec;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let r = (|| -> Result<(String, u32), FaultKind> {
                let fmt = self.param_u64(ctx, format, 8, lane)?;
                let buf = self.param_u64(ctx, args, 8, lane)?;
                let fmt = self.c_string(ctx, fmt, lane)?;
                self.format(ctx, &fmt, buf, lane)
            })();
            let (s, consumed) = r.map_err(|kind| WarpFault::lane(pc, lane, kind))?;
            self.printed.push_str(&s);
            // CUDA's printf returns the number of arguments it parsed.
            if let Some(d) = d {
                self.put_lane(RegRef::r32(d), lane, consumed as u64);
            }
        }
        Ok(())
    }

    /// The text and the number of arguments it consumed.
    fn format(&mut self, ctx: &WarpCtx<'_>, fmt: &str, buf: u64, lane: usize) -> Result<(String, u32), FaultKind> {
        let mut out = String::new();
        let mut pos = 0u64;
        let mut consumed = 0u32;
        let b = fmt.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                let start = i;
                while i < b.len() && b[i] != b'%' {
                    i += 1;
                }
                out.push_str(&fmt[start..i]);
                continue;
            }
            i += 1;
            let mut spec = Spec::default();
            while i < b.len() && b"-+ #0".contains(&b[i]) {
                match b[i] {
                    b'-' => spec.left = true,
                    b'+' => spec.plus = true,
                    b' ' => spec.space = true,
                    b'#' => spec.alt = true,
                    _ => spec.zero = true,
                }
                i += 1;
            }
            while i < b.len() && b[i].is_ascii_digit() {
                spec.width = spec.width * 10 + (b[i] - b'0') as usize;
                i += 1;
            }
            if i < b.len() && b[i] == b'.' {
                i += 1;
                let mut p = 0;
                while i < b.len() && b[i].is_ascii_digit() {
                    p = p * 10 + (b[i] - b'0') as usize;
                    i += 1;
                }
                spec.prec = Some(p);
            }
            let mut long = false;
            while i < b.len() && b"hlLqjzt".contains(&b[i]) {
                long |= matches!(b[i], b'l' | b'L' | b'q' | b'j' | b'z' | b't');
                i += 1;
            }
            let Some(&conv) = b.get(i) else {
                out.push('%');
                break;
            };
            i += 1;
            let mut arg = |w: &mut Self, size: u64| -> Result<u64, FaultKind> {
                pos = pos.next_multiple_of(size);
                let v = w.load(ctx, Space::Generic, buf.wrapping_add(pos), size as u32, lane)?;
                pos += size;
                consumed += 1;
                Ok(v)
            };
            let s = match conv {
                b'%' => "%".to_string(),
                b'd' | b'i' => {
                    let v = if long { arg(self, 8)? as i64 } else { arg(self, 4)? as u32 as i32 as i64 };
                    spec.int(v < 0, v.unsigned_abs().to_string(), "")
                }
                b'u' | b'x' | b'X' | b'o' => {
                    let v = if long { arg(self, 8)? } else { arg(self, 4)? & 0xFFFF_FFFF };
                    let (digits, pre) = match conv {
                        b'u' => (v.to_string(), ""),
                        b'x' => (format!("{v:x}"), if spec.alt && v != 0 { "0x" } else { "" }),
                        b'X' => (format!("{v:X}"), if spec.alt && v != 0 { "0X" } else { "" }),
                        _ => (format!("{v:o}"), if spec.alt && v != 0 { "0" } else { "" }),
                    };
                    spec.plus = false;
                    spec.space = false;
                    spec.int(false, digits, pre)
                }
                b'c' => spec.pad(((arg(self, 4)? as u8) as char).to_string(), false),
                b's' => {
                    let p = arg(self, 8)?;
                    let mut s = self.c_string(ctx, p, lane)?;
                    if let Some(n) = spec.prec {
                        s = s.chars().take(n).collect();
                    }
                    spec.pad(s, false)
                }
                b'p' => spec.pad(format!("0x{:x}", arg(self, 8)?), false),
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                    let v = f64::from_bits(arg(self, 8)?);
                    spec.float(v, conv)
                }
                other => format!("%{}", other as char),
            };
            out.push_str(&s);
        }
        Ok((out, consumed))
    }
}

/// One `%` conversion's flags, width and precision.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

impl Spec {
    fn pad(&self, s: String, zero_ok: bool) -> String {
        let n = s.chars().count();
        if n >= self.width {
            return s;
        }
        let fill = self.width - n;
        if self.left {
            format!("{s}{}", " ".repeat(fill))
        } else if self.zero && zero_ok {
            // Zeros go after the sign or prefix.
            let k = s.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
            let k = if s[k..].starts_with("0x") || s[k..].starts_with("0X") { k + 2 } else { k };
            format!("{}{}{}", &s[..k], "0".repeat(fill), &s[k..])
        } else {
            format!("{}{s}", " ".repeat(fill))
        }
    }

    fn sign(&self, neg: bool) -> &'static str {
        if neg {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    fn int(&self, neg: bool, mut digits: String, prefix: &str) -> String {
        if let Some(p) = self.prec {
            if p == 0 && digits == "0" {
                digits.clear();
            }
            if digits.len() < p {
                digits = format!("{}{digits}", "0".repeat(p - digits.len()));
            }
        }
        let s = format!("{}{prefix}{digits}", self.sign(neg));
        self.pad(s, self.prec.is_none())
    }

    fn float(&self, v: f64, conv: u8) -> String {
        let upper = conv.is_ascii_uppercase();
        let neg = v.is_sign_negative() && !v.is_nan();
        let a = v.abs();
        let body = if v.is_nan() {
            "nan".to_string()
        } else if v.is_infinite() {
            "inf".to_string()
        } else {
            let p = self.prec.unwrap_or(6);
            match conv.to_ascii_lowercase() {
                b'f' => format!("{a:.p$}"),
                b'e' => c_exp(a, p),
                b'a' => format!("{a:e}"),
                _ => {
                    let p = p.max(1);
                    let x = if a == 0.0 { 0 } else { c_exp(a, p - 1).rsplit('e').next().unwrap().parse::<i32>().unwrap() };
                    let s = if (x as i64) < p as i64 && x >= -4 { format!("{a:.*}", (p as i32 - 1 - x) as usize) } else { c_exp(a, p - 1) };
                    if self.alt {
                        s
                    } else {
                        trim_zeros(&s)
                    }
                }
            }
        };
        let body = if upper { body.to_uppercase() } else { body };
        let s = format!("{}{body}", self.sign(neg));
        self.pad(s, v.is_finite())
    }
}

/// `%.{p}e` as C prints it: `1.500000e+00`.
fn c_exp(a: f64, p: usize) -> String {
    let s = format!("{a:.p$e}");
    let (m, e) = s.split_once('e').unwrap();
    let e: i32 = e.parse().unwrap();
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// `%g` drops trailing zeros of the fraction (and a bare point).
fn trim_zeros(s: &str) -> String {
    let (m, e) = match s.find('e') {
        Some(k) => (&s[..k], &s[k..]),
        None => (s, ""),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
    format!("{m}{e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_float_formats() {
        let s = Spec::default();
        assert_eq!(s.float(1.5, b'f'), "1.500000");
        assert_eq!(s.float(1.5, b'e'), "1.500000e+00");
        assert_eq!(s.float(0.0001234, b'g'), "0.0001234");
        assert_eq!(s.float(1234567.0, b'g'), "1.23457e+06");
        assert_eq!(s.float(100.0, b'g'), "100");
        assert_eq!(s.float(f64::NEG_INFINITY, b'f'), "-inf");
        let w = Spec { width: 8, zero: true, prec: Some(2), ..Default::default() };
        assert_eq!(w.float(-2.25625, b'f'), "-0002.26");
        let i = Spec { width: 5, zero: true, ..Default::default() };
        assert_eq!(i.int(true, "42".into(), ""), "-0042");
        let l = Spec { width: 4, left: true, ..Default::default() };
        assert_eq!(l.int(false, "7".into(), ""), "7   ");
    }
}

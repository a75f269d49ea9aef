//! Pictures of tensor-core fragment layouts (`warpsim explain`): which
//! thread and element of its fragment hold each matrix element, as text for
//! a terminal or as HTML tables for reports. The layouts come from
//! `warpsim_ir::mma`; this module only draws them.

use warpsim_ir::mma::{Family, Frag, Mat, MmaType, Shape};

/// Why a layout cannot be explained.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    #[error("`{0}`: expected a shape such as m16n8k16")]
    Shape(String),
    #[error("`{0}` is not an MMA element type")]
    Type(String),
    #[error("{family} {shape} with {ty} elements is not a supported fragment")]
    Unsupported { family: &'static str, shape: String, ty: &'static str },
}

/// Parses `[mma.|wmma.|wgmma.]mMnNkK[.type]` (default `mma`, the type
/// defaulting to f16, tf32, s8 or f64 by shape).
pub fn parse_explain(spec: &str) -> Result<(Family, Shape, MmaType), ExplainError> {
    let mut parts: Vec<&str> = spec.split('.').collect();
    let family = match parts.first().copied() {
        Some("mma") => {
            parts.remove(0);
            Family::Mma
        }
        Some("wmma") => {
            parts.remove(0);
            Family::Wmma
        }
        Some("wgmma") => {
            parts.remove(0);
            Family::Wgmma
        }
        _ => Family::Mma,
    };
    let shape = parts.first().and_then(|s| Shape::parse(s)).ok_or_else(|| ExplainError::Shape(spec.to_string()))?;
    let family = if family == Family::Mma && shape.m == 64 { Family::Wgmma } else { family };
    let ty = match parts.get(1) {
        Some(t) => MmaType::from_ptx(t).ok_or_else(|| ExplainError::Type(t.to_string()))?,
        None => match (family, shape.m, shape.n, shape.k) {
            (_, 8, 8, 4) => MmaType::F64,
            (Family::Mma, 16, 8, 4) | (Family::Wmma, 16, 16, 8) | (Family::Wgmma, _, _, 8) => MmaType::TF32,
            (Family::Mma, _, _, 32) | (Family::Mma, 8, 8, 16) | (Family::Wgmma, _, _, 32) => MmaType::S8,
            _ => MmaType::F16,
        },
    };
    let acc = accumulator_type(ty);
    for (mat, t) in [(Mat::A, ty), (Mat::B, ty), (Mat::C, acc)] {
        let f = Frag { family, shape, mat, ty: t };
        if mat == Mat::B && family == Family::Wgmma {
            continue;
        }
        if !f.supported() {
            return Err(ExplainError::Unsupported { family: family_name(family), shape: shape.name(), ty: ty.name() });
        }
    }
    Ok((family, shape, ty))
}

fn accumulator_type(ty: MmaType) -> MmaType {
    match ty {
        MmaType::S8 | MmaType::U8 => MmaType::S32,
        MmaType::F64 => MmaType::F64,
        _ => MmaType::F32,
    }
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::Mma => "mma.sync",
        Family::Wmma => "wmma",
        Family::Wgmma => "wgmma",
    }
}

/// For each element of operand `mat`, the holder: (thread, slot) of its first copy.
fn owner_grid(family: Family, shape: Shape, mat: Mat, ty: MmaType) -> Vec<Vec<Option<(u32, u32)>>> {
    let (rows, cols) = shape.dims(mat);
    let mut grid = vec![vec![None; cols as usize]; rows as usize];
    let f = Frag { family, shape, mat, ty };
    let threads = if family == Family::Wgmma { 128 } else { 32 };
    for lane in 0..threads {
        for slot in 0..f.distinct() {
            let (r, c) = f.pos(lane, slot);
            let cell = &mut grid[r as usize][c as usize];
            if cell.is_none() {
                *cell = Some((lane, slot));
            }
        }
    }
    grid
}

/// The fragment layout of a shape as text no wider than `width` columns:
/// for A, B and C, a grid whose cell (row, col) says which thread and
/// element hold it (`T5:a2`: thread 5, element a2 of its fragment; each
/// `.f16x2` register holds two consecutive elements). Wide matrices are
/// printed in column bands.
pub fn explain(spec: &str, width: usize) -> Result<String, ExplainError> {
    let (family, shape, ty) = parse_explain(spec)?;
    let acc = accumulator_type(ty);
    let mut out = String::new();
    out.push_str(&format!(
        "{} {}: A {} x {} ({}), B {} x {} ({}), C/D {} x {} ({})\n",
        family_name(family),
        shape.name(),
        shape.m,
        shape.k,
        ty.name(),
        shape.k,
        shape.n,
        ty.name(),
        shape.m,
        shape.n,
        acc.name()
    ));
    out.push_str("cell = thread:element (T5:a2 = element a2 of thread 5's fragment)\n");
    out.push_str(&format!(
        "elements per register: {} for {}, {} for {}; element i is in register i / that\n",
        ty.per_reg(),
        ty.name(),
        acc.per_reg(),
        acc.name()
    ));
    if family == Family::Wgmma {
        out.push_str("threads 0..127 of the warpgroup; warp w = thread / 32 holds rows 16w .. 16w+15\n");
        out.push_str("B is read from shared memory through a matrix descriptor\n");
    }
    if family == Family::Wmma {
        out.push_str("wmma layouts are opaque in the PTX ISA: this is the one an H200 uses\n");
        out.push_str("(the .row/.col memory layout does not change it)\n");
    }
    for (mat, t, letter) in [(Mat::A, ty, 'a'), (Mat::B, ty, 'b'), (Mat::C, acc, 'c')] {
        if family == Family::Wgmma && mat == Mat::B {
            continue;
        }
        let grid = owner_grid(family, shape, mat, t);
        let (rows, cols) = shape.dims(mat);
        let name = match mat {
            Mat::A => "A",
            Mat::B => "B",
            Mat::C => "C/D",
        };
        let cell = |o: Option<(u32, u32)>| match o {
            Some((l, s)) => format!("T{l}:{letter}{s}"),
            None => "-".into(),
        };
        let cw = grid.iter().flatten().map(|&o| cell(o).len()).max().unwrap_or(1) + 1;
        let label_w = format!("{}", rows - 1).len() + 2;
        let mut per_band = ((width.saturating_sub(label_w)) / cw).max(1) as u32;
        if per_band < cols && per_band >= 8 {
            // Bands of whole 8-column groups (the fragments' tiles).
            per_band = per_band / 8 * 8;
        }
        out.push('\n');
        out.push_str(&format!("{name} ({rows} x {cols}):\n"));
        let mut c0 = 0;
        while c0 < cols {
            let c1 = (c0 + per_band).min(cols);
            let mut line = " ".repeat(label_w);
            for c in c0..c1 {
                line.push_str(&format!("{:>cw$}", c, cw = cw));
            }
            out.push_str(line.trim_end());
            out.push('\n');
            for r in 0..rows {
                let mut line = format!("{:>w$}  ", r, w = label_w - 2);
                for c in c0..c1 {
                    line.push_str(&format!("{:>cw$}", cell(grid[r as usize][c as usize]), cw = cw));
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
            c0 = c1;
        }
    }
    Ok(out)
}

/// The same layout as an HTML fragment (one table per operand, cells
/// coloured by thread), for reports.
pub fn explain_html(spec: &str) -> Result<String, ExplainError> {
    let (family, shape, ty) = parse_explain(spec)?;
    let acc = accumulator_type(ty);
    let mut out = format!("<div class=\"mma-layout\"><h3>{} {} ({})</h3>\n", family_name(family), shape.name(), ty.name());
    for (mat, t, letter) in [(Mat::A, ty, 'a'), (Mat::B, ty, 'b'), (Mat::C, acc, 'c')] {
        if family == Family::Wgmma && mat == Mat::B {
            continue;
        }
        let grid = owner_grid(family, shape, mat, t);
        let name = match mat {
            Mat::A => "A",
            Mat::B => "B",
            Mat::C => "C/D",
        };
        out.push_str(&format!("<table class=\"mma-frag\"><caption>{name}</caption>\n"));
        for row in &grid {
            out.push_str("<tr>");
            for o in row {
                match o {
                    Some((l, s)) => {
                        let hue = (l * 360 / 32) % 360;
                        out.push_str(&format!("<td style=\"background:hsl({hue},70%,85%)\">T{l}:{letter}{s}</td>"));
                    }
                    None => out.push_str("<td>-</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
    out.push_str("</div>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_fits_in_100_columns() {
        for spec in ["m16n8k16", "m16n8k8.tf32", "m16n8k32.s8", "m8n8k4", "wmma.m16n16k16", "wmma.m8n32k16.bf16", "wgmma.m64n16k16"] {
            let s = explain(spec, 100).unwrap();
            assert!(s.lines().all(|l| l.chars().count() <= 100), "{spec}:\n{s}");
            assert!(s.contains("T0:a0"), "{spec}");
        }
        let s = explain("m16n8k16", 100).unwrap();
        // Row 9 (g = 1 + 8) column 3 of A: thread 5 (g 1, t 1), element a3.
        let row9 = s.lines().skip_while(|l| !l.starts_with("A ")).find(|l| l.trim_start().starts_with("9 ")).unwrap();
        assert!(row9.contains("T5:a3"), "{row9}");
        assert!(explain("m16n8k99", 100).is_err());
        assert!(explain("wmma.m16n8k16", 100).unwrap_err().to_string().contains("not a supported fragment"));
        assert!(explain_html("m16n8k16").unwrap().contains("<table"));
    }
}

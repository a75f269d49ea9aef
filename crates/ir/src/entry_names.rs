//! Kernels by the name a C++ programmer knows: nvcc and clang emit mangled
//! `.entry` names (`_Z10map_reduceIfEvPT_i`), users type `map_reduce<float>`.

use cpp_demangle::{DemangleOptions, Symbol};

/// Why a requested name picks no single entry.
#[derive(Debug, PartialEq, Eq)]
pub enum Unresolved<'a> {
    Missing,
    Ambiguous(Vec<&'a str>),
}

/// The C++ name of a mangled entry (`map_reduce<float>(float*, int)`), if it is one.
pub fn demangle(mangled: &str) -> Option<String> {
    demangle_with(mangled, DemangleOptions::new().no_return_type())
}

/// The C++ name without its parameter list (`map_reduce<float>`).
fn demangle_no_params(mangled: &str) -> Option<String> {
    demangle_with(mangled, DemangleOptions::new().no_params().no_return_type())
}

/// Only `_Z` names are mangled: cpp_demangle also reads bare type codes (`b` as `bool`).
fn demangle_with(mangled: &str, options: DemangleOptions) -> Option<String> {
    if !mangled.starts_with("_Z") {
        return None;
    }
    Symbol::new(mangled).ok()?.demangle(&options).ok()
}

/// A mangled entry as people name the kernel: its qualified C++ name with template
/// arguments but no parameters or ABI tags (`_Z4axpyIfEvT_PKS0_PS0_i` ->
/// `axpy<float>`), so that template instances stay apart; `None` for a name that
/// cpp_demangle does not read (plain C names, and Numba's ABI-tagged ones, which
/// `warpsim exec` shortens itself).
pub fn display_name(mangled: &str) -> Option<String> {
    let mut d = demangle_no_params(mangled)?;
    while let Some(i) = d.find("[abi:") {
        let Some(j) = d[i..].find(']') else { break };
        d.replace_range(i..i + j + 1, "");
    }
    Some(d)
}

/// An entry's mangled name, its C++ name and that without parameters (white space removed).
type Names<'a> = (&'a str, Option<String>, Option<String>);

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Picks the entry `wanted` names, trying in order: the mangled name itself, the
/// full C++ name, the C++ name without parameters, then a prefix of either
/// (white space ignored). The first rule that matches exactly one entry wins;
/// one that matches several makes the name ambiguous.
pub fn resolve<'a>(entries: &[&'a str], wanted: &str) -> Result<String, Unresolved<'a>> {
    if entries.contains(&wanted) {
        return Ok(wanted.to_string());
    }
    let want = squash(wanted);
    if want.is_empty() {
        return Err(Unresolved::Missing);
    }
    let names: Vec<Names<'_>> =
        entries.iter().map(|e| (*e, demangle(e).map(|d| squash(&d)), demangle_no_params(e).map(|d| squash(&d)))).collect();
    let rules: [&dyn Fn(&Names<'_>) -> bool; 3] =
        [&|(_, full, _)| full.as_deref() == Some(&want), &|(_, _, bare)| bare.as_deref() == Some(&want), &|(m, full, _)| {
            m.starts_with(&want) || full.as_deref().is_some_and(|f| f.starts_with(&want))
        }];
    for rule in rules {
        let hits: Vec<&'a str> = names.iter().filter(|n| rule(n)).map(|n| n.0).collect();
        match hits.as_slice() {
            [] => continue,
            [one] => return Ok(one.to_string()),
            _ => return Err(Unresolved::Ambiguous(hits)),
        }
    }
    Err(Unresolved::Missing)
}

/// `name` for a plain entry, `mangled (C++ name)` for a mangled one, comma-separated.
pub fn describe(entries: &[&str]) -> String {
    let one = |e: &&str| match demangle(e) {
        Some(d) if d != *e => format!("{e} ({d})"),
        _ => e.to_string(),
    };
    entries.iter().map(one).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    // `template <class T> __global__ void map_reduce(T*, int)` at float and double,
    // and `__global__ void ns::scale(float*)`, as nvcc mangles them.
    const ENTRIES: [&str; 4] = ["_Z10map_reduceIfEvPT_i", "_Z10map_reduceIdEvPT_i", "_ZN2ns5scaleEPf", "plain_kernel"];

    #[test]
    fn template_instances_keep_their_arguments_in_display_names() {
        assert_eq!(display_name("_Z4axpyIfEvT_PKS0_PS0_i").as_deref(), Some("axpy<float>"));
        assert_eq!(display_name("_Z4axpyIdEvT_PKS0_PS0_i").as_deref(), Some("axpy<double>"));
        assert_eq!(display_name("_Z4vaddPKfS0_Pfi").as_deref(), Some("vadd"));
        assert_eq!(display_name("plain_c_kernel"), None);
    }

    #[test]
    fn demangled_names_pick_their_entry() {
        assert_eq!(resolve(&ENTRIES, "map_reduce<float>"), Ok("_Z10map_reduceIfEvPT_i".into()));
        assert_eq!(resolve(&ENTRIES, "map_reduce<double>(double*, int)"), Ok("_Z10map_reduceIdEvPT_i".into()));
        assert_eq!(resolve(&ENTRIES, "ns::scale"), Ok("_ZN2ns5scaleEPf".into()));
        assert_eq!(resolve(&ENTRIES, "plain_kernel"), Ok("plain_kernel".into()));
        assert_eq!(resolve(&ENTRIES, "_ZN2ns5scaleEPf"), Ok("_ZN2ns5scaleEPf".into()));
    }

    #[test]
    fn a_unique_prefix_is_enough_and_a_shared_one_is_ambiguous() {
        assert_eq!(resolve(&ENTRIES, "ns::sc"), Ok("_ZN2ns5scaleEPf".into()));
        assert_eq!(resolve(&ENTRIES, "plain"), Ok("plain_kernel".into()));
        assert_eq!(resolve(&ENTRIES, "map_reduce"), Err(Unresolved::Ambiguous(vec![ENTRIES[0], ENTRIES[1]])));
        assert_eq!(resolve(&ENTRIES, "nothing"), Err(Unresolved::Missing));
        assert_eq!(resolve(&ENTRIES, "  "), Err(Unresolved::Missing));
    }

    #[test]
    fn entry_lists_show_the_cpp_name() {
        assert_eq!(describe(&ENTRIES[2..]), "_ZN2ns5scaleEPf (ns::scale(float*)), plain_kernel");
    }
}

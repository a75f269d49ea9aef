//! Control-flow graph over basic blocks and immediate post-dominators: where
//! the lanes of a divergent branch meet again (the SIMT stack's
//! reconvergence point).

use crate::inst::{Inst, Op, Pc};
use crate::op_table::Flow;

/// Reconvergence point meaning "never": the paths only end at exit.
pub const NO_RECONV: Pc = Pc::MAX;

/// Successor program counters of `code[pc]`; `code.len()` stands for exit.
pub fn successors(code: &[Inst], pc: usize) -> Vec<usize> {
    let exit = code.len();
    let next = pc + 1;
    let inst = &code[pc];
    let guarded = inst.guard.is_some();
    match inst.op.flow() {
        Flow::Next => vec![next],
        Flow::Branch { targets, .. } => {
            let mut v: Vec<usize> = targets.iter().map(|&t| t as usize).collect();
            // A guarded `bra` falls through where the guard is false (`brx.idx` is taken as always jumping).
            if guarded && matches!(inst.op, Op::Bra { .. }) {
                v.push(next);
            }
            v
        }
        Flow::Exit => {
            if guarded {
                vec![next, exit]
            } else {
                vec![exit]
            }
        }
    }
}

/// Immediate dominators of the graph with successor lists `fwd` and
/// predecessor lists `back`, from `root`: `usize::MAX` for nodes that `root`
/// does not reach, `root` for the root itself.
///
/// Lengauer-Tarjan with path compression, O(E log V), iterative throughout
/// (no recursion on graph depth). The Cooper-Harvey-Kennedy iteration used
/// before is quadratic on long post-dominator chains, such as many guarded
/// branches back to one loop head.
fn dominators(root: usize, fwd: &[Vec<usize>], back: &[Vec<usize>]) -> Vec<usize> {
    const NONE: usize = usize::MAX;
    let nn = fwd.len();
    // Depth-first preorder from the root.
    let mut dfnum = vec![NONE; nn];
    let mut vertex = Vec::with_capacity(nn);
    let mut parent = vec![NONE; nn];
    let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
    dfnum[root] = 0;
    vertex.push(root);
    while let Some(top) = stack.last_mut() {
        let (v, i) = *top;
        if i < fwd[v].len() {
            top.1 += 1;
            let w = fwd[v][i];
            if dfnum[w] == NONE {
                dfnum[w] = vertex.len();
                vertex.push(w);
                parent[w] = v;
                stack.push((w, 0));
            }
        } else {
            stack.pop();
        }
    }
    // Semidominators, in the preorder-number space.
    let reached = vertex.len();
    let mut semi: Vec<usize> = (0..reached).collect();
    let mut ancestor = vec![NONE; reached];
    let mut label: Vec<usize> = (0..reached).collect();
    let mut idom_num = vec![NONE; reached];
    let mut bucket: Vec<Vec<usize>> = vec![Vec::new(); reached];
    let mut path = Vec::new();
    // Smallest-semi vertex on the forest path above `v` (with path compression).
    let eval = |v: usize, ancestor: &mut Vec<usize>, label: &mut Vec<usize>, semi: &Vec<usize>, path: &mut Vec<usize>| -> usize {
        if ancestor[v] == NONE {
            return v;
        }
        let mut x = v;
        while ancestor[ancestor[x]] != NONE {
            path.push(x);
            x = ancestor[x];
        }
        while let Some(y) = path.pop() {
            let a = ancestor[y];
            if semi[label[a]] < semi[label[y]] {
                label[y] = label[a];
            }
            ancestor[y] = ancestor[a];
        }
        label[v]
    };
    for w in (1..reached).rev() {
        let node = vertex[w];
        for &pv in &back[node] {
            let v = dfnum[pv];
            if v == NONE {
                continue;
            }
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            if semi[u] < semi[w] {
                semi[w] = semi[u];
            }
        }
        bucket[semi[w]].push(w);
        let p = dfnum[parent[node]];
        ancestor[w] = p;
        for v in std::mem::take(&mut bucket[p]) {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            idom_num[v] = if semi[u] < semi[v] { u } else { p };
        }
    }
    for w in 1..reached {
        if idom_num[w] != semi[w] {
            idom_num[w] = idom_num[idom_num[w]];
        }
    }
    let mut idom = vec![NONE; nn];
    idom[root] = root;
    for w in 1..reached {
        idom[vertex[w]] = vertex[idom_num[w]];
    }
    idom
}

/// `leader[pc]`: a basic block starts at `pc` (index `code.len()` stands for
/// the exit).
pub fn block_leaders(code: &[Inst]) -> Vec<bool> {
    let n = code.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    for pc in 0..n {
        if code[pc].op.is_branch() {
            leader[pc + 1] = true;
            for s in successors(code, pc) {
                if s <= n {
                    leader[s] = true;
                }
            }
        }
    }
    leader
}

/// Immediate post-dominator of every instruction, as a pc (`NO_RECONV` when
/// only exit post-dominates it).
pub fn immediate_post_dominators(code: &[Inst]) -> Vec<Pc> {
    let n = code.len();
    if n == 0 {
        return Vec::new();
    }
    // Basic blocks.
    let leader = block_leaders(code);
    let mut block_of = vec![0usize; n];
    let mut starts = Vec::new();
    for pc in 0..n {
        if leader[pc] {
            starts.push(pc);
        }
        block_of[pc] = starts.len() - 1;
    }
    let nb = starts.len();
    let exit_node = nb;
    let block_end = |b: usize| if b + 1 < nb { starts[b + 1] } else { n };
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    // `added[t] == b`: edge b -> t already recorded (a `brx.idx` table can name
    // the same block many times; a `contains` check was quadratic in its length).
    let mut added = vec![usize::MAX; nb + 1];
    for (b, succ_b) in succ.iter_mut().enumerate().take(nb) {
        let last = block_end(b) - 1;
        for s in successors(code, last) {
            let t = if s >= n { exit_node } else { block_of[s] };
            if added[t] != b {
                added[t] = b;
                succ_b.push(t);
                pred[t].push(b);
            }
        }
    }
    // Post-dominators: dominators of the reverse graph rooted at exit.
    let idom = dominators(exit_node, &pred, &succ);
    const UNDEF: usize = usize::MAX;
    let mut out = vec![NO_RECONV; n];
    for pc in 0..n {
        let b = block_of[pc];
        if pc + 1 < block_end(b) {
            out[pc] = (pc + 1) as Pc;
        } else {
            let d = idom[b];
            out[pc] = if d == UNDEF || d == exit_node { NO_RECONV } else { starts[d] as Pc };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inst::{Guard, RegRef};
    use proptest::prelude::*;

    /// The Cooper-Harvey-Kennedy iteration this module used before: the
    /// reference the Lengauer-Tarjan version must agree with.
    fn chk_dominators(root: usize, fwd: &[Vec<usize>], back: &[Vec<usize>]) -> Vec<usize> {
        const UNDEF: usize = usize::MAX;
        let nn = fwd.len();
        let mut order = Vec::with_capacity(nn);
        let mut seen = vec![false; nn];
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        seen[root] = true;
        while let Some((node, i)) = stack.pop() {
            if i < fwd[node].len() {
                stack.push((node, i + 1));
                let p = fwd[node][i];
                if !seen[p] {
                    seen[p] = true;
                    stack.push((p, 0));
                }
            } else {
                order.push(node);
            }
        }
        order.reverse();
        let mut rpo_index = vec![usize::MAX; nn];
        for (i, &b) in order.iter().enumerate() {
            rpo_index[b] = i;
        }
        let mut idom = vec![UNDEF; nn];
        idom[root] = root;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new = UNDEF;
                for &s in &back[b] {
                    if idom[s] == UNDEF {
                        continue;
                    }
                    new = if new == UNDEF {
                        s
                    } else {
                        let (mut x, mut y) = (new, s);
                        while x != y {
                            while rpo_index[x] > rpo_index[y] {
                                x = idom[x];
                            }
                            while rpo_index[y] > rpo_index[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != UNDEF && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        idom
    }

    fn graph(n: usize, edges: &[(usize, usize)]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let mut fwd = vec![Vec::new(); n];
        let mut back = vec![Vec::new(); n];
        for &(a, b) in edges {
            let (a, b) = (a % n, b % n);
            if !fwd[a].contains(&b) {
                fwd[a].push(b);
                back[b].push(a);
            }
        }
        (fwd, back)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn lengauer_tarjan_agrees_with_chk(n in 1usize..40, edges in proptest::collection::vec((0usize..40, 0usize..40), 0..120)) {
            let (fwd, back) = graph(n, &edges);
            prop_assert_eq!(dominators(0, &fwd, &back), chk_dominators(0, &fwd, &back));
        }

        #[test]
        fn post_dominators_of_random_code(ops in proptest::collection::vec((0u8..6, 0u32..48, any::<bool>(), proptest::collection::vec(0u32..48, 1..4)), 1..48)) {
            let n = ops.len() as u32;
            let code: Vec<Inst> = ops
                .into_iter()
                .map(|(k, t, g, ts)| {
                    let guard = g.then_some(Guard { pred: 0, negate: false });
                    let op = match k {
                        0 => Op::Bra { target: t % n, reconv: NO_RECONV },
                        1 => Op::BrxIdx { index: RegRef::r32(0), targets: ts.iter().map(|t| t % n).collect(), reconv: NO_RECONV },
                        2 => Op::Exit,
                        3 => Op::Trap,
                        _ => Op::Fence,
                    };
                    Inst::new(op, guard)
                })
                .collect();
            let ipdom = immediate_post_dominators(&code);
            prop_assert_eq!(ipdom.len(), code.len());
            for (pc, &r) in ipdom.iter().enumerate() {
                prop_assert!(r == NO_RECONV || (r as usize) < code.len(), "pc {pc}: {r}");
            }
        }
    }

    #[test]
    fn unreachable_and_infinite_loops() {
        // 0 -> 1 -> 2, 3 unreachable, 4 <-> 5 a loop reachable from 2.
        let (fwd, back) = graph(6, &[(0, 1), (1, 2), (2, 4), (4, 5), (5, 4), (3, 1)]);
        let d = dominators(0, &fwd, &back);
        assert_eq!(d, vec![0, 0, 1, usize::MAX, 2, 4]);
        assert_eq!(d, chk_dominators(0, &fwd, &back));
    }

    // Many guarded branches back to one block: a post-dominator chain as long
    // as the kernel, on which the old iteration was quadratic (8 s for 80k
    // branches).
    #[test]
    fn long_post_dominator_chains_are_fast() {
        let n = 200_000;
        let mut code = Vec::with_capacity(n + 1);
        for _ in 0..n {
            code.push(Inst::new(Op::Bra { target: 0, reconv: NO_RECONV }, Some(Guard { pred: 0, negate: false })));
        }
        code.push(Inst::new(Op::Exit, None));
        let t = std::time::Instant::now();
        let ipdom = immediate_post_dominators(&code);
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!(ipdom[0], 1);
        assert_eq!(ipdom[n - 1], n as Pc);
        assert_eq!(ipdom[n], NO_RECONV);
    }
}

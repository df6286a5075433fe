#!/usr/bin/env python3
"""Module dependency cycles inside each crate of the workspace (non-test code).

Usage: `python3 tools/modcycles/check.py [ROOT]` (exit 1 and one line per cycle when any).
A module depends on the sibling modules its paths name (`super::x`, `crate::a::b`,
`self::x`); comments, inline `#[cfg(test)] mod` blocks and `#[cfg(test)] mod x;` files
are ignored: a test may reach anywhere. Cycles are counted between siblings (children of
one parent module), the level at which a reader sees the structure.
"""
import os, re, sys
from collections import defaultdict

def crate_dirs(root):
    for d in sorted(os.listdir(root)):
        if os.path.isfile(os.path.join(root, d, 'Cargo.toml')) and os.path.isdir(os.path.join(root, d, 'src')):
            yield os.path.join(root, d, 'src')
    yield os.path.join(root, 'src')

def module_path(src, f):
    rel = os.path.relpath(f, src)[:-3].split(os.sep)
    if rel[-1] in ('mod', 'lib', 'main'):
        rel = rel[:-1]
    return tuple(rel)

def strip_tests(text):
    m = re.search(r'#\[cfg\(test\)\]\s*mod \w+\s*\{', text)
    text = text[:m.start()] if m else text
    # comments (doc links name modules without depending on them)
    return re.sub(r'//[^\n]*', '', text)

def test_files(src, path, text):
    """Files declared as `#[cfg(test)] mod x;` in `path`."""
    out = []
    d = os.path.dirname(path)
    stem = os.path.basename(path)[:-3]
    if stem not in ('mod', 'lib', 'main'):
        d = os.path.join(d, stem)
    for name in re.findall(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod (\w+)\s*;', text):
        for cand in (os.path.join(d, name + '.rs'), os.path.join(d, name, 'mod.rs')):
            out.append(os.path.normpath(cand))
    return out

def main(root):
    bad = 0
    for src in crate_dirs(root):
        if not os.path.isdir(src):
            continue
        mods = {}
        files = [os.path.join(dp, f) for dp, _, fs in os.walk(src) for f in fs if f.endswith('.rs')]
        tests = set()
        for p in files:
            tests.update(test_files(src, p, open(p).read()))
        for p in files:
            if os.path.normpath(p) in tests:
                continue
            mods[module_path(src, p)] = strip_tests(open(p).read())
        edges = defaultdict(set)
        for m, text in mods.items():
            paths = re.findall(r'\b((?:crate|super|self)(?:::\w+)+)', text)
            # `use super::{a, b::c}`: each item of a brace group (nested groups flattened).
            for prefix, items in re.findall(r'\b((?:crate|super|self)(?:::\w+)*)::\{([^;]*?)\};', text):
                for item in re.findall(r'\b(\w+)\b', items):
                    if item not in ('self',):
                        paths.append(prefix + '::' + item)
            for path in paths:
                parts = path.split('::')
                if parts[0] == 'crate':
                    target = parts[1:]
                else:
                    # super/self relative to the module m (file modules: super = parent)
                    base = list(m)
                    i = 0
                    if parts[0] == 'self':
                        i = 1
                    else:
                        while i < len(parts) and parts[i] == 'super':
                            base = base[:-1]; i += 1
                    target = base + parts[i:]
                # longest known module prefix
                t = None
                for k in range(len(target), 0, -1):
                    if tuple(target[:k]) in mods:
                        t = tuple(target[:k]); break
                if t is None or t == m:
                    continue
                # edge between siblings under their common parent
                c = 0
                while c < min(len(m), len(t)) and m[c] == t[c]:
                    c += 1
                if c < len(m) and c < len(t):
                    edges[m[:c+1]].add(t[:c+1])
        # SCCs (Tarjan)
        index = {}; low = {}; st = []; on = set(); out = []; n = [0]
        sys.setrecursionlimit(10000)
        def sc(v):
            index[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
            for w in edges.get(v, ()):
                if w not in index:
                    sc(w); low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = st.pop(); on.discard(w); comp.append(w)
                    if w == v: break
                if len(comp) > 1:
                    out.append(comp)
        for v in list(edges):
            if v not in index:
                sc(v)
        for comp in out:
            bad += 1
            print(f"{os.path.relpath(src, root)}: cycle among " + ", ".join('::'.join(c) for c in sorted(comp)))
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))

//! Readers of the graph from text: paver's analysis JSON and METIS `.graph` files.
//!
//! Both check every edge, then build the graph from the edge list as [`Graph::from_edges`]
//! does: self loops and zero weights dropped, parallel edges summed, one row per TB.

use serde_json::Value;

use super::{AnalysisGraph, Graph, Parsed};
use crate::error::{Error, Result};

impl Graph {
    /// Reads the analysis JSON shape `{"graph": {"num_tbs": N, "edges": [[i, j, w], ...]}}`
    /// with `i < j`; optional top-level `kernel`, `grid` and `block` are returned too.
    pub fn from_analysis_json(text: &str) -> Result<AnalysisGraph> {
        let root: Value = serde_json::from_str(text)?;
        let bad = |location: String, message: &str| Error::AnalysisJson {
            location,
            message: message.to_string(),
        };
        let graph = root
            .get("graph")
            .ok_or_else(|| bad("$".into(), "missing object `graph`"))?;
        let num_tbs = graph
            .get("num_tbs")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                bad(
                    "graph.num_tbs".into(),
                    "missing or not a non-negative integer",
                )
            })?;
        let num_tbs = u32::try_from(num_tbs).map_err(|_| Error::TooManyTbs(num_tbs))?;
        let edges = graph
            .get("edges")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("graph.edges".into(), "missing or not an array"))?;
        let mut list = Vec::with_capacity(edges.len());
        for (k, e) in edges.iter().enumerate() {
            let triple = e
                .as_array()
                .filter(|a| a.len() == 3)
                .ok_or_else(|| bad(format!("graph.edges[{k}]"), "expected [i, j, w]"))?;
            let mut nums = [0u64; 3];
            for (slot, v) in triple.iter().enumerate() {
                nums[slot] = v.as_u64().ok_or_else(|| {
                    bad(
                        format!("graph.edges[{k}][{slot}]"),
                        "expected a non-negative integer",
                    )
                })?;
            }
            let [i, j, w] = nums;
            for (slot, tb) in [(0, i), (1, j)] {
                if tb >= u64::from(num_tbs) {
                    return Err(bad(
                        format!("graph.edges[{k}][{slot}]"),
                        &format!("TB {tb} out of range (num_tbs = {num_tbs})"),
                    ));
                }
            }
            if i >= j {
                return Err(bad(
                    format!("graph.edges[{k}]"),
                    &format!("expected i < j, found [{i}, {j}, {w}]"),
                ));
            }
            list.push((i as u32, j as u32, w));
        }
        let dims = |key: &str| -> Result<Option<[u32; 3]>> {
            match root.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => {
                    let arr = v
                        .as_array()
                        .filter(|a| a.len() == 3)
                        .ok_or_else(|| bad(key.to_string(), "expected [x, y, z]"))?;
                    let mut out = [0u32; 3];
                    for (d, x) in arr.iter().enumerate() {
                        out[d] = x
                            .as_u64()
                            .and_then(|x| u32::try_from(x).ok())
                            .ok_or_else(|| bad(format!("{key}[{d}]"), "expected a u32"))?;
                    }
                    Ok(Some(out))
                }
            }
        };
        Ok(AnalysisGraph {
            graph: Self::from_checked_edges(num_tbs, list.iter().copied()),
            kernel: root
                .get("kernel")
                .and_then(Value::as_str)
                .map(str::to_string),
            grid: dims("grid")?,
            block: dims("block")?,
        })
    }

    /// Reads a METIS `.graph` file: header `n m [fmt [ncon]]`, then one line per vertex with
    /// 1-based neighbour ids (`fmt` digit 1 = edge weights follow each neighbour; vertex
    /// sizes and weights are skipped with a note). `%` lines are comments.
    pub fn from_metis_str(text: &str) -> Result<Parsed> {
        let mut notes = Vec::new();
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(k, l)| (k + 1, l))
            .filter(|(_, l)| !l.trim_start().starts_with('%'));
        let err = |line: usize, message: String| Error::MetisFormat { line, message };
        let (hline, header) = loop {
            match lines.next() {
                Some((k, l)) if !l.trim().is_empty() => break (k, l),
                Some(_) => continue,
                None => return Err(err(1, "missing header `n m [fmt [ncon]]`".into())),
            }
        };
        let head: Vec<&str> = header.split_whitespace().collect();
        if !(2..=4).contains(&head.len()) {
            return Err(err(
                hline,
                format!("header must be `n m [fmt [ncon]]`, found `{header}`"),
            ));
        }
        let parse_u64 = |s: &str, line: usize, what: &str| -> Result<u64> {
            s.parse::<u64>()
                .map_err(|_| err(line, format!("{what}: `{s}` is not a non-negative integer")))
        };
        let n = parse_u64(head[0], hline, "vertex count")?;
        let n = u32::try_from(n).map_err(|_| Error::TooManyTbs(n))?;
        let m = parse_u64(head[1], hline, "edge count")?;
        let fmt = head.get(2).copied().unwrap_or("0");
        if fmt.len() > 3 || !fmt.chars().all(|c| c == '0' || c == '1') {
            return Err(err(
                hline,
                format!("fmt `{fmt}` must be up to 3 digits of 0/1"),
            ));
        }
        let padded = format!("{fmt:0>3}");
        let flag = |k: usize| padded.as_bytes()[k] == b'1';
        let (has_vsize, has_vwgt, has_ewgt) = (flag(0), flag(1), flag(2));
        let ncon = match head.get(3) {
            Some(s) => parse_u64(s, hline, "ncon")? as usize,
            None => usize::from(has_vwgt),
        };
        if has_vsize {
            notes.push("vertex sizes in the METIS file are ignored".to_string());
        }
        if has_vwgt {
            notes.push(format!(
                "{ncon} vertex weight(s) per vertex in the METIS file are ignored (all TBs weigh the same)"
            ));
        }
        let mut directed: Vec<(u32, u32, u64)> = Vec::new();
        let mut self_loops = 0usize;
        let mut last_line = hline;
        for v in 0..n {
            let (line, text) = lines.next().ok_or_else(|| {
                err(
                    last_line + 1,
                    format!("file ends before the line of vertex {} of {n}", v + 1),
                )
            })?;
            last_line = line;
            let mut toks = text.split_whitespace();
            let skip = usize::from(has_vsize) + if has_vwgt { ncon } else { 0 };
            for s in 0..skip {
                let t = toks
                    .next()
                    .ok_or_else(|| err(line, format!("missing vertex size/weight #{}", s + 1)))?;
                parse_u64(t, line, "vertex size/weight")?;
            }
            while let Some(t) = toks.next() {
                let u = parse_u64(t, line, "neighbour")?;
                if u == 0 || u > u64::from(n) {
                    return Err(err(line, format!("neighbour {u} is not in 1..={n}")));
                }
                let w = if has_ewgt {
                    let t = toks
                        .next()
                        .ok_or_else(|| err(line, format!("neighbour {u} has no edge weight")))?;
                    parse_u64(t, line, "edge weight")?
                } else {
                    1
                };
                let u = (u - 1) as u32;
                if u == v {
                    self_loops += 1;
                    continue;
                }
                directed.push((v, u, w));
            }
        }
        if let Some((line, extra)) = lines.find(|(_, l)| !l.trim().is_empty()) {
            return Err(err(
                line,
                format!("more vertex lines than n = {n}: `{extra}`"),
            ));
        }
        if self_loops > 0 {
            notes.push(format!("{self_loops} self loop entries ignored"));
        }
        // Each undirected edge must appear once from each side with the same weight.
        let mut fwd: Vec<(u32, u32, u64)> =
            directed.iter().filter(|e| e.0 < e.1).copied().collect();
        let mut bwd: Vec<(u32, u32, u64)> = directed
            .iter()
            .filter(|e| e.0 > e.1)
            .map(|&(a, b, w)| (b, a, w))
            .collect();
        fwd.sort_unstable();
        bwd.sort_unstable();
        if fwd != bwd {
            let first = fwd
                .iter()
                .zip(bwd.iter())
                .find(|(a, b)| a != b)
                .map(|(a, b)| {
                    format!(
                        "({}, {}, w={}) vs ({}, {}, w={})",
                        a.0 + 1,
                        a.1 + 1,
                        a.2,
                        b.0 + 1,
                        b.1 + 1,
                        b.2
                    )
                })
                .unwrap_or_else(|| format!("{} vs {} entries", fwd.len(), bwd.len()));
            return Err(err(
                hline,
                format!("adjacency is not symmetric (first mismatch, 1-based: {first})"),
            ));
        }
        if fwd.len() as u64 != m {
            notes.push(format!(
                "header says m = {m} but the file lists {} edges",
                fwd.len()
            ));
        }
        Ok(Parsed {
            graph: Self::from_checked_edges(n, fwd.iter().copied()),
            notes,
        })
    }

    /// Reads a METIS `.graph` file from disk.
    pub fn from_metis_file(path: &std::path::Path) -> Result<Parsed> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_metis_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analysis_json_roundtrip_and_errors() {
        let a = Graph::from_analysis_json(
            r#"{"kernel":"mm","grid":[2,1,1],"graph":{"num_tbs":3,"edges":[[0,1,4],[1,2,1]]}}"#,
        )
        .unwrap();
        assert_eq!(a.graph.weight(0, 1), 4);
        assert_eq!(a.kernel.as_deref(), Some("mm"));
        assert_eq!(a.grid, Some([2, 1, 1]));
        let e = Graph::from_analysis_json(r#"{"graph":{"num_tbs":3,"edges":[[0,1,4],[2,1,1]]}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("graph.edges[1]"), "{e}");
        let e = Graph::from_analysis_json(r#"{"graph":{"num_tbs":3,"edges":[[0,"x",4]]}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("graph.edges[0][1]"), "{e}");
        let e = Graph::from_analysis_json(r#"{"graph":{"edges":[]}}"#).unwrap_err();
        assert!(e.to_string().contains("graph.num_tbs"), "{e}");
    }

    #[test]
    fn metis_roundtrip() {
        let g = Graph::from_edges(4, &[(0, 1, 3), (1, 2, 1), (0, 3, 7)]).unwrap();
        let p = Graph::from_metis_str(&g.to_metis_string()).unwrap();
        assert_eq!(p.graph, g);
        assert!(p.notes.is_empty());
    }

    #[test]
    fn metis_unweighted_with_vertex_weights_and_comments() {
        let text = "% a comment\n3 2 010\n5 2\n7 1 3\n1 2\n";
        let p = Graph::from_metis_str(text).unwrap();
        assert_eq!(p.graph.weight(0, 1), 1);
        assert_eq!(p.graph.weight(1, 2), 1);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    }

    #[test]
    fn metis_errors_are_located() {
        let e = Graph::from_metis_str("2 1 001\n2 5\n1\n").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
        let e = Graph::from_metis_str("2 1\n3\n1\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = Graph::from_metis_str("2 1 001\n2 5\n1 4\n").unwrap_err();
        assert!(e.to_string().contains("not symmetric"), "{e}");
        let e = Graph::from_metis_str("3 1\n2\n1\n").unwrap_err();
        assert!(e.to_string().contains("vertex 3"), "{e}");
    }
}

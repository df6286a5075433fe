//! The heat map decodes to the expected size with edges coloured and non-edges white.

mod common;

use analysis::footprint::Granularity;
use common::*;

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut r = dec.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).expect("png frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn mm_naive_heatmap() {
    let (a, b) = analyse(
        "mm_naive",
        "compute_70",
        "small.json",
        Granularity::Line(128),
    );
    let (g, _) = analysis::locality::build(&a.footprints);
    let n = g.num_tbs();
    // Full resolution: one pixel per TB pair.
    let mut bytes = Vec::new();
    analysis::heatmap::write_png(&mut bytes, &g, 1024).expect("png");
    let (w, h, px) = decode(&bytes);
    assert_eq!((w, h), (n, n));
    let at = |i: u32, j: u32| -> [u8; 3] {
        let k = ((i * w + j) * 3) as usize;
        [px[k], px[k + 1], px[k + 2]]
    };
    let edges: std::collections::HashSet<(u32, u32)> = g.edges().map(|(i, j, _)| (i, j)).collect();
    assert!(!edges.is_empty());
    for i in 0..n {
        for j in 0..n {
            let e = edges.contains(&(i.min(j), i.max(j)));
            assert_eq!(at(i, j) != [255, 255, 255], e, "pixel ({i}, {j})");
        }
    }
    // TB 0 and TB 1 share rows of A; TB 0 and TB (2, 1) (another block row, B columns in another 128 B line) share nothing.
    let gx = b.grid.x as u32;
    assert!(edges.contains(&(0, 1)));
    assert!(!edges.contains(&(0, gx + 2)));
    // Downsampled: max-pooled to 2x2.
    let mut small = Vec::new();
    analysis::heatmap::write_png(&mut small, &g, 2).expect("png");
    let (w2, h2, px2) = decode(&small);
    assert_eq!((w2, h2), (2, 2));
    assert!(px2.chunks(3).all(|c| c != [255, 255, 255]));
}

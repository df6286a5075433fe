//! The adjacency matrix of the locality graph as an image (PAVER Fig. 5): TB ids on both
//! axes (row `i` from the top, column `j` from the left), a pixel coloured by the largest
//! edge weight it covers (max-pooling when the grid has more TBs than pixels), white where
//! no pair of TBs shares data. The diagonal (self loops) is not an edge and stays white.

use std::io::Write;
use std::path::Path;

use crate::locality::Graph;

/// Why an image could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HeatmapError {
    /// Creating or writing the file failed.
    #[error("heat map {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The PNG encoder failed.
    #[error("heat map: PNG encoding: {0}")]
    Png(#[from] png::EncodingError),
}

/// Side of the image in pixels for `num_tbs` TBs and at most `max_pixels` per side.
pub fn side(num_tbs: u32, max_pixels: u32) -> u32 {
    num_tbs.min(max_pixels.max(1)).max(1)
}

/// Colour of a weight `w` in `(0, max]`: a heat ramp from pale yellow (light sharing) to
/// dark red (the largest weight). Never white.
pub fn colour(w: u64, max: u64) -> [u8; 3] {
    let t = if max == 0 {
        1.0
    } else {
        (w as f64 / max as f64).clamp(0.0, 1.0)
    };
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    [lerp(255.0, 128.0), lerp(220.0, 0.0), lerp(120.0, 0.0)]
}

/// The pooled matrix: `side x side` maxima, row-major.
pub fn pooled(g: &Graph, max_pixels: u32) -> (u32, Vec<u64>) {
    let s = side(g.num_tbs(), max_pixels);
    let n = u64::from(g.num_tbs().max(1));
    let px = |i: u32| (u64::from(i) * u64::from(s) / n) as usize;
    let mut m = vec![0u64; (s as usize) * (s as usize)];
    for (i, j, w) in g.edges() {
        let (a, b) = (px(i), px(j));
        for (r, c) in [(a, b), (b, a)] {
            let cell = &mut m[r * s as usize + c];
            *cell = (*cell).max(w);
        }
    }
    (s, m)
}

/// Writes the heat map of `g` as an RGB PNG to `out`, at most `max_pixels` per side.
pub fn write_png<W: Write>(out: W, g: &Graph, max_pixels: u32) -> Result<(), HeatmapError> {
    let (s, m) = pooled(g, max_pixels);
    let max = m.iter().copied().max().unwrap_or(0);
    let mut data = Vec::with_capacity(m.len() * 3);
    for &w in &m {
        data.extend_from_slice(&if w == 0 {
            [255, 255, 255]
        } else {
            colour(w, max)
        });
    }
    let mut enc = png::Encoder::new(out, s, s);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header()?;
    w.write_image_data(&data)?;
    w.finish()?;
    Ok(())
}

/// [`write_png`] to a file at `path`.
pub fn write_png_file(path: &Path, g: &Graph, max_pixels: u32) -> Result<(), HeatmapError> {
    let io = |source| HeatmapError::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io)?;
    let mut b = std::io::BufWriter::new(f);
    write_png(&mut b, g, max_pixels)?;
    b.flush().map_err(io)
}

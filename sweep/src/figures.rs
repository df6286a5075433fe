//! The report's figures, drawn with plotters as SVG and PNG from the tables of
//! [`super::report`]: grouped bars per kernel and policy (PAVER Figs. 11-13: speedup and L2
//! accesses normalised to LRR, L1 miss rate, the effect of stealing) and stacked bars of the
//! data-reference categories (Fig. 2), and the TB locality heat maps (Fig. 5).
//!
//! Text is set in DejaVu Sans, compiled in (assets/fonts, Bitstream Vera licence), so the
//! figures look the same on every machine and need no system font.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::heatmap::Heatmap;
use super::report::Table;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// What stops a figure from being drawn.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// The compiled-in font does not load.
    #[error("the compiled-in DejaVu Sans font does not load")]
    Font,
    /// The figures' folder cannot be made.
    #[error("{}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A figure cannot be drawn or written.
    #[error("{}: {message}", path.display())]
    Draw {
        /// The figure's file.
        path: PathBuf,
        /// What the drawing backend said.
        message: String,
    },
}

/// Registers the compiled-in font once under the family name plotters asks for.
fn font_ready() -> Result<(), FigureError> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let loaded = ONCE.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if *loaded {
        Ok(())
    } else {
        Err(FigureError::Font)
    }
}

/// Makes the figures' folder `dir`.
fn make_folder(dir: &Path) -> Result<(), FigureError> {
    std::fs::create_dir_all(dir).map_err(|source| FigureError::Folder {
        path: dir.to_path_buf(),
        source,
    })
}

/// The error of drawing the figure `path`.
fn draw_error(path: &Path) -> impl Fn(String) -> FigureError + '_ {
    move |message| FigureError::Draw {
        path: path.to_path_buf(),
        message,
    }
}

/// One bar series: a name and a value per category (`None`: no bar).
struct Series {
    name: String,
    values: Vec<Option<f64>>,
}

/// What a figure shows.
struct BarChart {
    title: String,
    y_label: String,
    categories: Vec<String>,
    series: Vec<Series>,
    /// Stack the series (categories as shares) instead of grouping them.
    stacked: bool,
    /// A horizontal reference line (1.0 for ratios to LRR).
    baseline: Option<f64>,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x4c, 0x72, 0xb0),
    RGBColor(0xdd, 0x84, 0x52),
    RGBColor(0x55, 0xa8, 0x68),
    RGBColor(0xc4, 0x4e, 0x52),
    RGBColor(0x81, 0x72, 0xb3),
    RGBColor(0x93, 0x78, 0x60),
    RGBColor(0xda, 0x8b, 0xc3),
    RGBColor(0x8c, 0x8c, 0x8c),
];

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    c: &BarChart,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let n = c.categories.len().max(1);
    let top = if c.stacked {
        1.0
    } else {
        let m = c
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .fold(c.baseline.unwrap_or(0.0), |a, &b| a.max(b));
        if m > 0.0 {
            m * 1.1
        } else {
            1.0
        }
    };
    let longest = c
        .categories
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(4);
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, ("sans-serif", 18))
        .margin(10)
        // The legend goes in this margin, beside the plot: inside it, it hid the last bars.
        .margin_right(LEGEND_WIDTH)
        .x_label_area_size((longest as u32 * 7 + 10).min(260))
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..top)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(c.y_label.as_str())
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    // Category names, rotated, under each group.
    let style = TextStyle::from(("sans-serif", 12).into_font())
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, name) in c.categories.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(name.clone(), (px, py + 6), style.clone()))
            .map_err(e)?;
    }
    let k = c.series.len().max(1) as f64;
    for (j, s) in c.series.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let bars: Vec<Rectangle<(f64, f64)>> = s
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let v = (*v)?;
                let (x0, x1, y0, y1) = if c.stacked {
                    let below: f64 = c.series[..j].iter().filter_map(|t| t.values[i]).sum();
                    (i as f64 + 0.15, i as f64 + 0.85, below, below + v)
                } else {
                    let w = 0.8 / k;
                    let x0 = i as f64 + 0.1 + j as f64 * w;
                    (x0, x0 + w, 0.0, v)
                };
                Some(Rectangle::new([(x0, y0), (x1, y1)], color.filled()))
            })
            .collect();
        chart.draw_series(bars).map_err(e)?;
    }
    if let Some(b) = c.baseline {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, b), (n as f64, b)],
                BLACK.stroke_width(1),
            )))
            .map_err(e)?;
    }
    // The legend, right of the plot's top corner.
    let (px, py) = chart.backend_coord(&(n as f64, top));
    for (j, s) in c.series.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let (x, y) = (px + 15, py + 8 + 18 * j as i32);
        root.draw(&Rectangle::new(
            [(x, y - 5), (x + 10, y + 5)],
            color.filled(),
        ))
        .map_err(e)?;
        root.draw(&Text::new(
            s.name.clone(),
            (x + 16, y),
            TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e)?;
    }
    root.present().map_err(e)
}

/// Pixels right of the plot for the legend.
const LEGEND_WIDTH: u32 = 160;

fn parse(v: &str) -> Option<f64> {
    v.parse().ok()
}

/// The chart of a normalised or rate table: kernels (and geometric-mean rows) by policy.
fn policy_chart(t: &Table, y_label: &str, baseline: Option<f64>) -> BarChart {
    BarChart {
        title: t.title.clone(),
        y_label: y_label.into(),
        categories: t.rows.iter().map(|r| r[0].clone()).collect(),
        series: t.header[2..]
            .iter()
            .enumerate()
            .map(|(j, name)| Series {
                name: name.clone(),
                values: t.rows.iter().map(|r| parse(&r[j + 2])).collect(),
            })
            .collect(),
        stacked: false,
        baseline,
    }
}

fn chart_for(t: &Table) -> Option<BarChart> {
    let kind = t.name.split('_').next().unwrap_or("");
    match kind {
        "speedup" => Some(policy_chart(t, "speedup over LRR", Some(1.0))),
        "l2" => Some(policy_chart(t, "L2 accesses / LRR's", Some(1.0))),
        "l1" => Some(policy_chart(t, "L1 miss rate", None)),
        "stealing" => Some(BarChart {
            title: t.title.clone(),
            y_label: "speedup from stealing".into(),
            categories: t
                .rows
                .iter()
                .map(|r| format!("{} {}", r[0], r[1]))
                .collect(),
            series: vec![Series {
                name: "cycles without / with".into(),
                values: t.rows.iter().map(|r| parse(&r[2])).collect(),
            }],
            stacked: false,
            baseline: Some(1.0),
        }),
        "table2" => Some(BarChart {
            title: "Data references by category (PAVER Fig. 2)".into(),
            y_label: "share of data units".into(),
            categories: t.rows.iter().map(|r| r[0].clone()).collect(),
            series: ["unshared", "intra-TB", "inter-TB", "intra and inter"]
                .iter()
                .enumerate()
                .map(|(j, name)| Series {
                    name: (*name).into(),
                    values: t
                        .rows
                        .iter()
                        .map(|r| parse(&r[7 + j]).map(|p| p / 100.0))
                        .collect(),
                })
                .collect(),
            stacked: true,
            baseline: None,
        }),
        _ => None,
    }
}

/// Draws every table that has a figure form into `dir` as `NAME.svg` and `NAME.png`;
/// returns the files written.
pub fn write_all(tables: &[Table], dir: &Path) -> Result<Vec<PathBuf>, FigureError> {
    font_ready()?;
    make_folder(dir)?;
    let mut out = Vec::new();
    for t in tables {
        let Some(chart) = chart_for(t) else { continue };
        let width = (240 + 60 * chart.categories.len() as u32).clamp(640, 2400);
        let size = (width, 520);
        let svg = dir.join(format!("{}.svg", t.name));
        draw(SVGBackend::new(&svg, size).into_drawing_area(), &chart).map_err(draw_error(&svg))?;
        let png = dir.join(format!("{}.png", t.name));
        draw(BitMapBackend::new(&png, size).into_drawing_area(), &chart)
            .map_err(draw_error(&png))?;
        out.push(svg);
        out.push(png);
    }
    Ok(out)
}

/// Draws one heat map (PAVER Fig. 5): TB ids on both axes, row 0 at the top, each pooled
/// cell in [`analysis::heatmap::colour`]'s ramp (pale yellow: light sharing, dark red: the
/// largest weight), white where no TB pair shares data.
fn draw_heatmap<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    m: &Heatmap,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let n = f64::from(m.num_tbs.max(1));
    let side = m.side.max(1);
    let title = format!(
        "{}: {} TBs, {} edges, max weight {}",
        m.label(),
        m.num_tbs,
        m.edges,
        m.max_weight
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, 0f64..n)
        .map_err(e)?;
    let col_label = |x: &f64| format!("{x:.0}");
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("TB id")
        .y_desc("TB id")
        .x_label_formatter(&col_label)
        .y_labels(0)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    let cell = n / f64::from(side);
    let s = side as usize;
    let rects = m.cells.iter().enumerate().filter_map(|(k, &w)| {
        if w == 0 {
            return None;
        }
        let (r, c) = ((k / s) as f64, (k % s) as f64);
        let [red, green, blue] = analysis::heatmap::colour(w, m.max_weight);
        Some(Rectangle::new(
            [
                (c * cell, n - r * cell),
                ((c + 1.0) * cell, n - (r + 1.0) * cell),
            ],
            RGBColor(red, green, blue).filled(),
        ))
    });
    chart.draw_series(rects).map_err(e)?;
    // Row labels at round TB ids, counted from the top like the paper's matrix.
    let style =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for t in tick_ids(m.num_tbs) {
        let (px, py) = chart.backend_coord(&(0.0, n - f64::from(t)));
        root.draw(&PathElement::new(vec![(px - 5, py), (px, py)], BLACK))
            .map_err(e)?;
        root.draw(&Text::new(t.to_string(), (px - 7, py), style.clone()))
            .map_err(e)?;
    }
    root.present().map_err(e)
}

/// About five round TB ids (multiples of 1, 2 or 5 times a power of ten) from 0 to `n`.
fn tick_ids(n: u32) -> Vec<u32> {
    let raw = (f64::from(n) / 5.0).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|k| k * mag)
        .find(|s| *s >= raw)
        .unwrap_or(raw) as u32;
    (0..=n).step_by(step.max(1) as usize).collect()
}

/// Draws every heat map into `dir` as `heatmap_….svg` and `.png`; returns the files written.
pub fn write_heatmaps(maps: &[Heatmap], dir: &Path) -> Result<Vec<PathBuf>, FigureError> {
    font_ready()?;
    make_folder(dir)?;
    let mut out = Vec::new();
    for m in maps {
        let stem = m.figure_stem();
        let size = (640, 680);
        let svg = dir.join(format!("{stem}.svg"));
        draw_heatmap(SVGBackend::new(&svg, size).into_drawing_area(), m)
            .map_err(draw_error(&svg))?;
        let png = dir.join(format!("{stem}.png"));
        draw_heatmap(BitMapBackend::new(&png, size).into_drawing_area(), m)
            .map_err(draw_error(&png))?;
        out.push(svg);
        out.push(png);
    }
    Ok(out)
}

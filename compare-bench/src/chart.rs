//! SVG charts (plotters, SVG backend only: no system fonts needed).

use std::path::Path;

use plotters::prelude::*;

use crate::BenchResult;

const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(90, 90, 200),
];

/// One line: its label and (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// A line chart with logarithmic axes (values must be positive; others are left out).
///
/// # Errors
///
/// Drawing or writing the file failed.
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> BenchResult<()> {
    let points = series
        .iter()
        .flat_map(|(_, p)| p.iter())
        .filter(|(x, y)| *x > 0.0 && *y > 0.0);
    let (mut x_max, mut y_min, mut y_max) = (1.0f64, f64::MAX, 0.0f64);
    for (x, y) in points {
        x_max = x_max.max(*x);
        y_min = y_min.min(*y);
        y_max = y_max.max(*y);
    }
    if y_max <= 0.0 {
        y_min = 1.0;
        y_max = 10.0;
    }
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (0.8f64..x_max * 1.25).log_scale(),
            (y_min / 2.0..y_max * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| short(*y))
        .draw()?;
    for (index, (label, points)) in series.iter().enumerate() {
        let color = PALETTE[index % PALETTE.len()];
        let kept: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|(x, y)| *x > 0.0 && *y > 0.0)
            .collect();
        chart
            .draw_series(LineSeries::new(kept.clone(), color.stroke_width(2)))?
            .label(label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(
            kept.iter()
                .map(|&point| Circle::new(point, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A horizontal bar chart, one bar per label, on a logarithmic scale when `log` is set.
///
/// # Errors
///
/// Drawing or writing the file failed.
pub fn bars(
    path: &Path,
    title: &str,
    x_desc: &str,
    bars: &[(String, f64)],
    log: bool,
) -> BenchResult<()> {
    let max = bars
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let min = bars
        .iter()
        .map(|(_, v)| *v)
        .filter(|v| *v > 0.0)
        .fold(max, f64::min);
    let height = 90 + 28 * bars.len() as u32;
    let root = SVGBackend::new(path, (900, height.max(200))).into_drawing_area();
    root.fill(&WHITE)?;
    let count = bars.len().max(1) as f64;
    let labels: Vec<String> = bars.iter().map(|(label, _)| label.clone()).collect();
    let label_of = move |y: &f64| {
        let index = (count - 1.0 - y.floor()) as usize;
        labels.get(index).cloned().unwrap_or_default()
    };
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(330);
    let bar = |index: usize, value: f64, low: f64| {
        let y = count - 1.0 - index as f64;
        Rectangle::new(
            [(low, y + 0.15), (value.max(low), y + 0.85)],
            PALETTE[index % PALETTE.len()].filled(),
        )
    };
    if log {
        let low = min / 2.0;
        let mut chart = builder.build_cartesian_2d((low..max * 2.0).log_scale(), 0f64..count)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_labels(bars.len() * 2 + 1)
            .y_label_formatter(&|y| {
                if y.fract() == 0.5 {
                    label_of(y)
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| short(*x))
            .disable_y_mesh()
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| bar(i, *v, low)))?;
    } else {
        let mut chart = builder.build_cartesian_2d(0f64..max * 1.1, 0f64..count)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_labels(bars.len() * 2 + 1)
            .y_label_formatter(&|y| {
                if y.fract() == 0.5 {
                    label_of(y)
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| short(*x))
            .disable_y_mesh()
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| bar(i, *v, 0.0)))?;
    }
    root.present()?;
    Ok(())
}

/// 1234 -> "1.2k", 0.5 -> "0.5".
pub fn short(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1}k", value / 1e3)
    } else if value >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

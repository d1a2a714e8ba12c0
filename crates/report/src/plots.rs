//! SVG plots: the JCT CDF per class with one line per policy, and the CPU
//! utilisation timeline.

use pliant_core::model::JobClass;
use pliant_core::time::to_secs_f64;
use pliant_metrics::RunRecord;
use plotters::prelude::*;
use std::path::Path;

/// What a plot writer returns.
pub(crate) type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// The i-th colour of the palette shared by every plot.
pub(crate) fn color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    PALETTE[i % PALETTE.len()]
}

/// Writes the JCT CDF of short and long jobs (two panels) to `path`.
pub fn plot_jct_cdf(runs: &[RunRecord], path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (1100, 450)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 2));
    for (panel, class) in panels.iter().zip([JobClass::Short, JobClass::Long]) {
        let curves: Vec<(String, Vec<f64>)> = runs
            .iter()
            .map(|r| {
                let mut v: Vec<f64> = r
                    .jobs
                    .iter()
                    .filter(|j| j.class == class && !j.failed)
                    .filter_map(|j| j.jct())
                    .map(to_secs_f64)
                    .collect();
                v.sort_by(f64::total_cmp);
                (r.policy.clone(), v)
            })
            .collect();
        draw_cdf(
            panel,
            &format!("{} jobs: JCT CDF", class.name()),
            ("job completion time (s)", "fraction of jobs"),
            &curves,
        )?;
    }
    root.present()?;
    Ok(())
}

/// Draws on `area` one CDF line per named curve of sorted values, from 0,
/// with the axes' descriptions (x, y).
fn draw_cdf<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    (x_desc, y_desc): (&str, &str),
    curves: &[(String, Vec<f64>)],
) -> PlotResult
where
    DB::ErrorType: 'static,
{
    let max_x = curves.iter().filter_map(|(_, v)| v.last().copied()).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..max_x * 1.05, 0.0..1.0)?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
    for (i, (name, v)) in curves.iter().enumerate() {
        let n = v.len().max(1) as f64;
        let points = v.iter().enumerate().map(|(k, &x)| (x, (k + 1) as f64 / n));
        let c = color(i);
        chart
            .draw_series(LineSeries::new(points, c.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::LowerRight).border_style(BLACK).draw()?;
    Ok(())
}

/// Writes YARN-ME Fig. 6's CDF of per-trace average-JCT ratios to `path`:
/// one line per named series of ratios (e.g. elastic/yarn, elastic/meganode).
pub fn plot_ratio_cdf(title: &str, series: &[(String, Vec<f64>)], path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let curves: Vec<(String, Vec<f64>)> = series
        .iter()
        .map(|(name, v)| {
            let mut v = v.clone();
            v.sort_by(f64::total_cmp);
            (name.clone(), v)
        })
        .collect();
    draw_cdf(&root, title, ("average JCT ratio", "fraction of traces"), &curves)?;
    root.present()?;
    Ok(())
}

/// Writes the CPU utilisation timeline of every run to `path`.
pub fn plot_cpu_timeline(runs: &[RunRecord], path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (1100, 450)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_t = runs.iter().filter_map(|r| r.timeline.last()).map(|s| to_secs_f64(s.time)).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("CPU utilisation", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..max_t, 0.0..100.0)?;
    chart.configure_mesh().x_desc("time (s)").y_desc("CPU in use (%)").draw()?;
    for (i, r) in runs.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(
                r.timeline.iter().map(|s| (to_secs_f64(s.time), s.cpu * 100.0)),
                c.stroke_width(2),
            ))?
            .label(r.policy.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::LowerRight).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_cdf_names_each_series_and_its_axes() {
        let path = std::env::temp_dir().join(format!("pliant-ratio-cdf-{}.svg", std::process::id()));
        let series = [("elastic/yarn".to_string(), vec![0.9, 0.5, 0.7]), ("elastic/meganode".to_string(), vec![1.2])];
        plot_ratio_cdf("Fig. 6", &series, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        for text in ["Fig. 6", "elastic/yarn", "elastic/meganode", "average JCT ratio", "fraction of traces"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }
}

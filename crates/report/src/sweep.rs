//! Parameter sweeps: one setting varied over values, a few metrics per policy
//! at each value, averaged over seeds — as a table, JSON and one SVG per metric.

use crate::plots::{color, PlotResult};
use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// A finished sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// The scenario name or workload file.
    pub scenario: String,
    /// The setting varied (a `--set` key).
    pub key: String,
    /// Its values, in the order given.
    pub values: Vec<String>,
    /// The seeds each point is averaged over.
    pub seeds: Vec<u64>,
    /// One entry per metric asked for.
    pub metrics: Vec<SweepMetric>,
}

/// One metric across the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepMetric {
    /// The metric's path in a policy's JSON result, e.g. `classes.short.queue_delay.mean`.
    pub metric: String,
    /// One series per policy.
    pub series: Vec<SweepSeries>,
}

/// One policy's values of a metric across the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepSeries {
    /// The policy's name.
    pub policy: String,
    /// Mean over the seeds, one per swept value.
    pub mean: Vec<f64>,
    /// The value for each seed (outer: swept value; inner: seed).
    pub per_seed: Vec<Vec<f64>>,
}

/// Renders one table per metric: a row per swept value, a column per policy.
pub fn sweep_table(sweep: &Sweep) -> String {
    let mut s = String::new();
    let seeds: Vec<String> = sweep.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(s, "{}: sweep of {} (mean over seeds {})", sweep.scenario, sweep.key, seeds.join(", "));
    for m in &sweep.metrics {
        let _ = writeln!(s, "\n{}", m.metric);
        let _ = write!(s, "{:>20}", sweep.key);
        for series in &m.series {
            let _ = write!(s, " {:>12}", series.policy);
        }
        let _ = writeln!(s);
        for (i, value) in sweep.values.iter().enumerate() {
            let _ = write!(s, "{value:>20}");
            for series in &m.series {
                let _ = write!(s, " {:>12.3}", series.mean[i]);
            }
            let _ = writeln!(s);
        }
    }
    s
}

/// Plots one metric of the sweep against the swept values (their positions when
/// not all numeric), a line per policy.
pub fn plot_sweep(sweep: &Sweep, metric: &SweepMetric, path: &Path) -> PlotResult {
    let numeric: Option<Vec<f64>> = sweep.values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let xs = numeric.unwrap_or_else(|| (0..sweep.values.len()).map(|i| i as f64).collect());
    let (min_x, max_x) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let pad = ((max_x - min_x) * 0.05).max(0.5);
    let max_y = metric.series.iter().flat_map(|s| s.mean.iter().copied()).fold(0.0, f64::max);
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: {} vs {}", sweep.scenario, metric.metric, sweep.key), ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(min_x - pad..max_x + pad, 0.0..(max_y * 1.1).max(1e-9))?;
    chart.configure_mesh().x_desc(sweep.key.as_str()).y_desc(metric.metric.as_str()).draw()?;
    for (i, series) in metric.series.iter().enumerate() {
        let c = color(i);
        let points: Vec<(f64, f64)> = xs.iter().copied().zip(series.mean.iter().copied()).collect();
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        chart
            .draw_series(LineSeries::new(points, c.stroke_width(2)))?
            .label(series.policy.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperRight).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> Sweep {
        Sweep {
            scenario: "mixed".into(),
            key: "delayed_resumption".into(),
            values: vec!["0".into(), "3".into()],
            seeds: vec![1, 2],
            metrics: vec![SweepMetric {
                metric: "classes.short.queue_delay.mean".into(),
                series: vec![SweepSeries {
                    policy: "gp".into(),
                    mean: vec![12.5, 2.25],
                    per_seed: vec![vec![10.0, 15.0], vec![2.0, 2.5]],
                }],
            }],
        }
    }

    #[test]
    fn table_has_a_row_per_value_and_a_column_per_policy() {
        let t = sweep_table(&sweep());
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows[0], "mixed: sweep of delayed_resumption (mean over seeds 1, 2)");
        assert_eq!(rows[2], "classes.short.queue_delay.mean");
        assert_eq!(rows[3].split_whitespace().collect::<Vec<_>>(), ["delayed_resumption", "gp"]);
        assert_eq!(rows[4].split_whitespace().collect::<Vec<_>>(), ["0", "12.500"]);
        assert_eq!(rows[5].split_whitespace().collect::<Vec<_>>(), ["3", "2.250"]);
    }

    #[test]
    fn plot_is_written() {
        let s = sweep();
        let path = std::env::temp_dir().join(format!("pliant-sweep-plot-{}.svg", std::process::id()));
        plot_sweep(&s, &s.metrics[0], &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.contains("delayed_resumption") && svg.lines().any(|l| l.trim() == "gp"), "{svg}");
    }
}

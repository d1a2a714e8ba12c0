//! Parameter sweeps: one setting varied over values, a few metrics per policy
//! at each value, averaged over seeds — as a table, JSON and one SVG per metric.

use crate::grid::{fixed, grid};
use crate::plots::{color, legend_beside, line_width, tick, PlotResult};
use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// A finished sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// [`crate::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The scenario name or workload file.
    pub scenario: String,
    /// The setting varied (a `--set` key).
    pub key: String,
    /// Its values, in the order given (in JSON, numbers where they read as numbers).
    #[serde(serialize_with = "numbers_where_numeric")]
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
    /// Mean over the seeds, one per swept value; `None` (JSON `null`) unless
    /// every seed measured it.
    pub mean: Vec<Option<f64>>,
    /// The value for each seed (outer: swept value; inner: seed); `None` where
    /// nothing was measured (e.g. no job of the class finished).
    pub per_seed: Vec<Vec<Option<f64>>>,
}

/// The mean of values all measured, else `None`.
pub fn mean_of_measured(values: &[Option<f64>]) -> Option<f64> {
    let all: Option<Vec<f64>> = values.iter().copied().collect();
    all.filter(|v| !v.is_empty()).map(|v| v.iter().sum::<f64>() / v.len() as f64)
}

fn numbers_where_numeric<S: serde::Serializer>(values: &[String], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(values.len()))?;
    for v in values {
        match v.parse::<serde_json::Number>() {
            Ok(n) => seq.serialize_element(&n)?,
            Err(_) => seq.serialize_element(v)?,
        }
    }
    seq.end()
}

/// Renders one table per metric: a row per swept value, a column per policy;
/// `-` where not every seed measured the metric.
pub fn sweep_table(sweep: &Sweep) -> String {
    let mut s = String::new();
    let seeds: Vec<String> = sweep.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(s, "{}: sweep of {} (mean over seeds {})", sweep.scenario, sweep.key, seeds.join(", "));
    for m in &sweep.metrics {
        let _ = writeln!(s, "\n{}", m.metric);
        let mut g = grid(&[("", vec![sweep.key.clone()]), ("", m.series.iter().map(|x| x.policy.clone()).collect())]);
        for (i, value) in sweep.values.iter().enumerate() {
            let mut row = vec![value.clone()];
            row.extend(m.series.iter().map(|series| fixed(series.mean[i], 3)));
            g.row(row);
        }
        s.push_str(&g.render());
    }
    s
}

/// The unit of a metric, from its path (the JSON report's conventions).
fn unit_of(metric: &str) -> &'static str {
    let last = metric.rsplit('.').next().unwrap_or(metric);
    if metric.contains(".slowdown.") {
        "× alone"
    } else if last == "cov" {
        "std. dev. / mean"
    } else if metric.contains("jct") || metric.contains("queue_delay") || last.ends_with("_s") {
        "s"
    } else if last.ends_with("core_seconds") {
        "core·s"
    } else if last.ends_with("core_hours") {
        "core·h"
    } else if last.ends_with("kwh") {
        "kWh"
    } else if last.ends_with("pct_capacity") {
        "% of capacity"
    } else if metric.starts_with("utilization") {
        "fraction"
    } else {
        "count"
    }
}

/// A metric's path (`classes.short.queue_delay.mean`) in words (`mean
/// queueing delay of short jobs`); the path itself where it has no words here.
pub fn describe_metric(metric: &str) -> String {
    let parts: Vec<&str> = metric.split('.').collect();
    let statistic = |s: &str| match s {
        "mean" => Some("mean".to_string()),
        "p50" => Some("median".to_string()),
        p => p.strip_prefix('p').filter(|n| n.parse::<u32>().is_ok()).map(|n| format!("{n}th-percentile")),
    };
    let quantity = |q: &str| match q {
        "jct" => Some("JCT"),
        "jct_retry" => Some("JCT counting retries"),
        "queue_delay" => Some("queueing delay"),
        "slowdown" => Some("slowdown"),
        _ => None,
    };
    let words = match parts.as_slice() {
        ["classes", class, "cov"] => Some(format!("spread of {class} jobs' JCT (coefficient of variation)")),
        ["classes", class, q, s] => quantity(q).zip(statistic(s)).map(|(q, s)| format!("{s} {q} of {class} jobs")),
        ["utilization", "cpu_mean"] => Some("mean CPU utilisation".to_string()),
        ["utilization", "mem_mean"] => Some("mean memory utilisation".to_string()),
        [waste] if waste.starts_with("waste_") => Some("work wasted by preemption".to_string()),
        ["lost_work_core_seconds"] => Some("work lost to kills".to_string()),
        _ => None,
    };
    words.unwrap_or_else(|| metric.to_string())
}

/// A swept setting's axis label: its meaning (from its parameter's
/// description, up to the first aside) and its key.
fn describe_key(key: &str, about: Option<&str>) -> String {
    let about = about.map(|a| a.split([';', '(']).next().unwrap_or(a).trim().trim_end_matches(','));
    match about.filter(|a| !a.is_empty()) {
        Some(a) => format!("{a} ({key})"),
        None => key.to_string(),
    }
}

/// Plots one metric of the sweep against the swept values (their positions when
/// not all numeric): a line per policy through the means over seeds, a bar from
/// the least to the greatest seed's value at each point, the legend beside the
/// data. Titles and axes say the metric in words and the swept setting by
/// `key_about`, its parameter's description, when given.
pub fn plot_sweep(sweep: &Sweep, metric: &SweepMetric, key_about: Option<&str>, path: &Path) -> PlotResult {
    let numeric: Option<Vec<f64>> = sweep.values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let positional = numeric.is_none();
    let values = numeric.unwrap_or_else(|| (0..sweep.values.len()).map(|i| i as f64).collect());
    // Values spanning two decades or more are spread on a log axis.
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let log_x = !positional && lo > 0.0 && hi / lo >= 100.0;
    let xs: Vec<f64> = if log_x { values.iter().map(|x| x.log10()).collect() } else { values };
    let (min_x, max_x) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let pad = ((max_x - min_x) * 0.05).max(0.5);
    let all = metric.series.iter().flat_map(|s| s.per_seed.iter().flatten().chain(&s.mean).filter_map(|y| *y));
    let (min_y, max_y) = all.fold((0.0f64, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let span = (max_y - min_y).max(1e-9);
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let names: Vec<String> = metric.series.iter().map(|s| s.policy.clone()).collect();
    let data = legend_beside(&root, &names)?;
    let seeds = match sweep.seeds.as_slice() {
        [] => String::new(),
        [one] => format!("seed {one}"),
        [first, .., last] => format!("mean over seeds {first}–{last}, bars min–max"),
    };
    let words = describe_metric(&metric.metric);
    let key = describe_key(&sweep.key, key_about);
    let caption = format!("{}: {words} ({seeds})", sweep.scenario);
    let label = |x: &f64| -> String {
        if log_x {
            if (x - x.round()).abs() < 1e-9 {
                tick(&10f64.powf(x.round()))
            } else {
                String::new()
            }
        } else if positional {
            sweep.values.get(x.round() as usize).filter(|_| (x - x.round()).abs() < 1e-9).cloned().unwrap_or_default()
        } else {
            tick(x)
        }
    };
    let mut chart = ChartBuilder::on(&data)
        .caption(caption, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(65)
        .build_cartesian_2d(min_x - pad..max_x + pad, (min_y - 0.05 * span).min(0.0)..max_y + 0.08 * span)?;
    let y_desc = format!("{words} ({})", unit_of(&metric.metric));
    chart
        .configure_mesh()
        .x_desc(if log_x { format!("{key}, log scale") } else { key })
        .y_desc(y_desc)
        .x_labels(if positional { sweep.values.len() } else { 10 })
        .x_label_formatter(&label)
        .y_label_formatter(&tick)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, series) in metric.series.iter().enumerate() {
        let c = color(i);
        // A point only where every seed measured the metric.
        let points: Vec<(f64, f64)> = xs.iter().zip(&series.mean).filter_map(|(&x, m)| Some((x, (*m)?))).collect();
        let bars = xs.iter().zip(&series.per_seed).zip(&series.mean).filter(|((_, v), _)| v.len() > 1);
        chart.draw_series(bars.filter_map(|((&x, v), &mean)| {
            let (lo, hi) = v.iter().flatten().fold((f64::MAX, f64::MIN), |(lo, hi), &y| (lo.min(y), hi.max(y)));
            Some(ErrorBar::new_vertical(x, lo, mean?, hi, c.stroke_width(1), 8))
        }))?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        chart.draw_series(LineSeries::new(points, c.stroke_width(line_width(i, metric.series.len()))))?;
    }
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
            schema_version: crate::SCHEMA_VERSION,
            seeds: vec![1, 2],
            metrics: vec![SweepMetric {
                metric: "classes.short.queue_delay.mean".into(),
                series: vec![SweepSeries {
                    policy: "gp".into(),
                    mean: vec![Some(12.5), Some(2.25)],
                    per_seed: vec![vec![Some(10.0), Some(15.0)], vec![Some(2.0), Some(2.5)]],
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
        assert_eq!(rows[3].split_whitespace().collect::<Vec<_>>(), ["delayed_resumption", "|", "gp"]);
        assert!(rows[4].chars().all(|c| c == '-'), "{t}");
        assert_eq!(rows[5].split_whitespace().collect::<Vec<_>>(), ["0", "|", "12.500"]);
        assert_eq!(rows[6].split_whitespace().collect::<Vec<_>>(), ["3", "|", "2.250"]);
    }

    fn svg(s: &Sweep) -> String {
        let path = std::env::temp_dir().join(format!(
            "pliant-sweep-plot-{}-{:?}.svg",
            std::process::id(),
            std::thread::current().id()
        ));
        plot_sweep(s, &s.metrics[0], Some("offers of its node a preempted container waits for, D (BIG-C §4.3)"), &path)
            .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        svg
    }

    #[test]
    fn plot_names_scenario_seeds_and_unit_with_the_legend_beside_the_data() {
        let svg = svg(&sweep());
        for text in [
            "mixed: mean queueing delay of short jobs (mean over seeds 1–2, bars min–max)",
            "mean queueing delay of short jobs (s)",
            "offers of its node a preempted container waits for, D (delayed_resumption)",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        let texts = crate::plots::tests::texts(&svg);
        let (x, _) = texts.iter().find(|(_, t)| t == "gp").expect("gp in the legend");
        assert!(*x > f64::from(900 - crate::plots::LEGEND_WIDTH), "legend at x = {x}, over the data");
        assert!(!svg.contains(".0<"), "ticks like 20000.0");
    }

    #[test]
    fn metrics_read_in_words_and_unknown_paths_stay_as_they_are() {
        assert_eq!(describe_metric("classes.short.queue_delay.mean"), "mean queueing delay of short jobs");
        assert_eq!(describe_metric("classes.long.jct.p90"), "90th-percentile JCT of long jobs");
        assert_eq!(describe_metric("classes.short.jct.p50"), "median JCT of short jobs");
        assert_eq!(describe_metric("classes.long.cov"), "spread of long jobs' JCT (coefficient of variation)");
        assert_eq!(describe_metric("utilization.cpu_mean"), "mean CPU utilisation");
        assert_eq!(describe_metric("preemptions.kill"), "preemptions.kill");
        assert_eq!(
            describe_key("gp_units", Some("graceful-preemption step r_GP in units (BIG-C)")),
            "graceful-preemption step r_GP in units (gp_units)"
        );
        assert_eq!(describe_key("x", None), "x");
    }

    #[test]
    fn json_has_its_schema_version_numbers_as_numbers_and_null_where_unmeasured() {
        let mut s = sweep();
        s.values = vec!["0".into(), "pool".into()];
        s.metrics[0].series[0].per_seed[1][0] = None;
        s.metrics[0].series[0].mean[1] = mean_of_measured(&s.metrics[0].series[0].per_seed[1]);
        let doc = serde_json::to_value(&s).unwrap();
        assert_eq!(doc["schema_version"], crate::SCHEMA_VERSION);
        assert_eq!(doc["values"], serde_json::json!([0, "pool"]));
        assert!(doc["metrics"][0]["series"][0]["mean"][1].is_null(), "{doc}");
        assert_eq!(doc["metrics"][0]["series"][0]["per_seed"][1], serde_json::json!([null, 2.5]));
        let table = sweep_table(&s);
        assert_eq!(table.lines().last().unwrap().split_whitespace().collect::<Vec<_>>(), ["pool", "|", "-"], "{table}");
    }

    #[test]
    fn values_spanning_decades_go_on_a_log_axis() {
        let mut s = sweep();
        s.values = vec!["10".into(), "1000".into()];
        let texts = crate::plots::tests::texts(&svg(&s));
        let axis = "offers of its node a preempted container waits for, D (delayed_resumption), log scale";
        assert!(texts.iter().any(|(_, t)| t == axis), "{texts:?}");
        for decade in ["10", "100", "1000"] {
            assert!(texts.iter().any(|(_, t)| t == decade), "tick {decade}: {texts:?}");
        }
    }

    #[test]
    fn plot_has_a_min_max_bar_per_point_over_seeds() {
        let spread = svg(&sweep());
        let mut single = sweep();
        single.seeds = vec![1];
        single.metrics[0].series[0].per_seed = vec![vec![Some(12.5)], vec![Some(2.25)]];
        let lines = |svg: &str| svg.matches("<polyline").count() + svg.matches("<line").count();
        let more = lines(&spread) - lines(&svg(&single));
        assert!(more > 0 && more % 2 == 0, "a min-max bar at each of the 2 swept values: {more} more lines");
    }
}

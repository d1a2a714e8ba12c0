//! SVG plots: the JCT CDF per class with one line per policy (log time
//! axis), the CPU utilisation timeline (smoothed, a panel per policy), and
//! the shared pieces: the palette, line widths that keep equal curves
//! apart, a legend beside the data, tick labels.

use pliant_core::model::JobClass;
use pliant_core::time::to_secs_f64;
use pliant_metrics::{RunRecord, Sample};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// What a plot writer returns.
pub(crate) type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// Width of the legend strip right of the data, in pixels.
pub(crate) const LEGEND_WIDTH: u32 = 190;

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

/// The stroke width of the i-th of `n` series: the first drawn widest, each
/// later one narrower on top of it, so that equal curves show as nested
/// bands instead of hiding each other.
pub(crate) fn line_width(i: usize, n: usize) -> u32 {
    2 + 2 * n.saturating_sub(i + 1).min(4) as u32
}

/// A tick label without needless digits: `20000`, `0.5`, `1e-4`.
pub(crate) fn tick(v: &f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e7).contains(&a) {
        return format!("{v:.0e}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A log axis's tick label: [`tick`] at 1, 2 and 5 times a power of ten,
/// none between them (a narrow decade's 6, 7, 8, 9 would run together).
pub(crate) fn log_tick(v: &f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        tick(v)
    } else {
        String::new()
    }
}

/// Splits `area` into the data (left) and a legend strip (right), draws a
/// line sample and the name of each series in the strip, and returns the data side.
pub(crate) fn legend_beside<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
) -> Result<DrawingArea<DB, Shift>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let (width, _) = area.dim_in_pixel();
    let (data, legend) = area.split_horizontally(width.saturating_sub(LEGEND_WIDTH));
    for (i, name) in names.iter().enumerate() {
        let y = 40 + 22 * i as i32;
        legend.draw(&PathElement::new(vec![(8, y), (32, y)], color(i).stroke_width(line_width(i, names.len()))))?;
        legend.draw(&Text::new(name.clone(), (38, y - 7), ("sans-serif", 14)))?;
    }
    Ok(data)
}

/// One policy's jobs of a class: the sorted JCTs of those that finished,
/// and how many jobs there were (failed and unfinished ones count).
struct Finished {
    jcts: Vec<f64>,
    of: usize,
}

impl Finished {
    fn of(run: &RunRecord, class: JobClass) -> Finished {
        let jobs = run.jobs.iter().filter(|j| j.class == class);
        let mut jcts: Vec<f64> = jobs.clone().filter(|j| !j.failed).filter_map(|j| j.jct()).map(to_secs_f64).collect();
        jcts.sort_by(f64::total_cmp);
        Finished { jcts, of: jobs.count() }
    }

    fn failed(&self) -> usize {
        self.of - self.jcts.len()
    }
}

/// The legend entry of `run`: its policy, and the jobs that did not finish
/// (failed, or still running at the end), per class.
fn legend_entry(run: &RunRecord) -> String {
    let failed: Vec<String> = [JobClass::Short, JobClass::Long]
        .into_iter()
        .map(|c| (c, Finished::of(run, c).failed()))
        .filter(|&(_, n)| n > 0)
        .map(|(c, n)| format!("{n} {}", c.name()))
        .collect();
    if failed.is_empty() {
        run.policy.clone()
    } else {
        format!("{} ({} failed)", run.policy, failed.join(", "))
    }
}

/// Writes the JCT CDF of short and long jobs (two panels, log time axis) to
/// `path`; `title` names the run (scenario or trace, seed, scale). Each
/// curve is the fraction of all the class's jobs finished by a time: a
/// policy whose jobs failed tops out below 1, and its legend entry says how
/// many failed.
pub fn plot_jct_cdf(runs: &[RunRecord], title: &str, path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (1200, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&format!("Job completion time, {title}"), ("sans-serif", 20))?;
    let names: Vec<String> = runs.iter().map(legend_entry).collect();
    let data = legend_beside(&root, &names)?;
    let panels = data.split_evenly((1, 2));
    for (panel, class) in panels.iter().zip([JobClass::Short, JobClass::Long]) {
        let curves: Vec<Finished> = runs.iter().map(|r| Finished::of(r, class)).collect();
        let caption = format!("{} jobs", class.name());
        draw_cdf(panel, &caption, ("job completion time (s, log scale)", "fraction of jobs finished"), &curves)?;
    }
    root.present()?;
    Ok(())
}

/// Draws on `area` one CDF step line per policy's finished jobs on a log x
/// axis fitted to the data, with the axes' descriptions (x, y).
fn draw_cdf<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    (x_desc, y_desc): (&str, &str),
    curves: &[Finished],
) -> PlotResult
where
    DB::ErrorType: 'static,
{
    let positive = curves.iter().flat_map(|c| c.jcts.iter().copied()).filter(|&x| x > 0.0);
    let (lo, hi) = positive.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (lo, hi) = if lo <= hi { (lo / 1.25, hi * 1.25) } else { (1.0, 10.0) };
    // At least a decade around the data's middle, so that the axis has ticks.
    let widen = (10.0 / (hi / lo)).max(1.0).sqrt();
    let (lo, hi) = (lo / widen, hi * widen);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&log_tick)
        .y_label_formatter(&tick)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, c) in curves.iter().enumerate() {
        chart.draw_series(LineSeries::new(cdf_steps(c), color(i).stroke_width(line_width(i, curves.len()))))?;
    }
    Ok(())
}

/// The CDF's corners: at each JCT a step up from the share of jobs finished
/// before it to the share after it (so one job draws a step too), ending at
/// the share that finished.
fn cdf_steps(c: &Finished) -> Vec<(f64, f64)> {
    let n = c.of.max(1) as f64;
    let steps = c.jcts.iter().enumerate().filter(|(_, &x)| x > 0.0);
    steps.flat_map(|(k, &x)| [(x, k as f64 / n), (x, (k + 1) as f64 / n)]).collect()
}

/// Writes YARN-ME Fig. 6's CDF of per-trace average-JCT ratios to `path`:
/// one line per named series of ratios (e.g. elastic/yarn, elastic/meganode).
pub fn plot_ratio_cdf(title: &str, series: &[(String, Vec<f64>)], path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let names: Vec<String> = series.iter().map(|(n, _)| n.clone()).collect();
    let data = legend_beside(&root, &names)?;
    let curves: Vec<(String, Vec<f64>)> = series
        .iter()
        .map(|(name, v)| {
            let mut v = v.clone();
            v.sort_by(f64::total_cmp);
            (name.clone(), v)
        })
        .collect();
    let max_x = curves.iter().filter_map(|(_, v)| v.last().copied()).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&data)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..max_x * 1.05, 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("average JCT ratio")
        .y_desc("fraction of traces")
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, (_, v)) in curves.iter().enumerate() {
        let n = v.len().max(1) as f64;
        let points = v.iter().enumerate().map(|(k, &x)| (x, (k + 1) as f64 / n));
        chart.draw_series(LineSeries::new(points, color(i).stroke_width(line_width(i, curves.len()))))?;
    }
    root.present()?;
    Ok(())
}

/// Time-weighted mean CPU (%) of a step-wise timeline in `buckets` equal
/// slices of [0, end): each sample holds until the next one.
fn smoothed(timeline: &[Sample], end: f64, buckets: usize) -> Vec<(f64, f64)> {
    let width = end / buckets as f64;
    let mut area = vec![0.0; buckets];
    for (k, s) in timeline.iter().enumerate() {
        let from = to_secs_f64(s.time);
        let to = timeline.get(k + 1).map_or(end, |n| to_secs_f64(n.time)).min(end);
        let mut t = from;
        while t < to {
            let b = ((t / width) as usize).min(buckets - 1);
            let slice_end = ((b + 1) as f64 * width).min(to);
            area[b] += (slice_end - t) * s.cpu;
            t = slice_end.max(t + f64::EPSILON * end.max(1.0));
        }
    }
    area.iter().enumerate().map(|(b, a)| ((b as f64 + 0.5) * width, 100.0 * a / width)).collect()
}

/// Writes the CPU utilisation over time to `path`: a panel per policy, each
/// its time-weighted mean over 1/200 of the run, with the first policy's in
/// grey behind the others' for comparison; `title` names the run, and
/// `window` (seconds), if any, is shaded and labelled in every panel (the
/// short jobs' burst of BIG-C's scenarios).
pub fn plot_cpu_timeline(runs: &[RunRecord], title: &str, window: Option<(&str, f64, f64)>, path: &Path) -> PlotResult {
    const PANEL: u32 = 120;
    const BUCKETS: usize = 200;
    let rows = runs.len().max(1) as u32;
    let root = SVGBackend::new(path, (1100, 70 + PANEL * rows)).into_drawing_area();
    root.fill(&WHITE)?;
    let end = runs.iter().filter_map(|r| r.timeline.last()).map(|s| to_secs_f64(s.time)).fold(1.0, f64::max);
    let (unit, unit_name) = match end {
        e if e >= 4.0 * 3600.0 => (3600.0, "h"),
        e if e >= 1200.0 => (60.0, "min"),
        _ => (1.0, "s"),
    };
    let reference = runs.first().map(|r| r.policy.as_str()).unwrap_or("-");
    let root = root.titled(
        &format!("CPU in use, {title}: mean over each 1/{BUCKETS} of the run; thin black line: {reference}"),
        ("sans-serif", 18),
    )?;
    let (panels_area, axis_area) = root.split_vertically(PANEL * rows);
    let panels = panels_area.split_evenly((rows as usize, 1));
    let lines: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|r| smoothed(&r.timeline, end, BUCKETS).into_iter().map(|(t, cpu)| (t / unit, cpu)).collect())
        .collect();
    for (i, (panel, run)) in panels.iter().zip(runs).enumerate() {
        let mut chart = ChartBuilder::on(panel)
            .margin_left(10)
            .margin_right(20)
            .margin_top(22)
            .y_label_area_size(55)
            .x_label_area_size(if i + 1 == runs.len() { 30 } else { 0 })
            .build_cartesian_2d(0.0..end / unit, 0.0..100.0)?;
        chart
            .configure_mesh()
            .y_labels(3)
            .x_labels(12)
            .y_desc("CPU %")
            .label_style(("sans-serif", 12))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        if let Some((what, from, to)) = window {
            let (from, to) = (from / unit, to / unit);
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (to, 100.0)], BLACK.mix(0.08).filled())))?;
            chart.draw_series(std::iter::once(Text::new(what.to_string(), (from, 30.0), ("sans-serif", 12))))?;
        }
        if i > 0 {
            chart.draw_series(LineSeries::new(lines[0].iter().copied(), BLACK.mix(0.5).stroke_width(1)))?;
        }
        let c = color(i);
        chart
            .draw_series(AreaSeries::new(lines[i].iter().copied(), 0.0, c.mix(0.2)).border_style(c.stroke_width(2)))?;
        let label = format!("{} (mean {:.1} %)", run.policy, run.cpu_mean * 100.0);
        panel.draw(&Text::new(label, (70, 4), ("sans-serif", 14)))?;
    }
    axis_area.draw(&Text::new(format!("time ({unit_name})"), (520, 4), ("sans-serif", 14)))?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pliant_metrics::JobRecord;

    /// The `<text>` elements of an SVG: (x, content).
    pub(crate) fn texts(svg: &str) -> Vec<(f64, String)> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let x = t.split("x=\"").nth(1).and_then(|r| r.split('"').next()).and_then(|x| x.parse().ok());
                let body = t.split_once('>').map_or("", |(_, b)| b).split("</text>").next().unwrap_or("");
                (x.unwrap_or(f64::NAN), body.trim().to_string())
            })
            .collect()
    }

    fn svg_of(write: impl FnOnce(&Path) -> PlotResult) -> String {
        let path = std::env::temp_dir().join(format!(
            "pliant-plot-{}-{:?}.svg",
            std::process::id(),
            std::thread::current().id()
        ));
        write(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        svg
    }

    fn job(class: JobClass, jct_s: u64) -> JobRecord {
        JobRecord {
            name: "j".into(),
            class,
            priority: 0,
            submit: 0,
            first_start: Some(0),
            end: Some(jct_s * 1_000_000),
            failed: false,
            tasks: 1,
            preemptions: 0,
            attempts: 1,
            kills: 0,
            relaunches: 0,
            stalled: 0,
            retry_end: None,
            alone: None,
        }
    }

    fn runs() -> Vec<RunRecord> {
        ["fifo", "checkpoint-nvm-long-name"]
            .iter()
            .map(|p| RunRecord {
                policy: p.to_string(),
                jobs: vec![job(JobClass::Short, 3), job(JobClass::Short, 40), job(JobClass::Long, 20_000)],
                timeline: (0..100)
                    .map(|k| Sample { time: k * 250 * 1_000_000, cpu: (k % 2) as f64, mem: 0.0 })
                    .collect(),
                cpu_mean: 0.5,
                ..RunRecord::default()
            })
            .collect()
    }

    #[test]
    fn ticks_drop_needless_digits() {
        assert_eq!(tick(&20000.0), "20000");
        assert_eq!(tick(&0.5), "0.5");
        assert_eq!(tick(&0.0), "0");
        assert_eq!(tick(&1.25), "1.25");
        assert_eq!(tick(&1e-5), "1e-5");
    }

    #[test]
    fn a_log_axis_labels_only_1_2_and_5_in_each_decade() {
        let labels: Vec<String> =
            [600.0, 700.0, 800.0, 900.0, 1000.0, 2000.0, 5000.0, 0.5].iter().map(log_tick).collect();
        assert_eq!(labels, ["", "", "", "", "1000", "2000", "5000", "0.5"]);
    }

    #[test]
    fn jct_cdf_names_the_run_keeps_its_legend_off_the_data_and_uses_a_log_axis() {
        let svg = svg_of(|p| plot_jct_cdf(&runs(), "mixed (seed 7, scale 1)", p));
        let t = texts(&svg);
        assert!(t.iter().any(|(_, s)| s.contains("mixed (seed 7, scale 1)")), "title: {t:?}");
        for policy in ["fifo", "checkpoint-nvm-long-name"] {
            let (x, _) = t.iter().find(|(_, s)| s == policy).unwrap_or_else(|| panic!("{policy} in legend"));
            assert!(*x > f64::from(1200 - LEGEND_WIDTH), "{policy}'s legend at x = {x}, over the data");
        }
        // Axes fitted to the data: short JCTs span 3-40 s (a quarter more each
        // side), long ones 20,000 s (a decade around it).
        let times: Vec<f64> = t.iter().filter_map(|(_, s)| s.parse::<f64>().ok()).filter(|&v| v > 1.0).collect();
        let fitted = |v: f64| (2.4..=50.0).contains(&v) || (6_300.0..=63_300.0).contains(&v);
        assert!(times.iter().all(|&v| fitted(v)), "ticks beyond the data: {times:?}");
        assert!(times.iter().any(|&v| v < 100.0) && times.iter().any(|&v| v > 10_000.0), "{times:?}");
        assert!(!t.iter().any(|(_, s)| s.ends_with(".0")), "ticks like 20000.0: {t:?}");
        assert!(svg.contains("(s, log scale)"));
    }

    #[test]
    fn failed_jobs_keep_the_cdf_below_one_and_are_counted_in_the_legend() {
        let mut r = runs();
        r[1].jobs.push(JobRecord { failed: true, end: None, ..job(JobClass::Long, 1) });
        let long = Finished::of(&r[1], JobClass::Long);
        assert_eq!((long.of, long.failed()), (2, 1));
        assert_eq!(cdf_steps(&long), vec![(20_000.0, 0.0), (20_000.0, 0.5)], "half the long jobs finished");
        assert_eq!(cdf_steps(&Finished::of(&r[0], JobClass::Long)), vec![(20_000.0, 0.0), (20_000.0, 1.0)]);
        assert_eq!(legend_entry(&r[0]), "fifo");
        assert_eq!(legend_entry(&r[1]), "checkpoint-nvm-long-name (1 long failed)");
        let t = texts(&svg_of(|p| plot_jct_cdf(&r, "t", p)));
        assert!(t.iter().any(|(_, s)| s == "checkpoint-nvm-long-name (1 long failed)"), "{t:?}");
    }

    #[test]
    fn equal_curves_stay_visible_as_nested_bands() {
        assert_eq!((0..3).map(|i| line_width(i, 3)).collect::<Vec<_>>(), vec![6, 4, 2]);
        let svg = svg_of(|p| plot_jct_cdf(&runs(), "t", p));
        for width in ["stroke-width=\"4\"", "stroke-width=\"2\""] {
            assert!(svg.contains(width), "{width}: the same curves drawn alike");
        }
    }

    #[test]
    fn cpu_timeline_has_a_panel_per_policy_with_units_and_smoothing() {
        let svg = svg_of(|p| plot_cpu_timeline(&runs(), "google-day (seed 1, scale 0.1)", None, p));
        let t = texts(&svg);
        assert!(!t.iter().any(|(_, s)| s == "short-job burst"), "{t:?}");
        let burst = svg_of(|p| plot_cpu_timeline(&runs(), "t", Some(("short-job burst", 300.0, 700.0)), p));
        let marked = texts(&burst).iter().filter(|(_, s)| s == "short-job burst").count();
        assert_eq!(marked, 2, "the burst marked in each policy's panel");
        assert!(t.iter().any(|(_, s)| s.contains("google-day (seed 1, scale 0.1)")));
        assert!(t.iter().any(|(_, s)| s == "fifo (mean 50.0 %)"), "{t:?}");
        assert!(t.iter().any(|(_, s)| s == "checkpoint-nvm-long-name (mean 50.0 %)"));
        assert!(t.iter().any(|(_, s)| s == "time (h)"), "a 7 h run in hours: {t:?}");
        assert!(!t.iter().any(|(_, s)| s.ends_with(".0")), "{t:?}");
    }

    #[test]
    fn smoothing_is_the_time_weighted_mean_per_slice() {
        // On for 1 s, off for 1 s, repeated: every 4 s slice averages 50 %.
        let tl: Vec<Sample> =
            (0..8).map(|k| Sample { time: k * 1_000_000, cpu: ((k + 1) % 2) as f64, mem: 0.0 }).collect();
        let s = smoothed(&tl, 8.0, 2);
        assert_eq!(s.len(), 2);
        for (t, cpu) in s {
            assert!((cpu - 50.0).abs() < 1e-9, "{t}: {cpu}");
        }
    }

    #[test]
    fn ratio_cdf_names_each_series_and_its_axes() {
        let series = [("elastic/yarn".to_string(), vec![0.9, 0.5, 0.7]), ("elastic/meganode".to_string(), vec![1.2])];
        let svg = svg_of(|p| plot_ratio_cdf("Fig. 6", &series, p));
        for text in ["Fig. 6", "elastic/yarn", "elastic/meganode", "average JCT ratio", "fraction of traces"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }
}

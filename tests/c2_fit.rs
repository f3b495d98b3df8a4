//! The C2 scenarios against every figure cuzk published for the reference box
//! (tests/fixtures/c2-fit/figures.csv, tabled in docs/reference/c2-figures.md): each row
//! names its setting (cuzk's phase and its `pw gw c j` shorthand), its metric, the
//! published value, whether the fit could see it (`fit`), was held out of it (`held`) or
//! is the seed's acceptance test (`seed`), and the band this test holds the model's
//! prediction to. Every setting is run once (4 seeds),
//! with a TIMELINE log read back by `bwsim log` for the timers.
//!
//! `BWSIM_BLESS=1 cargo test --test c2_fit` rewrites the predicted and error
//! columns of docs/reference/c2-figures.md (and its error summary) from this run: the one
//! command that rebuilds them. `BWSIM_C2_SETS="KEY=VALUE ..."` applies `--set`s to every
//! cuzk run (a trial fit) and `BWSIM_C2_REPORT=1` prints the table without asserting.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const FIGURES: &str = "tests/fixtures/c2-fit/figures.csv";
const DOC: &str = "docs/reference/c2-figures.md";
const COLUMNS: [&str; 13] = [
    "id",
    "family",
    "figure",
    "source",
    "commit",
    "scenario",
    "phase",
    "load",
    "metric",
    "published",
    "split",
    "band_pct",
    "note",
];
const REPLICATIONS: &str = "4";
/// Steady-state rows (no `c=` in the load) measure 40 proofs after 8 of warm-up.
const STEADY: [&str; 2] = ["arrivals.jobs=40", "arrivals.warmup_jobs=8"];
/// The stages of the GPU region, whose means add up to `gpu_region_s`.
const GPU_STAGES: [&str; 5] = ["upload_abc", "ntt", "h_msm", "batch_add", "tail_msm"];

#[derive(Debug, Clone)]
struct Figure {
    id: String,
    figure: String,
    source: String,
    commit: String,
    scenario: String,
    phase: String,
    load: String,
    metric: String,
    published: f64,
    split: String,
    band_pct: Option<f64>,
}

impl Figure {
    fn modelled(&self) -> bool {
        self.split != "none"
    }

    /// The run this figure is read from.
    fn setting(&self) -> (String, String, String) {
        (self.scenario.clone(), self.phase.clone(), self.load.clone())
    }
}

fn figures() -> Vec<Figure> {
    let text = std::fs::read_to_string(FIGURES).expect("figures file");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(COLUMNS.join(",").as_str()),
        "{FIGURES}: header"
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), COLUMNS.len(), "{FIGURES}: {line}");
            Figure {
                id: f[0].into(),
                figure: f[2].into(),
                source: f[3].into(),
                commit: f[4].into(),
                scenario: f[5].into(),
                phase: f[6].into(),
                load: f[7].into(),
                metric: f[8].into(),
                published: f[9].parse().unwrap_or(f64::NAN),
                split: f[10].into(),
                band_pct: f[11].parse().ok(),
            }
        })
        .collect()
}

/// The `--set`s of a phase of cuzk's notes (docs/reference/c2-figures.md, "The settings").
fn phase_sets(phase: &str) -> &'static [&'static str] {
    const P9: &[&str] = &[
        "params.pinned_abc=true",
        "params.register_abc=true",
        "params.split_prove=false",
        "params.gpu_threads=192",
    ];
    match phase {
        "P5" | "P9" => P9,
        "P8" => &[
            "params.pinned_abc=false",
            "params.register_abc=false",
            "params.split_prove=false",
            "params.gpu_threads=192",
        ],
        "P11" => &[
            "params.pinned_abc=true",
            "params.register_abc=true",
            "params.split_prove=false",
            "params.gpu_threads=32",
        ],
        "P12" => &[
            "params.pinned_abc=true",
            "params.register_abc=true",
            "params.split_prove=true",
            "params.gpu_threads=32",
        ],
        "stock" => &[],
        other => panic!("{FIGURES}: unknown phase {other}"),
    }
}

/// cuzk's shorthand as `--set`s: `pw gw j` are knobs, `c=N` runs N proofs from a cold
/// start with no warm-up (cuzk-bench's `-c`), `ram=G` sets the host's RAM.
fn load_sets(load: &str) -> (Vec<String>, usize) {
    let mut sets = Vec::new();
    let mut warmup = 8;
    let mut bench = false;
    for token in load.split_whitespace() {
        let (key, value) = token.split_once('=').expect("KEY=VALUE");
        let knob = match key {
            "pw" => "params.synthesis_concurrency",
            "gw" => "params.gpu_workers_per_device",
            "j" => "params.proofs_in_flight",
            "ram" => "params.host_ram_gib",
            "c" => {
                bench = true;
                warmup = 0;
                sets.push(format!("arrivals.jobs={value}"));
                sets.push("arrivals.warmup_jobs=0".into());
                continue;
            }
            other => panic!("{FIGURES}: unknown load key {other}"),
        };
        sets.push(format!("{knob}={value}"));
    }
    if !bench {
        sets.extend(STEADY.iter().map(|s| s.to_string()));
    }
    (sets, warmup)
}

/// One run's outputs: the report, `bwsim log`'s analysis of its TIMELINE log, the log.
struct Observed {
    report: Value,
    log: Value,
    timeline: String,
    host_ram_gib: f64,
}

fn bwsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bwsim"))
}

fn observe((scenario, phase, load): &(String, String, String)) -> Observed {
    let path = match scenario.as_str() {
        "cuzk" => "scenarios/c2-32g-cuzk.toml",
        "stock" => "scenarios/c2-32g-stock.toml",
        other => panic!("{FIGURES}: unknown scenario {other}"),
    };
    let (mut sets, warmup) = load_sets(load);
    sets.splice(0..0, phase_sets(phase).iter().map(|s| s.to_string()));
    if scenario == "cuzk"
        && let Ok(extra) = std::env::var("BWSIM_C2_SETS")
    {
        sets.extend(extra.split_whitespace().map(str::to_string));
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timeline.log");
    let mut cmd = bwsim();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "run",
        path,
        "--format",
        "json",
        "--no-what-if",
        "--no-ideal",
        "--replications",
        REPLICATIONS,
        "--timeline-log",
        log.to_str().unwrap(),
    ]);
    for s in &sets {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{path} {sets:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let analysed = bwsim()
        .args(["log", log.to_str().unwrap(), "--format", "json"])
        .args(["--warmup-jobs", &warmup.to_string()])
        .output()
        .unwrap();
    assert!(
        analysed.status.success(),
        "{}",
        String::from_utf8_lossy(&analysed.stderr)
    );
    let host_ram_gib = sets
        .iter()
        .find_map(|s| s.strip_prefix("params.host_ram_gib="))
        .map_or(755.0, |v| v.parse().unwrap());
    Observed {
        report,
        log: serde_json::from_slice(&analysed.stdout).unwrap(),
        timeline: std::fs::read_to_string(&log).unwrap(),
        host_ram_gib,
    }
}

/// (time s, event, job) of every TIMELINE record.
fn records(log: &str) -> impl Iterator<Item = (f64, &str, &str)> {
    log.lines().filter(|l| l.starts_with("TIMELINE,")).map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        (f[1].parse::<f64>().unwrap() / 1e3, f[2], f[3])
    })
}

/// Per proof, its first SYNTH_START to its last SYNTH_END; the mean over proofs.
fn mean_synthesis_span_s(log: &str) -> f64 {
    let mut span: HashMap<&str, (f64, f64)> = HashMap::new();
    for (t, event, job) in records(log) {
        let s = span
            .entry(job)
            .or_insert((f64::INFINITY, f64::NEG_INFINITY));
        match event {
            "SYNTH_START" => s.0 = s.0.min(t),
            "SYNTH_END" => s.1 = s.1.max(t),
            _ => {}
        }
    }
    let spans: Vec<f64> = span.values().map(|(a, b)| b - a).collect();
    spans.iter().sum::<f64>() / spans.len().max(1) as f64
}

/// The GPU's idle gaps of over a second (between brackets, none open), added up.
fn idle_gaps_over_1s(log: &str) -> f64 {
    let mut steps: Vec<(f64, i32)> = records(log)
        .filter_map(|(t, e, _)| match e {
            "GPU_START" => Some((t, 1)),
            "GPU_END" => Some((t, -1)),
            _ => None,
        })
        .collect();
    steps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut open, mut idle_from, mut total) = (0, None, 0.0);
    for (t, d) in steps {
        if open == 0
            && d > 0
            && let Some(from) = idle_from
            && t - from > 1.0
        {
            total += t - from;
        }
        open += d;
        if open == 0 {
            idle_from = Some(t);
        }
    }
    total
}

fn measure(o: &Observed, metric: &str) -> f64 {
    let r = &o.report;
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let stage = |name: &str| num(&r["stages"][name]["mean_s"]);
    let bracket = num(&r["gpu"]["breakdown"]["mean_bracket_s"]);
    let over_span = num(&r["gpu"]["brackets_summed_span_frac"]);
    let timer = |name: &str| num(&o.log["timers"][name]["mean"]);
    let spj = r["replications"]["seconds_per_job"]["mean"]
        .as_f64()
        .unwrap_or_else(|| num(&r["seconds_per_job"]));
    match metric {
        "spj" => spj,
        "prove_s" => 10.0 * bracket,
        "bracket_s" => bracket,
        "union" => num(&r["gpu"]["bracketed_busy_frac"]),
        "summed_span" => over_span,
        "summed_wall" => num(&r["gpu"]["brackets_summed_frac"]),
        "gap_ms" => 1e3 * num(&r["gpu"]["mean_gap_s"]),
        "overhead_ms" => 1e3 * bracket * (1.0 / over_span - 1.0),
        "gpu_total_span" => timer("gpu_total_ms") / 1e3 / bracket * over_span,
        "true_duty" => num(&r["gpu"]["true_busy_frac"]),
        "synth_span" => mean_synthesis_span_s(&o.timeline),
        "synth_part" => {
            let synth = o.log["stages"].as_array().unwrap().iter();
            let s = synth.clone().find(|s| s["name"] == "SYNTH").expect("SYNTH");
            num(&s["duration_ms"]["mean"]) / 1e3
        }
        "gpu_region_s" => GPU_STAGES.iter().map(|s| stage(s)).sum(),
        "idle_gaps_s" => idle_gaps_over_1s(&o.timeline),
        "rss_gib" => {
            // What stays resident (SRS, PCE) is what the scenario keeps out of host_ram_gib.
            let resident = o.host_ram_gib - num(&r["ram"]["capacity_gib"]);
            num(&r["ram"]["peak_gib"]) + resident
        }
        "stock_gpu" => spj - stage("synthesize"),
        m => {
            if let Some(name) = m.strip_prefix("stage:") {
                stage(name)
            } else if let Some(name) = m.strip_prefix("timer:") {
                timer(name)
            } else {
                panic!("{FIGURES}: unknown metric {m}")
            }
        }
    }
}

/// Every modelled figure's prediction, each setting run once, a few at a time.
fn predictions(rows: &[Figure]) -> BTreeMap<String, f64> {
    let mut settings: Vec<(String, String, String)> = rows
        .iter()
        .filter(|f| f.modelled())
        .map(Figure::setting)
        .collect();
    settings.sort();
    settings.dedup();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let chunks: Vec<Vec<(String, String, String)>> = (0..workers)
        .map(|w| settings.iter().skip(w).step_by(workers).cloned().collect())
        .collect();
    let observed: HashMap<(String, String, String), Observed> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|k| (k.clone(), observe(k)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    rows.iter()
        .filter(|f| f.modelled())
        .map(|f| (f.id.clone(), measure(&observed[&f.setting()], &f.metric)))
        .collect()
}

fn error_pct(f: &Figure, predicted: f64) -> f64 {
    (predicted / f.published - 1.0) * 100.0
}

/// The figure table's rows with predictions, and the error summary under it.
fn table(rows: &[Figure], predicted: &BTreeMap<String, f64>) -> String {
    let mut out = String::from(
        "| id | figure | source | load | metric | published | split | predicted | error | band |\n\
         |---|---|---|---|---|---:|---|---:|---:|---:|\n",
    );
    for f in rows.iter().filter(|f| f.modelled()) {
        let p = predicted[&f.id];
        let source = if f.commit == "-" || f.source.contains("commit message") {
            f.source.clone()
        } else {
            format!("{} @{}", f.source, f.commit)
        };
        let band = f.band_pct.map_or("-".to_string(), |b| format!("±{b}%"));
        out += &format!(
            "| {} | {} | {} | {} {} | {} | {} | {} | {} | {:+.1}% | {band} |\n",
            f.id,
            f.figure,
            source,
            f.phase,
            f.load,
            f.metric,
            f.published,
            f.split,
            significant(p),
            error_pct(f, p)
        );
    }
    out += "\n";
    for split in ["fit", "held", "seed"] {
        let errors: Vec<f64> = rows
            .iter()
            .filter(|f| f.split == split)
            .map(|f| error_pct(f, predicted[&f.id]).abs())
            .collect();
        let mut sorted = errors.clone();
        sorted.sort_by(f64::total_cmp);
        let within = |b: f64| errors.iter().filter(|e| **e <= b).count();
        out += &format!(
            "- **{split}** ({} figures): median |error| {:.1}%, worst {:.1}%; {} within 5%, {} within 15%\n",
            errors.len(),
            sorted[sorted.len() / 2],
            sorted.last().unwrap(),
            within(5.0),
            within(15.0)
        );
    }
    out
}

/// Four significant digits, as the published figures are given.
fn significant(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let digits = (3 - x.abs().max(1e-9).log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn bless(text: &str) {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let (begin, end) = ("<!-- figures:begin -->\n", "<!-- figures:end -->");
    let a = doc.find(begin).expect("figures:begin marker") + begin.len();
    let b = doc.find(end).expect("figures:end marker");
    std::fs::write(DOC, format!("{}{text}{}", &doc[..a], &doc[b..])).unwrap();
}

#[test]
fn every_published_figure_stays_within_its_band() {
    assert!(Path::new(FIGURES).exists());
    let rows = figures();
    for split in ["fit", "held", "seed", "none"] {
        assert!(rows.iter().any(|f| f.split == split), "no {split} rows");
    }
    let predicted = predictions(&rows);
    let text = table(&rows, &predicted);
    if std::env::var_os("BWSIM_BLESS").is_some() {
        bless(&text);
    }
    if std::env::var_os("BWSIM_C2_REPORT").is_some() {
        println!("{text}");
        return;
    }
    let outside: Vec<String> = rows
        .iter()
        .filter(|f| f.modelled())
        .filter_map(|f| {
            let p = predicted[&f.id];
            let band = f.band_pct.unwrap_or_else(|| panic!("{}: no band", f.id));
            let e = error_pct(f, p);
            // A prediction that is not a number (NaN) is outside too.
            let inside = e.abs() <= band;
            (!inside).then(|| {
                format!(
                    "{} [{}] {}: model {p:.4} vs {} ({e:+.1}%, band ±{band}%)",
                    f.id, f.split, f.figure, f.published
                )
            })
        })
        .collect();
    assert!(
        outside.is_empty(),
        "outside their band:\n{}",
        outside.join("\n")
    );
}

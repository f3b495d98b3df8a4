//! The deployment files say what they run: every path deploy/Dockerfile copies from the
//! repository exists, the Kubernetes Job names the image the Dockerfile's build line
//! tags, and the Job's own command line (its env values, split as its shell splits them)
//! runs one of its shards. Docker itself does not run here; this is what can be checked
//! without it.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

/// `name: X` under the Job's env, as `- name: X` then `value: Y`.
fn job_env(yaml: &str, name: &str) -> String {
    let mut lines = yaml.lines();
    while let Some(l) = lines.next() {
        if l.trim() == format!("- name: {name}") {
            let v = lines.next().unwrap().trim();
            let v = v.strip_prefix("value:").unwrap().trim();
            return v.trim_matches('"').to_string();
        }
    }
    panic!("the Job sets no {name}");
}

#[test]
fn the_dockerfile_copies_paths_that_exist_and_tags_the_jobs_image() {
    let docker = read("deploy/Dockerfile");
    let mut copied = 0;
    for line in docker.lines().map(str::trim) {
        let Some(args) = line.strip_prefix("COPY ") else {
            continue;
        };
        if args.starts_with("--from") {
            continue;
        }
        let parts: Vec<&str> = args.split_whitespace().collect();
        for src in &parts[..parts.len() - 1] {
            assert!(
                root().join(src).exists(),
                "deploy/Dockerfile copies {src}, which is missing"
            );
            copied += 1;
        }
    }
    assert!(copied >= 6, "{copied} paths copied");
    let tag = docker
        .lines()
        .find_map(|l| l.split(" -t ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the Dockerfile documents its build line with -t TAG");
    let yaml = read("deploy/k8s/sweep-indexed-job.yaml");
    assert!(
        yaml.contains(&format!("image: {tag}")),
        "the Job's image is not {tag}"
    );
}

#[test]
fn the_jobs_command_line_runs_its_last_shard() {
    let yaml = read("deploy/k8s/sweep-indexed-job.yaml");
    let scenario = job_env(&yaml, "SCENARIO");
    assert!(root().join(&scenario).is_file(), "{scenario}");
    let shards = job_env(&yaml, "SHARDS");
    assert!(
        yaml.contains(&format!("completions: {shards}")),
        "SHARDS = completions"
    );
    let last: u32 = shards.parse::<u32>().unwrap() - 1;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("shard-{last}"));
    assert_cmd::Command::cargo_bin("bwsim")
        .unwrap()
        .current_dir(root())
        .arg("sweep")
        .arg(&scenario)
        .args(job_env(&yaml, "PARAMS").split_whitespace())
        .args(job_env(&yaml, "SETS").split_whitespace())
        .args(["--replications", &job_env(&yaml, "SEEDS"), "--jobs", "2"])
        .args(["--shard", &format!("{last}/{shards}")])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("shard.json").is_file());
}

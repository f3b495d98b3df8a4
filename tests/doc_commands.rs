//! Every `bwsim` command line in README.md and docs/*.md parses: the flags it uses exist
//! and take what it gives them. Only the command line is parsed (clap), nothing runs, so
//! commands that need a GPU build (`replay`, `calibrate` with GPU probes) are checked as
//! well as the rest. Synopsis lines (`[--plot FILE.png]`, `...`, `text|json`) are not
//! command lines and are skipped.

use std::path::{Path, PathBuf};

use bwsim::cli::Cli;
use clap::{CommandFactory, Parser};

fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// The logical lines of a document's fenced code blocks (a trailing `\` continues).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            continue;
        }
        let (n, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        let trimmed = line.trim_end();
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                acc.push_str(head);
                acc.push(' ');
                pending = Some((n, acc));
            }
            None => {
                acc.push_str(trimmed);
                out.push((n, acc));
            }
        }
    }
    out
}

/// Shell words, with quotes removed; a `#` word starts a comment, and `|`, `&&`, `;`,
/// `>` end the command.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    let end = out
        .iter()
        .position(|w| {
            w.starts_with('#') || ["|", "&&", ";", ">", "2>&1", "||"].contains(&w.as_str())
        })
        .unwrap_or(out.len());
    out.truncate(end);
    out
}

/// The bwsim command in a code line, if it has one: its words from `bwsim` on. None for
/// lines that are not commands and for synopsis lines.
fn bwsim_command(line: &str) -> Option<Vec<String>> {
    let line = line.trim_start().trim_start_matches("$ ");
    let w = words(line);
    let at = w
        .iter()
        .position(|t| t == "bwsim" || t.ends_with("/bwsim"))?;
    // Only a command when bwsim comes first or after environment assignments.
    if !w[..at]
        .iter()
        .all(|t| t.contains('=') && !t.starts_with('-'))
    {
        return None;
    }
    let cmd = &w[at..];
    // Prose or output that starts with the word bwsim ("bwsim = 74% of ..."): the next
    // word is no subcommand or flag.
    let subcommands: Vec<String> = (Cli::command().get_subcommands())
        .map(|c| c.get_name().to_string())
        .collect();
    let next = cmd.get(1)?;
    if !next.starts_with('-') && !subcommands.contains(next) {
        return None;
    }
    let synopsis = cmd.iter().any(|t| {
        t.contains('[')
            || t.contains("...")
            || t.contains('…')
            || t.contains('<')
            || (t.contains('|') && t.len() > 1)
    });
    (!synopsis && cmd.len() > 1).then(|| cmd.to_vec())
}

#[test]
fn every_documented_command_line_parses() {
    let mut parsed = 0;
    let mut failures = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line_no, line) in code_lines(&text) {
            let Some(mut args) = bwsim_command(&line) else {
                continue;
            };
            args[0] = "bwsim".into();
            match Cli::try_parse_from(&args) {
                Ok(_) => parsed += 1,
                // --help and --version "fail" with their own output: they parse.
                Err(e)
                    if matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp
                            | clap::error::ErrorKind::DisplayVersion
                            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    ) =>
                {
                    parsed += 1
                }
                Err(e) => failures.push(format!(
                    "{}:{line_no}: `{}`: {}",
                    doc.display(),
                    args.join(" "),
                    e.to_string().lines().next().unwrap_or("")
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "documented commands that do not parse:\n{}",
        failures.join("\n")
    );
    // The docs hold dozens of commands: a parser that found none would pass vacuously.
    assert!(parsed >= 25, "only {parsed} command lines found");
    eprintln!("{parsed} documented command lines parse");
}

#[test]
fn validate_takes_out_and_its_old_spelling() {
    for flag in ["--out", "--out-dir"] {
        let cli = Cli::try_parse_from(["bwsim", "validate", "--calibration", "c.toml", flag, "v"])
            .unwrap();
        match cli.command {
            bwsim::cli::Command::Validate(a) => assert_eq!(a.out_dir, Path::new("v")),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn synopsis_and_output_lines_are_not_commands() {
    assert_eq!(bwsim_command("bwsim log daemon.log [--plot log.png]"), None);
    assert_eq!(
        bwsim_command("bwsim sweep SCENARIO --param ... --shard 0/4"),
        None
    );
    assert_eq!(bwsim_command("bwsim: error: no such file"), None);
    assert_eq!(bwsim_command("bwsim = 74% of the floor"), None);
    assert_eq!(
        bwsim_command("$ BWSIM_X=1 ./target/release/bwsim run a.toml --set 'x=1' | head # c"),
        Some(
            ["./target/release/bwsim", "run", "a.toml", "--set", "x=1"]
                .map(String::from)
                .to_vec()
        )
    );
}

//! `lab bench REV`: one revision measured on its own; with `--check-commit`, its signature
//! checked against the last `Bench: N` of the commit message, as OpenBench reads it.

use anyhow::{bail, Context, Result};

use super::{plan, settings};
use crate::analysis::compare::{summarize, Thresholds};
use crate::analysis::measure::{measure_single, Subject};
use crate::cli::BenchArgs;
use crate::engine::revision::resolve;
use crate::exit::Exit;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::{BenchOutput, CommitBench, Report};
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;

/// The part of a commit message read for its bench number: messages are short, and this bounds
/// what an outside repository can make the lab scan.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

pub(crate) fn run(lab: &Lab, args: &BenchArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let revision = resolve(session.repo(), &args.rev, session.paths())?;
    // Read before measuring: a message without a bench number is an error worth no bench runs.
    let stated = if args.check_commit {
        let commit = revision.commit.with_context(|| {
            format!(
                "--check-commit: {} is not a commit, so it has no message to state a bench",
                args.rev
            )
        })?;
        let message = session
            .repo()
            .find_commit(commit)
            .with_context(|| format!("--check-commit: reading commit {commit}"))?
            .message_bytes()
            .to_vec();
        let message = &message[..message.len().min(MAX_MESSAGE_BYTES)];
        let stated = commit_bench(&String::from_utf8_lossy(message))
            .map_err(|error| anyhow::anyhow!("--check-commit: commit {commit}: {error}"))?;
        Some((commit.to_string(), stated))
    } else {
        None
    };
    let (plan, positions) = plan(&session, &args.measure)?;
    let binary = session.build(&revision, &args.measure.run.features)?;
    let subject = Subject::new(Side::A, args.rev.clone(), &revision, &binary);
    let measured = measure_single(&subject, &plan, session.paths(), session.progress())?;
    let revision = summarize(&measured.label, &measured.measurement);
    let commit_bench = stated.map(|(commit, stated)| CommitBench {
        commit,
        stated,
        measured: revision.signature,
        matches: stated == revision.signature,
    });
    let exit = match &commit_bench {
        Some(check) if !check.matches => Exit::Regression,
        _ => Exit::Clean,
    };
    let output = BenchOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Bench,
        settings: settings(&args.measure, Thresholds::NONE, positions),
        revision,
        commit_bench,
    };
    Ok(Outcome {
        report: Report::Bench(Box::new(output)),
        exit,
    })
}

/// The number of the message's last `Bench: N`, read as OpenBench reads a commit message: the
/// word `bench` in any case, then one or more spaces, colons or equals signs, then digits
/// (commas between them allowed, `1,234,567`). OpenBench also takes `Nodes N`; the lab does
/// not, since a message speaks of nodes for other reasons.
pub(crate) fn commit_bench(message: &str) -> Result<u64> {
    let lower = message.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut last = None;
    let mut from = 0;
    while let Some(offset) = lower[from..].find("bench") {
        let mut at = from + offset + "bench".len();
        from = at;
        let separators = bytes[at..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b':' | b'='))
            .count();
        if separators == 0 {
            continue;
        }
        at += separators;
        let figure = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b',')
            .count();
        let digits: String = lower[at..at + figure]
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() {
            last = Some(digits);
        }
    }
    let Some(digits) = last else {
        bail!("its message has no `Bench: N` line (OpenBench's convention: the bench's node count, e.g. `Bench: 4213781`)");
    };
    match digits.parse::<u64>() {
        Ok(number) => Ok(number),
        Err(_) => bail!(
            "its message's `Bench: {}` is beyond any node count",
            crate::input::excerpt(&digits, 40)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_bench_of_a_message_is_its_number() {
        assert_eq!(
            commit_bench("Faster movegen\n\nBench: 4213781\n").unwrap(),
            4_213_781
        );
        assert_eq!(
            commit_bench("Revert\n\nBench: 100\n\nbench 1,234,567").unwrap(),
            1_234_567
        );
        assert_eq!(commit_bench("bench=42").unwrap(), 42);
        assert_eq!(commit_bench("BENCH:: 7\nbenchmarks are noisy").unwrap(), 7);
        // A bench word without a number is not a bench line; an earlier one still counts.
        assert_eq!(commit_bench("Bench: 9\nbench: none").unwrap(), 9);
        for message in ["", "no number here", "Bench:", "benchmark 12", "Nodes: 5"] {
            let error = commit_bench(message).unwrap_err().to_string();
            assert!(error.contains("no `Bench: N`"), "{message:?}: {error}");
        }
        let huge = commit_bench("Bench: 99999999999999999999999").unwrap_err();
        assert!(huge.to_string().contains("beyond"), "{huge}");
    }
}

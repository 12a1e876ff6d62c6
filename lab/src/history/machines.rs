//! NPS per machine: a store committed to a repository fills up with series from several
//! machines (CI runners, a developer's box). For the commits of a history, this finds every
//! series of the store with the same toolchain and settings as this run's and reads the NPS it
//! holds for those commits, so the HTML page can draw one line per machine. Only reads the
//! store; a file another machine wrote is checked as this machine's own files are.

use std::fs;

use serde::Serialize;

use super::range::CommitInfo;
use super::store::{Series, Stored};
use crate::machine::Machine;

/// One machine's NPS over the commits of a history.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MachineLine {
    pub(crate) machine_id: String,
    /// The store directory the figures come from.
    pub(crate) series: String,
    /// `CPU (N cores) · machine id`: the id tells apart two boxes with the same CPU.
    pub(crate) label: String,
    /// The machine this history ran on (its figures are the rows').
    pub(crate) this_machine: bool,
    pub(crate) machine: Machine,
    /// Oldest first; only the commits the series holds.
    pub(crate) points: Vec<MachinePoint>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct MachinePoint {
    /// The full commit id, as in the rows.
    pub(crate) commit: String,
    /// Median NPS of the stored runs.
    pub(crate) nps: f64,
}

fn label(machine: &Machine, machine_id: &str) -> String {
    format!(
        "{} ({} cores) · {machine_id}",
        machine.cpu_model.trim(),
        machine.cores
    )
}

/// This machine's line (the rows' medians, `nps[i]` for `commits[i]`) followed by the line of
/// every other machine in the store that measured at least one of the commits with this
/// series' toolchain and settings, ordered by machine id. Files that cannot be used are named in
/// `warnings` and left out.
pub(crate) fn machine_lines(
    series: &Series,
    commits: &[CommitInfo],
    nps: &[f64],
    warnings: &mut Vec<String>,
) -> Vec<MachineLine> {
    let mut lines = vec![MachineLine {
        machine_id: series.machine_id.clone(),
        series: series.name.clone(),
        label: label(&series.machine, &series.machine_id),
        this_machine: true,
        machine: series.machine.clone(),
        points: commits
            .iter()
            .zip(nps)
            .map(|(commit, nps)| MachinePoint {
                commit: commit.id.clone(),
                nps: *nps,
            })
            .collect(),
    }];
    let Some(store) = series.dir.parent() else {
        return lines;
    };
    let suffix = format!("-{}-{}", series.toolchain_id, series.settings_id);
    let mut others: Vec<(String, String)> = fs::read_dir(store)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let machine_id = name.strip_suffix(&suffix)?.to_string();
            (machine_id != series.machine_id).then_some((machine_id, name))
        })
        .collect();
    others.sort();
    for (machine_id, name) in others {
        if let Some(line) = peer_line(series, &machine_id, &name, commits, warnings) {
            lines.push(line);
        }
    }
    lines
}

/// Another machine's series directory `name` read for `commits`; `None` when it holds none.
fn peer_line(
    series: &Series,
    machine_id: &str,
    name: &str,
    commits: &[CommitInfo],
    warnings: &mut Vec<String>,
) -> Option<MachineLine> {
    let store = series.dir.parent()?;
    let mut peer: Option<Series> = None;
    let mut points = Vec::new();
    for commit in commits {
        let path = store.join(name).join(format!("{}.json", commit.id));
        // Anything there but a regular file is read, and refused with a warning.
        if path.symlink_metadata().is_err() {
            continue;
        }
        // The machine is known only from a file: the first one read names it, and every file
        // is then loaded (and checked) as that series' own.
        if peer.is_none() {
            match machine_in(&path) {
                Ok(machine) => {
                    let candidate = Series::new(
                        store,
                        machine,
                        series.toolchain.clone(),
                        series.settings.clone(),
                    );
                    if candidate.name != name {
                        warnings.push(format!(
                            "{} is unusable: its machine is not the one its directory names",
                            path.display()
                        ));
                        continue;
                    }
                    peer = Some(candidate);
                }
                Err(why) => {
                    warnings.push(why);
                    continue;
                }
            }
        }
        let Some(peer) = &peer else { continue };
        match peer.load(&commit.id) {
            Stored::Found(entry) => points.push(MachinePoint {
                commit: commit.id.clone(),
                nps: entry.measurement.median_nps(),
            }),
            Stored::Missing | Stored::Failed(_) => {}
            Stored::Unusable(why) => warnings.push(why),
        }
    }
    let peer = peer?;
    (!points.is_empty()).then(|| MachineLine {
        machine_id: machine_id.to_string(),
        series: name.to_string(),
        label: label(&peer.machine, machine_id),
        this_machine: false,
        machine: peer.machine,
        points,
    })
}

/// The machine a stored file records, or why it cannot be read.
fn machine_in(path: &std::path::Path) -> Result<Machine, String> {
    #[derive(serde::Deserialize)]
    struct Recorded {
        machine: Machine,
    }
    let text = crate::input::read_text(path, crate::input::STORE_FILE)
        .map_err(|error| error.to_string())?;
    serde_json::from_str::<Recorded>(&text)
        .map(|recorded| recorded.machine)
        .map_err(|error| format!("{} is corrupt: {error}", path.display()))
}

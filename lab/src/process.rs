//! Running a child process with a deadline, collecting its output without risking a pipe
//! deadlock, and describing failures with the tail of what it printed.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `command` to completion, killing it after `timeout`. `what` names the process in errors.
pub fn run_with_timeout(mut command: Command, timeout: Duration, what: &str) -> Result<Finished> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_until(&mut child, timeout);
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    match status? {
        Some(status) => Ok(Finished {
            status,
            stdout,
            stderr,
        }),
        None => bail!(
            "{what} did not finish within {} s and was killed (a hang?){}",
            timeout.as_secs(),
            tail_section(&stderr, 20)
        ),
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buffer = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buffer);
        }
        buffer
    })
}

/// `None` when the deadline passed; the child has then been killed and reaped.
fn wait_until(child: &mut Child, timeout: Duration) -> Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Fails with the exit status (or signal) and the end of stderr when the process failed.
pub fn require_success(finished: &Finished, what: &str) -> Result<()> {
    if finished.status.success() {
        return Ok(());
    }
    Err(anyhow!(
        "{what} failed ({}){}",
        describe_status(finished.status),
        tail_section(&finished.stderr, 20)
    ))
}

pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// The last `lines` lines of `output`, indented under a header, or nothing when it is empty.
pub fn tail_section(output: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(output);
    let all: Vec<&str> = text.lines().collect();
    if all.is_empty() {
        return String::new();
    }
    let start = all.len().saturating_sub(lines);
    let mut section = format!("\n--- last {} lines of output ---", all.len() - start);
    for line in &all[start..] {
        section.push_str("\n  ");
        section.push_str(line);
    }
    section
}

/// Process groups the lab has started and not yet reaped: a SIGINT or SIGTERM sent to the lab
/// ends them too (see [`end_children_on_signal`]).
static LIVE_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Starts `command` as the leader of a new process group, so [`kill_group`] ends it together
/// with everything it spawned, and registers the group for [`end_children_on_signal`].
pub fn spawn_in_group(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let child = command.process_group(0).spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(pid);
    }
    Ok(child)
}

/// Sends SIGKILL to the whole process group led by `child`, reaps the leader and forgets the
/// group. Safe to call on a process that has already exited.
pub fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        signal_group(pid);
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .retain(|&group| group != pid);
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn signal_group(pid: i32) {
    // SAFETY: kill(2) takes two integers and touches no memory of ours; a group that no longer
    // exists makes it return ESRCH, which is ignored.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Installs a SIGINT/SIGTERM handler that kills every registered process group and exits with
/// 130, so engines and builds do not outlive an interrupted lab. Whatever the lab had appended
/// (match results, PGN) stays on disk. Call once, at start-up.
pub fn end_children_on_signal() {
    let _ = ctrlc::set_handler(|| {
        let groups = LIVE_GROUPS
            .lock()
            .map(|groups| groups.clone())
            .unwrap_or_default();
        for &pid in &groups {
            signal_group(pid);
        }
        eprintln!(
            "\ninterrupted: ended {} child process group(s)",
            groups.len()
        );
        std::process::exit(130);
    });
}

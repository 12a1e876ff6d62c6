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

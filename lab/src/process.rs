//! Running a child process with a deadline, collecting its output without risking a pipe
//! deadlock, and describing failures with the tail of what it printed.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

/// How long a process's descendants may keep its pipes open after it exited before the group is
/// killed: enough to flush what they were writing, short against any timeout.
const LINGER_GRACE: Duration = Duration::from_secs(2);
/// How long the readers get to drain the pipes after the group was killed. A descendant that left
/// the group (`setsid`) can hold them open for ever: its output is then given up.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(500);

/// Bytes kept of an output that is only shown (a build's output, any stderr): its last
/// [`OUTPUT_TAIL_BYTES`], the rest dropped as it is read.
pub(crate) const OUTPUT_TAIL_BYTES: usize = 1 << 20;
/// Bytes of stdout kept whole for the lab to read (a bench's JSON, `perf script`'s stacks); a
/// process printing more fails with an error naming this limit.
pub(crate) const READ_OUTPUT_BYTES: usize = 256 << 20;
/// Characters of one line that an error's tail of output shows.
const TAIL_LINE_CHARS: usize = 500;
/// Lines of a failed child's stderr quoted in the lab's error.
pub(crate) const ERROR_TAIL_LINES: usize = 20;
/// Lines of a failed build's output quoted in the lab's error: a compiler's error runs longer.
pub(crate) const FAILED_BUILD_TAIL_LINES: usize = 30;

pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    /// The last [`OUTPUT_TAIL_BYTES`] of stderr.
    pub(crate) stderr: Vec<u8>,
}

/// How much of a stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The last `n` bytes.
    Tail(usize),
    /// All of it, up to `n` bytes; beyond them the output is refused.
    Whole(usize),
}

/// Runs `command` to completion in its own process group, killing the whole group after
/// `timeout`. `what` names the process in errors.
///
/// Nothing here waits on a pipe without a deadline: a descendant that inherited stdout (an
/// engine starting `sleep 120`, a build script's helper) neither outlasts the timeout nor
/// holds up a process that has exited. Whatever is left of the group when the process is done
/// is killed, and a SIGINT or SIGTERM to the lab kills it as well (see
/// [`end_children_on_signal`]).
///
/// Stdout is kept whole for the caller to read, up to [`READ_OUTPUT_BYTES`] (more is an error);
/// of stderr only the last [`OUTPUT_TAIL_BYTES`] are kept.
pub(crate) fn run_with_timeout(
    command: Command,
    timeout: Duration,
    what: &str,
) -> Result<Finished> {
    run(command, timeout, what, Keep::Whole(READ_OUTPUT_BYTES))
}

/// [`run_with_timeout`] for a process whose output is only shown (a build): of stdout too only
/// the last [`OUTPUT_TAIL_BYTES`] are kept, however much it prints.
pub(crate) fn run_keeping_tails(
    command: Command,
    timeout: Duration,
    what: &str,
) -> Result<Finished> {
    run(command, timeout, what, Keep::Tail(OUTPUT_TAIL_BYTES))
}

fn run(mut command: Command, timeout: Duration, what: &str, keep_stdout: Keep) -> Result<Finished> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let deadline = Instant::now() + timeout;
    let mut child = spawn_in_group(&mut command).with_context(|| format!("starting {what}"))?;
    let stdout = Collector::start(child.stdout.take(), keep_stdout);
    let stderr = Collector::start(child.stderr.take(), Keep::Tail(OUTPUT_TAIL_BYTES));
    let exited = match wait_for_exit(&child, deadline) {
        Ok(exited) => exited,
        Err(error) => {
            kill_group(&mut child);
            return Err(error).with_context(|| format!("waiting for {what}"));
        }
    };
    if !exited {
        kill_group(&mut child);
        let drained = Instant::now() + DRAIN_AFTER_KILL;
        stderr.wait_closed(drained);
        bail!(
            "{what} did not finish within {} s and was killed with every process it started \
             (a hang?){}",
            timeout.as_secs(),
            tail_section(&stderr.take().unwrap_or_default(), ERROR_TAIL_LINES)
        );
    }
    // The process has exited but is not reaped yet, so its group id cannot be reused while the
    // rest of the group is waited for and killed.
    let linger = deadline.min(Instant::now() + LINGER_GRACE);
    let closed = stdout.wait_closed(linger) & stderr.wait_closed(linger);
    let status = end_group(&mut child);
    if !closed {
        let drained = Instant::now() + DRAIN_AFTER_KILL;
        stdout.wait_closed(drained);
        stderr.wait_closed(drained);
    }
    let status = status.with_context(|| format!("reaping {what}"))?;
    let stderr = stderr.take().unwrap_or_default();
    let Some(stdout) = stdout.take() else {
        bail!(
            "{what} printed more than {} MiB on stdout, more than the lab reads ({}){}",
            READ_OUTPUT_BYTES >> 20,
            describe_status(status),
            tail_section(&stderr, ERROR_TAIL_LINES)
        );
    };
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// What a [`Collector`] holds of a stream: bounded by its [`Keep`] however long the stream.
#[derive(Debug)]
struct Kept {
    keep: Keep,
    bytes: Vec<u8>,
    /// A [`Keep::Whole`] stream went past its limit.
    overflowed: bool,
}

impl Kept {
    fn new(keep: Keep) -> Kept {
        Kept {
            keep,
            bytes: Vec::new(),
            overflowed: false,
        }
    }

    fn append(&mut self, chunk: &[u8]) {
        match self.keep {
            Keep::Whole(limit) => {
                let room = limit.saturating_sub(self.bytes.len());
                if chunk.len() > room {
                    self.overflowed = true;
                }
                self.bytes
                    .extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Keep::Tail(limit) => {
                self.bytes.extend_from_slice(chunk);
                // Dropping the front once the buffer holds twice the tail keeps the copying
                // linear in the stream's length.
                if self.bytes.len() >= 2 * limit.max(1) {
                    let excess = self.bytes.len() - limit;
                    self.bytes.drain(..excess);
                }
            }
        }
    }

    /// The bytes kept: the tail, or the whole stream (`None` when it overflowed).
    fn take(&mut self) -> Option<Vec<u8>> {
        let mut bytes = std::mem::take(&mut self.bytes);
        match self.keep {
            Keep::Tail(limit) => {
                let excess = bytes.len().saturating_sub(limit);
                bytes.drain(..excess);
                Some(bytes)
            }
            Keep::Whole(_) => (!self.overflowed).then_some(bytes),
        }
    }
}

/// A thread reading a pipe to its end into a bounded buffer that can be taken at any time, so a
/// pipe held open by a stray descendant never blocks the caller.
struct Collector {
    kept: Arc<Mutex<Kept>>,
    closed: mpsc::Receiver<()>,
}

impl Collector {
    fn start(pipe: Option<impl Read + Send + 'static>, keep: Keep) -> Collector {
        let kept = Arc::new(Mutex::new(Kept::new(keep)));
        let (sender, closed) = mpsc::channel();
        let shared = Arc::clone(&kept);
        thread::spawn(move || {
            if let Some(mut pipe) = pipe {
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    match pipe.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(read) => lock(&shared).append(&chunk[..read]),
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            let _ = sender.send(());
        });
        Collector { kept, closed }
    }

    /// True when the pipe reached its end before `deadline`.
    fn wait_closed(&self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.closed.recv_timeout(left) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
            Err(RecvTimeoutError::Timeout) => false,
        }
    }

    /// What was kept so far; `None` for a stream kept whole that went past its limit.
    fn take(&self) -> Option<Vec<u8>> {
        lock(&self.kept).take()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits until `child` has exited or `deadline` passed, without reaping it; true when it exited.
fn wait_for_exit(child: &Child, deadline: Instant) -> Result<bool> {
    let pid = libc::pid_t::try_from(child.id()).context("process id out of range")?;
    loop {
        if has_exited(pid)? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Polls `pid` with `waitid(WNOWAIT)`: an exited child stays a zombie, which keeps its process
/// group id from being reused until [`end_group`] reaps it.
fn has_exited(pid: libc::pid_t) -> Result<bool> {
    loop {
        // SAFETY: an all-zero `siginfo_t` is a valid value of this plain C struct.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable `siginfo_t` that outlives the call; `pid` is our
        // own unreaped child, and WNOWAIT leaves it unreaped.
        let result = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if result == 0 {
            // SAFETY: waitid succeeded, so `info` holds either zeroes (no change) or the
            // child's state, and `si_pid` is defined for both.
            return Ok(unsafe { info.si_pid() } != 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error.into());
        }
    }
}

/// Fails with the exit status (or signal) and the end of stderr when the process failed.
pub(crate) fn require_success(finished: &Finished, what: &str) -> Result<()> {
    if finished.status.success() {
        return Ok(());
    }
    Err(anyhow!(
        "{what} failed ({}){}",
        describe_status(finished.status),
        tail_section(&finished.stderr, ERROR_TAIL_LINES)
    ))
}

pub(crate) fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// The last `lines` lines of `output`, indented under a header, or nothing when it is empty.
pub(crate) fn tail_section(output: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(output);
    let all: Vec<&str> = text.lines().collect();
    if all.is_empty() {
        return String::new();
    }
    let start = all.len().saturating_sub(lines);
    let mut section = format!("\n--- last {} lines of output ---", all.len() - start);
    for line in &all[start..] {
        section.push_str("\n  ");
        match line.char_indices().nth(TAIL_LINE_CHARS) {
            Some((end, _)) => {
                section.push_str(&line[..end]);
                section.push('…');
            }
            None => section.push_str(line),
        }
    }
    section
}

/// Process groups the lab has started and not yet reaped: a SIGINT or SIGTERM sent to the lab
/// ends them too (see [`end_children_on_signal`]).
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Starts `command` as the leader of a new process group, so [`kill_group`] ends it together
/// with everything it spawned, and registers the group for [`end_children_on_signal`].
pub(crate) fn spawn_in_group(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    // Held across the spawn, so the signal handler never misses a group that is being started.
    let mut groups = lock(&LIVE_GROUPS);
    let child = command.process_group(0).spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        groups.push(pid);
    }
    Ok(child)
}

/// Sends SIGKILL to the whole process group led by `child`, reaps the leader and forgets the
/// group. Safe to call on a process that has already exited.
pub(crate) fn kill_group(child: &mut Child) {
    let _ = end_group(child);
}

/// Waits, with no deadline, for a child started by [`spawn_in_group`] to exit, then kills what
/// is left of its group and reaps it: for long runs whose length the lab cannot bound (a
/// calibration), still ended by a SIGINT or SIGTERM to the lab.
pub(crate) fn wait_and_end_group(child: &mut Child) -> Result<ExitStatus> {
    let pid = libc::pid_t::try_from(child.id()).context("process id out of range")?;
    while !has_exited(pid)? {
        thread::sleep(Duration::from_millis(20));
    }
    Ok(end_group(child)?)
}

/// [`kill_group`], returning the leader's exit status.
fn end_group(child: &mut Child) -> std::io::Result<ExitStatus> {
    if let Ok(pid) = i32::try_from(child.id()) {
        let mut groups = lock(&LIVE_GROUPS);
        signal_group(pid);
        groups.retain(|&group| group != pid);
    }
    let _ = child.kill();
    child.wait()
}

fn signal_group(pid: i32) {
    // SAFETY: kill(2) takes two integers and touches no memory of ours; a group that no longer
    // exists makes it return ESRCH, which is ignored.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// The exit code of a lab ended by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
pub(crate) const INTERRUPTED_EXIT: u8 = 130;

/// While set, a signal ends the child groups and is left for the lab to act on.
static REPORT_ON_INTERRUPT: AtomicBool = AtomicBool::new(false);
/// A signal arrived while [`REPORT_ON_INTERRUPT`] was set.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs a SIGINT/SIGTERM handler that kills every registered process group and exits with
/// 130, so engines and builds do not outlive an interrupted lab. Whatever the lab had appended
/// (match results, PGN) stays on disk. Inside [`ReportOnInterrupt`] the first signal does not
/// exit: the lab reports what it has and then exits 130. Call once, at start-up.
pub fn end_children_on_signal() {
    let _ = ctrlc::set_handler(|| {
        // The lock is kept until the exit, so no new group can start after this snapshot.
        let groups = lock(&LIVE_GROUPS);
        let report = REPORT_ON_INTERRUPT.load(Ordering::SeqCst);
        // Set before the groups end, so whatever their end causes is seen as the interrupt's.
        let first = !INTERRUPTED.swap(true, Ordering::SeqCst);
        for &pid in groups.iter() {
            signal_group(pid);
        }
        if report && first {
            crate::progress::warning(&format!(
                "\ninterrupted: ended {} child process group(s); reporting what was done \
                 (interrupt again to exit at once)",
                groups.len()
            ));
            return;
        }
        crate::progress::warning(&format!(
            "\ninterrupted: ended {} child process group(s)",
            groups.len()
        ));
        std::process::exit(i32::from(INTERRUPTED_EXIT));
    });
}

/// Whether a signal arrived inside [`ReportOnInterrupt`]: the work in hand stops, its child
/// groups already ended, and the lab reports what it has before exiting 130.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// While alive, the first SIGINT or SIGTERM ends the child groups and sets [`interrupted`]
/// instead of exiting; dropped, a signal exits at once again.
pub(crate) struct ReportOnInterrupt(());

impl ReportOnInterrupt {
    pub(crate) fn start() -> ReportOnInterrupt {
        REPORT_ON_INTERRUPT.store(true, Ordering::SeqCst);
        ReportOnInterrupt(())
    }
}

impl Drop for ReportOnInterrupt {
    fn drop(&mut self) {
        REPORT_ON_INTERRUPT.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True while `pid` is a live process (a zombie counts as dead: it runs nothing).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z') && !state.starts_with('X')
            })
            .unwrap_or(false)
    }

    fn gone_soon(pid: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(pid) {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[test]
    fn a_descendant_holding_the_pipes_does_not_outlast_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "sleep 120 & echo $! > {}; echo started >&2; wait",
            pid_file.display()
        );
        let start = Instant::now();
        let error = run_with_timeout(shell(&script), Duration::from_secs(1), "the script")
            .err()
            .expect("a timeout");
        // The descendant sleeps for 120 s: returning long before that means it was not waited on.
        assert!(start.elapsed() < Duration::from_secs(60), "{error:#}");
        let message = format!("{error:#}");
        assert!(message.contains("did not finish within 1 s"), "{message}");
        assert!(
            message.contains("started"),
            "stderr so far is shown: {message}"
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(gone_soon(pid.trim()), "the descendant {pid} survived");
    }

    #[test]
    fn a_descendant_left_behind_is_killed_once_the_process_exits() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 120 & echo $! > {}; echo done", pid_file.display());
        let start = Instant::now();
        let finished =
            run_with_timeout(shell(&script), Duration::from_secs(100), "the script").unwrap();
        assert!(start.elapsed() < Duration::from_secs(60));
        assert!(finished.status.success());
        assert_eq!(finished.stdout, b"done\n");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(gone_soon(pid.trim()), "the descendant {pid} survived");
    }

    #[test]
    fn a_tail_keeps_the_last_bytes_of_any_length_of_output() {
        let mut kept = Kept::new(Keep::Tail(4));
        for chunk in [&b"abc"[..], b"defgh", b"", b"ij", b"klmnopqrstuvwxyz"] {
            kept.append(chunk);
            assert!(kept.bytes.len() < 8 + chunk.len(), "{}", kept.bytes.len());
        }
        assert_eq!(kept.take().unwrap(), b"wxyz");
        let mut whole = Kept::new(Keep::Whole(4));
        whole.append(b"abc");
        assert_eq!(whole.take().unwrap(), b"abc");
        whole.append(b"abc");
        whole.append(b"de");
        assert_eq!(whole.take(), None, "past the limit");
    }

    #[test]
    fn a_build_printing_without_end_keeps_only_its_tail() {
        // 64 MiB on each stream: what is kept is bounded by the tail, not by the output.
        let script = "head -c 67108864 /dev/zero | tr '\\0' a; echo; echo last-out; \
                      head -c 67108864 /dev/zero | tr '\\0' b >&2; echo >&2; echo last-err >&2";
        let finished =
            run_keeping_tails(shell(script), Duration::from_secs(600), "the script").unwrap();
        assert!(finished.status.success());
        assert_eq!(finished.stdout.len(), OUTPUT_TAIL_BYTES);
        assert!(finished.stdout.ends_with(b"aaa\nlast-out\n"));
        assert_eq!(finished.stderr.len(), OUTPUT_TAIL_BYTES);
        assert!(finished.stderr.ends_with(b"bbb\nlast-err\n"));
        let tail = tail_section(&finished.stderr, ERROR_TAIL_LINES);
        assert!(tail.len() < 2 * TAIL_LINE_CHARS, "{}", tail.len());
    }

    #[test]
    fn stdout_past_what_the_lab_reads_is_an_error() {
        let script = format!("head -c {} /dev/zero", READ_OUTPUT_BYTES + 1);
        let error = run_with_timeout(shell(&script), Duration::from_secs(600), "the bench")
            .err()
            .expect("refused");
        let message = format!("{error:#}");
        assert!(
            message.contains("the bench printed more than 256 MiB on stdout"),
            "{message}"
        );
    }

    #[test]
    fn output_and_status_of_an_ordinary_process() {
        let finished = run_with_timeout(
            shell("echo out; echo err >&2; exit 3"),
            Duration::from_secs(100),
            "the script",
        )
        .unwrap();
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!(finished.stdout, b"out\n");
        assert_eq!(finished.stderr, b"err\n");
    }
}

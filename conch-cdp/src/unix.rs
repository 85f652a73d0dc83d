//! Starting a browser with `--remote-debugging-pipe`: the browser reads commands on its
//! fd 3 and writes replies and events on its fd 4 (NUL-terminated JSON).
//!
//! This module holds the crate's only `unsafe`: the `pre_exec` hook that moves the child's
//! pipe ends to fds 3 and 4 between `fork` and `exec`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;

/// A started browser and the parent's ends of its two pipes.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: tokio::process::Child,
    /// Written by us, read by the browser on its fd 3.
    pub(crate) to_browser: OwnedFd,
    /// Written by the browser on its fd 4, read by us.
    pub(crate) from_browser: OwnedFd,
}

/// Adds `--remote-debugging-pipe` to `command`, wires the pipes, and spawns it with
/// `kill_on_drop`.
pub(crate) fn spawn_with_pipe(mut command: std::process::Command) -> io::Result<Spawned> {
    // Both pipes are created close-on-exec: no other child ever inherits them.
    let (browser_reads, we_write) = io::pipe()?;
    let (we_read, browser_writes) = io::pipe()?;
    let read_fd = browser_reads.as_raw_fd();
    let write_fd = browser_writes.as_raw_fd();
    command.arg("--remote-debugging-pipe");
    install_pipe_fds(&mut command, read_fd, write_fd);
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let child = command.spawn()?;
    // The child has its copies; ours must go, or we would never see end-of-file when the
    // browser dies.
    drop(browser_reads);
    drop(browser_writes);
    Ok(Spawned {
        child,
        to_browser: OwnedFd::from(we_write),
        from_browser: OwnedFd::from(we_read),
    })
}

#[expect(
    unsafe_code,
    reason = "pre_exec is unsafe: the hook runs in the forked child before exec"
)]
fn install_pipe_fds(command: &mut std::process::Command, read_fd: RawFd, write_fd: RawFd) {
    // SAFETY: the hook runs in the child between fork and exec, where only
    // async-signal-safe functions may be called. It calls only `fcntl` and `dup2` (both
    // async-signal-safe per POSIX), reads errno through `io::Error::last_os_error`, which
    // does not allocate, and touches no lock and no memory shared with the parent. The two
    // raw fds it uses are open in the child: they were inherited through fork and are closed
    // only at exec, since they are close-on-exec, and the parent keeps them open until
    // `spawn` has returned.
    unsafe {
        command.pre_exec(move || {
            // First copy both ends to fds >= 10, so that an end that already is fd 3 or 4
            // is not clobbered by the first dup2. The copies are close-on-exec and vanish at
            // exec.
            let read_copy = libc::fcntl(read_fd, libc::F_DUPFD_CLOEXEC, 10);
            if read_copy < 0 {
                return Err(io::Error::last_os_error());
            }
            let write_copy = libc::fcntl(write_fd, libc::F_DUPFD_CLOEXEC, 10);
            if write_copy < 0 {
                return Err(io::Error::last_os_error());
            }
            // dup2 clears close-on-exec on the new fds: the browser inherits 3 and 4.
            if libc::dup2(read_copy, 3) < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::dup2(write_copy, 4) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

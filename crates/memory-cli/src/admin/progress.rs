//! A small progress bar on standard error, drawn only when standard error is a terminal.
//!
//! `export  [###########.........]  120/200 files`. Redrawn at most ten times a second, erased
//! when the work ends. When standard error is a pipe or a file (scripts, CI) nothing is drawn at
//! all, so logs stay clean; `--quiet` turns it off on a terminal too.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const WIDTH: usize = 30;
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// A progress bar counting files.
pub(crate) struct Progress {
    label: &'static str,
    total: u64,
    done: u64,
    out: Option<Box<dyn Write + Send>>,
    last_draw: Option<Instant>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("label", &self.label)
            .field("total", &self.total)
            .field("done", &self.done)
            .field("drawn", &self.out.is_some())
            .finish()
    }
}

impl Progress {
    /// A bar for `total` files on standard error, if it is a terminal and `quiet` is off.
    pub(crate) fn stderr(label: &'static str, total: u64, quiet: bool) -> Self {
        let out: Option<Box<dyn Write + Send>> = (!quiet && std::io::stderr().is_terminal())
            .then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>);
        Self::to(label, total, out)
    }

    /// A bar drawn on `out`, or nowhere.
    pub(crate) fn to(label: &'static str, total: u64, out: Option<Box<dyn Write + Send>>) -> Self {
        Progress {
            label,
            total,
            done: 0,
            out,
            last_draw: None,
        }
    }

    /// One more file done.
    pub(crate) fn inc(&mut self) {
        self.done = self.done.saturating_add(1);
        let due =
            self.last_draw.is_none_or(|at| at.elapsed() >= REDRAW_EVERY) || self.done >= self.total;
        if due {
            self.draw();
        }
    }

    /// Erases the bar (the caller prints its own summary).
    pub(crate) fn finish(&mut self) {
        if let Some(out) = self.out.as_mut()
            && self.last_draw.is_some()
        {
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
        }
        self.out = None;
    }

    fn draw(&mut self) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let total = self.total.max(1);
        let filled = ((self.done.min(total) as u128 * WIDTH as u128) / total as u128) as usize;
        let bar = format!("{}{}", "#".repeat(filled), ".".repeat(WIDTH - filled));
        let _ = write!(
            out,
            "\r{:<7} [{bar}] {}/{} files",
            self.label, self.done, self.total
        );
        let _ = out.flush();
        self.last_draw = Some(Instant::now());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn draws_first_and_last_state_then_erases() {
        let sink = Shared::default();
        let mut bar = Progress::to("export", 4, Some(Box::new(sink.clone())));
        for _ in 0..4 {
            bar.inc();
        }
        bar.finish();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("\rexport  [#######"), "{text:?}");
        assert!(
            text.contains(&format!("[{}] 4/4 files", "#".repeat(WIDTH))),
            "{text:?}"
        );
        assert!(text.ends_with("\r\x1b[2K"), "{text:?}");
    }

    #[test]
    fn without_a_terminal_nothing_is_drawn() {
        let mut bar = Progress::to("copy", 3, None);
        bar.inc();
        bar.finish();
        assert!(bar.out.is_none());
    }
}

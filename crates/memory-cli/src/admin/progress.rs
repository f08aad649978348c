//! The progress bar of the commands that walk a whole store (export, import, copy, expire,
//! rekey), on standard error: indicatif's, drawn only when standard error is a terminal.
//!
//! `export  [###########.........]  120/200 files`, erased when the work ends. When standard
//! error is a pipe or a file (scripts, CI) nothing is drawn at all, so logs stay clean;
//! `--quiet` turns it off on a terminal too.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar counting files.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `total` files on standard error, if it is a terminal and `quiet` is off.
    pub(crate) fn stderr(label: &'static str, total: u64, quiet: bool) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            // indicatif draws nothing when standard error is not a terminal.
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template("{msg:<7} [{bar:30}] {pos}/{len} files")
                .expect("the template is valid")
                .progress_chars("##."),
        );
        bar.set_message(label);
        Progress { bar }
    }

    /// One more file done.
    pub(crate) fn inc(&mut self) {
        self.bar.inc(1);
    }

    /// Erases the bar (the caller prints its own summary).
    pub(crate) fn finish(&mut self) {
        self.bar.finish_and_clear();
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

    #[test]
    fn counts_and_hides_when_quiet() {
        let mut bar = Progress::stderr("copy", 3, true);
        assert!(bar.bar.is_hidden());
        bar.inc();
        bar.inc();
        assert_eq!(bar.bar.position(), 2);
        assert_eq!(bar.bar.length(), Some(3));
        bar.finish();
        assert!(bar.bar.is_finished());
    }
}

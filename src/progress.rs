//! Progress on standard error for the commands that can run longer than a second (large
//! analyses, partitions, `run`, `simulate`), drawn by indicatif: a bar when the amount of
//! work is known (TBs), a spinner naming the current phase otherwise.
//!
//! Nothing is drawn when standard error is not a terminal (logs and pipes stay clean) or
//! with `--quiet`, and nothing during the first second, so short runs print exactly what
//! they printed before.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a command runs before its progress appears.
const DELAY: Duration = Duration::from_secs(1);

/// A progress bar or spinner on standard error (see the module documentation).
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(quiet: bool, bar: ProgressBar, style: ProgressStyle) -> Progress {
        bar.set_draw_target(ProgressDrawTarget::hidden());
        bar.set_style(style);
        if !quiet && std::io::stderr().is_terminal() {
            // Revealed from a helper thread after DELAY unless finished by then; the
            // steady tick keeps a spinner moving while the work makes no calls (METIS).
            let shown = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(DELAY);
                if !shown.is_finished() {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(100));
                }
            });
        }
        Progress { bar }
    }

    /// A spinner showing `message` (the current phase) and the elapsed time.
    pub fn spinner(quiet: bool, message: &str) -> Progress {
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let p = Progress::new(quiet, ProgressBar::new_spinner(), style);
        p.bar.set_message(message.to_string());
        p
    }

    /// A bar over `total` items named `unit` (`TBs`).
    pub fn bar(quiet: bool, total: u64, unit: &str) -> Progress {
        let template =
            format!("[{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ({{elapsed}}, eta {{eta}})");
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("#> ");
        Progress::new(quiet, ProgressBar::new(total), style)
    }

    /// Names the phase now running.
    pub fn phase(&self, message: &str) {
        self.bar.set_message(message.to_string());
    }

    /// `done` of `total` items finished; `message` says more (the cycle reached).
    pub fn set(&self, done: u64, total: u64, message: Option<String>) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if let Some(m) = message {
            self.bar.set_message(m);
        }
    }

    /// A handle for other threads (an interpreter observer).
    pub fn handle(&self) -> ProgressBar {
        self.bar.clone()
    }

    /// Removes the progress line (before a summary is printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // An error path must not leave a half-drawn line behind.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

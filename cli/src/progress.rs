//! Progress of a build as a person reads it: on a terminal, one bar per stage with counts,
//! rate and time left, replaced by a line of what it did when its stage ends; elsewhere (a log, a pipe,
//! CI) a line when a stage ends and one every half minute of a long stage. Everything goes
//! to standard error, so `--json` on standard output stays whole.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds between plain lines of one long stage.
const LINE_EVERY: Duration = Duration::from_secs(30);

/// What a stage counts, and what it is called on screen.
fn unit(stage: &str) -> Option<&'static str> {
    match stage {
        "parse" | "embed" => Some("files"),
        "nodes" => Some("nodes"),
        "functions" => Some("functions"),
        _ => None,
    }
}

fn label(stage: &str) -> &str {
    match stage {
        "embed" | "nodes" => "vectors",
        "functions" => "encode",
        s => s,
    }
}

enum Show {
    Quiet,
    Bars { bar: Option<ProgressBar> },
    Lines { last: Instant },
}

pub struct Progress {
    show: Show,
    /// `beryl index`, `beryl watch`: the plain lines' prefix.
    who: &'static str,
    stage: String,
    started: Instant,
    done: usize,
    total: usize,
}

impl Progress {
    /// Bars when standard error is a terminal, plain lines otherwise, nothing if `quiet`.
    pub fn new(who: &'static str, quiet: bool) -> Progress {
        let show = if quiet {
            Show::Quiet
        } else if std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb") {
            Show::Bars { bar: None }
        } else {
            Show::Lines { last: Instant::now() }
        };
        Progress { show, who, stage: String::new(), started: Instant::now(), done: 0, total: 0 }
    }

    /// A report from the build: `stage`, units done, units in all (0: not counted).
    pub fn update(&mut self, stage: &str, done: usize, total: usize) {
        if stage != self.stage {
            self.end_stage();
            self.stage = stage.to_string();
            self.started = Instant::now();
            if stage == "done" {
                return;
            }
            if let Show::Bars { bar } = &mut self.show {
                let b = match unit(stage) {
                    Some(u) => {
                        let style = ProgressStyle::with_template(&format!("{{prefix:>8}} [{{bar:30}}] {{human_pos}}/{{human_len}} {u}  {{per_sec}}  {{eta}} left"))
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> ");
                        ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr()).with_style(style)
                    }
                    None => {
                        let style = ProgressStyle::with_template("{prefix:>8} {spinner} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner());
                        let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
                        b.enable_steady_tick(Duration::from_millis(120));
                        b
                    }
                };
                b.set_prefix(label(stage).to_string());
                *bar = Some(b);
            }
        }
        self.done = done;
        self.total = total;
        match &mut self.show {
            Show::Bars { bar: Some(b), .. } if unit(stage).is_some() => {
                b.set_length(total as u64);
                b.set_position(done as u64);
            }
            Show::Lines { last } if last.elapsed() >= LINE_EVERY && total > 0 && done < total => {
                *last = Instant::now();
                let secs = self.started.elapsed().as_secs_f64();
                let rate = done as f64 / secs.max(1e-9);
                let left = if rate > 0.0 { format!(", about {:.0} s left", (total - done) as f64 / rate) } else { String::new() };
                eprintln!("{}: {} {done}/{total} {} ({rate:.0}/s{left})", self.who, label(stage), unit(stage).unwrap_or(""));
            }
            _ => {}
        }
    }

    /// Leaves the stage's bar in place as a line of what it did (or prints that line).
    fn end_stage(&mut self) {
        if self.stage.is_empty() || self.stage == "done" {
            return;
        }
        let secs = self.started.elapsed().as_secs_f64();
        let what = match unit(&self.stage) {
            // A rate over a blink of time says nothing.
            Some(u) if self.total > 0 && secs >= 0.5 => format!("{} {u} in {secs:.1} s ({:.0}/s)", self.total, self.total as f64 / secs),
            Some(u) if self.total > 0 => format!("{} {u} in {secs:.1} s", self.total),
            _ => format!("{secs:.1} s"),
        };
        match &mut self.show {
            // The bar gives way to a line of what its stage did: the bars of a run end
            // as a short log of it.
            Show::Bars { bar } => {
                if let Some(b) = bar.take() {
                    b.finish_and_clear();
                }
                eprintln!("{:>8} {what}", label(&self.stage));
            }
            Show::Lines { last } => {
                *last = Instant::now();
                eprintln!("{}: {} {what}", self.who, label(&self.stage));
            }
            Show::Quiet => {}
        }
    }

    /// Ends the last stage, its line left in place above the summary that follows.
    pub fn finish(&mut self) {
        self.end_stage();
        self.stage.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_have_units_and_names() {
        assert_eq!(unit("parse"), Some("files"));
        assert_eq!(unit("write"), None);
        assert_eq!(label("functions"), "encode");
    }
}

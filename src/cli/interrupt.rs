//! Ctrl-C, SIGTERM and SIGHUP while a command runs: its output folder keeps its previous
//! complete files, or gets the whole new set, never a part.
//!
//! A command that writes a folder stages its files ([`StagedDir`]) and registers the staging
//! folder here; the handler, on its own thread, removes every registered staging folder, says
//! so, and exits with status 130. A commit (the renames into the folder) holds the same lock,
//! so a signal that comes during one waits for it to finish. A server (`serve`) registers a
//! stopper instead: the first signal stops it and its command returns; a second one exits.
//! Signals are process-wide, so this
//! is the one piece of global state, and it lives at the edge: the library never sees it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::report::output::{OutputError, StagedDir};

/// The staging folders of the commands under way in this process.
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn staging() -> MutexGuard<'static, Vec<PathBuf>> {
    STAGING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Installs the handler (the binary's `main`; a second call, as from tests, is a no-op).
pub fn install() {
    let _ = ctrlc::set_handler(on_interrupt);
}

/// What a running server does on the first signal instead of exiting: stop serving and return
/// (`serve`); a second signal exits as any other command does.
type Stopper = Box<dyn FnOnce() + Send>;

static STOPPERS: Mutex<Vec<Stopper>> = Mutex::new(Vec::new());

/// Calls `stop` on the next signal instead of exiting (once).
pub(crate) fn on_signal_stop(stop: Stopper) {
    STOPPERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(stop);
}

fn on_interrupt() {
    let stoppers: Vec<Stopper> = std::mem::take(
        &mut *STOPPERS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    if !stoppers.is_empty() {
        for stop in stoppers {
            stop();
        }
        return;
    }
    let staged = staging();
    for dir in staged.iter() {
        let _ = std::fs::remove_dir_all(dir);
        if let Some(out) = dir.parent() {
            eprintln!(
                "\ninterrupted: nothing written to {}; it holds its previous output, if any",
                out.display()
            );
        }
    }
    if staged.is_empty() {
        eprintln!("\ninterrupted");
    }
    std::process::exit(130);
}

/// A staged output folder registered with the handler.
pub(crate) struct Staging(Option<StagedDir>);

/// Begins writing `out_dir` whole or not at all.
pub(crate) fn stage(out_dir: &Path) -> Result<Staging, OutputError> {
    let dir = StagedDir::begin(out_dir)?;
    staging().push(dir.dir().to_path_buf());
    Ok(Staging(Some(dir)))
}

impl Staging {
    /// Where the command writes its files.
    pub(crate) fn dir(&self) -> PathBuf {
        self.0
            .as_ref()
            .map(|d| d.dir().to_path_buf())
            .unwrap_or_default()
    }

    /// The output folder.
    pub(crate) fn out_dir(&self) -> PathBuf {
        self.0
            .as_ref()
            .map(|d| d.out_dir().to_path_buf())
            .unwrap_or_default()
    }

    /// Moves the files into the folder (interrupts wait) and returns `text` with the staging
    /// folder's paths given as the folder's.
    pub(crate) fn commit(mut self, text: &str) -> Result<String, OutputError> {
        let Some(dir) = self.0.take() else {
            return Ok(text.to_string());
        };
        let mut registered = staging();
        let stage = dir.dir().to_path_buf();
        let text = dir.final_text(text);
        let result = dir.commit();
        registered.retain(|d| *d != stage);
        result.map(|()| text)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let stage = dir.dir().to_path_buf();
            let mut registered = staging();
            drop(dir);
            registered.retain(|d| *d != stage);
        }
    }
}

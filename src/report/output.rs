//! Writing a command's files: the output folder, CSV and text files, plots in SVG and PNG, and the
//! errors of doing so. Messages read as the CLI prints them (`failed to write output/x.csv: ...`).

use std::error::Error as StdError;
use std::fs;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use super::plot::{ImageFormat, PlotError};

/// A file or folder of the output could not be written (exit status 1).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("failed to create output folder {}", path.display())]
    Folder {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to create {}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// A plot, with what was being drawn in front (`failed to draw the CDF of exposure`).
    #[error("{context}")]
    Draw {
        context: String,
        #[source]
        source: PlotError,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A trial stopped at its event limit: nothing is written.
    #[error(transparent)]
    Budget(#[from] crate::experiment::budget::BudgetError),
}

/// Where a command that writes a folder of files writes, and what its plots and report name.
#[derive(Debug, Clone)]
pub struct OutputOptions {
    /// The scenario file as the user named it.
    pub source: String,
    /// The `--set` overrides as given, for the plots' subtitles and the report.
    pub set: Vec<String>,
    pub out_dir: PathBuf,
    /// Also write the plots as PNG.
    pub png: bool,
}

/// Creates `dir` and its parents.
pub fn create_dir(dir: &Path) -> Result<(), OutputError> {
    fs::create_dir_all(dir).map_err(|source| OutputError::Folder {
        path: dir.to_path_buf(),
        source,
    })
}

/// Creates `path` and hands a buffered writer to `write` (a CSV writer, say).
pub fn write_with<E>(
    path: &Path,
    write: impl FnOnce(BufWriter<fs::File>) -> Result<(), E>,
) -> Result<(), OutputError>
where
    E: StdError + Send + Sync + 'static,
{
    let file = fs::File::create(path).map_err(|source| OutputError::Create {
        path: path.to_path_buf(),
        source,
    })?;
    write(BufWriter::new(file)).map_err(|source| OutputError::Write {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// Creates the output folder and writes the command's CSV file `name` into it with `write`;
/// returns the list of files written so far, for the command's last line.
pub fn begin_with_csv<E>(
    options: &OutputOptions,
    name: &str,
    write: impl FnOnce(BufWriter<fs::File>) -> Result<(), E>,
) -> Result<Vec<PathBuf>, OutputError>
where
    E: StdError + Send + Sync + 'static,
{
    create_dir(&options.out_dir)?;
    let path = options.out_dir.join(name);
    write_with(&path, write)?;
    Ok(vec![path])
}

/// Writes `contents` to `path` as a whole or not at all: into a hidden temporary file beside it
/// (same folder, so the same file system), flushed to disk, then renamed over `path`. A shard
/// killed by its batch system mid-write (a pre-empted pod, a Slurm time limit) leaves no file
/// that `merge` could take for a finished shard.
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    use std::io::Write as _;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> io::Result<()> {
        let mut file = fs::File::create(&temp)?;
        file.write_all(contents.as_ref())?;
        file.sync_all()?;
        fs::rename(&temp, path)
    };
    write().map_err(|source| {
        let _ = fs::remove_file(&temp);
        OutputError::Write {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    })
}

/// Writes `contents` to `path`.
pub fn write_text(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    fs::write(path, contents).map_err(|source| OutputError::Write {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// The hidden file in an output folder that lists, one relative path a line, the files the last
/// command to write that folder wrote: the next one removes those it does not write again (an
/// earlier run's `timeline-svc-1.svg`, or its PNGs without `--png`), and nothing else, so a
/// file a user put there is never touched.
pub const MANIFEST: &str = ".eureka-sim-files";

/// A command's output folder, written whole or not at all. The files are written into a hidden
/// staging folder inside it (the same file system, so a rename moves them), and [`commit`]
/// moves them in: until then the folder holds the previous run's files untouched, so a failed
/// write, an error or an interrupt (the CLI removes the staging folder on Ctrl-C or SIGTERM)
/// leaves the previous complete output, never a mixture. Dropped without a commit, the staging
/// folder is removed.
///
/// [`commit`]: StagedDir::commit
#[derive(Debug)]
pub struct StagedDir {
    out_dir: PathBuf,
    stage: PathBuf,
    committed: bool,
}

impl StagedDir {
    /// Creates `out_dir` (and its parents) and an empty staging folder in it, named after this
    /// process (`.eureka-sim-staging.<pid>`) so that two commands writing the same folder at
    /// once do not write into each other's.
    pub fn begin(out_dir: &Path) -> Result<StagedDir, OutputError> {
        create_dir(out_dir)?;
        let stage = out_dir.join(format!(".eureka-sim-staging.{}", std::process::id()));
        if stage.exists() {
            // Left by an earlier process with this pid that was killed (SIGKILL).
            let _ = fs::remove_dir_all(&stage);
        }
        create_dir(&stage)?;
        Ok(StagedDir {
            out_dir: out_dir.to_path_buf(),
            stage,
            committed: false,
        })
    }

    /// Where the command writes its files.
    pub fn dir(&self) -> &Path {
        &self.stage
    }

    /// The final folder.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// `text` (a command's terminal text, which names the files it wrote) with the staging
    /// folder's paths given as the final folder's.
    pub fn final_text(&self, text: &str) -> String {
        text.replace(
            &self.stage.display().to_string(),
            &self.out_dir.display().to_string(),
        )
    }

    /// Moves the staged files into the output folder: first removes the files of the previous
    /// run ([`MANIFEST`]) that this one did not write, then renames each new file over its old
    /// name, then records the new list. Each file is whole at every instant (a rename replaces
    /// a name atomically); the CLI holds off interrupts while this runs.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let mut written = Vec::new();
        staged_files(&self.stage, Path::new(""), &mut written).map_err(|source| {
            OutputError::Write {
                path: self.stage.clone(),
                source: Box::new(source),
            }
        })?;
        written.sort();
        // A folder where a file goes (made by hand) would fail its rename half-way through:
        // refuse before anything moves.
        if let Some(blocked) = written.iter().find(|w| self.out_dir.join(w).is_dir()) {
            return Err(OutputError::Write {
                path: self.out_dir.join(blocked),
                source: "a folder is in the way of this file".into(),
            });
        }
        let manifest = self.out_dir.join(MANIFEST);
        let previous = fs::read_to_string(&manifest).unwrap_or_default();
        for old in previous.lines().filter(|l| !l.is_empty()) {
            let stale = Path::new(old);
            let ours = stale
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if ours && !written.iter().any(|w| w == stale) {
                remove_if_present(&self.out_dir.join(stale))?;
            }
        }
        for file in &written {
            let to = self.out_dir.join(file);
            if let Some(parent) = to.parent() {
                create_dir(parent)?;
            }
            fs::rename(self.stage.join(file), &to).map_err(|source| OutputError::Write {
                path: to.clone(),
                source: Box::new(source),
            })?;
        }
        let list: String = written
            .iter()
            .map(|w| format!("{}\n", w.display()))
            .collect();
        write_atomic(&manifest, list)?;
        self.committed = true;
        let _ = fs::remove_dir_all(&self.stage);
        Ok(())
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.stage);
        }
    }
}

/// Appends to `out` the files under `dir` (relative to the staging root, as `prefix/name`).
fn staged_files(dir: &Path, prefix: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let relative = prefix.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            staged_files(&entry.path(), &relative, out)?;
        } else {
            out.push(relative);
        }
    }
    Ok(())
}

/// Removes `path`; a file already gone is no error.
fn remove_if_present(path: &Path) -> Result<(), OutputError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(OutputError::Write {
            path: path.to_path_buf(),
            source: Box::new(e),
        }),
        _ => Ok(()),
    }
}

/// SVG always, PNG too with `--png`.
pub fn image_formats(png: bool) -> Vec<ImageFormat> {
    if png {
        vec![ImageFormat::Svg, ImageFormat::Png]
    } else {
        vec![ImageFormat::Svg]
    }
}

/// `a, b and c`: the files a command wrote, for its last line.
pub fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod staged_tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn stage(out: &Path, files: &[(&str, &str)]) -> StagedDir {
        let staged = StagedDir::begin(out).unwrap();
        for (name, text) in files {
            let path = staged.dir().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        staged
    }

    /// A second run removes the first run's files it does not write again (here
    /// `timeline-svc-1.svg` and a PNG), replaces the others, and leaves a user's own file.
    #[test]
    fn a_commit_clears_the_previous_runs_other_files_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let first = [
            ("trials.csv", "1"),
            ("timeline-svc-1.svg", "1"),
            ("timeline.png", "1"),
        ];
        stage(&out, &first).commit().unwrap();
        fs::write(out.join("notes.txt"), "mine").unwrap();
        assert_eq!(
            listing(&out),
            [
                MANIFEST,
                "notes.txt",
                "timeline-svc-1.svg",
                "timeline.png",
                "trials.csv"
            ]
        );
        stage(&out, &[("trials.csv", "2"), ("plots/a.svg", "2")])
            .commit()
            .unwrap();
        assert_eq!(
            listing(&out),
            [MANIFEST, "notes.txt", "plots", "trials.csv"]
        );
        assert_eq!(fs::read_to_string(out.join("trials.csv")).unwrap(), "2");
        assert_eq!(fs::read_to_string(out.join("plots/a.svg")).unwrap(), "2");
        assert_eq!(
            fs::read_to_string(out.join(MANIFEST)).unwrap(),
            "plots/a.svg\ntrials.csv\n"
        );
    }

    /// Dropped without a commit (an error half-way, an interrupt), the staging folder goes and
    /// the folder keeps the previous run's files as they were.
    #[test]
    fn an_uncommitted_run_leaves_the_previous_output_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        stage(&out, &[("trials.csv", "1"), ("summary.csv", "1")])
            .commit()
            .unwrap();
        let before = listing(&out);
        drop(stage(&out, &[("trials.csv", "half")]));
        assert_eq!(listing(&out), before);
        assert_eq!(fs::read_to_string(out.join("trials.csv")).unwrap(), "1");
    }

    /// A manifest line that climbs out of the folder (a hand-edited or foreign file) is never
    /// followed.
    #[test]
    fn a_manifest_never_removes_outside_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        fs::create_dir_all(&out).unwrap();
        fs::write(tmp.path().join("precious.txt"), "keep").unwrap();
        fs::write(out.join(MANIFEST), "../precious.txt\n/etc/hostname\n").unwrap();
        stage(&out, &[("trials.csv", "1")]).commit().unwrap();
        assert!(tmp.path().join("precious.txt").exists());
    }

    /// The terminal text names the final folder, not the staging one.
    #[test]
    fn the_text_names_the_final_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let staged = stage(&out, &[]);
        let text = format!("wrote {}", staged.dir().join("trials.csv").display());
        assert_eq!(
            staged.final_text(&text),
            format!("wrote {}", out.join("trials.csv").display())
        );
    }
}

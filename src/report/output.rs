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

/// Without `--png`, removes the PNG twin of plot `svg` that an earlier `--png` run wrote to the
/// same folder, so that the folder never shows a figure of another run beside this one's (only
/// that exact name goes: nothing a user put there is touched).
pub fn drop_stale_png(svg: &Path, png: bool) -> Result<(), OutputError> {
    let twin = svg.with_extension("png");
    if png || !twin.is_file() {
        return Ok(());
    }
    fs::remove_file(&twin).map_err(|source| OutputError::Write {
        path: twin,
        source: Box::new(source),
    })
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

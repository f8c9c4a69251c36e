//! `eureka-sim keys`: calls [`report::render_keys`].
//!
//! [`report::render_keys`]: crate::report::render_keys

use std::io::{self, Write};

use crate::report::render_keys;

pub(crate) fn print_keys(markdown: bool) -> super::CommandResult<()> {
    io::stdout()
        .lock()
        .write_all(render_keys(markdown).as_bytes())?;
    Ok(())
}

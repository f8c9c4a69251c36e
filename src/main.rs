/// mimalloc rather than the system's malloc: the simulation allocates and frees small values
/// (batches, replies, deltas, batch tallies) at most events, and glibc's malloc and free were a
/// quarter of a production day's instructions (see Cargo.toml for the measurements).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    eureka_sim::cli::install_interrupt_handler();
    std::process::exit(eureka_sim::cli::main_with_args(std::env::args_os()));
}

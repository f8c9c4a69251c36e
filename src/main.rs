fn main() {
    std::process::exit(eureka_sim::cli::main_with_args(std::env::args_os()));
}

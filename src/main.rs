fn main() {
    eureka_sim::cli::install_interrupt_handler();
    std::process::exit(eureka_sim::cli::main_with_args(std::env::args_os()));
}

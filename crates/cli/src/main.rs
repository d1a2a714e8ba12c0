//! The stock `pliant` command: the command line over the built-in plugins.

fn main() -> std::process::ExitCode {
    pliant_cli::App::new().run()
}

//! `pliant` with this crate's plugins: every command of the stock one, and
//! its planner (`youngest-first`), its mechanism rule (`kill-young`) and the
//! policy `youngest-first` by name. `cargo run --release -- simulate
//! --scenario mixed --policies youngest-first,gp,pliant` compares them.

fn main() -> std::process::ExitCode {
    custom_policy::app().run()
}

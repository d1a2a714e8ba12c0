//! `pliant` with this crate's plugins: every command of the stock one, and
//! its planners (`youngest-first`, the node-aware `node-fit`), its mechanism
//! rule (`kill-young`) and the policies `youngest-first` and `node-fit` by
//! name. `cargo run --release -- simulate
//! --scenario mixed --policies youngest-first,gp,pliant` compares them.

fn main() -> std::process::ExitCode {
    custom_policy::app().run()
}

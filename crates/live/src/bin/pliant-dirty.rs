//! The dirtier test workload as a program: `pliant-dirty --mb N [--passes P] [--until-file FILE]`
//! (see `pliant_live::dirtier`). Exit 2: bad arguments; exit 3: lost memory or state.

use pliant_live::dirtier;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match dirtier::parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("pliant-dirty: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = dirtier::run(parsed) {
        eprintln!("pliant-dirty: {e}");
        std::process::exit(3);
    }
}

//! The `examkit-scanmaker` command: see the library's documentation and `README.md`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result =
        examkit_scanmaker::parse_args(&args).and_then(|options| examkit_scanmaker::run(&options));
    match result {
        Ok(files) => {
            for file in files {
                println!("{}", file.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("examkit-scanmaker: {e}");
            ExitCode::from(2)
        }
    }
}

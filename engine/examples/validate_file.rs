//! Validates a file and prints the outcome: `cargo run -p examkit-engine --example validate_file -- doc.json [assets.json]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: validate_file <submission.json> [assets.json]");
        std::process::exit(2);
    };
    let read = |p: &str| {
        std::fs::read(p).unwrap_or_else(|e| {
            eprintln!("{p}: {e}");
            std::process::exit(2)
        })
    };
    let document = read(path);
    let assets = args.get(2).map(|p| {
        examkit_engine::assets_from_json(&read(p)).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })
    });
    let outcome = examkit_engine::validate(&document, assets.as_deref());
    println!("{}", outcome.to_json_pretty());
    println!("{}", examkit_engine::explain(&document, &outcome));
}

//! Prints the text llmtool takes out of a document: `cargo run -p llmtool-documents --example
//! extract FILE`.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: extract FILE");
        return std::process::ExitCode::from(2);
    };
    match llmtool_documents::read(path.as_ref(), &llmtool_documents::Limits::default()) {
        Ok(extracted) => {
            println!("{}", extracted.text);
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::from(1)
        }
    }
}

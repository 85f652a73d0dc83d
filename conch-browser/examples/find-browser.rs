//! Prints the browser Conch would use, as found by the product's own discovery.
//! `cargo xtask test` uses this so that tests run against the same browser the product
//! picks. Exits 1 with one sentence when none is found.

use conch_browser::discover::{SystemProbe, find};

fn main() {
    match find(&SystemProbe) {
        Some(found) => println!("{}", found.path.display()),
        None => {
            eprintln!(
                "No Chrome, Edge, Brave or Chromium found: install one (on Debian: apt-get install chromium) or set CONCH_BROWSER to its path."
            );
            std::process::exit(1);
        }
    }
}

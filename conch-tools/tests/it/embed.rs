//! The library door: the example in examples/embed.rs drives a fixture page through the
//! conch-tools API with its own Asker.

#[path = "../../examples/embed.rs"]
mod example;

use conch_fixtures::FixtureServer;

use crate::support::setup;

#[tokio::test(flavor = "multi_thread")]
async fn the_embedding_example_runs() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let transcript = example::run(setup.config.clone(), &server.url("tools-shop.html"))
        .await
        .unwrap();
    assert!(
        transcript.contains("Asked: Let Conch use 127.0.0.1?"),
        "{transcript}"
    );
    assert!(transcript.contains("In cart: 1"), "{transcript}");
}

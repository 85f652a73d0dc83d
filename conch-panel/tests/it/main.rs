//! conch-panel's integration tests: the person's door as an embedder mounts it. The
//! gateway's end-to-end tests of the same routes are in conch-gateway/tests/it.

mod mount;

//! conch-live against a real headless Chromium: the person watches, takes over, finds,
//! answers the page's dialogs and presses Stop through a [`Hub`], as the gateway's socket
//! does (LIVE-*, DLG-9, DLG-10, TAB-10, HAND-4, HAND-9, PROTO-9, SEC-7), and a chat's own browser (LIVE-16, ERR-23).

mod live;
mod own;
mod person;
mod pool;
mod support;

//! The Chromium fetcher over real HTTP on 127.0.0.1 (LAUNCH-3, LAUNCH-4, LAUNCH-5): zips
//! built here, served by the fixture server, fetched into a temporary cache.

use std::ffi::OsString;
use std::io::{self, Cursor, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use conch_browser::discover::{self, BrowserKind, Os, Probe};
use conch_browser::fetch::{
    FetchConfig, FetchError, FetchErrorKind, Files, Pin, Platform, Progress, RealFiles, fetch,
};
use conch_fixtures::{FixtureServer, Response};
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;

const VERSION: &str = "148.0.7778.96";
const ARCHIVE_PATH: &str = "cft/148.0.7778.96/linux64/chrome-linux64.zip";
const SCRIPT: &str = "#!/bin/sh\necho conch fake chrome \"$@\"\n";

const OFFLINE: &str = "Conch couldn't download Chromium: the download server can't be reached. Check the connection and try again.";
const BAD_ARCHIVE: &str = "Conch couldn't download Chromium: the downloaded file is damaged or unsafe, so it wasn't used. Try again.";
const DISK_FULL: &str = "Conch couldn't download Chromium: there isn't enough free disk space. Free up some space and try again.";
const BROKE_OFF: &str = "Conch couldn't download Chromium: the connection to the download server broke off. Check the connection and try again.";

/// A zip being built.
pub(crate) struct ZipBuilder(zip::ZipWriter<Cursor<Vec<u8>>>);

impl ZipBuilder {
    pub(crate) fn new() -> Self {
        ZipBuilder(zip::ZipWriter::new(Cursor::new(Vec::new())))
    }

    fn options(mode: u32) -> SimpleFileOptions {
        SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(mode)
    }

    fn dir(mut self, name: &str) -> Self {
        self.0
            .add_directory(name, Self::options(0o755))
            .expect("add directory");
        self
    }

    pub(crate) fn file(mut self, name: &str, mode: u32, body: &[u8]) -> Self {
        self.0
            .start_file(name, Self::options(mode))
            .expect("start file");
        self.0.write_all(body).expect("write file");
        self
    }

    fn link(mut self, name: &str, target: &str) -> Self {
        self.0
            .add_symlink(name, target, Self::options(0o777))
            .expect("add symlink");
        self
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.0.finish().expect("finish zip").into_inner()
    }
}

/// About 1 MiB that deflate cannot shrink, so the download takes several steps.
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

/// A stand-in Chrome for Testing archive: the executable (a shell script), a large
/// resource, a nested file and a link inside the folder, as the real ones have.
fn chrome_zip() -> Vec<u8> {
    ZipBuilder::new()
        .dir("chrome-linux64/")
        .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
        .file("chrome-linux64/resources.pak", 0o644, &noise(1024 * 1024))
        .file("chrome-linux64/locales/en-US.pak", 0o644, b"hello")
        .file("chrome-linux64/lib/libfake.so.1", 0o644, b"library")
        .link("chrome-linux64/libfake.so", "lib/libfake.so.1")
        .finish()
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

pub(crate) fn serve(server: &FixtureServer, body: Vec<u8>) {
    server.route(
        ARCHIVE_PATH,
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "application/zip".into())],
            body,
        },
    );
}

pub(crate) fn config(base: &str, cache: &Path) -> FetchConfig {
    let mut config = FetchConfig::new(
        cache.to_owned(),
        Pin {
            version: VERSION.to_owned(),
            build: 1223,
            platform: Platform::Linux64,
        },
    );
    config.base_url = base.parse().expect("base url");
    config.connect_timeout = Duration::from_secs(5);
    config.stall_timeout = Duration::from_secs(5);
    config
}

/// A temporary root with the cache inside it, so "nothing outside the cache" is checkable.
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let cache = root.path().join("cache");
    (root, cache)
}

/// Every path below `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            out.push(
                path.strip_prefix(base)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(base, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A failed fetch left nothing behind: the root holds the (empty) cache folder only.
fn assert_nothing_left(root: &Path) {
    assert_eq!(
        tree(root),
        ["cache"],
        "left behind under {}",
        root.display()
    );
}

/// The error's causes, for checking which refusal it was.
fn causes(error: &FetchError) -> String {
    let mut out = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

/// Fetches `body` as the archive; gives the error.
async fn fetch_refused(body: Vec<u8>, root: &Path, cache: &Path) -> FetchError {
    let server = FixtureServer::start().await.expect("fixture server");
    serve(&server, body);
    let config = config(&server.url("cft"), cache);
    let result = fetch(&config, |_| {}).await;
    assert_nothing_left(root);
    result.expect_err("the fetch must fail")
}

/// Sees only the temporary cache: `PLAYWRIGHT_BROWSERS_PATH` points at it, and the
/// browsers installed on this machine are hidden.
#[derive(Debug)]
struct CacheOnlyProbe(PathBuf);

impl Probe for CacheOnlyProbe {
    fn os(&self) -> Os {
        Os::Linux
    }
    fn var(&self, name: &str) -> Option<OsString> {
        (name == "PLAYWRIGHT_BROWSERS_PATH").then(|| self.0.clone().into_os_string())
    }
    fn is_file(&self, path: &Path) -> bool {
        path.starts_with(&self.0) && path.is_file()
    }
    fn list_dir(&self, path: &Path) -> Vec<String> {
        std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|entry| entry.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs `program`, retrying while another thread's fork briefly holds it open for writing.
#[cfg(unix)]
fn run(program: &Path) -> std::process::Output {
    let mut tries = 0;
    loop {
        match std::process::Command::new(program)
            .arg("--version")
            .output()
        {
            Err(error) if error.kind() == io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other.expect("run the fetched executable"),
        }
    }
}

/// LAUNCH-4 and LAUNCH-3: the archive streams in with progress (at least 2 events, bytes
/// never decreasing, done == total at the end), its checksum is checked, it unpacks into
/// `<cache>/chromium-<build>/chrome-linux64/`, the executable runs, and discovery finds it.
#[tokio::test]
async fn launch_4_fetch_unpacks_a_runnable_browser_with_progress() {
    let (root, cache) = temp_root();
    let server = FixtureServer::start().await.expect("fixture server");
    let body = chrome_zip();
    serve(&server, body.clone());
    let mut config = config(&server.url("cft"), &cache);
    config.expected_sha256 = Some(sha256(&body));

    let mut events: Vec<Progress> = Vec::new();
    let executable = fetch(&config, |progress| events.push(progress))
        .await
        .expect("fetch");

    let size = body.len() as u64;
    assert!(
        size > 1024 * 1024,
        "the archive spans several progress steps"
    );
    assert!(events.len() >= 5, "progress events: {events:?}");
    assert!(
        events.windows(2).all(|w| w[0].done <= w[1].done),
        "non-decreasing: {events:?}"
    );
    assert!(
        events
            .windows(2)
            .all(|w| w[1].done - w[0].done <= 256 * 1024),
        "at least every 256 KiB: {events:?}"
    );
    assert_eq!(events.first().map(|p| p.done), Some(0));
    assert!(events.iter().all(|p| p.total == Some(size)), "{events:?}");
    assert_eq!(
        events.last(),
        Some(&Progress {
            done: size,
            total: Some(size)
        })
    );

    assert_eq!(
        executable,
        cache.join("chromium-1223/chrome-linux64/chrome"),
        "where Playwright's cache keeps it"
    );
    assert_eq!(executable, config.executable());
    assert!(executable.is_file());
    let unpacked = cache.join("chromium-1223/chrome-linux64");
    assert_eq!(
        std::fs::read(unpacked.join("resources.pak")).expect("resource"),
        noise(1024 * 1024)
    );
    assert_eq!(
        std::fs::read(unpacked.join("libfake.so")).expect("through the link"),
        b"library"
    );
    assert_eq!(
        std::fs::read_dir(&cache)
            .expect("cache")
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>(),
        ["chromium-1223"],
        "no download or staging folder left in the cache"
    );
    assert_eq!(tree(root.path()).first().map(String::as_str), Some("cache"));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&executable)
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "the archive's mode is restored");
        let mode = std::fs::metadata(unpacked.join("resources.pak"))
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        let output = run(&executable);
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "conch fake chrome --version\n"
        );
    }

    let found = discover::find(&CacheOnlyProbe(cache.clone())).expect("discovery finds it");
    assert_eq!(found.kind, BrowserKind::PlaywrightChromium);
    assert_eq!(found.path, executable);

    // Already there: no second download.
    let again = fetch(&config, |_| panic!("no progress for a build already there"))
        .await
        .expect("second fetch");
    assert_eq!(again, executable);
    assert_eq!(server.requests(ARCHIVE_PATH), 1);
}

/// LAUNCH-4: a server that sends no length still gives progress, ending at done == total.
#[tokio::test]
async fn launch_4_progress_without_content_length_ends_with_the_total() {
    let (_root, cache) = temp_root();
    let body = chrome_zip();
    let size = body.len() as u64;
    let base = raw_server(move |mut stream| {
        read_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        let _ = stream.write_all(&body);
    });
    let mut events = Vec::new();
    fetch(&config(&base, &cache), |progress| events.push(progress))
        .await
        .expect("fetch");
    assert!(events.len() >= 2, "{events:?}");
    assert!(events.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(events.first().map(|p| p.total), Some(None));
    assert_eq!(
        events.last(),
        Some(&Progress {
            done: size,
            total: Some(size)
        })
    );
}

/// LAUNCH-5: an archive whose SHA-256 is not the pinned one is refused before unpacking,
/// and nothing is left in the cache.
#[tokio::test]
async fn launch_5_checksum_mismatch_is_refused() {
    let (root, cache) = temp_root();
    let server = FixtureServer::start().await.expect("fixture server");
    serve(&server, chrome_zip());
    let mut config = config(&server.url("cft"), &cache);
    config.expected_sha256 = Some(sha256(b"some other archive"));
    let error = fetch(&config, |_| {}).await.expect_err("refused");
    assert_eq!(error.kind(), FetchErrorKind::BadArchive);
    assert_eq!(error.sentence(), BAD_ARCHIVE);
    assert!(
        std::error::Error::source(&error)
            .is_some_and(|source| source.to_string().contains("SHA-256")),
        "{error:?}"
    );
    assert_nothing_left(root.path());
}

/// LAUNCH-5: entries named `../…` or with an absolute path are refused, and nothing is
/// written anywhere, inside the cache or out of it.
#[tokio::test]
async fn launch_5_paths_out_of_the_folder_are_refused() {
    for name in [
        "../escape",
        "../../../escape",
        "chrome-linux64/../../../../escape",
    ] {
        let (root, cache) = temp_root();
        let body = ZipBuilder::new()
            .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
            .file(name, 0o644, b"escaped")
            .finish();
        let error = fetch_refused(body, root.path(), &cache).await;
        assert_eq!(
            error.kind(),
            FetchErrorKind::BadArchive,
            "{name}: {error:?}"
        );
        assert_eq!(error.sentence(), BAD_ARCHIVE);
        assert!(
            causes(&error).contains("would land outside"),
            "{}",
            causes(&error)
        );
    }
    let (root, cache) = temp_root();
    let absolute = root.path().join("absolute-escape");
    let body = ZipBuilder::new()
        .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
        .file(&absolute.display().to_string(), 0o644, b"escaped")
        .finish();
    let error = fetch_refused(body, root.path(), &cache).await;
    assert_eq!(error.kind(), FetchErrorKind::BadArchive, "{error:?}");
    assert!(
        causes(&error).contains("would land outside"),
        "{}",
        causes(&error)
    );
    assert!(!absolute.exists());
}

/// LAUNCH-5: links pointing out of the folder (absolute, or climbing above it) are
/// refused, and so is an entry written through a link.
#[tokio::test]
async fn launch_5_links_out_of_the_folder_are_refused() {
    let archives = [
        (
            ZipBuilder::new()
                .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
                .link("chrome-linux64/etc", "/etc"),
            "points to \"/etc\"",
        ),
        (
            ZipBuilder::new()
                .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
                .link("chrome-linux64/up", "../../x"),
            "points to \"../../x\"",
        ),
        (
            // Inside by lexical resolution, outside in fact: `here` is the folder itself.
            ZipBuilder::new()
                .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
                .link("chrome-linux64/here", ".")
                .link("chrome-linux64/sub/out", "../here/../.."),
            "points to \"../here/../..\"",
        ),
        (
            ZipBuilder::new()
                .file("chrome-linux64/chrome", 0o755, SCRIPT.as_bytes())
                .link("chrome-linux64/lib", "libs")
                .file(
                    "chrome-linux64/lib/through",
                    0o644,
                    b"written through a link",
                ),
            "lies inside the link",
        ),
    ];
    for (archive, why) in archives {
        let (root, cache) = temp_root();
        let error = fetch_refused(archive.finish(), root.path(), &cache).await;
        assert_eq!(error.kind(), FetchErrorKind::BadArchive, "{error:?}");
        assert_eq!(error.sentence(), BAD_ARCHIVE);
        assert!(causes(&error).contains(why), "{}", causes(&error));
    }
}

/// LAUNCH-5: HTML where a zip should be is a bad archive.
#[tokio::test]
async fn launch_5_not_a_zip_is_a_bad_archive() {
    let (root, cache) = temp_root();
    let html = b"<!doctype html><html><body>Sign in to the hotel wifi</body></html>".to_vec();
    let error = fetch_refused(html, root.path(), &cache).await;
    assert_eq!(error.kind(), FetchErrorKind::BadArchive);
    assert_eq!(error.sentence(), BAD_ARCHIVE);
    assert!(
        causes(&error).contains("not a readable zip"),
        "{}",
        causes(&error)
    );
    // A zip cut short is one too.
    let (root, cache) = temp_root();
    let mut cut = chrome_zip();
    cut.truncate(cut.len() / 2);
    let error = fetch_refused(cut, root.path(), &cache).await;
    assert_eq!(error.kind(), FetchErrorKind::BadArchive);
}

/// LAUNCH-5: an archive without the browser's executable is named as such.
#[tokio::test]
async fn launch_5_archive_without_the_executable() {
    let (root, cache) = temp_root();
    let body = ZipBuilder::new()
        .file("chrome-linux64/README", 0o644, b"no browser here")
        .finish();
    let error = fetch_refused(body, root.path(), &cache).await;
    assert_eq!(error.kind(), FetchErrorKind::ExecutableMissing);
    assert_eq!(
        error.sentence(),
        "Conch couldn't download Chromium: the download didn't contain the browser program. Try again."
    );
    assert_eq!(
        error.path(),
        Some(cache.join("chromium-1223/chrome-linux64/chrome").as_path())
    );
}

/// LAUNCH-5: an HTTP error is named with its status.
#[tokio::test]
async fn launch_5_http_404_is_named() {
    let (root, cache) = temp_root();
    let server = FixtureServer::start().await.expect("fixture server");
    let error = fetch(&config(&server.url("cft"), &cache), |_| {})
        .await
        .expect_err("404");
    assert_eq!(error.kind(), FetchErrorKind::HttpStatus { status: 404 });
    assert_eq!(
        error.sentence(),
        "Conch couldn't download Chromium: the download server answered with error 404 (Not Found). Try again later."
    );
    assert_eq!(server.requests(ARCHIVE_PATH), 1);
    assert_nothing_left(root.path());
}

/// LAUNCH-5: a server that refuses connections is "can't be reached".
#[tokio::test]
async fn launch_5_refused_connection_is_offline() {
    let (root, cache) = temp_root();
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let error = fetch(
        &config(&format!("http://127.0.0.1:{port}/cft"), &cache),
        |_| {},
    )
    .await
    .expect_err("refused");
    assert_eq!(error.kind(), FetchErrorKind::Offline, "{error:?}");
    assert_eq!(error.sentence(), OFFLINE);
    assert_nothing_left(root.path());
}

/// LAUNCH-5: a server that accepts and never answers, or stops halfway, does not hang
/// the fetch: the stall timeout ends it.
#[tokio::test]
async fn launch_5_stalled_server_does_not_hang() {
    // Accepted by the kernel, never answered: nobody calls accept.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("address").port();
    let halfway = raw_server(|mut stream| {
        read_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nPK\x03\x04");
        std::thread::sleep(Duration::from_secs(20));
    });
    for base in [format!("http://127.0.0.1:{port}/cft"), halfway] {
        let (root, cache) = temp_root();
        let mut config = config(&base, &cache);
        config.stall_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let error = fetch(&config, |_| {}).await.expect_err("stalled");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(error.kind(), FetchErrorKind::Interrupted, "{error:?}");
        assert_eq!(error.sentence(), BROKE_OFF);
        assert_nothing_left(root.path());
    }
    drop(silent);
}

/// A disk that is full: every write fails with ENOSPC, except for paths `spare` accepts.
#[derive(Debug)]
struct FullDisk {
    spare: fn(&Path) -> bool,
}

#[derive(Debug)]
struct NoSpace;

impl Write for NoSpace {
    fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::StorageFull))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Files for FullDisk {
    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>> {
        if (self.spare)(path) {
            RealFiles.create(path)
        } else {
            Ok(Box::new(NoSpace))
        }
    }
}

/// LAUNCH-5: a full disk, while downloading and while unpacking, is named as such, and
/// nothing is left in the cache.
#[tokio::test]
async fn launch_5_full_disk_is_named() {
    let while_downloading: fn(&Path) -> bool = |_| false;
    let while_unpacking: fn(&Path) -> bool = |path| path.extension().is_some_and(|e| e == "zip");
    for spare in [while_downloading, while_unpacking] {
        let (root, cache) = temp_root();
        let server = FixtureServer::start().await.expect("fixture server");
        serve(&server, chrome_zip());
        let mut config = config(&server.url("cft"), &cache);
        config.files = Arc::new(FullDisk { spare });
        let error = fetch(&config, |_| {}).await.expect_err("disk full");
        assert_eq!(error.kind(), FetchErrorKind::DiskFull, "{error:?}");
        assert_eq!(error.sentence(), DISK_FULL);
        assert_nothing_left(root.path());
    }
}

/// A one-connection-at-a-time HTTP server on 127.0.0.1 answering with `respond`, for the
/// answers the fixture server does not give. Gives the base address.
fn raw_server(respond: impl Fn(std::net::TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let respond = Arc::new(respond);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let respond = Arc::clone(&respond);
            std::thread::spawn(move || respond(stream));
        }
    });
    format!("http://127.0.0.1:{port}/cft")
}

/// Reads a request's head.
fn read_head(stream: &mut std::net::TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.extend_from_slice(&byte);
    }
}

/// Records every protocol event with its conversation.
#[derive(Debug, Default)]
struct Recorder(std::sync::Mutex<Vec<(String, conch_browser::protocol::BrowserEvent)>>);

impl conch_browser::protocol::EventSink for Recorder {
    fn send(&self, conversation: &str, event: conch_browser::protocol::BrowserEvent) {
        self.0
            .lock()
            .expect("the record")
            .push((conversation.to_owned(), event));
    }
}

/// LAUNCH-4, PROTO-2 (issue 28): while the runtime downloads Chromium, `browser.status`
/// events with the download's progress reach the embedder's EventSink (for every
/// conversation: conversation `""`), bytes never decreasing.
#[tokio::test(flavor = "multi_thread")]
async fn launch_4_the_runtime_tells_download_progress_in_browser_status() {
    use conch_browser::protocol::BrowserEvent;
    use conch_browser::{Browser, BrowserConfig, Home};

    let (root, cache) = temp_root();
    let server = FixtureServer::start().await.expect("fixture server");
    let body = chrome_zip();
    serve(&server, body.clone());
    let mut download = config(&server.url("cft"), &cache);
    download.expected_sha256 = Some(sha256(&body));
    let mut settings = BrowserConfig::new(Home::new(root.path().join("home")));
    settings.probe = Arc::new(CacheOnlyProbe(cache.clone()));
    settings.download = Some(download);
    settings.guard = None;
    let recorder = Arc::new(Recorder::default());
    settings.events = Some(recorder.clone());
    let browser = Browser::new(settings);
    // The downloaded stand-in is no real browser: the launch fails after the download.
    let _ = browser.ensure_running().await;
    let events = recorder.0.lock().expect("the record").clone();
    let progress: Vec<(u64, Option<u64>)> = events
        .iter()
        .filter_map(|(conversation, event)| match event {
            BrowserEvent::Status(status) => {
                assert_eq!(conversation, "", "the whole browser's status");
                assert!(!status.running);
                status.download.map(|d| (d.done, d.total))
            }
            _ => None,
        })
        .collect();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0].0 <= w[1].0),
        "non-decreasing: {progress:?}"
    );
    let size = body.len() as u64;
    assert_eq!(progress.last(), Some(&(size, Some(size))), "{progress:?}");
    browser.shutdown().await;
}

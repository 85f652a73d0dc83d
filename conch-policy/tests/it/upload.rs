//! Uploads (UP-2 … UP-8, UP-13, AMB-10).

use std::path::PathBuf;

use conch_policy::{
    FileFacts, FileOrigin, MAX_FILES, MAX_TOTAL_BYTES, RefusalCode, UploadPlaces, check_upload,
    is_key_shaped, is_sealed_secret_name,
};

use crate::corpus::{Line, lines};

const UPLOADS: &str = include_str!("../fixtures/uploads.txt");

fn places(work: &str, home: &str) -> UploadPlaces {
    let protected = [
        "/home/ana/.ssh",
        "/home/ana/.aws",
        "/home/ana/.gnupg",
        "/home/ana/Passwords",
    ]
    .into_iter()
    .map(PathBuf::from)
    .chain(
        [
            "browser/profile",
            "browser.secrets.json",
            "browser.errands.secrets.json",
        ]
        .into_iter()
        .map(|rel| PathBuf::from(home).join(rel)),
    )
    .collect();
    UploadPlaces {
        work_folder: work.into(),
        conch_home: home.into(),
        protected,
    }
}

fn facts(line: &str) -> FileFacts {
    let cols: Vec<&str> = line.split('|').map(str::trim).collect();
    let origin = match cols[0] {
        "work" => FileOrigin::WorkFolder,
        "attached" => FileOrigin::AttachedInChat,
        "made" => FileOrigin::MadeInChat,
        "elsewhere" => FileOrigin::Elsewhere,
        other => panic!("unknown origin {other}"),
    };
    FileFacts {
        origin,
        requested: cols[1].into(),
        resolved: cols[2].into(),
        links: cols[3]
            .split(',')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        size: cols[4].parse().unwrap(),
    }
}

fn batch(line: &str, places: &UploadPlaces) -> String {
    let rest = line.trim_start_matches("batch ");
    let (n, size) = rest.split_once(" x ").unwrap();
    let files: Vec<FileFacts> = (0..n.parse::<usize>().unwrap())
        .map(|i| FileFacts {
            origin: FileOrigin::WorkFolder,
            requested: format!("file{i}.pdf").into(),
            resolved: places.work_folder.join(format!("file{i}.pdf")),
            links: Vec::new(),
            size: size.parse().unwrap(),
        })
        .collect();
    check_upload(&files, places).code().to_owned()
}

/// UP-2 … UP-8, UP-13: every file in the corpus, under the default work folder and with
/// the whole home folder as work folder, and the count and size limits.
#[test]
fn up_upload_table() {
    let width = UPLOADS
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .min(110);
    let mut places = places("/home/ana/.conch/work", "/home/ana/.conch");
    let mut out = String::new();
    for line in lines(UPLOADS) {
        match line {
            Line::Heading(heading) => out.push_str(&format!("\n## {heading}\n")),
            Line::Case(case) if case.starts_with("@ ") => {
                let mut work = "";
                let mut home = "";
                for token in case[2..].split_whitespace() {
                    if let Some(w) = token.strip_prefix("work=") {
                        work = w;
                    } else if let Some(h) = token.strip_prefix("home=") {
                        home = h;
                    }
                }
                places = self::places(work, home);
                out.push_str(&format!("\n@ work folder {work}, Conch's home {home}\n"));
            }
            Line::Case(case) => {
                let code = if case.starts_with("batch ") {
                    batch(case, &places)
                } else {
                    check_upload(&[facts(case)], &places).code().to_owned()
                };
                out.push_str(&format!("{case:width$} => {code}\n"));
            }
        }
    }
    insta::assert_snapshot!("uploads", out.trim_start());
}

fn one(work: &str, requested: &str, resolved: &str, links: &[&str]) -> Option<RefusalCode> {
    let places = places(work, "/home/ana/.conch");
    let file = FileFacts {
        origin: FileOrigin::WorkFolder,
        requested: requested.into(),
        resolved: resolved.into(),
        links: links.iter().map(PathBuf::from).collect(),
        size: 10,
    };
    check_upload(&[file], &places).refusal().map(|r| r.code())
}

/// UP-3: a ../ path and a link to /etc are refused; a link inside the folder is allowed.
#[test]
fn up_3_traversal_and_links() {
    let work = "/w";
    assert_eq!(
        one(work, "../x", "/x", &[]),
        Some(RefusalCode::UploadOutsideWorkFolder)
    );
    assert_eq!(
        one(work, "etc-link", "/etc/passwd", &["/etc/passwd"]),
        Some(RefusalCode::UploadLinkOut)
    );
    assert_eq!(one(work, "in-link", "/w/a/cv.pdf", &["/w/a/cv.pdf"]), None);
}

/// UP-4: hidden files and anything in a hidden folder.
#[test]
fn up_4_hidden() {
    assert_eq!(
        one("/w", ".env", "/w/.env", &[]),
        Some(RefusalCode::UploadHidden)
    );
    assert_eq!(
        one("/w", ".git/config", "/w/.git/config", &[]),
        Some(RefusalCode::UploadHidden)
    );
}

/// UP-5, AMB-10: each key-shaped name of the list.
#[test]
fn up_5_key_shaped_names() {
    for name in [
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "work_rsa",
        "ci_ed25519",
        "a.pem",
        "a.key",
        "a.p12",
        "a.pfx",
        "a.jks",
        "a.keystore",
        "a.kdbx",
        "a.ovpn",
        "credentials.json",
        ".npmrc",
        ".pypirc",
        ".netrc",
        ".git-credentials",
        ".env",
        ".env.local",
        "kubeconfig",
    ] {
        assert!(is_key_shaped(name), "{name}");
    }
    for name in [
        "id_rsa.pub",
        "cv.pdf",
        "keynote.key.txt",
        "monkey",
        "pemberton.txt",
    ] {
        assert!(!is_key_shaped(name), "{name}");
    }
}

/// UP-6: with work folder ~/.conch/work, ~/.conch/browser.json is refused and
/// ~/.conch/work/cv.pdf allowed.
#[test]
fn up_6_conch_home() {
    let places = places("/home/ana/.conch/work", "/home/ana/.conch");
    let file = |requested: &str, resolved: &str| FileFacts {
        origin: FileOrigin::WorkFolder,
        requested: requested.into(),
        resolved: resolved.into(),
        links: Vec::new(),
        size: 10,
    };
    assert!(check_upload(&[file("cv.pdf", "/home/ana/.conch/work/cv.pdf")], &places).is_allowed());
    let refused = check_upload(
        &[file(
            "/home/ana/.conch/browser.json",
            "/home/ana/.conch/browser.json",
        )],
        &places,
    );
    assert!(!refused.is_allowed());
    let whole_home = self::places("/home/ana", "/home/ana/.conch");
    let refused = check_upload(
        &[file(".conch/browser.json", "/home/ana/.conch/browser.json")],
        &whole_home,
    );
    assert_eq!(
        refused.refusal().unwrap().code(),
        RefusalCode::UploadConchFolder
    );
}

/// UP-7: with work folder = $HOME, ~/.ssh/config and <home>/browser/profile/Cookies are
/// refused.
#[test]
fn up_7_protected_places_with_whole_home() {
    assert_eq!(
        one("/home/ana", ".ssh/config", "/home/ana/.ssh/config", &[]),
        Some(RefusalCode::UploadProtectedPlace)
    );
    assert_eq!(
        one(
            "/home/ana",
            ".conch/browser/profile/Cookies",
            "/home/ana/.conch/browser/profile/Cookies",
            &[]
        ),
        Some(RefusalCode::UploadProtectedPlace)
    );
}

/// BE-3, DATA-10: Conch's device key, its sealed files and their set-aside copies are
/// refused by name, whatever the origin, as asked for, as reached, or as a link on the
/// way; the home being the work folder's parent changes nothing. Look-alikes pass.
#[test]
fn be_3_data_10_sealed_secrets_are_refused_by_any_name_on_the_way() {
    for name in [
        "device.key",
        "DEVICE.KEY",
        "device.key.corrupt-20261203T080000Z",
        "browser.secrets.json",
        "passwords.secrets.json",
        "copy.secrets.json",
        "browser.errands.secrets.json.corrupt-20261203T080000Z-2",
    ] {
        assert!(is_sealed_secret_name(name), "{name}");
    }
    for name in [
        "device.txt",
        "secrets.json",
        "my-secrets.json.pdf.txt",
        "key",
    ] {
        assert!(!is_sealed_secret_name(name), "{name}");
    }
    let sealed = Some(RefusalCode::UploadSealedSecret);
    let home = "/home/ana/.conch";
    let work = "/home/ana/.conch/work";
    // A copy in the work folder.
    assert_eq!(
        one(
            work,
            "passwords.secrets.json",
            "/home/ana/.conch/work/passwords.secrets.json",
            &[]
        ),
        sealed
    );
    // A set-aside copy.
    assert_eq!(
        one(
            work,
            "old.secrets.json.corrupt-20261203T080000Z",
            "/home/ana/.conch/work/old.secrets.json.corrupt-20261203T080000Z",
            &[]
        ),
        sealed
    );
    // A link with an innocent name that leads to the device key, in the home above.
    assert_eq!(
        one(
            work,
            "notes.txt",
            "/home/ana/.conch/device.key",
            &["/home/ana/.conch/device.key"]
        ),
        sealed
    );
    // A link on the way, even to a folder named like a sealed file.
    assert_eq!(
        one(
            work,
            "a/cv.pdf",
            "/home/ana/.conch/work/x.secrets.json/cv.pdf",
            &["/home/ana/.conch/work/x.secrets.json"]
        ),
        sealed
    );
    // Attachments and made files too.
    let places = places(work, home);
    for origin in [FileOrigin::AttachedInChat, FileOrigin::MadeInChat] {
        let file = FileFacts {
            origin,
            requested: "/tmp/attached/browser.secrets.json".into(),
            resolved: "/tmp/attached/browser.secrets.json".into(),
            links: Vec::new(),
            size: 10,
        };
        assert_eq!(
            check_upload(&[file], &places).refusal().map(|r| r.code()),
            sealed
        );
    }
}

/// UP-8: 11 files, and 51 MB, are refused before anything is asked.
#[test]
fn up_8_limits() {
    assert_eq!(MAX_FILES, 10);
    assert_eq!(MAX_TOTAL_BYTES, 50_000_000);
    let places = places("/w", "/c");
    let file = |size: u64| FileFacts {
        origin: FileOrigin::WorkFolder,
        requested: "a.pdf".into(),
        resolved: "/w/a.pdf".into(),
        links: Vec::new(),
        size,
    };
    let eleven: Vec<FileFacts> = (0..11).map(|_| file(1)).collect();
    assert_eq!(
        check_upload(&eleven, &places).refusal().unwrap().code(),
        RefusalCode::UploadTooMany
    );
    assert_eq!(
        check_upload(&[file(51_000_000)], &places)
            .refusal()
            .unwrap()
            .code(),
        RefusalCode::UploadTooLarge
    );
    assert_eq!(
        check_upload(&[file(u64::MAX), file(u64::MAX)], &places)
            .refusal()
            .unwrap()
            .code(),
        RefusalCode::UploadTooLarge
    );
}

/// UP-13: a refusal names the rule and the file.
#[test]
fn up_13_refusal_names_rule_and_file() {
    let places = places("/w", "/c");
    let file = FileFacts {
        origin: FileOrigin::WorkFolder,
        requested: "id_ed25519".into(),
        resolved: "/w/id_ed25519".into(),
        links: Vec::new(),
        size: 400,
    };
    let verdict = check_upload(&[file], &places);
    let refusal = verdict.refusal().unwrap();
    assert_eq!(refusal.code(), RefusalCode::UploadKeyFile);
    assert!(refusal.sentence().contains("“id_ed25519”"));
    assert!(refusal.sentence().contains("key"));
}

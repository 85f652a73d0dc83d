//! Sites (PERM-4, ERR-3).

use conch_policy::{Site, lends_cookie, lends_origin};
use url::Url;

use crate::corpus::table;

const SITES: &str = include_str!("../fixtures/sites.txt");

/// PERM-4: the site of every host in the corpus: PSL with its private section, case and
/// dots normalised, IDNs in xn-- form, IP literals and single labels their own site.
#[test]
fn perm_4_site_table() {
    let rendered = table(SITES, |host| {
        let host = if host == "(empty)" { "" } else { host };
        match Site::of_host(host) {
            Ok(site) => site.to_string(),
            Err(error) => format!("error: failed to {error}"),
        }
    });
    insta::assert_snapshot!("sites", rendered);
}

/// PERM-4: the record's own examples.
#[test]
fn perm_4_record_examples() {
    let site = |host: &str| Site::of_host(host).unwrap().to_string();
    assert_eq!(site("www.booking.com"), "booking.com");
    assert_eq!(site("m.booking.com"), "booking.com");
    assert_eq!(site(".shop.example"), "shop.example");
    assert_eq!(site("alice.github.io"), "alice.github.io");
    assert_ne!(site("alice.github.io"), site("github.io"));
    assert_eq!(site("www.bbc.co.uk"), "bbc.co.uk");
    assert_eq!(site("[::1]"), "[::1]");
    assert_eq!(site("localhost"), "localhost");
    assert_eq!(site("bücher.example"), site("xn--bcher-kva.example"));
}

/// PERM-4: a URL's site is its host's; addresses without a host have none.
#[test]
fn perm_4_site_of_url() {
    let of = |u: &str| Site::of_url(&Url::parse(u).unwrap()).map(|s| s.to_string());
    assert_eq!(of("https://WWW.Booking.com./x").unwrap(), "booking.com");
    assert_eq!(of("http://2130706433/").unwrap(), "127.0.0.1");
    assert_eq!(of("http://[::ffff:7f00:1]/").unwrap(), "[::ffff:127.0.0.1]");
    assert!(of("about:blank").is_err());
    assert!(of("data:text/plain,x").is_err());
}

/// ERR-3: cookies are lent by registrable domain, with the same site function.
#[test]
fn err_3_cookies_lent_by_site() {
    let lent = [
        Site::of_host("shop.example").unwrap(),
        Site::of_host("alice.github.io").unwrap(),
    ];
    assert!(lends_cookie(".shop.example", &lent));
    assert!(lends_cookie("www.shop.example", &lent));
    assert!(lends_cookie("alice.github.io", &lent));
    assert!(!lends_cookie("github.io", &lent));
    assert!(!lends_cookie(".github.io", &lent));
    assert!(!lends_cookie("bob.github.io", &lent));
    assert!(!lends_cookie("bank.example", &lent));
    assert!(!lends_cookie("", &lent));
    assert!(lends_origin(
        &Url::parse("https://www.shop.example").unwrap(),
        &lent
    ));
    assert!(!lends_origin(
        &Url::parse("https://bank.example").unwrap(),
        &lent
    ));
}

/// ERR-3, PERM-15: seeding filters the main jar by the same site function as permissions:
/// with shop.test and alice.github.io always allowed, shop.test's cookies (any subdomain)
/// and alice's are copied; bank.test's, bob.github.io's and the github.io suffix's are not.
#[test]
fn err_3_seeding_copies_only_the_always_allowed_sites() {
    let always = ["shop.test", "alice.github.io"].map(|s| Site::of_host(s).unwrap());
    let jar = [
        "shop.test",
        ".shop.test",
        "www.shop.test",
        "bank.test",
        ".bank.test",
        "alice.github.io",
        ".alice.github.io",
        "bob.github.io",
        "github.io",
    ];
    let copied: Vec<&str> = jar
        .into_iter()
        .filter(|domain| lends_cookie(domain, &always))
        .collect();
    assert_eq!(
        copied,
        [
            "shop.test",
            ".shop.test",
            "www.shop.test",
            "alice.github.io",
            ".alice.github.io"
        ]
    );
    // The same function permissions use: alice and bob are two sites.
    assert_ne!(
        Site::of_host("alice.github.io").unwrap(),
        Site::of_host("bob.github.io").unwrap()
    );
    assert!(!lends_cookie(
        "bob.github.io",
        &[Site::of_host("alice.github.io").unwrap()]
    ));
    assert!(
        !lends_cookie("shop.test", &[]),
        "nothing allowed lends nothing"
    );
}

//! The network verdict (NET-1, NET-3, NET-5, NET-6, NET-7, AMB-14, allowHosts).

use std::net::IpAddr;

use conch_policy::{
    AddressClass, AllowedHost, ErrorKind, Gateway, NavigationBy, NetSettings, RefusalCode, Verdict,
    agent_navigation_verdict, classify, navigation_verdict, special_ranges, verdict_for_connection,
    verdict_for_resolved_url, verdict_for_url,
};
use proptest::prelude::*;
use url::Url;

use crate::corpus::{count, table};

const NET: &str = include_str!("../fixtures/net.txt");

const GATEWAY_PORT: u16 = 7878;

fn gateway() -> Gateway {
    Gateway {
        port: GATEWAY_PORT,
        addresses: vec![
            "192.168.1.20".parse().unwrap(),
            "198.51.100.7".parse().unwrap(),
        ],
    }
}

fn settings(spec: &str) -> NetSettings {
    let mut settings = NetSettings {
        gateway: gateway(),
        ..NetSettings::default()
    };
    for token in spec.split_whitespace() {
        if token == "localhost" {
            settings.allow_localhost = true;
        } else if let Some(entry) = token.strip_prefix("allow=") {
            settings
                .allow_hosts
                .push(AllowedHost::parse(entry).unwrap());
        } else {
            panic!("unknown setting {token}");
        }
    }
    settings
}

fn addresses(list: &str) -> Vec<IpAddr> {
    if list.trim() == "-" {
        return Vec::new();
    }
    list.split(',')
        .map(|ip| ip.trim().parse().unwrap())
        .collect()
}

fn show(verdict: &Verdict) -> String {
    verdict.code().to_owned()
}

fn decide_line(line: &str) -> String {
    let (case, spec) = line.split_once(" | ").unwrap_or((line, ""));
    let settings = settings(spec);
    let mut words = case.split_whitespace();
    match words.next() {
        Some("url") => {
            let rest = case.trim_start_matches("url ").trim();
            match rest.split_once(" -> ") {
                Some((url, ips)) => match Url::parse(url) {
                    Ok(url) => show(&verdict_for_resolved_url(&url, &addresses(ips), &settings)),
                    Err(error) => format!("error: {error}"),
                },
                None => match Url::parse(rest) {
                    Ok(url) => show(&verdict_for_url(&url, &settings)),
                    Err(error) => format!("error: {error}"),
                },
            }
        }
        Some("conn") => {
            let host = words.next().unwrap();
            let port: u16 = words.next().unwrap().parse().unwrap();
            let ip: IpAddr = words.next().unwrap().parse().unwrap();
            show(&verdict_for_connection(host, port, ip, &settings))
        }
        Some("nav") => {
            let by = match words.next() {
                Some("agent") => NavigationBy::Agent,
                Some("page") => NavigationBy::Page,
                other => panic!("unknown navigator {other:?}"),
            };
            let url = Url::parse(words.next().unwrap()).unwrap();
            show(&navigation_verdict(&url, by))
        }
        other => panic!("unknown case kind {other:?}"),
    }
}

/// NET-1, NET-3, NET-5, NET-6, NET-7, AMB-14: the whole corpus of URLs, resolved
/// addresses, proxy connections and navigations, with every IPv4 spelling, mapped IPv6,
/// NAT64, 6to4, metadata names, the gateway's port under allowLocalhost, and allowHosts.
#[test]
fn net_3_verdict_table() {
    assert!(
        count(NET) >= 150,
        "the network corpus keeps at least 150 cases"
    );
    insta::assert_snapshot!("net", table(NET, decide_line));
}

/// NET-3, AMB-14: the special-purpose table, range by range.
#[test]
fn net_3_special_ranges_table() {
    let rendered: String = special_ranges()
        .into_iter()
        .map(|(range, class)| format!("{range:<55} {class}\n"))
        .collect();
    insta::assert_snapshot!("special_ranges", rendered);
}

/// NET-3: the spellings the requirement names, through the URL parser a browser uses.
#[test]
fn net_3_ipv4_spellings_are_classified() {
    for spelling in [
        "2130706433",
        "0x7f.1",
        "0177.0.0.1",
        "127.1",
        "0x7f000001",
        "%31%32%37.0.0.1",
    ] {
        let url = Url::parse(&format!("http://{spelling}/")).unwrap();
        let Some(url::Host::Ipv4(ip)) = url.host() else {
            panic!("{spelling} is not IPv4")
        };
        assert_eq!(
            classify(IpAddr::V4(ip)),
            AddressClass::Loopback,
            "{spelling}"
        );
    }
    let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
    assert_eq!(classify(mapped), AddressClass::Private);
}

/// NET-3: the rebinding case of the requirement: rebind.test resolving to 10.0.0.5.
#[test]
fn net_3_rebinding_to_private_is_refused() {
    let url = Url::parse("http://rebind.test/").unwrap();
    let verdict = verdict_for_resolved_url(&url, &["10.0.0.5".parse().unwrap()], &settings(""));
    assert_eq!(
        verdict.refusal().unwrap().code(),
        RefusalCode::PrivateNetwork
    );
}

/// NET-5: allowLocalhost opens another loopback port, never the gateway's.
#[test]
fn net_5_allow_localhost_keeps_gateway_blocked() {
    let on = settings("localhost");
    let app = Url::parse("http://127.0.0.1:3000/").unwrap();
    let gw = Url::parse("http://127.0.0.1:7878/").unwrap();
    assert!(verdict_for_url(&app, &on).is_allowed());
    assert_eq!(
        verdict_for_url(&gw, &on).refusal().unwrap().code(),
        RefusalCode::GatewayOrigin
    );
}

/// NET-5, AMB-1 (issue 29): allowLocalhost opens loopback to hosts that say loopback
/// themselves (loopback literals in any spelling, `localhost`), never to a public name
/// that resolves to loopback (DNS rebinding), whether resolved or connected to.
#[test]
fn net_5_allow_localhost_refuses_a_name_that_rebinds_to_loopback() {
    let on = settings("localhost");
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    for ip in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
        let ip: IpAddr = ip.parse().unwrap();
        let url = Url::parse("http://rebind.test:3000/").unwrap();
        assert_eq!(
            verdict_for_resolved_url(&url, &[ip], &on)
                .refusal()
                .map(|r| r.code()),
            Some(RefusalCode::LocalApp),
            "{ip}"
        );
        assert_eq!(
            verdict_for_connection("rebind.test", 3000, ip, &on)
                .refusal()
                .map(|r| r.code()),
            Some(RefusalCode::LocalApp),
            "{ip}"
        );
    }
    for host in [
        "127.0.0.1",
        "127.0.0.2",
        "2130706433",
        "127.1",
        "0x7f.1",
        "[::1]",
        "localhost",
        "app.localhost",
    ] {
        let url = Url::parse(&format!("http://{host}:3000/")).unwrap();
        assert!(
            verdict_for_resolved_url(&url, &[loopback], &on).is_allowed(),
            "{host}"
        );
    }
    assert!(verdict_for_connection("localhost", 3000, loopback, &on).is_allowed());
    assert!(verdict_for_connection("127.0.0.1", 3000, loopback, &on).is_allowed());
}

/// allowHosts ("Decisions that differ"): entries must be loopback.
#[test]
fn net_5_allow_hosts_entries_must_be_loopback() {
    let kind = |entry: &str| AllowedHost::parse(entry).map(|_| ()).map_err(|e| e.kind());
    assert_eq!(kind("localhost:3000"), Ok(()));
    assert_eq!(kind("127.0.0.1:8080"), Ok(()));
    assert_eq!(kind("[::1]:5173"), Ok(()));
    assert_eq!(kind("myapp.test:8443"), Ok(()));
    assert_eq!(kind("10.0.0.5:80"), Err(ErrorKind::AllowedHostNotLoopback));
    assert_eq!(
        kind("169.254.169.254:80"),
        Err(ErrorKind::AllowedHostNotLoopback)
    );
    assert_eq!(
        kind("[fd00:ec2::254]:80"),
        Err(ErrorKind::AllowedHostNotLoopback)
    );
    assert_eq!(
        kind("metadata.google.internal:80"),
        Err(ErrorKind::AllowedHostNotLoopback)
    );
    assert_eq!(
        kind("printer.local:631"),
        Err(ErrorKind::AllowedHostNotLoopback)
    );
    assert_eq!(kind("localhost"), Err(ErrorKind::AllowedHost));
    assert_eq!(kind("localhost:0"), Err(ErrorKind::AllowedHost));
    assert_eq!(kind("localhost:99999"), Err(ErrorKind::AllowedHost));
    assert_eq!(kind("::1:3000"), Err(ErrorKind::AllowedHost));
    assert_eq!(
        AllowedHost::parse("LOCALHOST.:3000").unwrap().to_string(),
        "localhost:3000"
    );
    assert_eq!(
        AllowedHost::parse("[::ffff:127.0.0.1]:1")
            .unwrap()
            .to_string(),
        "127.0.0.1:1"
    );
}

/// NET-6: the agent's addresses are read, then judged by scheme.
#[test]
fn net_6_agent_addresses() {
    assert!(
        agent_navigation_verdict("https://example.com")
            .unwrap()
            .is_allowed()
    );
    assert!(
        agent_navigation_verdict(" about:blank ")
            .unwrap()
            .is_allowed()
    );
    let refused = agent_navigation_verdict("file:///etc/passwd").unwrap();
    assert_eq!(
        refused.refusal().unwrap().code(),
        RefusalCode::UnsupportedScheme
    );
    assert!(refused.refusal().unwrap().sentence().contains("“file:”"));
    assert_eq!(
        agent_navigation_verdict("example.com").unwrap_err().kind(),
        ErrorKind::Url
    );
}

fn v6(bits: u128) -> IpAddr {
    IpAddr::V6(std::net::Ipv6Addr::from(bits))
}

fn any_ip_in(class: &'static str) -> BoxedStrategy<IpAddr> {
    let v4 = |a: u8, b: u8| {
        (any::<u8>(), any::<u8>()).prop_map(move |(c, d)| IpAddr::from([a, b, c, d]))
    };
    match class {
        "loopback" => (any::<u8>(), any::<u8>(), any::<u8>())
            .prop_map(|(b, c, d)| IpAddr::from([127, b, c, d]))
            .boxed(),
        "private" => prop_oneof![
            (any::<u8>(), any::<u8>(), any::<u8>())
                .prop_map(|(b, c, d)| IpAddr::from([10, b, c, d])),
            (16u8..32, any::<u8>(), any::<u8>()).prop_map(|(b, c, d)| IpAddr::from([172, b, c, d])),
            v4(192, 168),
            any::<u128>().prop_map(|bits| v6((bits & !(0x7f << 121)) | (0xfc << 120))),
        ]
        .boxed(),
        "link-local" => prop_oneof![
            v4(169, 254),
            any::<u128>().prop_map(|bits| v6((bits >> 10) | (0xfe80 << 112))),
        ]
        .boxed(),
        _ => prop_oneof![
            Just("169.254.169.254".parse().unwrap()),
            Just("100.100.100.200".parse().unwrap()),
            Just("fd00:ec2::254".parse().unwrap()),
        ]
        .boxed(),
    }
}

/// Writes an IPv4 address the many ways a browser accepts, or an IPv6 one mapped.
fn spellings(ip: IpAddr) -> Vec<String> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            let n = u32::from(v4);
            vec![
                v4.to_string(),
                n.to_string(),
                format!("0x{n:x}"),
                format!("0{a:o}.0{b:o}.0{c:o}.0{d:o}"),
                format!(
                    "{a}.{}",
                    (u32::from(b) << 16) | (u32::from(c) << 8) | u32::from(d)
                ),
                format!("[::ffff:{v4}]"),
            ]
        }
        IpAddr::V6(v6) => vec![format!("[{v6}]")],
    }
}

fn class_and_ip() -> impl Strategy<Value = (&'static str, IpAddr)> {
    prop_oneof![
        Just("loopback"),
        Just("private"),
        Just("link-local"),
        Just("metadata")
    ]
    .prop_flat_map(|class| (Just(class), any_ip_in(class)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// NET-3, NET-5: no URL whose address is loopback, private, link-local or metadata is
    /// allowed without the matching setting, in any spelling, whether the address is the
    /// URL's host or what its name resolved to; loopback only with allowLocalhost, and
    /// the others never.
    #[test]
    fn net_3_non_public_never_allowed_without_setting(
        (class, ip) in class_and_ip(),
        port in 1u16..,
        allow_localhost in any::<bool>(),
    ) {
        let settings = NetSettings { allow_localhost, ..settings("") };
        let may_pass = class == "loopback" && allow_localhost && port != GATEWAY_PORT;
        for spelling in spellings(ip) {
            let Ok(url) = Url::parse(&format!("http://{spelling}:{port}/")) else { continue };
            prop_assert_eq!(verdict_for_url(&url, &settings).is_allowed(), may_pass, "{}", url);
        }
        // A public name that resolves there is never allowed: allowLocalhost covers
        // literal loopback hosts only (DNS rebinding).
        let named = Url::parse(&format!("http://rebind.test:{port}/")).unwrap();
        prop_assert!(!verdict_for_resolved_url(&named, &[ip], &settings).is_allowed());
        prop_assert!(!verdict_for_connection("rebind.test", port, ip, &settings).is_allowed());
    }

    /// NET-3: the same for addresses drawn straight from each class.
    #[test]
    fn net_3_classes_hold_for_random_members(
        ip in prop_oneof![any_ip_in("loopback"), any_ip_in("private"), any_ip_in("link-local"), any_ip_in("metadata")],
        port in 1u16..,
    ) {
        let settings = settings("");
        prop_assert!(!verdict_for_connection("x.test", port, ip, &settings).is_allowed());
        if let IpAddr::V4(v4) = ip {
            let mapped = IpAddr::V6(v4.to_ipv6_mapped());
            prop_assert!(!verdict_for_connection("x.test", port, mapped, &settings).is_allowed());
            let nat64 = v6((0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4)));
            prop_assert!(!verdict_for_connection("x.test", port, nat64, &settings).is_allowed());
            let six_to_four = v6((0x2002_u128 << 112) | (u128::from(u32::from(v4)) << 80));
            prop_assert!(!verdict_for_connection("x.test", port, six_to_four, &settings).is_allowed());
        }
    }

    /// NET-1: the gateway's own port on loopback, unspecified or its own addresses is
    /// never allowed, under any settings, whatever host was asked for.
    #[test]
    fn net_1_gateway_port_never_allowed(
        allow_localhost in any::<bool>(),
        allow_gateway_entry in any::<bool>(),
        last in any::<u8>(),
        pick in 0usize..6,
        host in prop_oneof![Just("localhost"), Just("rebind.test"), Just("127.0.0.1"), Just("app.localhost")],
    ) {
        let mut settings = NetSettings { allow_localhost, ..settings("") };
        if allow_gateway_entry {
            settings.allow_hosts.push(AllowedHost::parse(&format!("{host}:{GATEWAY_PORT}")).unwrap());
            settings.allow_hosts.push(AllowedHost::parse(&format!("127.0.0.1:{GATEWAY_PORT}")).unwrap());
        }
        let ips: [IpAddr; 6] = [
            IpAddr::from([127, 0, 0, last]),
            "::1".parse().unwrap(),
            IpAddr::from([0, 0, 0, 0]),
            "::ffff:127.0.0.1".parse().unwrap(),
            "192.168.1.20".parse().unwrap(),
            "198.51.100.7".parse().unwrap(),
        ];
        let ip = ips[pick];
        let verdict = verdict_for_connection(host, GATEWAY_PORT, ip, &settings);
        prop_assert_eq!(verdict.refusal().map(|r| r.code()), Some(RefusalCode::GatewayOrigin));
        let url = Url::parse(&format!("http://{host}:{GATEWAY_PORT}/")).unwrap();
        prop_assert!(!verdict_for_resolved_url(&url, &[ip], &settings).is_allowed());
        prop_assert!(!verdict_for_url(&url, &settings).is_allowed() || host == "rebind.test");
    }
}

/// NET-7, AMB-14: a page's own top-level navigations may also reach about:srcdoc, and
/// are cancelled for every other scheme, with a sentence naming it.
#[test]
fn net_7_page_navigations() {
    let page = |u: &str| navigation_verdict(&Url::parse(u).unwrap(), NavigationBy::Page);
    assert!(page("https://example.com/").is_allowed());
    assert!(page("about:srcdoc").is_allowed());
    let cancelled = page("file:///etc/passwd");
    let refusal = cancelled.refusal().unwrap();
    assert_eq!(refusal.code(), RefusalCode::PageSchemeCancelled);
    assert!(refusal.sentence().contains("“file:”"));
    let agent = navigation_verdict(&Url::parse("about:srcdoc").unwrap(), NavigationBy::Agent);
    assert_eq!(
        agent.refusal().unwrap().code(),
        RefusalCode::UnsupportedScheme
    );
}

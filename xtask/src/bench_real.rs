//! `cargo xtask bench real`: Conch and Playwright MCP side by side on real web
//! applications that nobody on this project wrote, installed from the registries (PyPI
//! into venvs under `target/bench/`, npm into `target/bench/node`), each pinned.
//!
//! One command does everything, and again without reinstalling: installs what is missing,
//! lays each app's data anew (`xtask/bench/real/prepare.py`), starts the apps on free
//! loopback ports, waits until they answer, plays every journey with a fresh server of
//! each kind on the same browser, and stops the apps. A journey is written once, as an
//! agent would do it, and counts as completed only when its proof (`Step::Expect`) shows
//! on the page. A sign-in journey types the account's password with
//! [`Step::Password`]: Conch's server starts with the password saved for the app's site in
//! its home, and its agent types a placeholder; no Conch log may hold the password.
//! Results print as a table and go to `target/bench/real.json`; every call
//! and answer of every journey goes to `target/bench/real/log/`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench_agent::{Agent, Cost, Server, Step, ms, t, tempdir};
use crate::bench_mcp::PLAYWRIGHT_MCP;
use crate::mcp::{McpClient, end_group};
use crate::pages::Pages;
use crate::person::{Asked, Door, Person};
use crate::{bench, browser, cmd};

/// Runs of each journey per server, alternating; figures are medians
/// (`CONCH_BENCH_REAL_RUNS` changes it).
const RUNS: usize = 3;

/// The conversation `conch-gateway mcp` drives over stdio.
const CONVERSATION: &str = "mcp-stdio";

/// How an app is installed: into a venv of its own (apps pin conflicting libraries), or
/// into the bench's npm folder.
enum Install {
    Pip(&'static [&'static str]),
    Npm(&'static str),
}

/// A real application, pinned.
struct App {
    name: &'static str,
    version: &'static str,
    install: Install,
}

/// The Django admin's superuser and password. The password is saved in Conch's vault
/// before a sign-in journey; Playwright MCP's agent types it. It doubles as the canary
/// that must never show in Conch's calls or answers.
const ADMIN_USER: &str = "admin";
const ADMIN_PASSWORD: &str = "Quill-Harbour-4417-lantern";

const APPS: [App; 10] = [
    App {
        name: "datasette",
        version: "0.65.5",
        install: Install::Pip(&["datasette==0.65.5"]),
    },
    App {
        name: "tiddlywiki",
        version: "5.4.1",
        install: Install::Npm("tiddlywiki@5.4.1"),
    },
    App {
        // Trac 1.6 reads `multipart`'s 1.x interface.
        name: "trac",
        version: "1.6",
        install: Install::Pip(&["Trac==1.6", "multipart==1.3.1"]),
    },
    App {
        name: "mkdocs-material",
        version: "9.8.2",
        install: Install::Pip(&["mkdocs-material==9.8.2"]),
    },
    App {
        name: "streamlit",
        version: "1.67.0",
        install: Install::Pip(&["streamlit==1.67.0"]),
    },
    App {
        // A project made by `django-admin startproject`; its admin signs in with a form.
        name: "django-admin",
        version: "5.2.19",
        install: Install::Pip(&["Django==5.2.19"]),
    },
    App {
        // A dashboard of ours (xtask/bench/real/dash_mantine.py) on React component
        // libraries: Mantine's Select and DatePickerInput, and AG Grid.
        name: "dash-mantine",
        version: "4.4.1",
        install: Install::Pip(&[
            "dash==4.4.1",
            "dash-mantine-components==2.8.1",
            "dash-ag-grid==35.3.0",
        ]),
    },
    App {
        // An app of ours (xtask/bench/real/nicegui_app.py) on Vue 3 and Quasar.
        name: "nicegui",
        version: "3.18.0",
        install: Install::Pip(&["nicegui==3.18.0"]),
    },
    App {
        // An SVG flow editor: nodes dragged from a palette, edited in a tray, deployed.
        name: "node-red",
        version: "4.1.8",
        install: Install::Npm("node-red@4.1.8"),
    },
    App {
        // Jupyter Notebook 7: CodeMirror cells run on a Python kernel.
        name: "jupyter",
        version: "7.6.5",
        install: Install::Pip(&["notebook==7.6.5"]),
    },
];

/// One journey on one app.
struct Journey {
    app: &'static str,
    name: &'static str,
    steps: Vec<Step>,
    /// It changes the app's data: each server gets the app laid anew.
    writes: bool,
    /// Its irreversible acts (deleting, sending, paying, publishing), each by words its
    /// question must show (one of `|`-separated alternatives, case aside): the person is
    /// asked about each once and about nothing else (issue 30).
    irreversible: Vec<&'static str>,
}

fn j(app: &'static str, name: &'static str, steps: Vec<Step>) -> Journey {
    Journey {
        app,
        name,
        steps,
        writes: false,
        irreversible: Vec::new(),
    }
}

impl Journey {
    /// The journey's irreversible acts, each by the words its question must show.
    fn asks(self, acts: &[&'static str]) -> Journey {
        Journey {
            irreversible: acts.to_vec(),
            ..self
        }
    }
}

/// A journey that changes the app's data.
fn w(app: &'static str, name: &'static str, steps: Vec<Step>) -> Journey {
    Journey {
        writes: true,
        ..j(app, name, steps)
    }
}

fn journeys() -> Vec<Journey> {
    let mut all = older_journeys();
    all.extend(component_library_journeys());
    all.extend(node_red_journeys());
    all.extend(jupyter_journeys());
    all
}

/// The React component-library dashboard (Dash with Mantine and AG Grid) and the Vue one
/// (NiceGUI on Quasar): the widgets a person meets in such apps, each act proved by the
/// sentence the app writes when it sees it.
fn component_library_journeys() -> Vec<Journey> {
    use Step::{Click, Expect, Open, Type, Wait};
    vec![
        j(
            "dash-mantine",
            "searchable select: type, then choose",
            vec![
                Open("/"),
                // Dash draws its layout after the page has loaded.
                Wait("Destination city"),
                Type(t("combobox|textbox", "Destination city"), "Lis"),
                Click(t("option", "Lisbon")),
                Expect("Selected city: Lisbon"),
            ],
        ),
        j(
            "dash-mantine",
            "pick a date in a date picker",
            vec![
                Open("/"),
                // Dash draws its layout after the page has loaded.
                Wait("Destination city"),
                Click(t("button", "Departure date|Pick a date")),
                Click(t("button|gridcell", "15 May 2026")),
                Expect("Departure: 2026-05-15"),
            ],
        ),
        j(
            "dash-mantine",
            "filter and sort a data grid, read the first row",
            vec![
                Open("/"),
                // AG Grid draws its rows after the page has loaded.
                Wait("Coimbra"),
                Type(t("textbox", "Country Filter Input"), "Portugal"),
                Click(t("columnheader", "Population")),
                Expect("First row: Faro, Portugal, 61000"),
            ],
        ),
        j(
            "nicegui",
            "open an expansion and flip the toggle inside",
            vec![
                Open("/"),
                Click(t("button", "Advanced settings|Expand*")),
                Click(t("switch|checkbox", "Night mode")),
                Expect("Night mode is on"),
            ],
        ),
        j(
            "nicegui",
            "open a menu and choose an item",
            vec![
                Open("/"),
                Click(t("button", "Actions")),
                Click(t("menuitem|listitem|generic", "Archive")),
                Expect("Last action: Archive"),
            ],
        ),
        j(
            "nicegui",
            "open a dialog and confirm",
            vec![
                Open("/"),
                Click(t("button", "Reset settings")),
                Click(t("button", "Reset")),
                Expect("Settings were reset to their defaults"),
            ],
        ),
        w(
            "nicegui",
            "delete a report through its dialog",
            vec![
                Open("/"),
                Click(t("button", "Delete report")),
                // The dialog's Delete finishes the act the person said Yes to: one question.
                Click(t("button", "Delete")),
                Expect("The report was deleted"),
            ],
        )
        .asks(&["Delete"]),
        w(
            "nicegui",
            "publish behind a plain Yes",
            vec![
                Open("/"),
                Click(t("button", "Share timetable")),
                // Harmless words on the button that publishes: its dialog's sentence asks.
                Click(t("button", "Yes")),
                Expect("Timetable: live in every harbour"),
            ],
        )
        .asks(&["Yes|publish"]),
        j(
            "nicegui",
            "filtering select: type, then choose",
            vec![
                Open("/"),
                Type(t("combobox|textbox", "Home harbour"), "Lis"),
                // Quasar filters the options after a pause in the typing.
                Wait("Lisbon"),
                Click(t("option", "Lisbon")),
                Expect("Home harbour: Lisbon"),
            ],
        ),
    ]
}

/// Node-RED's flow editor: a palette, an SVG workspace, an edit tray, Deploy.
fn node_red_journeys() -> Vec<Journey> {
    use Step::{Click, DoubleClick, Drag, Expect, Open, Type, Wait};
    vec![
        j(
            "node-red",
            "read the nodes of a flow",
            vec![Open("/"), Wait("Morning tide"), Expect("Harbour log")],
        ),
        j(
            "node-red",
            "open another flow tab",
            vec![
                Open("/"),
                Wait("Morning tide"),
                Click(t("link|tab", "Lighthouse flow")),
                Expect("Light the lamp"),
            ],
        ),
        w(
            "node-red",
            "rename a node and deploy",
            vec![
                Open("/"),
                Wait("Morning tide"),
                // The node's label is SVG text; the agent aims at what holds it.
                DoubleClick(t("text", "Morning tide")),
                Type(t("textbox", "Name"), "Evening tide"),
                Click(t("button", "Done")),
                Click(t("link|button", "Deploy")),
                Expect("Successfully deployed"),
                Expect("Evening tide"),
            ],
        ),
        w(
            "node-red",
            "drag a node from the palette and deploy",
            vec![
                Open("/"),
                Wait("Morning tide"),
                // From the palette onto the workspace, the SVG that holds the flow.
                Drag(t("generic", "inject"), t("img|generic", "")),
                // A new inject node is labelled by what it sends.
                Expect("timestamp"),
                Click(t("link|button", "Deploy")),
                Expect("Successfully deployed"),
            ],
        ),
    ]
}

/// Jupyter Notebook: a notebook of CodeMirror cells, a kernel, the file browser.
fn jupyter_journeys() -> Vec<Journey> {
    use Step::{Click, DoubleClick, Expect, NewTabClick, Open, Type, Wait};
    vec![
        w(
            "jupyter",
            "type code into a cell, run it, read the output",
            vec![
                Open("/notebooks/harbour.ipynb"),
                Wait("Readings & notes"),
                Type(t("textbox", ""), "print('answer:', 6 * 7)"),
                Click(t("button|generic", "Run this cell and advance*")),
                Expect("answer: 42"),
            ],
        ),
        w(
            "jupyter",
            "edit a markdown cell",
            vec![
                Open("/notebooks/harbour.ipynb"),
                Wait("Readings & notes"),
                DoubleClick(t("heading|text", "Harbour & tide log")),
                Type(t("textbox", "# Harbour*|"), "## Tides &amp; winds"),
                Click(t("button|generic", "Run this cell and advance*")),
                // Only the rendered cell reads so: its source holds `&amp;`.
                Expect("Tides & winds"),
            ],
        ),
        j(
            "jupyter",
            "open a folder and a file in the file browser",
            vec![
                Open("/tree"),
                Wait("harbour.ipynb"),
                Click(t("button", "notes")),
                NewTabClick(t("button", "tides.txt")),
                Expect("Gull Point"),
            ],
        ),
    ]
}

fn older_journeys() -> Vec<Journey> {
    use Step::{
        Back, Click, DialogClick, Expect, Find, Form, Gone, NewTabClick, Open, Password, ReadPart,
        Select, Submit, Type, Wait,
    };
    let text = |name| t("textbox", name);
    let button = |name| t("button", name);
    let link = |name| t("link", name);
    // The Django admin's sign-in form, from the page `open` (which sends there first).
    let signed_in = |open: &'static str, then: Vec<Step>| {
        let mut steps = vec![
            Open(open),
            Type(text("Username:"), ADMIN_USER),
            Password(text("Password:"), ADMIN_PASSWORD),
            Click(button("Log in")),
        ];
        steps.extend(then);
        steps
    };
    vec![
        j(
            "datasette",
            "search a table",
            vec![
                Open("/library/books"),
                Submit(t("searchbox", "Search:"), "nightingale"),
                Expect("The Clockwork Nightingale"),
            ],
        ),
        j(
            "datasette",
            "filter by a facet",
            vec![
                Open("/library/books"),
                Click(link("genre")),
                Click(link("Poetry")),
                Expect("where genre = "),
            ],
        ),
        j(
            "datasette",
            "sort by a column",
            vec![
                Open("/library/books"),
                Click(t("link|columnheader", "year")),
                Expect("sorted by year"),
            ],
        ),
        j(
            "datasette",
            "long table, find a row and open it",
            vec![
                Open("/library/books?_size=max"),
                Find("Clockwork Nightingale"),
                Click(t("link|cell", "241")),
                Expect("books: 241"),
            ],
        ),
        j(
            "tiddlywiki",
            "search and open a tiddler",
            vec![
                Open("/"),
                Type(t("searchbox", "|Search"), "glacier"),
                Click(link("Glacier Notes")),
                Expect("Notes about the glacier"),
            ],
        ),
        j(
            "tiddlywiki",
            "sidebar tabs",
            vec![
                Open("/"),
                Click(t("tab", "More")),
                Click(t("tab", "All")),
                Expect("Willow Notes"),
            ],
        ),
        w(
            "tiddlywiki",
            "write a new tiddler (editor in an iframe)",
            vec![
                Open("/"),
                Click(button("new tiddler")),
                Type(text("New Tiddler*"), "Bench Draft"),
                Type(
                    text("Type the text for this tiddler"),
                    "Written by the bench agent.",
                ),
                Click(button("Confirm changes to this tiddler")),
                Expect("Written by the bench agent."),
            ],
        ),
        w(
            "tiddlywiki",
            "delete a tiddler, confirming",
            vec![
                Open("/#Willow%20Notes"),
                Click(button("Edit this tiddler|edit")),
                // The button and the page's confirm that follows are one act: one question.
                DialogClick(button("Delete this tiddler|delete")),
                Gone("Notes about the willow"),
            ],
        )
        .asks(&["Delete this tiddler|delete"]),
        w(
            "tiddlywiki",
            "discard a draft, confirming",
            vec![
                Open("/"),
                Click(button("new tiddler")),
                Type(text("New Tiddler*"), "Scratch page"),
                DialogClick(button("Discard changes to this tiddler")),
                Gone("Draft of"),
            ],
        ),
        w(
            "trac",
            "file a ticket",
            vec![
                Open("/newticket"),
                Form(vec![
                    (text("Summary:"), "Lighthouse lamp stays dark"),
                    (
                        text("Description: You may use WikiFormatting here."),
                        "The lamp does not light after the storm.",
                    ),
                ]),
                Select(t("combobox", "Priority:"), "critical"),
                Click(button("Create ticket")),
                Expect("Reported by:"),
            ],
        ),
        j(
            "trac",
            "search the tracker",
            vec![
                Open("/"),
                Submit(text("Search:"), "harbour lights"),
                Expect("Harbour lights flicker at dusk"),
            ],
        ),
        j(
            "trac",
            "open a ticket from the report",
            vec![
                Open("/report/1"),
                Find("Harbour lights"),
                Click(t("link|cell", "Harbour lights flicker at dusk")),
                Expect("The harbour lights flicker every evening."),
            ],
        ),
        w(
            "trac",
            "write a wiki page",
            vec![
                Open("/wiki/BenchNotes"),
                Click(button("Create this page")),
                Type(text(""), "Tide tables live here."),
                Click(button("Submit changes")),
                Expect("Tide tables live here."),
            ],
        ),
        j(
            "trac",
            "timeline, then back",
            vec![
                Open("/"),
                Click(link("Timeline")),
                Back,
                Expect("Welcome to Trac"),
            ],
        ),
        j(
            "mkdocs-material",
            "search the docs",
            vec![
                Open("/"),
                Submit(text("Search"), "zephyr"),
                Expect("defaults to 4096 gusts"),
            ],
        ),
        j(
            "mkdocs-material",
            "navigation tabs",
            vec![Open("/"), Click(link("Guide")), Expect("lantern-tools")],
        ),
        j(
            "mkdocs-material",
            "content tabs",
            vec![
                Open("/guide/install/"),
                Click(link("Fedora")),
                Expect("lantern-tools-fedora"),
            ],
        ),
        j(
            "mkdocs-material",
            "open a collapsed note",
            vec![
                Open("/guide/install/"),
                Click(t("generic|button", "Troubleshooting")),
                Expect("/var/cache/lantern-glow"),
            ],
        ),
        j(
            "mkdocs-material",
            "a tab inside a same-origin iframe",
            vec![
                Open("/guide/embedded/"),
                Click(link("Fedora")),
                Expect("lantern-tools-fedora"),
            ],
        ),
        j(
            "mkdocs-material",
            "long page in parts",
            vec![
                Open("/guide/reference/"),
                ReadPart(2),
                Find("zephyr limit"),
                Expect("4096 gusts"),
            ],
        ),
        j(
            "mkdocs-material",
            "a link that opens a new tab",
            vec![
                Open("/"),
                NewTabClick(link("Open the framed page in a new tab")),
                Expect("The installing page, framed"),
            ],
        ),
        j(
            "streamlit",
            "switch demo pages",
            vec![
                Open("/"),
                Wait("Welcome to Streamlit"),
                Click(t("link|paragraph", "Plotting demo")),
                Expect("This demo illustrates a combination of plotting and animation"),
            ],
        ),
        j(
            "streamlit",
            "an app's main menu",
            vec![
                Open("/"),
                Wait("Welcome to Streamlit"),
                Click(button("Main menu")),
                Expect("Record screen"),
            ],
        ),
        j(
            "django-admin",
            "sign in with the saved password",
            signed_in("/admin/", vec![Expect("Site administration")]),
        ),
        w(
            "django-admin",
            "sign in, add a group and see it listed",
            signed_in(
                "/admin/",
                vec![
                    Click(t("link|rowheader", "Groups")),
                    Click(link("Add group")),
                    Type(text("Name:"), "Lighthouse keepers"),
                    Click(button("Save")),
                    Expect("was added successfully"),
                    Expect("Lighthouse keepers"),
                ],
            ),
        ),
        j(
            "django-admin",
            "sign in from a deep link, search the users",
            signed_in(
                "/admin/auth/user/",
                vec![Submit(text("Search"), "lind"), Expect("1 result")],
            ),
        ),
        w(
            "django-admin",
            "sign in, delete a group through its confirmation page",
            signed_in(
                "/admin/auth/group/",
                vec![
                    Click(t("link|rowheader", "Editors")),
                    // A link to a page that asks: navigation, not the act.
                    Click(link("Delete")),
                    Click(button("Yes, I’m sure")),
                    Expect("was deleted successfully"),
                ],
            ),
        )
        .asks(&["Yes, I’m sure"]),
        j(
            "django-admin",
            "sign in, filter the users by staff status",
            signed_in(
                "/admin/auth/user/",
                vec![
                    Find("By staff status"),
                    Click(link("Yes")),
                    Expect("6 results"),
                ],
            ),
        ),
    ]
}

/// A running app: its process group and where it answers.
struct Running {
    name: &'static str,
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        end_group(&mut self.child);
    }
}

fn venv_dir(app: &App) -> PathBuf {
    bench::bench_dir().join(format!("venv-{}", app.name))
}

/// Installs what is missing: a venv with the pinned packages, or the npm package.
fn install(app: &App) -> Result<(), String> {
    match app.install {
        Install::Npm(spec) => bench::install_node_packages(&[spec]).map(|_| ()),
        Install::Pip(specs) => cmd::pip_venv(&venv_dir(app), specs),
    }
}

fn data_dir(app: &App) -> PathBuf {
    bench::bench_dir().join("real").join(app.name)
}

fn tiddlywiki_js() -> PathBuf {
    bench::bench_dir().join("node/node_modules/tiddlywiki/tiddlywiki.js")
}

/// Lays the app's data anew, so every run starts from the same state.
fn prepare(app: &App) -> Result<(), String> {
    let dir = data_dir(app);
    // An app's last children (a notebook kernel) may still write there as they stop.
    for tries_left in (0..20).rev() {
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) if tries_left == 0 => {
                return Err(format!("could not remove {}: {e}", dir.display()));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
            Ok(()) => break,
        }
    }
    let python = match app.install {
        Install::Pip(_) => venv_dir(app).join("bin/python"),
        Install::Npm(_) => PathBuf::from("python3"),
    };
    let kind = app.name.trim_end_matches("-material");
    let mut command = Command::new(python);
    command
        .arg(cmd::root().join("xtask/bench/real/prepare.py"))
        .arg(kind)
        .arg(&dir)
        .arg(tiddlywiki_js())
        .env("NO_MKDOCS_2_WARNING", "1")
        .env("CONCH_BENCH_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .stdout(Stdio::null());
    cmd::run(&mut command)
}

/// The command that serves the app on 127.0.0.1:`port`.
fn serve_command(app: &App, port: u16) -> Command {
    let (dir, bin) = (data_dir(app), venv_dir(app).join("bin"));
    let port_text = port.to_string();
    match app.name {
        "datasette" => {
            let mut c = Command::new(bin.join("datasette"));
            c.arg("serve")
                .arg(dir.join("library.db"))
                .args(["-h", "127.0.0.1", "-p", &port_text]);
            c
        }
        "tiddlywiki" => {
            let mut c = Command::new("node");
            c.arg(tiddlywiki_js())
                .arg(&dir)
                .arg("--listen")
                .arg("host=127.0.0.1")
                .arg(format!("port={port}"));
            c
        }
        "trac" => {
            let mut c = Command::new(bin.join("tracd"));
            c.args(["-s", "--hostname", "127.0.0.1", "--port", &port_text])
                .arg(dir.join("env"));
            c
        }
        "mkdocs-material" => {
            let mut c = Command::new(bin.join("mkdocs"));
            c.args(["serve", "--no-livereload", "-a"])
                .arg(format!("127.0.0.1:{port}"))
                .arg("-f")
                .arg(dir.join("mkdocs.yml"))
                .env("NO_MKDOCS_2_WARNING", "1");
            c
        }
        "node-red" => node_red_command(&dir, port),
        "jupyter" => jupyter_command(&bin, &dir, port),
        "django-admin" => {
            let mut c = Command::new(bin.join("python"));
            c.arg(dir.join("manage.py"))
                .args(["runserver", "--noreload"])
                .arg(format!("127.0.0.1:{port}"));
            c
        }
        "dash-mantine" | "nicegui" => component_library_command(app, port),
        _ => {
            let mut c = Command::new(bin.join("streamlit"));
            c.args(["hello", "--server.address", "127.0.0.1", "--server.port"])
                .arg(&port_text)
                .args([
                    "--server.headless",
                    "true",
                    "--browser.gatherUsageStats",
                    "false",
                ]);
            c
        }
    }
}

/// Our app file of a component-library app, run by its venv's Python on the port.
fn component_library_command(app: &App, port: u16) -> Command {
    let file = match app.name {
        "dash-mantine" => "dash_mantine.py",
        _ => "nicegui_app.py",
    };
    let mut c = Command::new(venv_dir(app).join("bin/python"));
    c.arg(cmd::root().join("xtask/bench/real").join(file))
        .arg(port.to_string());
    c
}

/// Node-RED with the userDir `prepare.py` laid (its settings keep it on 127.0.0.1, with
/// no telemetry, tours or palette catalogue to fetch).
fn node_red_command(dir: &Path, port: u16) -> Command {
    let mut c = Command::new("node");
    c.arg(bench::bench_dir().join("node/node_modules/node-red/red.js"))
        .arg("--userDir")
        .arg(dir)
        .arg("--settings")
        .arg(dir.join("settings.js"))
        .args(["--port", &port.to_string()])
        .env("NODE_RED_DISABLE_TELEMETRY", "1");
    c
}

/// Jupyter Notebook on 127.0.0.1 with no token or password, no browser, and nothing
/// fetched from outside: its config, which `prepare.py` writes into `dir/.jupyter`, turns
/// off the news, the update checks and the extension listings.
fn jupyter_command(bin: &Path, dir: &Path, port: u16) -> Command {
    let mut c = Command::new(bin.join("jupyter-notebook"));
    c.args([
        "--no-browser",
        "--ip",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ])
    .arg(format!("--ServerApp.root_dir={}", dir.display()))
    .args([
        "--port-retries=0",
        // The bench may run as root, as on CI.
        "--allow-root",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
    ])
    .env("JUPYTER_CONFIG_DIR", dir.join(".jupyter"))
    .env("JUPYTER_DATA_DIR", dir.join(".jupyter/data"))
    .env("JUPYTER_RUNTIME_DIR", dir.join(".jupyter/runtime"))
    .env("IPYTHONDIR", dir.join(".ipython"));
    c
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// Whether `GET /` on the port gives an HTTP answer.
fn answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept-Language: en-US\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

/// Starts the app on a free port and waits until it answers.
fn start(app: &App) -> Result<Running, String> {
    let port = free_port()?;
    let log = std::fs::File::create(bench::bench_dir().join(format!("real/{}.log", app.name)))
        .map_err(|e| format!("could not create the log of {}: {e}", app.name))?;
    let mut command = serve_command(app, port);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .current_dir(data_dir(app))
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", app.name))?;
    let mut running = Running {
        name: app.name,
        child,
        port,
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !answers(port) {
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(format!(
                "{} exited ({status}) before it answered; see target/bench/real/{}.log",
                app.name, app.name
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{} did not answer on port {port} in 90 s",
                app.name
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "xtask: {} {} answers on 127.0.0.1:{port}",
        app.name, app.version
    );
    Ok(running)
}

fn origin_of(running: &[Running], app: &str) -> Result<String, String> {
    running
        .iter()
        .find(|r| r.name == app)
        .map(|r| format!("http://127.0.0.1:{}", r.port))
        .ok_or_else(|| format!("{app} is not running"))
}

/// Stops the app, lays its data anew and starts it again.
fn relay(running: &mut Vec<Running>, name: &str) -> Result<(), String> {
    let app = APPS
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| format!("no app named {name}"))?;
    running.retain(|r| r.name != name);
    prepare(app)?;
    running.push(start(app)?);
    Ok(())
}

/// One server's runs of a journey as one: completed only when every run completed (the
/// first failure says why), and the median of each figure.
fn summary(runs: &[Outcome]) -> Outcome {
    let median =
        |f: &dyn Fn(&Outcome) -> f64| bench::median(&mut runs.iter().map(f).collect::<Vec<_>>());
    let cost = Cost {
        calls: median(&|o| f64::from(o.cost.calls)) as u32,
        chars: median(&|o| o.cost.chars as f64) as usize,
        wall: Duration::from_secs_f64(median(&|o| o.cost.wall.as_secs_f64())),
    };
    let failure = runs.iter().find_map(|o| o.failure.clone());
    // Every run counts: the worst run's false asks and misses stand for the journey, and
    // it keeps its cards for the report.
    let worst = runs
        .iter()
        .filter(|o| o.asked.is_some())
        .max_by_key(|o| o.judged.0 + o.judged.1);
    let asked = worst.and_then(|o| o.asked.clone());
    let judged = worst.map_or((0, 0), |o| o.judged);
    Outcome {
        completed: failure.is_none(),
        failure,
        cost,
        asked,
        judged,
    }
}

/// What one server did on one journey.
#[derive(Debug, Default)]
struct Outcome {
    completed: bool,
    /// Why it did not complete: the step and the server's own words.
    failure: Option<String>,
    cost: Cost,
    /// The questions the person was asked (Conch only).
    asked: Option<Vec<Asked>>,
    /// False asks and misses: cards no irreversible act called for, and irreversible acts
    /// no card was about.
    judged: (usize, usize),
}

/// Where a journey runs: the app's origin, the ports Conch may reach, the browser, and
/// the fixture pages a server warms up on.
struct Ground<'a> {
    origin: String,
    ports: Vec<u16>,
    browser: &'a Path,
    node_dir: &'a Path,
    pages: &'a Pages,
    /// Which run this is, for the transcript's name.
    run: usize,
}

/// Plays a journey with a fresh server. The server first opens a fixture page (its cold
/// start, not counted), so the journey's time is the agent's, not the browser's launch.
fn play(server: Server, journey: &Journey, ground: &Ground<'_>) -> Result<Outcome, String> {
    let home = tempdir(server.label())?;
    let password = journey.steps.iter().find_map(|step| match step {
        Step::Password(_, password) => Some(*password),
        _ => None,
    });
    if let (Some(password), Server::Conch) = (password, server) {
        save_password(&home, &ground.origin, password)?;
    }
    // `CONCH_BENCH_REAL_PERSON=0` leaves the person out (Conch answers No at once), to
    // measure what the live view the person watches costs Conch's time.
    let with_person = std::env::var("CONCH_BENCH_REAL_PERSON").map_or(true, |v| v != "0");
    let command = server.command(
        ground.browser,
        &ground.ports,
        &home,
        ground.node_dir,
        with_person,
    );
    let mut agent = Agent::new(server, McpClient::start(command)?);
    agent.step(
        &Step::Open("basic.html"),
        &|page| ground.pages.url(page),
        &mut Cost::default(),
    )?;
    agent.transcript.clear();
    // The person at the panel answers every question Yes; what was asked is counted.
    let person = match server {
        Server::Conch if with_person => {
            let door = Door::sign_in_home(&crate::bench::gateway_bin(), &home)?;
            Some(Person::answer_yes(&door, CONVERSATION)?)
        }
        _ => None,
    };
    let url = |path: &str| format!("{}{path}", ground.origin);
    let mut outcome = Outcome::default();
    for (i, step) in journey.steps.iter().enumerate() {
        if let Err(e) = agent.step(step, &url, &mut outcome.cost) {
            outcome.failure = Some(format!("step {} ({step:?}): {e}", i + 1));
            break;
        }
    }
    outcome.completed = outcome.failure.is_none();
    if let Some(person) = person {
        let asked = person.asked();
        outcome.judged = judge(&journey.irreversible, &asked);
        outcome.asked = Some(asked);
    }
    for asked in outcome.asked.iter().flatten() {
        agent
            .transcript
            .push_str(&format!("person asked ({}): {}\n", asked.kind, asked.words));
    }
    let log = bench::bench_dir().join("real/log").join(format!(
        "{}-{}-{}-{}.txt",
        journey.app,
        journey.name.replace([' ', ',', '(', ')', '/', '\''], "_"),
        server.label(),
        ground.run
    ));
    std::fs::write(&log, &agent.transcript)
        .map_err(|e| format!("could not write {}: {e}", log.display()))?;
    drop(agent);
    let _ = std::fs::remove_dir_all(&home);
    if let Some(password) = password {
        check_log(server, &log, password, &mut outcome)?;
    }
    Ok(outcome)
}

/// False asks and misses of one run: each card is matched to the first irreversible act
/// not yet matched whose words it shows; cards left over are false asks, acts left over
/// are misses.
fn judge(acts: &[&str], asked: &[Asked]) -> (usize, usize) {
    let mut open: Vec<&str> = acts.to_vec();
    let mut false_asks = 0;
    for card in asked {
        let words = card.words.to_lowercase();
        let hit = open.iter().position(|act| {
            act.split('|')
                .any(|alt| words.contains(&alt.to_lowercase()))
        });
        match hit {
            Some(i) => {
                open.remove(i);
            }
            None => false_asks += 1,
        }
    }
    (false_asks, open.len())
}

/// Saves the app's password in the vault of the Conch home, for the app's site (its
/// exact `127.0.0.1:port`), as a person would with `conch-gateway passwords add`.
fn save_password(home: &Path, origin: &str, password: &str) -> Result<(), String> {
    let site = origin.trim_start_matches("http://");
    let mut child = Command::new(crate::bench::gateway_bin())
        .args(["passwords", "add", site, "--username", ADMIN_USER, "--home"])
        .arg(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start conch-gateway passwords add: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(format!("{password}\n").as_bytes())
            .map_err(|e| format!("could not give conch-gateway the password: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("conch-gateway passwords add: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "conch-gateway passwords add {site} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(())
}

/// The password must never show in Conch's logged calls and answers (the model never
/// sees it), and must show in Playwright MCP's, whose agent typed it: that proves the
/// check reads the log a password would be in. A Conch log that holds it fails the
/// journey; a Playwright log that does not stops the bench, as the check is blind.
fn check_log(
    server: Server,
    log: &Path,
    password: &str,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let text = std::fs::read_to_string(log)
        .map_err(|e| format!("could not read {}: {e}", log.display()))?;
    let shown = text.contains(password);
    match server {
        Server::Conch if shown => {
            outcome.completed = false;
            outcome.failure = Some(format!(
                "the saved password shows in Conch's calls or answers ({})",
                log.display()
            ));
        }
        Server::Playwright if !shown && outcome.completed => {
            return Err(format!(
                "the password Playwright MCP's agent typed is not in {}: the check that \
                 Conch's logs never hold it cannot see a password",
                log.display()
            ));
        }
        _ => {}
    }
    Ok(())
}

/// Runs the bench; `CONCH_BENCH_REAL_ONLY` (words of an app or journey name, `|` between
/// alternatives) picks some.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    let node_dir = bench::install_node_packages(&[&format!("@playwright/mcp@{PLAYWRIGHT_MCP}")])?;
    let only = std::env::var("CONCH_BENCH_REAL_ONLY").unwrap_or_default();
    let chosen: Vec<Journey> = journeys()
        .into_iter()
        .filter(|j| {
            only.is_empty()
                || only
                    .split('|')
                    .any(|word| j.app.contains(word) || j.name.contains(word))
        })
        .collect();
    for app in APPS
        .iter()
        .filter(|a| chosen.iter().any(|j| j.app == a.name))
    {
        install(app)?;
    }
    crate::bench::release_gateway()?;
    let log_dir = bench::bench_dir().join("real/log");
    let pages = Pages::start()?;
    let mut running = Vec::new();
    for app in APPS
        .iter()
        .filter(|a| chosen.iter().any(|j| j.app == a.name))
    {
        prepare(app)?;
        running.push(start(app)?);
    }
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| format!("could not create {}: {e}", log_dir.display()))?;
    let runs: usize = std::env::var("CONCH_BENCH_REAL_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(RUNS);
    let mut rows = Vec::new();
    for journey in &chosen {
        let mut tries: [Vec<Outcome>; 2] = [Vec::new(), Vec::new()];
        for run in 1..=runs {
            // Which server goes first alternates, so neither always meets a cold app.
            let order = if run % 2 == 1 {
                [(0, Server::Conch), (1, Server::Playwright)]
            } else {
                [(1, Server::Playwright), (0, Server::Conch)]
            };
            for (side, server) in order {
                if journey.writes {
                    relay(&mut running, journey.app)?;
                }
                let mut ports: Vec<u16> = running.iter().map(|r| r.port).collect();
                ports.push(pages.port);
                let ground = Ground {
                    origin: origin_of(&running, journey.app)?,
                    ports,
                    browser: &browser,
                    node_dir: &node_dir,
                    pages: &pages,
                    run,
                };
                eprintln!(
                    "xtask: bench real, run {run} of {runs}, {}: {}, {}",
                    journey.app,
                    journey.name,
                    server.label()
                );
                tries[side].push(play(server, journey, &ground)?);
            }
        }
        let [conch, peer] = tries;
        rows.push((journey, vec![summary(&conch), summary(&peer)]));
    }
    drop(running);
    report(&rows, &browser, runs)
}

fn report(rows: &[(&Journey, Vec<Outcome>)], browser: &Path, runs: usize) -> Result<(), String> {
    let yes = |o: &Outcome| if o.completed { "yes" } else { "NO" };
    println!();
    println!(
        "Real apps: Conch vs Playwright MCP {PLAYWRIGHT_MCP} on {}",
        browser.display()
    );
    for app in &APPS {
        println!("  {} {}", app.name, app.version);
    }
    println!(
        "{:<16} {:<44} {:>4} {:>4} | {:>7} {:>7} | {:>7} {:>7} | {:>5} {:>5} | {:>5} {:>4}",
        "app",
        "journey",
        "c ok",
        "p ok",
        "c ms",
        "p ms",
        "c chars",
        "p chars",
        "c n",
        "p n",
        "c q",
        "want"
    );
    let (mut false_asks, mut misses) = (0, 0);
    let mut json_rows = Vec::new();
    let (mut both, mut sums) = (0, [Cost::default(), Cost::default()]);
    let mut failures = Vec::new();
    for (journey, pair) in rows {
        let (c, p) = (&pair[0], &pair[1]);
        let questions = c.asked.as_ref().map_or(0, Vec::len);
        println!(
            "{:<16} {:<44} {:>4} {:>4} | {:>7.0} {:>7.0} | {:>7} {:>7} | {:>5} {:>5} | {:>5} {:>4}",
            journey.app,
            journey.name,
            yes(c),
            yes(p),
            ms(c.cost.wall),
            ms(p.cost.wall),
            c.cost.chars,
            p.cost.chars,
            c.cost.calls,
            p.cost.calls,
            questions,
            journey.irreversible.len()
        );
        // A question no irreversible act called for is a false ask; an irreversible act
        // asked about in no run is a miss. Only journeys Conch completed count: a journey
        // that stopped early never reached its later acts.
        if c.completed {
            false_asks += c.judged.0;
            misses += c.judged.1;
        }
        if c.completed && c.judged != (0, 0) {
            let words: Vec<String> = c
                .asked
                .iter()
                .flatten()
                .map(|a| format!("{} \"{}\"", a.kind, a.words))
                .collect();
            failures.push(format!(
                "questions, {} / {}: {} false asks, {} misses; asked {} for the acts {:?}",
                journey.app,
                journey.name,
                c.judged.0,
                c.judged.1,
                words.join(", "),
                journey.irreversible
            ));
        }
        if c.completed && p.completed {
            both += 1;
            sums[0].absorb(c.cost);
            sums[1].absorb(p.cost);
        }
        for (server, o) in [("conch", c), ("playwright", p)] {
            if let Some(why) = &o.failure {
                failures.push(format!(
                    "{server}, {} / {}: {why}",
                    journey.app, journey.name
                ));
            }
        }
        let side = |o: &Outcome| {
            json!({
                "completed": o.completed,
                "failure": o.failure,
                "wall_ms": ms(o.cost.wall),
                "chars": o.cost.chars,
                "calls": o.cost.calls,
            })
        };
        let asked: Vec<Value> = c
            .asked
            .iter()
            .flatten()
            .map(|a| json!({ "kind": a.kind, "words": a.words }))
            .collect();
        json_rows.push(json!({
            "app": journey.app,
            "journey": journey.name,
            "irreversible": journey.irreversible,
            "questions": { "false_asks": c.judged.0, "misses": c.judged.1, "asked": asked },
            "conch": side(c),
            "playwright": side(p),
        }));
    }
    let count = |i: usize| rows.iter().filter(|(_, pair)| pair[i].completed).count();
    let missed = rows
        .iter()
        .filter(|(_, pair)| pair[1].completed && !pair[0].completed)
        .count();
    let chars_ratio = sums[0].chars as f64 / sums[1].chars as f64;
    let time_ratio = ms(sums[0].wall) / ms(sums[1].wall);
    println!();
    println!(
        "completed: conch {} of {}, playwright {} of {}; playwright completed and conch did not: {missed} (target 0)",
        count(0),
        rows.len(),
        count(1),
        rows.len()
    );
    println!(
        "over the {both} journeys both completed: chars {} vs {} = {chars_ratio:.2}x (target <= 0.5x); time {:.0} vs {:.0} ms = {time_ratio:.2}x (target <= 0.5x); calls {} vs {}",
        sums[0].chars,
        sums[1].chars,
        ms(sums[0].wall),
        ms(sums[1].wall),
        sums[0].calls,
        sums[1].calls
    );
    println!(
        "questions a stand-in person answered Yes on the panel: {false_asks} false asks, {misses} misses (target 0 and 0) over {} irreversible acts",
        rows.iter()
            .map(|(j, _)| j.irreversible.len())
            .sum::<usize>()
    );
    let signins = rows
        .iter()
        .filter(|(j, _)| j.steps.iter().any(|s| matches!(s, Step::Password(..))))
        .count();
    let leaks = rows
        .iter()
        .filter(|(_, pair)| {
            pair[0]
                .failure
                .as_deref()
                .is_some_and(|f| f.starts_with("the saved password shows"))
        })
        .count();
    if signins > 0 {
        println!(
            "saved password in the logs of the {signins} sign-in journeys: conch {leaks} (target 0), playwright {signins} (its agent typed it)"
        );
    }
    for failure in &failures {
        println!("failed: {}", failure.replace('\n', " "));
    }
    let apps: Vec<Value> = APPS
        .iter()
        .map(|a| json!({ "name": a.name, "version": a.version }))
        .collect();
    let total = |c: &Cost| json!({ "chars": c.chars, "wall_ms": ms(c.wall), "calls": c.calls });
    let report = json!({
        "benchmark": "real",
        "browser": browser.display().to_string(),
        "playwright_mcp": PLAYWRIGHT_MCP,
        "runs": runs,
        "apps": apps,
        "journeys": json_rows,
        "completed": { "conch": count(0), "playwright": count(1), "of": rows.len() },
        "playwright_only": missed,
        "password_in_conch_logs": leaks,
        "questions": { "false_asks": false_asks, "misses": misses },
        "both_completed": both,
        "totals_both_completed": { "conch": total(&sums[0]), "playwright": total(&sums[1]) },
        "ratio": { "chars": chars_ratio, "time": time_ratio },
        "target_ratio": 0.5,
    });
    bench::write_report(&bench::bench_dir().join("real.json"), &report)
}

#[cfg(test)]
mod tests {
    use super::{Asked, judge};

    fn card(words: &str) -> Asked {
        Asked {
            kind: "highStakes".to_owned(),
            words: words.to_owned(),
        }
    }

    /// HS-1, issue 30: the questions column tells a false ask and a miss apart even when
    /// their counts cancel out (a question at the link "Delete", none at "Yes, I’m sure").
    #[test]
    fn hs_1_questions_are_judged_by_the_act_not_by_their_count() {
        let acts = ["Yes, I’m sure"];
        assert_eq!(judge(&acts, &[card("Delete")]), (1, 1));
        assert_eq!(judge(&acts, &[card("Yes, I’m sure")]), (0, 0));
        assert_eq!(judge(&acts, &[]), (0, 1));
        assert_eq!(
            judge(&["Delete this tiddler|delete"], &[card("DELETE")]),
            (0, 0)
        );
        assert_eq!(judge(&[], &[card("Send")]), (1, 0));
    }
}

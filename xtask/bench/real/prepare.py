"""Prepares the data of the real-app bench (`cargo xtask bench real`): run by the bench's
own venv as `python prepare.py APP DIR`. Idempotent: a DIR that holds a `.prepared` mark is
left as it is. Only data is written here; every app is the registry's, unchanged."""

import json
import os
import random
import sqlite3
import subprocess
import sys

GENRES = ["Poetry", "Science fiction", "History", "Cooking", "Travel", "Mystery"]
AUTHORS = ["Ada Quill", "Basil Fern", "Cora Lind", "Dmitri Vale", "Edith Moss", "Felix Rowe"]
WORDS = ["river", "lantern", "harbour", "orchard", "comet", "meadow", "engine", "atlas",
         "falcon", "glacier", "willow", "canyon", "beacon", "quartz", "tundra", "ember"]


def books():
    rng = random.Random(11)
    rows = []
    for i in range(1, 301):
        title = f"The {rng.choice(WORDS).title()} of {rng.choice(WORDS).title()} {i}"
        rows.append((i, title, rng.choice(AUTHORS), 1900 + rng.randrange(125),
                     rng.choice(GENRES), rng.randrange(80, 900)))
    rows[240] = (241, "The Clockwork Nightingale", "Edith Moss", 1987, "Mystery", 412)
    return rows


def datasette(d):
    db = sqlite3.connect(os.path.join(d, "library.db"))
    db.execute("CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, author TEXT,"
               " year INTEGER, genre TEXT, pages INTEGER)")
    db.executemany("INSERT INTO books VALUES (?,?,?,?,?,?)", books())
    db.execute("CREATE VIRTUAL TABLE books_fts USING fts5(title, author, content=\"books\","
               " content_rowid=\"id\")")
    db.execute("INSERT INTO books_fts (rowid, title, author) SELECT id, title, author FROM books")
    db.commit()


def tiddlywiki(d, tiddlywiki_js):
    subprocess.run(["node", tiddlywiki_js, d, "--init", "server"], check=True)
    tiddlers = os.path.join(d, "tiddlers")
    os.makedirs(tiddlers, exist_ok=True)
    rng = random.Random(5)
    pages = [("Bench Guide", "Start here. See [[Lantern Recipes]] and [[Harbour Notes]].")]
    for w in WORDS:
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        pages.append((f"{w.title()} Notes", f"Notes about the {w}. {body}"))
    pages.append(("Lantern Recipes", "The secret ingredient is saffron-marmalade."))
    for title, text in pages:
        name = title.replace(" ", "_") + ".tid"
        with open(os.path.join(tiddlers, name), "w") as f:
            f.write(f"title: {title}\ntags: bench\n\n{text}\n")
    with open(os.path.join(tiddlers, "DefaultTiddlers.tid"), "w") as f:
        f.write("title: $:/DefaultTiddlers\n\n[[Bench Guide]]\n")


def trac(d, bindir):
    env = os.path.join(d, "env")
    admin = os.path.join(bindir, "trac-admin")
    subprocess.run([admin, env, "initenv", "Bench Tracker", "sqlite:db/trac.db"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([admin, env, "permission", "add", "anonymous", "TRAC_ADMIN"], check=True)
    from trac.env import Environment
    from trac.ticket.model import Ticket
    e = Environment(env)
    rng = random.Random(7)
    for i in range(1, 41):
        t = Ticket(e)
        t["summary"] = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} misbehaves ({i})"
        t["description"] = "Steps to reproduce: " + " ".join(rng.choice(WORDS) for _ in range(30))
        t["reporter"] = rng.choice(AUTHORS)
        t["type"] = rng.choice(["defect", "enhancement", "task"])
        t["priority"] = rng.choice(["blocker", "critical", "major", "minor", "trivial"])
        t["component"] = rng.choice(["component1", "component2"])
        t["status"] = "new"
        t.insert()
    t = Ticket(e)
    t["summary"] = "Harbour lights flicker at dusk"
    t["description"] = "The harbour lights flicker every evening."
    t["reporter"] = "Cora Lind"
    t["type"] = "defect"
    t["priority"] = "critical"
    t["status"] = "new"
    t.insert()


def mkdocs(d, bindir):
    docs = os.path.join(d, "docs")
    os.makedirs(os.path.join(docs, "guide"), exist_ok=True)
    with open(os.path.join(d, "mkdocs.yml"), "w") as f:
        f.write("""site_name: Bench Handbook
theme:
  name: material
  font: false
  features: [navigation.tabs, navigation.sections, search.suggest, content.tabs.link]
markdown_extensions:
  - attr_list
  - admonition
  - pymdownx.details
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
nav:
  - Home: index.md
  - Guide:
      - Installing: guide/install.md
      - Reference: guide/reference.md
      - Embedded: guide/embedded.md
""")
    with open(os.path.join(docs, "index.md"), "w") as f:
        f.write("# Bench Handbook\n\nWelcome. Read [Installing](guide/install.md) first.\n\n"
                "[Open the framed page in a new tab](guide/embedded.md){target=_blank}\n")
    with open(os.path.join(docs, "guide", "install.md"), "w") as f:
        f.write("""# Installing

=== "Debian"

    Run `apt-get install lantern-tools` as root.

=== "Fedora"

    Run `dnf install lantern-tools-fedora` as root.

??? note "Troubleshooting"

    If the lantern does not light, remove the cache at `/var/cache/lantern-glow`.
""")
    rng = random.Random(3)
    with open(os.path.join(docs, "guide", "reference.md"), "w") as f:
        f.write("# Reference\n\n")
        for i in range(1, 121):
            w = rng.choice(WORDS)
            f.write(f"## Option {w}-{i}\n\n" + " ".join(rng.choice(WORDS) for _ in range(50)) + "\n\n")
        f.write("## Option zephyr-limit\n\nThe zephyr limit defaults to 4096 gusts.\n")
    with open(os.path.join(docs, "guide", "embedded.md"), "w") as f:
        f.write('# Embedded\n\nThe installing page, framed:\n\n'
                '<iframe src="../install/" title="Installing frame" width="900" height="600"></iframe>\n')
    subprocess.run([os.path.join(bindir, "mkdocs"), "build", "-q", "-f",
                    os.path.join(d, "mkdocs.yml"), "-d", os.path.join(d, "site")], check=True)


def django_admin(d, bindir):
    """A tiny Django project whose admin is the app: a superuser `admin` with the password
    the bench passes in CONCH_BENCH_ADMIN_PASSWORD, and users and groups to list."""
    subprocess.run([os.path.join(bindir, "django-admin"), "startproject", "benchsite", d],
                   check=True)
    manage = [sys.executable, os.path.join(d, "manage.py")]
    subprocess.run(manage + ["migrate", "--noinput"], check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, DJANGO_SUPERUSER_PASSWORD=os.environ["CONCH_BENCH_ADMIN_PASSWORD"])
    subprocess.run(manage + ["createsuperuser", "--noinput", "--username", "admin",
                             "--email", "admin@bench.invalid"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    sys.path.insert(0, d)
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchsite.settings"
    import django
    django.setup()
    from django.contrib.auth.models import Group, User
    groups = [Group.objects.create(name=n) for n in ["Archivists", "Editors", "Harbour staff"]]
    rng = random.Random(13)
    people = AUTHORS + [f"{a.title()} {b.title()}" for a, b in zip(WORDS, reversed(WORDS))]
    for i, person in enumerate(people):
        first, last = person.split(" ", 1)
        user = User(username=f"{first}.{last}".lower(), first_name=first, last_name=last,
                    email=f"{first}@bench.invalid".lower(), is_staff=i % 5 == 0)
        user.set_unusable_password()
        user.save()
        user.groups.add(rng.choice(groups))


NODE_RED_SETTINGS = """// Written by the bench's prepare.py: loopback only, nothing fetched from outside.
module.exports = {
    uiHost: "127.0.0.1",
    flowFile: "flows.json",
    credentialSecret: false,
    diagnostics: { enabled: false, ui: false },
    runtimeState: { enabled: false, ui: false },
    telemetry: { enabled: false, updateNotification: false },
    externalModules: {
        autoInstall: false,
        palette: { allowInstall: false, allowUpdate: false, allowUpload: false },
        modules: { allowInstall: false },
    },
    editorTheme: {
        tours: false,
        projects: { enabled: false },
        palette: { catalogues: [] },
        multiplayer: { enabled: false },
    },
    logging: { console: { level: "info", metrics: false, audit: false } },
};
"""


def node_red(d):
    """A userDir with settings that keep the editor on loopback and a flow file of two
    tabs: a tide flow (an inject wired to a debug) and a lighthouse flow."""
    with open(os.path.join(d, "settings.js"), "w") as f:
        f.write(NODE_RED_SETTINGS)
    flows = [
        {"id": "tab-tide", "type": "tab", "label": "Tide flow", "disabled": False, "info": ""},
        {"id": "tab-light", "type": "tab", "label": "Lighthouse flow", "disabled": False,
         "info": ""},
        {"id": "n-inject", "type": "inject", "z": "tab-tide", "name": "Morning tide",
         "props": [{"p": "payload"}], "repeat": "", "crontab": "", "once": False,
         "onceDelay": 0.1, "topic": "", "payload": "high water", "payloadType": "str",
         "x": 160, "y": 120, "wires": [["n-debug"]]},
        {"id": "n-debug", "type": "debug", "z": "tab-tide", "name": "Harbour log",
         "active": True, "tosidebar": True, "console": False, "tostatus": False,
         "complete": "payload", "targetType": "msg", "statusVal": "", "statusType": "auto",
         "x": 400, "y": 120, "wires": []},
        {"id": "n-lamp", "type": "inject", "z": "tab-light", "name": "Dusk signal",
         "props": [{"p": "payload"}], "repeat": "", "crontab": "", "once": False,
         "onceDelay": 0.1, "topic": "", "payload": "", "payloadType": "date",
         "x": 160, "y": 100, "wires": [["n-switch"]]},
        {"id": "n-switch", "type": "change", "z": "tab-light", "name": "Light the lamp",
         "rules": [{"t": "set", "p": "payload", "pt": "msg", "to": "on", "tot": "str"}],
         "action": "", "property": "", "from": "", "to": "", "reg": False,
         "x": 380, "y": 100, "wires": [[]]},
    ]
    with open(os.path.join(d, "flows.json"), "w") as f:
        json.dump(flows, f, indent=2)


def jupyter(d):
    """A notebook root: a notebook with a code cell and a markdown cell, and a text file;
    its Jupyter config (in `.jupyter`, which the server hides) fetches no news, updates or
    extension listings."""
    config = os.path.join(d, ".jupyter")
    os.makedirs(os.path.join(config, "labconfig"), exist_ok=True)
    with open(os.path.join(config, "jupyter_server_config.json"), "w") as f:
        json.dump({"LabApp": {"news_url": None, "extension_manager": "readonly",
                              "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}},
                  f)
    with open(os.path.join(config, "labconfig", "page_config.json"), "w") as f:
        json.dump({"disabledExtensions": {
            "@jupyterlab/apputils-extension:announcements": True}}, f)
    os.makedirs(os.path.join(d, "notes"), exist_ok=True)
    with open(os.path.join(d, "notes", "tides.txt"), "w") as f:
        f.write("High water at Gull Point: 06:42 and 19:05.\n")

    def cell(kind, source):
        c = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            c.update(execution_count=None, outputs=[])
        return c
    notebook = {
        "cells": [
            # `&amp;` renders as `&`: text only the rendered cell shows (the table of
            # contents, hidden, repeats the heading).
            cell("markdown", "# Harbour &amp; tide log\n\nReadings &amp; notes for the bench."),
            cell("code", ""),
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                           "language": "python"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    with open(os.path.join(d, "harbour.ipynb"), "w") as f:
        json.dump(notebook, f, indent=1)


def main():
    app, d = sys.argv[1], os.path.abspath(sys.argv[2])
    if os.path.exists(os.path.join(d, ".prepared")):
        return
    os.makedirs(d, exist_ok=True)
    bindir = os.path.dirname(sys.executable)
    if app == "datasette":
        datasette(d)
    elif app == "tiddlywiki":
        tiddlywiki(d, sys.argv[3])
    elif app == "trac":
        trac(d, bindir)
    elif app == "mkdocs":
        mkdocs(d, bindir)
    elif app == "django-admin":
        django_admin(d, bindir)
    elif app == "node-red":
        node_red(d)
    elif app == "jupyter":
        jupyter(d)
    elif app == "streamlit":
        pass  # `streamlit hello` brings its own pages: only the folder it runs in
    elif app in ("dash-mantine", "nicegui"):
        pass  # our app file holds its data: only the folder it runs in
    else:
        sys.exit(f"no app named {app}")
    open(os.path.join(d, ".prepared"), "w").close()


if __name__ == "__main__":
    main()

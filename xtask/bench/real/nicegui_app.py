"""The Vue component-library app of the real-app bench (`cargo xtask bench real`): a small
app of ours on the pinned NiceGUI (Vue 3 and Quasar), with an expansion holding a toggle,
a menu, a confirming dialog and a select that filters as one types. Run by the app's venv
as `python nicegui_app.py PORT`; it answers on 127.0.0.1 only and serves Vue, Quasar and
its fonts itself (no CDN)."""

import sys

from nicegui import ui

HARBOURS = ["Aberdeen", "Bergen", "Cadiz", "Gdansk", "Genoa", "Lisbon", "Marseille",
            "Porto", "Rotterdam", "Tallinn", "Valletta"]


@ui.page("/")
def index():
    ui.label("Harbour settings").classes("text-h4")

    with ui.expansion("Advanced settings"):
        night = ui.label("Night mode is off")
        ui.switch("Night mode", on_change=lambda e: night.set_text(
            f"Night mode is {'on' if e.value else 'off'}"))

    action = ui.label("Last action: none")
    with ui.button("Actions"):
        with ui.menu():
            for item in ["Duplicate", "Archive", "Export"]:
                ui.menu_item(item, on_click=lambda _, i=item: action.set_text(f"Last action: {i}"))

    reset = ui.label("Settings are your own")
    with ui.dialog() as dialog, ui.card():
        ui.label("Reset every setting to its default?")
        with ui.row():
            ui.button("Cancel", on_click=dialog.close)

            def confirm():
                reset.set_text("Settings were reset to their defaults")
                dialog.close()

            ui.button("Reset", on_click=confirm)
    ui.button("Reset settings", on_click=dialog.open)

    report = ui.label("Report: Harbour log")
    with ui.dialog() as delete_dialog, ui.card():
        ui.label("Delete the report Harbour log? This cannot be undone.")
        with ui.row():
            ui.button("Cancel", on_click=delete_dialog.close)

            def delete():
                report.set_text("The report was deleted")
                delete_dialog.close()

            ui.button("Delete", on_click=delete)
    ui.button("Delete report", on_click=delete_dialog.open)

    timetable = ui.label("Timetable: draft")
    with ui.dialog() as share_dialog, ui.card():
        ui.label("Publish the timetable to every harbour?")
        with ui.row():
            ui.button("Not now", on_click=share_dialog.close)

            def share():
                timetable.set_text("Timetable: live in every harbour")
                share_dialog.close()

            ui.button("Yes", on_click=share)
    ui.button("Share timetable", on_click=share_dialog.open)

    harbour = ui.label("Home harbour: none")
    ui.select(HARBOURS, label="Home harbour", with_input=True,
              on_change=lambda e: harbour.set_text(f"Home harbour: {e.value}")).classes("w-64")


ui.run(host="127.0.0.1", port=int(sys.argv[1]), reload=False, show=False,
       title="Harbour settings", reconnect_timeout=30)

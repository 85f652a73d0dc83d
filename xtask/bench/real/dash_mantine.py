"""The React component-library dashboard of the real-app bench (`cargo xtask bench real`):
a small app of ours on the pinned Dash, with Mantine's searchable Select and DatePickerInput
(dash-mantine-components) and an AG Grid table with sorting and column filters
(dash-ag-grid). Run by the app's venv as `python dash_mantine.py PORT`; it answers on
127.0.0.1 only and serves every script itself (no CDN)."""

import sys

import dash_ag_grid as dag
import dash_mantine_components as dmc
from dash import Dash, Input, Output, html

CITIES = [
    ("Lisbon", "Portugal", 545000),
    ("Porto", "Portugal", 232000),
    ("Braga", "Portugal", 193000),
    ("Coimbra", "Portugal", 106000),
    ("Faro", "Portugal", 61000),
    ("Madrid", "Spain", 3280000),
    ("Seville", "Spain", 684000),
    ("Valencia", "Spain", 792000),
    ("Lyon", "France", 522000),
    ("Marseille", "France", 870000),
    ("Nantes", "France", 320000),
    ("Genoa", "Italy", 558000),
    ("Naples", "Italy", 909000),
    ("Turin", "Italy", 848000),
    ("Rotterdam", "Netherlands", 655000),
    ("Utrecht", "Netherlands", 361000),
    ("Hamburg", "Germany", 1841000),
    ("Leipzig", "Germany", 601000),
    ("Gdansk", "Poland", 486000),
    ("Krakow", "Poland", 780000),
]

app = Dash(__name__, title="Harbour dashboard", serve_locally=True)
app.layout = dmc.MantineProvider(
    dmc.Container(
        [
            html.H1("Harbour dashboard"),
            dmc.Select(
                id="city",
                label="Destination city",
                placeholder="Type to search",
                searchable=True,
                data=sorted(c[0] for c in CITIES),
                w=320,
            ),
            html.P("Selected city: none", id="city-out"),
            dmc.DatePickerInput(
                id="departure",
                label="Departure date",
                placeholder="Pick a date",
                defaultDate="2026-05-01",
                w=320,
            ),
            html.P("Departure: none", id="departure-out"),
            html.H2("Cities"),
            dag.AgGrid(
                id="cities",
                rowData=[{"city": c, "country": k, "population": p} for c, k, p in CITIES],
                columnDefs=[
                    {"field": "city", "headerName": "City"},
                    {"field": "country", "headerName": "Country"},
                    {"field": "population", "headerName": "Population",
                     "filter": "agNumberColumnFilter"},
                ],
                defaultColDef={"sortable": True, "filter": True, "floatingFilter": True},
                dashGridOptions={"animateRows": False},
                style={"height": "420px"},
            ),
            html.P("First row: none", id="first-row"),
        ],
        py=20,
    )
)


@app.callback(Output("city-out", "children"), Input("city", "value"))
def city(value):
    return f"Selected city: {value or 'none'}"


@app.callback(Output("departure-out", "children"), Input("departure", "value"))
def departure(value):
    return f"Departure: {value or 'none'}"


@app.callback(Output("first-row", "children"), Input("cities", "virtualRowData"))
def first_row(rows):
    if not rows:
        return "First row: none"
    row = rows[0]
    return f"First row: {row['city']}, {row['country']}, {row['population']}"


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(sys.argv[1]), debug=False)

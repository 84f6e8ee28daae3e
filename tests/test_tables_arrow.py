"""ui.tables.arrow: the rows Streamlit draws are the same as from the list of dicts."""

import pandas as pd
import pyarrow as pa

from ui import tables


def test_arrow_table_has_the_rows_columns_and_values():
    rows = [{"Scenario": "yours", "Best": "16", "Cost": "—", "n": 1}, {"Scenario": "kv:fp8", "Best": "—", "Cost": "$0.1", "n": 2}]
    table = tables.arrow(rows)
    assert isinstance(table, pa.Table)
    assert table.to_pylist() == rows and table.column_names == list(rows[0])
    assert table.to_pandas().values.tolist() == pd.DataFrame(rows).values.tolist()


def test_rows_arrow_cannot_type_are_left_to_streamlit():
    rows = [{"a": 1}, {"a": "x"}]
    assert tables.arrow(rows) is rows

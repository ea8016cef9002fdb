"""The indented JSON writer against the standard library's text, byte for byte."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from backportr.output.jsontext import dumps_indented

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # every code point: escapes, surrogates, non-ASCII names
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_the_text_is_json_dumps_with_indent_2(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2)


def test_what_json_itself_would_write_otherwise_is_left_to_it() -> None:
    """Keys that are no strings (json writes them as strings) go through json.dumps."""
    for value in ({1: "a", None: [True]}, {"a": {2.5: math.pi}}, [{"k": {False: 0}}]):
        assert dumps_indented(value) == json.dumps(value, indent=2)

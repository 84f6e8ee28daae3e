"""ui.widget_state: a keyed widget's look at the session state gives what Streamlit's dict gives."""

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.runtime.state.common import GENERATED_ELEMENT_ID_PREFIX
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX, SessionState

from apptest_helpers import open_page
from ui import widget_state
from ui.widget_state import _MISSING, KeyView, filtered_value

USER_KEYS = ("a", "b", "concurrency", "model", STREAMLIT_INTERNAL_KEY_PREFIX + "_x")
# widget ids: two per user key (an old and a new one) and a keyless one
IDS = [f"{GENERATED_ELEMENT_ID_PREFIX}-h{i}-{k}" for i in range(2) for k in ("a", "b", "concurrency")] + \
      [f"{GENERATED_ELEMENT_ID_PREFIX}-h9-None"]
VALUES = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=2))


@settings(max_examples=200, deadline=None)
@given(old=st.dictionaries(st.sampled_from(USER_KEYS + tuple(IDS)), VALUES, max_size=8),
       new=st.dictionaries(st.sampled_from(USER_KEYS), VALUES, max_size=4),
       mapped=st.dictionaries(st.sampled_from(("a", "b", "concurrency")), st.integers(0, 1), max_size=3),
       stale=st.lists(st.sampled_from(IDS[:-1]), max_size=3))
def test_the_view_answers_as_filtered_state_for_every_key(old, new, mapped, stale):
    s = SessionState()
    s._old_state.update(old)
    s._new_session_state.update(new)
    for user_key, i in mapped.items():  # a widget id ends with its user key (streamlit's compute_element_id)
        s._key_id_mapper[user_key] = f"{GENERATED_ELEMENT_ID_PREFIX}-h{i}-{user_key}"
    for wid in stale:  # an older id of a widget still mapped to its key (the widget's id changed since)
        s._key_id_mapper._id_key_mapping.setdefault(wid, wid.rsplit("-", 1)[1])
    whole = s.filtered_state
    for key in USER_KEYS + ("zzz",):
        assert (key in whole) == (filtered_value(s, key) is not _MISSING)
        if key in whole:
            assert filtered_value(s, key) is whole[key]  # the very object the dict holds


class Safe:
    """SafeSessionState's two attributes the view uses."""

    def __init__(self, state):
        self._state, self._lock = state, threading.RLock()


def test_key_view_in_and_getitem():
    s = SessionState()
    s._new_session_state.update({"a": None, "b": 2})
    v = KeyView(Safe(s))
    assert "a" in v and v["a"] is None  # the case the widgets look for: a key set to None
    assert "b" in v and v["b"] == 2
    assert "c" not in v
    try:
        v["c"]
        raise AssertionError("no KeyError")
    except KeyError:
        pass


def test_installed_in_the_widget_modules_and_a_page_draws_the_same():
    import importlib

    assert set(widget_state.install()) == set(widget_state.MODULES)
    for name in widget_state.MODULES:
        assert importlib.import_module(name).get_session_state is widget_state.get_session_state
    at = open_page("pages/memory.py", {"concurrency": "7"})  # a keyed number input set from the link
    assert not at.exception
    assert at.sidebar.number_input(key="concurrency").value == 7
    at.sidebar.number_input(key="concurrency").set_value(9).run()
    assert not at.exception and at.sidebar.number_input(key="concurrency").value == 9

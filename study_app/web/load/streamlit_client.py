"""A Streamlit client without a browser: Streamlit's own websocket protocol, in asyncio.

The browser and a Streamlit server talk over one websocket (``/_stcore/stream``, sub-protocol
``streamlit``) in the protobuf messages the ``streamlit`` package ships:

- the client sends ``BackMsg.rerun_script`` (a ``ClientState``: the URL's query string and the
  state of every widget, a button press as a one-shot ``trigger_value``);
- the server answers with ``ForwardMsg``\\ s: ``new_session`` when a script run starts,
  ``delta.new_element`` / ``add_block`` for what the run draws (each at a ``delta_path``),
  ``page_info_changed`` when the app rewrites the query string, and ``script_finished`` with
  the run's outcome (``FINISHED_EARLY_FOR_RERUN`` when the app called ``st.rerun``: the
  server starts the next run by itself).

``StreamlitSession.rerun(widgets)`` sends one rerun and returns the ``Screen`` drawn by the
last run that finished (after any ``st.rerun``), which is what a person sees once the page
settled. Widgets are found by their key: Streamlit's element id is ``$$ID-<hash>-<key>``.
Radio and select values are the option's displayed text (``string_value``), numbers
``double_value``, text ``string_value``, buttons ``trigger_value``.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM_PATH = "/_stcore/stream"
# Element types that carry a widget id (the ones our pages use, and a few more).
WIDGET_TYPES = ("radio", "button", "selectbox", "number_input", "text_area", "text_input",
                "checkbox", "slider", "multiselect")
_DATA_ATTR = re.compile(r'data-(page|kind|ending)="([^"]*)"')


def run_finished(fwd: ForwardMsg) -> bool:
    """``fwd`` ends a script run for good: ``script_finished``, but not the early finish of a
    run the app restarted with ``st.rerun`` (the server starts the next run by itself)."""
    return (fwd.WhichOneof("type") == "script_finished"
            and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN)


class StreamlitProtocolError(RuntimeError):
    """The server sent something this client cannot follow (or closed the connection)."""


def user_key(element_id: str) -> str | None:
    """The ``key=`` a widget was created with (None for a widget without one)."""
    parts = element_id.split("-", 2)
    if len(parts) < 3 or parts[2] == "None":
        return None
    return parts[2]


@dataclass
class Widget:
    """One widget on the screen: its type, id, key and (for choices) displayed options."""

    type: str
    id: str
    key: str | None
    proto: Any

    @property
    def options(self) -> list[str]:
        return list(getattr(self.proto, "options", []))

    @property
    def in_form(self) -> bool:
        """The widget lies in an ``st.form``: the browser keeps its value until the form is
        submitted, so changing it sends nothing to the server."""
        return bool(getattr(self.proto, "form_id", ""))


@dataclass
class Screen:
    """What the last finished script run drew."""

    widgets: dict[str, Widget] = field(default_factory=dict)  # by key
    html: list[str] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # st.error texts and exceptions
    query_string: str = ""

    def attribute(self, name: str) -> str | None:
        """A ``data-<name>`` attribute of the app's HTML (the progress bar carries
        ``data-page`` and ``data-kind``; an ending's code ``data-ending``)."""
        for body in self.html:
            for attr, value in _DATA_ATTR.findall(body):
                if attr == name:
                    return value
        return None

    def text(self) -> str:
        return "\n".join(self.markdown + self.html + self.errors)


def _element_screen(screen: Screen, element: Any) -> None:
    kind = element.WhichOneof("type")
    if kind in WIDGET_TYPES:
        proto = getattr(element, kind)
        key = user_key(proto.id)
        if key is not None:
            screen.widgets[key] = Widget(kind, proto.id, key, proto)
    elif kind == "html":
        screen.html.append(element.html.body)
    elif kind == "markdown":
        screen.markdown.append(element.markdown.body)
    elif kind == "alert" and element.alert.format == element.alert.ERROR:
        screen.errors.append(element.alert.body)
    elif kind == "exception":
        screen.errors.append(f"{element.exception.type}: {element.exception.message}")


def widget_state(widget: Widget, value: Any) -> WidgetState:
    """The state a browser sends for ``widget`` showing ``value``."""
    state = WidgetState(id=widget.id)
    if widget.type == "button":
        state.trigger_value = bool(value)
    elif widget.type in ("radio", "selectbox"):
        if value not in widget.options:
            raise ValueError(f"{value!r} is not an option of {widget.key}: {widget.options}")
        state.string_value = value
    elif widget.type == "number_input":
        state.double_value = float(value)
    elif widget.type in ("text_area", "text_input"):
        state.string_value = str(value)
    elif widget.type == "checkbox":
        state.bool_value = bool(value)
    else:
        raise ValueError(f"setting a {widget.type} is not supported")
    return state


class StreamlitSession:
    """One browser tab's session with a Streamlit server (use ``async with``)."""

    def __init__(self, url: str, query_string: str = "", *, timeout: float = 120.0) -> None:
        parts = urlsplit(url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        self.ws_url = f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}{STREAM_PATH}"
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.query_string = query_string
        self.timeout = timeout
        self._ws: Any = None
        self.messages = 0
        self.bytes = 0

    async def __aenter__(self) -> StreamlitSession:
        try:
            self._ws = await websockets.connect(
                self.ws_url, subprotocols=["streamlit"],  # type: ignore[list-item]
                origin=self.origin, max_size=None, open_timeout=self.timeout,  # type: ignore[arg-type]
                ping_interval=None, compression=None)
        except (OSError, websockets.WebSocketException) as e:
            raise StreamlitProtocolError(f"cannot connect to {self.ws_url}: {e}") from e
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def rerun(self, states: list[WidgetState] | None = None) -> Screen:
        """Run the script with these widget states; the screen once the page settled."""
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string = self.query_string
        rerun.widget_states.widgets.extend(states or [])
        try:
            await self._ws.send(msg.SerializeToString())
        except websockets.ConnectionClosed as e:  # the server died between two pages
            raise StreamlitProtocolError(f"the server closed the connection: {e}") from e
        return await asyncio.wait_for(self._until_settled(), self.timeout)

    async def _until_settled(self) -> Screen:
        elements: dict[tuple[int, ...], Any] = {}
        while True:
            try:
                raw = await self._ws.recv()
            except websockets.ConnectionClosed as e:
                raise StreamlitProtocolError(f"the server closed the connection: {e}") from e
            self.messages += 1
            self.bytes += len(raw)
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if fwd.ref_hash:
                raise StreamlitProtocolError("the server referenced a cached message this "
                                             "client never announced")
            if kind == "new_session":
                elements = {}
            elif kind == "delta":
                delta = fwd.delta
                if delta.WhichOneof("type") == "new_element":
                    elements[tuple(fwd.metadata.delta_path)] = delta.new_element
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif run_finished(fwd):
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise StreamlitProtocolError("the app failed to compile")
                screen = Screen(query_string=self.query_string)
                for path in sorted(elements):
                    _element_screen(screen, elements[path])
                return screen

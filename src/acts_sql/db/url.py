"""SQLAlchemy-style database URLs, parsed without SQLAlchemy.

    dialect[+driver]://[user[:password]@]host[:port]/database[?key=value&...]
    sqlite:///relative.db   sqlite:////absolute.db   duckdb:///file.duckdb

The scheme picks the dialect through `Dialect.url_schemes`. User, password and
database are percent-decoded. `DatabaseURL.redacted()` is the form for
messages: it never contains the password.

    >>> u = parse_url("postgresql+psycopg://ann:s%40cret@db.local/shop?sslmode=require")
    >>> (u.dialect, u.host, u.port, u.database, u.username, u.password)
    ('postgresql', 'db.local', 5432, 'shop', 'ann', 's@cret')
    >>> u.redacted()
    'postgresql+psycopg://ann@db.local:5432/shop'
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import Dialect, all_dialects

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://(.*)$", re.DOTALL)


class DatabaseURL(BaseModel):
    """The parts of one database URL."""

    model_config = ConfigDict(frozen=True)

    scheme: str
    """As written, lower case ("postgresql+psycopg")."""
    dialect: str
    """Canonical dialect name ("postgresql")."""
    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    host: str | None = None
    port: int | None = None
    database: str | None = None
    """Database name; for embedded dialects the file path ("" = in memory)."""
    query: dict[str, str] = Field(default_factory=dict)

    def redacted(self) -> str:
        """The URL without its password, for messages and logs."""
        if self.host is None and self.username is None:
            return f"{self.scheme}:///{self.database or ''}"
        user = f"{self.username}@" if self.username else ""
        return f"{self.scheme}://{user}{self.endpoint()}/{self.database or ''}"

    def endpoint(self) -> str:
        """host:port (IPv6 hosts in brackets)."""
        host = self.host or "localhost"
        host = f"[{host}]" if ":" in host else host
        return f"{host}:{self.port}" if self.port is not None else host

    def describe(self) -> str:
        """'user@host:port/db' for one-line error messages."""
        user = f"{self.username}@" if self.username else ""
        return f"{user}{self.endpoint()}/{self.database or ''}"


def scheme_dialect(scheme: str) -> Dialect | None:
    """The dialect that declares `scheme` in its `url_schemes`, if any."""
    wanted = scheme.lower()
    for dialect in all_dialects():
        if wanted in dialect.url_schemes:
            return dialect
    return None


def known_schemes() -> list[str]:
    """Every scheme some dialect declares, in dialect order."""
    return [scheme for d in all_dialects() for scheme in d.url_schemes]


def has_scheme(text: str) -> bool:
    """True when `text` looks like `scheme://...` (not a plain file path)."""
    return _SCHEME.match(text.strip()) is not None


def parse_url(url: str) -> DatabaseURL:
    """Parse `url`; DatabaseOpenError (password never echoed) when it is malformed."""
    text = url.strip()
    match = _SCHEME.match(text)
    if match is None:
        raise DatabaseOpenError(f"not a database URL: {_mask(text)}", url=_mask(text))
    scheme, rest = match.group(1).lower(), match.group(2)
    dialect = scheme_dialect(scheme)
    if dialect is None:
        raise DatabaseOpenError(
            f"unsupported database URL scheme {scheme!r} (known: {', '.join(known_schemes())})",
            url=_mask(text),
            scheme=scheme,
        )
    rest, _, query_text = rest.partition("?")
    query = dict(parse_qsl(query_text, keep_blank_values=True))
    if dialect.embedded:
        return _embedded(scheme, dialect, rest, query, text)
    authority, _, path = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        userinfo, hostport = "", authority
    username, colon, password = userinfo.partition(":")
    host, port = _host_port(hostport, dialect, text)
    return DatabaseURL(
        scheme=scheme,
        dialect=dialect.name,
        username=unquote(username) or None,
        password=unquote(password) if colon else None,
        host=host,
        port=port,
        database=unquote(path) or None,
        query=query,
    )


def _embedded(
    scheme: str, dialect: Dialect, rest: str, query: dict[str, str], text: str
) -> DatabaseURL:
    """`scheme:///relative` or `scheme:////absolute`; `scheme://` alone is in-memory."""
    if rest == "" or rest == "/" or rest == "/:memory:":
        return DatabaseURL(scheme=scheme, dialect=dialect.name, database="", query=query)
    if not rest.startswith("/"):
        raise DatabaseOpenError(
            f"{dialect.display_name} URL needs a file path, as {scheme}:///relative.db "
            f"or {scheme}:////absolute.db: {_mask(text)}",
            url=_mask(text),
        )
    return DatabaseURL(scheme=scheme, dialect=dialect.name, database=unquote(rest[1:]), query=query)


def _host_port(hostport: str, dialect: Dialect, text: str) -> tuple[str | None, int | None]:
    host, port_text = hostport, ""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise DatabaseOpenError(f"bad IPv6 host in {_mask(text)}", url=_mask(text))
        host, port_text = hostport[1:end], hostport[end + 1 :].removeprefix(":")
    elif ":" in hostport:
        host, _, port_text = hostport.rpartition(":")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise DatabaseOpenError(
                f"bad port {port_text!r} in {_mask(text)}", url=_mask(text), port=port_text
            )
        return unquote(host) or None, int(port_text)
    return unquote(host) or None, dialect.default_port


def _mask(text: str) -> str:
    """`text` with any password in it replaced by ***."""
    return re.sub(r"^([^:/]+://[^:/@]*):[^@/]*@", r"\1:***@", text)

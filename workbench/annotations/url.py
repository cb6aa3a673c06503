"""Where an annotation store is: a path (or ``sqlite:///path``) or a ``postgresql://`` URL.

:func:`parse_location` reads what a user typed (a notebook parameter, ``--store``,
``--annotations``) into a :class:`StoreLocation`; :func:`redact` is the one way a URL is shown,
in a message, a manifest, a page or a ``repr``: any password in it is replaced by ``***``.
Credentials come the libpq way (``PGPASSWORD``, ``~/.pgpass``, a service file with
``postgresql:///?service=name``), so a URL usually holds none; one that does still works, and
its password is never shown.

Examples
--------
>>> parse_location("reports/a.sqlite").kind, parse_location("sqlite:///reports/a.sqlite").path.as_posix()
('sqlite', 'reports/a.sqlite')
>>> loc = parse_location("postgresql://ana:s3cret@db.example:5432/triage")
>>> loc.kind, loc.display
('postgresql', 'postgresql://ana:***@db.example:5432/triage')
>>> redact("postgres://ana:s3cret@db/x?password=s3cret&sslmode=require")
'postgres://ana:***@db/x?password=***&sslmode=require'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from workbench.errors import UsageError

__all__ = ["StoreLocation", "parse_location", "redact", "is_url"]

#: A URL's scheme and its ``//`` (a Windows drive ``C:\\`` is not one).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/")
_POSTGRES = ("postgresql", "postgres")
#: Query keys whose value is a secret.
_SECRET_KEYS = frozenset({"password", "passfile_password", "sslpassword"})


def is_url(value: str | Path) -> bool:
    """Whether ``value`` is written as a URL (``scheme:/...``) rather than a file path.

    Examples
    --------
    >>> is_url("postgresql://db/x"), is_url("reports/a.sqlite"), is_url("C:/x/a.sqlite")
    (True, False, False)
    """
    found = _SCHEME.match(str(value))
    return found is not None and len(found.group(1)) > 1


def redact(url: str) -> str:
    """``url`` with its password (in the authority or the query) replaced by ``***``.

    Anything that is not a URL is returned as it is.

    Examples
    --------
    >>> redact("postgresql://ana@db/triage"), redact("out/a.sqlite")
    ('postgresql://ana@db/triage', 'out/a.sqlite')
    >>> redact("postgresql://:pw@/triage?host=/tmp/x")
    'postgresql://:***@/triage?host=/tmp/x'
    """
    if not is_url(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{url.split(':', 1)[0]}://(a URL that cannot be read)"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in _SECRET_KEYS for k, _ in pairs):
            query = urlencode([(k, "***" if k.lower() in _SECRET_KEYS else v) for k, v in pairs], safe="/*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


@dataclass(frozen=True, kw_only=True)
class StoreLocation:
    """A parsed store location.

    ``kind`` says which backend; ``path`` is the SQLite file (``None`` for a server);
    ``url`` is what the server backend connects with (it may hold a password: never show it);
    ``display`` is what messages show (the path, or the URL redacted).
    """

    kind: Literal["sqlite", "postgresql"]
    path: Path | None
    url: str
    display: str

    def __repr__(self) -> str:
        return f"StoreLocation({self.kind}, {self.display!r})"


def parse_location(value: str | Path) -> StoreLocation:
    """Read a store location: a path, ``sqlite:///relative/path``, ``sqlite:////absolute/path``,
    or ``postgresql://[user@][host][:port]/database[?options]`` (``postgres://`` too).

    Raises
    ------
    UsageError
        For a URL of another scheme (it is never taken as a folder name), or a ``sqlite://``
        URL without a path, in one line with the URL redacted.

    Examples
    --------
    >>> parse_location("sqlite:////tmp/a.sqlite").path.as_posix()
    '/tmp/a.sqlite'
    >>> parse_location("mysql://ana:pw@db/x")
    Traceback (most recent call last):
    ...
    workbench.errors.UsageError: the annotation store 'mysql://ana:***@db/x' is a URL of an unknown kind (mysql). \
Fix: give a file path, sqlite:///path/to/file.sqlite, or postgresql://user@host:port/database
    """
    text = str(value).strip()
    if not is_url(text):
        path = Path(text).expanduser()
        return StoreLocation(kind="sqlite", path=path, url=f"sqlite:///{path.as_posix()}", display=str(path))
    scheme = text.split(":", 1)[0].lower()
    if scheme == "sqlite":
        rest = text.split(":", 1)[1]
        if not rest.startswith("///") or len(rest) <= 3:
            raise UsageError(
                f"the annotation store {redact(text)!r} is an SQLite URL without a file. "
                "Fix: write sqlite:///relative/path.sqlite or sqlite:////absolute/path.sqlite"
            )
        path = Path(rest[3:]).expanduser()
        return StoreLocation(kind="sqlite", path=path, url=text, display=str(path))
    if scheme in _POSTGRES:
        return StoreLocation(kind="postgresql", path=None, url=text, display=redact(text))
    raise UsageError(
        f"the annotation store {redact(text)!r} is a URL of an unknown kind ({scheme}). "
        "Fix: give a file path, sqlite:///path/to/file.sqlite, or postgresql://user@host:port/database"
    )

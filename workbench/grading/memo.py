"""Per-process memoisation of pure functions of texts, bounded by text length.

Grading reads the same strings again and again: a gold answer for every system and policy, a
question for every turn of every run, a common prediction such as ``"18"``. The functions
decorated here are pure and return immutable values, so the first result can be reused.
Texts longer than ``max_chars`` are computed and not stored: a cache must not hold on to a
1 MB hostile output, and a long text is rarely repeated.

:func:`clear` empties every cache (benchmarks time each repetition from cold caches).

Examples
--------
>>> @memoize(max_chars=8)
... def shout(text: str) -> str:
...     return text.upper()
>>> shout("abc"), shout("abc"), shout("a" * 20) == "A" * 20
('ABC', 'ABC', True)
>>> shout.cache_info().hits
1
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["memoize", "clear"]

R = TypeVar("R")
_CACHES: list[Any] = []


def memoize(*, max_chars: int, maxsize: int = 1 << 16) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Cache a pure function of positional arguments while their texts together hold at most
    ``max_chars`` characters. Every argument must be hashable. The wrapper keeps ``cache_info`` and
    ``cache_clear`` of :func:`functools.lru_cache`.
    """

    def decorate(function: Callable[..., R]) -> Callable[..., R]:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _CACHES.append(cached)

        @functools.wraps(function)
        def wrapper(*args: Any) -> R:
            chars = 0
            for arg in args:  # a loop, not sum() over a generator: this runs for every comparison
                if isinstance(arg, str):
                    chars += len(arg)
            if chars <= max_chars:
                return cached(*args)
            return function(*args)

        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return wrapper

    return decorate


def clear() -> None:
    """Empty every cache made with :func:`memoize`."""
    for cached in _CACHES:
        cached.cache_clear()

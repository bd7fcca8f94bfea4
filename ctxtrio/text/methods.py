"""Java and C# methods that no keyword announces, as both the chunker and the definition check read them.

:mod:`ctxtrio.text.code` gives such a method a trail entry of its own, and :mod:`ctxtrio.text.definitions`
says a chunk defines it; they take the same pattern from here, so that a method with a trail entry is a
definition too, and the two cannot drift (they had two modifier lists: ``native``, ``default``, ``sealed``
and ``internal`` were only the definition check's).
"""

from __future__ import annotations

from typing import Final

__all__ = ["METHOD_MODIFIERS", "split_return_type"]

#: The modifiers a Java or C# method's line may start with where no keyword announces the method.
METHOD_MODIFIERS: Final = (
    "public|protected|private|static|final|abstract|synchronized|native|default|override|virtual|sealed|internal|async"
)


def split_return_type(indent: str) -> str:
    """A pattern for the start of a Java or C# method whose name starts the line after its return type or its type
    parameters, as OpenJDK writes long generic ones (``public static <T, K> Collector<T, ?, Map<K, List<T>>>`` then
    ``groupingBy(Function<...``; ``public static <T, K, A, D>`` then ``Collector<...> groupingBy(``): a modifier
    (:data:`METHOD_MODIFIERS`) first, a line without ``(``, ``;``, ``=`` or braces, then, on the next line indented
    at least as deep (``indent``: a backreference to the first line's indentation), the rest of the return type up
    to the name, which the caller's pattern goes on with. One pattern for the chunker
    (:data:`~ctxtrio.text.code.DEFINITIONS`) and :func:`~ctxtrio.text.definitions.defines`, so that a method
    with a trail entry of its own is also a definition."""
    return (
        rf"(?:(?:{METHOD_MODIFIERS})[ \t]+)+(?:<[^\n(]*?>[ \t]+)?[\w$.<>\[\],? \t]*[\w$>\]][ \t]*\r?\n"
        rf"{indent}(?:[\w$.<>\[\],? \t]*[ \t])?"
    )

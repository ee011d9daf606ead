"""The one error type of the native-policy track: it names the file and the assertion."""

from __future__ import annotations

from pathlib import Path

from authpairs.errors import DataError


class NativeImportError(DataError):
    """An upstream file, assertion or engine call is unusable.

    The message always names the file and, when known, the assertion (a locator such as
    ``tests[2].check[0].assertions.can_view``) so that the user can find the bad record.
    """

    def __init__(self, path: str | Path, message: str, assertion: str | None = None) -> None:
        self.path = str(path)
        self.assertion = assertion
        where = self.path if assertion is None else f"{self.path}, assertion {assertion}"
        super().__init__(f"{where}: {message}")

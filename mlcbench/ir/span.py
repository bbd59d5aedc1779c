"""Source locations, kept on nodes made by the parser so errors can point at the text."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    source_name: str
    line: int          # 1-based
    column: int        # 0-based
    end_line: int | None = None
    end_column: int | None = None

    @property
    def width(self) -> int:
        if self.end_line == self.line and self.end_column is not None:
            return max(1, self.end_column - self.column)
        return 1

"""Typed records: the ground floor. Every manifest table and every output row type is a
pydantic model here; ``schemas/`` (JSON Schema + manifest DDL) is generated from them.

A record that is a manifest table sets ``__table__`` (and optionally ``__primary_key__``).
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

_SCALARS: dict[Any, str] = {
    str: "VARCHAR",
    int: "BIGINT",
    float: "DOUBLE",
    bool: "BOOLEAN",
    dt.datetime: "TIMESTAMP",
    dt.date: "DATE",
    bytes: "BLOB",
}


class Record(BaseModel):
    """Base class of all records. Fields in declaration order are the table's columns."""

    model_config = ConfigDict(extra="forbid")

    __table__: ClassVar[str | None] = None
    __primary_key__: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def columns(cls) -> list[str]:
        return list(cls.model_fields)

    @classmethod
    def ddl(cls) -> str:
        """``CREATE TABLE IF NOT EXISTS`` statement for this record's manifest table."""
        if not cls.__table__:
            raise TypeError(f"{cls.__name__} is not a manifest table")
        cols = []
        for name, field in cls.model_fields.items():
            sql_type, nullable = sql_type_of(field.annotation)
            cols.append(f"    {name} {sql_type}{'' if nullable else ' NOT NULL'}")
        if cls.__primary_key__:
            cols.append(f"    PRIMARY KEY ({', '.join(cls.__primary_key__)})")
        return f"CREATE TABLE IF NOT EXISTS {cls.__table__} (\n" + ",\n".join(cols) + "\n);"


def manifest_ddl(tables) -> str:
    """The DDL of the given manifest tables (what ``schemas/manifest.sql`` holds)."""
    return "\n\n".join(t.ddl() for t in tables) + "\n"


def sql_type_of(annotation: Any) -> tuple[str, bool]:
    """Map a field annotation to (DuckDB type, nullable)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        inner, _ = sql_type_of(args[0]) if len(args) == 1 else ("VARCHAR", True)
        return inner, nullable
    if origin is typing.Literal:
        return "VARCHAR", False
    if origin in (list, tuple):
        (inner,) = typing.get_args(annotation)[:1]
        return sql_type_of(inner)[0] + "[]", False
    if origin is dict or annotation is dict:
        return "JSON", False
    if annotation in _SCALARS:
        return _SCALARS[annotation], False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        inner = ", ".join(f"{n} {sql_type_of(f.annotation)[0]}" for n, f in annotation.model_fields.items())
        return f"STRUCT({inner})", False
    raise TypeError(f"no SQL type for {annotation!r}")


def arrow_schema(record: type[Record], exclude: tuple[str, ...] = (), extra: dict | None = None):
    """Arrow schema of a record's fields (in order), minus ``exclude``, plus ``extra``."""
    import pyarrow as pa

    fields = []
    for name, field in record.model_fields.items():
        if name in exclude:
            continue
        fields.append(pa.field(name, arrow_type(field.annotation), nullable=sql_type_of(field.annotation)[1]))
    for name, typ in (extra or {}).items():
        fields.append(pa.field(name, typ))
    return pa.schema(fields)


def arrow_type(annotation: Any):
    """The Arrow type of a field annotation (the same mapping as ``sql_type_of``; a nested
    record becomes a struct, a list of them a list of structs)."""
    import pyarrow as pa

    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return arrow_type(args[0]) if len(args) == 1 else pa.string()
    if origin in (list, tuple):
        return pa.list_(arrow_type(typing.get_args(annotation)[0]))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct([pa.field(n, arrow_type(f.annotation), nullable=sql_type_of(f.annotation)[1])
                          for n, f in annotation.model_fields.items()])
    scalar = {
        "VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(), "TIMESTAMP": pa.timestamp("us"), "DATE": pa.date32(),
        "BLOB": pa.binary(), "JSON": pa.string(),
    }
    return scalar[sql_type_of(annotation)[0]]

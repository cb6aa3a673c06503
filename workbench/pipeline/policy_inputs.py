"""Policy grades kept once per distinct grading input, and the per-turn view readers use.

A run's grades under every policy are stored as ``policy_inputs``: one row per distinct grading
input (what :func:`workbench.pipeline.grade.grade_predictions` grades once: the output, the
gold, the question, the programs, the table, ...; see ``_GRADE_INPUTS`` there), an
``input_key`` (its row number) and one struct column per policy, in the order the policies were
graded (the main one first), each with the fields of :data:`~workbench.schema.POLICY_GRADE_FIELDS`
(the verdict ``correct``, the ``status`` and ``reason`` enums, the answer compared, where it came
from, the rule that found it and the detail). Each turn points to its input by that key
(``input_keys``, one per row of the turns table).

:func:`policy_view` builds the table readers know, :data:`~workbench.schema.POLICY_GRADES` (one
row per turn and policy, sorted as the turns), from these: a million turns under seven policies
are seven million rows, built only when asked for. :func:`from_policy_grades` goes the other
way, for a graded folder of version 1 (which stored that table) and for callers that have it.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.errors import InputError
from workbench.parallel import distinct
from workbench.schema import POLICY_GRADE_FIELDS, POLICY_GRADES

__all__ = [
    "canonical",
    "check_inputs",
    "empty_inputs",
    "empty_keys",
    "from_policy_grades",
    "disagreeing_inputs",
    "inputs_from_parts",
    "join_inputs",
    "policy_inputs",
    "policy_view",
]

_TURN_KEYS = ("system", "record_id", "turn")


def empty_inputs() -> pl.DataFrame:
    """A ``policy_inputs`` table without inputs or policies."""
    return pl.DataFrame(schema={"input_key": pl.UInt32()})


def empty_keys() -> pl.Series:
    """``input_keys`` of no turns."""
    return pl.Series("input_key", [], dtype=pl.UInt32)


def _struct(frame: pl.DataFrame, name: str) -> pl.Series:
    """The grade fields of ``frame`` (in :data:`POLICY_GRADE_FIELDS`' dtypes) as one struct column ``name``."""
    return frame.select(pl.struct([pl.col(c).cast(t) for c, t in POLICY_GRADE_FIELDS.items()]).alias(name)).to_series()


def policy_inputs(per_key: pl.DataFrame, names: Sequence[str], n_inputs: int) -> pl.DataFrame:
    """The ``policy_inputs`` table of ``n_inputs`` distinct inputs from their grades ``per_key``
    (``_key, _p`` and the grade fields: a row per input and policy, ``_p`` indexing ``names``).
    An input without a row for a policy has a null there (the view gives it no row for it).

    Examples
    --------
    >>> rows = pl.DataFrame({"_key": [1, 0, 1], "_p": [0, 0, 1], "correct": [True, False, False],
    ...     "status": "ok", "reason": ["exact", "wrong_value", "wrong_value"], "answer": "1",
    ...     "answer_source": "answer", "extraction_rule": None, "detail": ""})
    >>> table = policy_inputs(rows, ["a", "b"], 2)
    >>> table.columns, table["b"].struct.field("correct").to_list()
    (['input_key', 'a', 'b'], [None, False])
    """
    keys = pl.int_range(n_inputs, dtype=pl.UInt32, eager=True).alias("input_key")
    columns = [keys]
    for p, name in enumerate(names):
        part = per_key.filter(pl.col("_p") == p).sort("_key")
        if part.height == n_inputs and part.get_column("_key").cast(pl.UInt32).equals(keys, check_names=False):
            columns.append(_struct(part, name))
        else:  # some inputs lack this policy's grade (or have it twice: the first is kept)
            part = part.unique("_key", keep="first", maintain_order=True)
            placed = keys.to_frame().join(
                part.with_columns(pl.col("_key").cast(pl.UInt32).alias("input_key")),
                on="input_key",
                how="left",
                maintain_order="left",
            )
            struct = _struct(placed, name)
            columns.append(pl.Series(name, struct).set(placed.get_column("_p").is_null(), None))
    return pl.DataFrame(columns)


def inputs_from_parts(parts: list[pl.DataFrame], n_inputs: int) -> pl.DataFrame:
    """The ``policy_inputs`` table of ``n_inputs`` distinct inputs from the grading's rows
    (``parts``: ``_key, _p, policy`` and the grade fields, a row per input and policy; ``_p``
    orders the policies). ``parts`` is emptied and its tables taken apart (the caller keeps none)."""
    per_key = (
        pl.concat(parts)
        if parts
        else pl.DataFrame(schema={"_key": pl.UInt32(), "_p": pl.Int64(), "policy": pl.String()})
    )
    parts.clear()
    order = per_key.group_by("_p").agg(pl.col("policy").first().cast(pl.String)).sort("_p")
    ps = order.get_column("_p").to_list()
    names = order.get_column("policy").to_list()
    if ps != list(range(len(ps))):
        per_key = per_key.with_columns(pl.col("_p").replace_strict(ps, list(range(len(ps))), return_dtype=pl.Int64))
    n, height = len(names), per_key.height
    # the row of (key, p) when every key has one row for each p: its slot key * n + p, each filled once
    slot = per_key.select((pl.col("_key").cast(pl.Int64) * n + pl.col("_p")).alias("_slot")).get_column("_slot")
    regular = height == n_inputs * n and height > 0 and slot.min() == 0 and slot.max() == height - 1
    if regular:
        regular = pl.zeros(height, dtype=pl.Boolean, eager=True).scatter(slot, True).all()
    if not regular:
        return policy_inputs(per_key, names, n_inputs)
    row = pl.zeros(height, dtype=pl.UInt32, eager=True).scatter(slot, pl.int_range(height, dtype=pl.UInt32, eager=True))
    del slot
    # column by column, each let go of once copied: the grades of a million inputs under seven
    # policies are seven million rows, held once
    fields: dict[str, list[pl.Series]] = {}
    for field, dtype in POLICY_GRADE_FIELDS.items():
        # taken out in place: a drop copies a table of several chunks (the parts') into one
        column = per_key.drop_in_place(field)
        if not (column.dtype == pl.Categorical and dtype == pl.String):  # text once one row per grade (canonical)
            column = column.cast(dtype)
        if column.dtype == pl.String():  # from one chunk: gathering text from several copies the text
            column = column.rechunk()
        fields[field] = [column.gather(row.gather_every(n, offset=p)).rename(field) for p in range(n)]
        del column
    del per_key, row
    keys = pl.int_range(n_inputs, dtype=pl.UInt32, eager=True).alias("input_key")
    structs = [
        pl.DataFrame([fields[f][p] for f in POLICY_GRADE_FIELDS]).to_struct(name) for p, name in enumerate(names)
    ]
    return pl.DataFrame([keys, *structs])


def disagreeing_inputs(parts: list[pl.DataFrame], n_inputs: int) -> pl.Series:
    """``graders_disagree`` of each distinct input (``_key`` order): whether its ``correct`` takes
    more than one value over the rows of ``parts`` (``n_unique() > 1``, null counting as a value;
    null for an input without a row). Each verdict is marked on the inputs by a scatter, which
    holds a flag per input where grouping the rows (seven million for a million inputs under seven
    policies) holds a hash table of them.

    Examples
    --------
    >>> rows = pl.DataFrame({"_key": pl.Series([0, 0, 1, 1, 2], dtype=pl.UInt32),
    ...                      "correct": [True, False, True, True, None]})
    >>> disagreeing_inputs([rows], 4).to_list()
    [True, False, False, None]
    """
    kinds = pl.zeros(n_inputs, dtype=pl.UInt8, eager=True)
    correct = pl.col("correct")
    for verdict in (correct, ~correct, correct.is_null()):
        seen = pl.zeros(n_inputs, dtype=pl.Boolean, eager=True)
        for part in parts:
            seen = seen.scatter(part.filter(verdict).get_column("_key"), True)
        kinds = kinds + seen.cast(pl.UInt8)
    return pl.select(pl.when(kinds > 0).then(kinds > 1).alias("graders_disagree")).to_series()


def join_inputs(parts: Sequence[tuple[pl.DataFrame, pl.Series]]) -> tuple[pl.DataFrame, pl.Series]:
    """One ``policy_inputs`` table and the turns' ``input_keys`` from those of parts graded apart
    under the same policies (the turns put one after the other): each part's keys follow the previous part's.

    Examples
    --------
    >>> part = (pl.DataFrame({"input_key": pl.Series([0], dtype=pl.UInt32)}), pl.Series([0, 0], dtype=pl.UInt32))
    >>> inputs, keys = join_inputs([part, part])
    >>> inputs["input_key"].to_list(), keys.to_list()
    ([0, 1], [0, 0, 1, 1])
    """
    if not parts:
        return empty_inputs(), empty_keys()
    offsets, start = [], 0
    for inputs, _ in parts:
        offsets.append(start)
        start += inputs.height
    inputs = pl.concat([i.drop("input_key") for i, _ in parts]).select(
        pl.int_range(start, dtype=pl.UInt32).alias("input_key"), pl.all()
    )
    keys = pl.concat(
        [(k.cast(pl.Int64) + offset).cast(pl.UInt32) for (_, k), offset in zip(parts, offsets, strict=True)]
    )
    return inputs, keys.rename("input_key")


def policy_view(turns: pl.DataFrame, input_keys: pl.Series, inputs: pl.DataFrame) -> pl.DataFrame:
    """:data:`~workbench.schema.POLICY_GRADES`: for each row of ``turns`` (in its order), a row
    per policy of ``inputs`` (in its column order) holding the grade of the turn's input
    (``input_keys``, aligned with ``turns``); a policy the input has no grade for gives no row.

    Built column by column, each gathered straight from the inputs' grades.

    Examples
    --------
    >>> rows = pl.DataFrame({"_key": [0, 0], "_p": [0, 1], "correct": [True, False], "status": "ok",
    ...     "reason": ["exact", "wrong_value"], "answer": "1", "answer_source": "answer",
    ...     "extraction_rule": None, "detail": ""})
    >>> turns = pl.DataFrame({"system": ["s", "s"], "record_id": ["r", "q"], "turn": [0, 0]})
    >>> view = policy_view(turns, pl.Series([0, 0], dtype=pl.UInt32), policy_inputs(rows, ["a", "b"], 1))
    >>> view.select("record_id", "policy", "correct").rows()
    [('r', 'a', True), ('r', 'b', False), ('q', 'a', True), ('q', 'b', False)]
    """
    names = [c for c in inputs.columns if c != "input_key"]
    n, n_turns, n_inputs = len(names), turns.height, inputs.height
    if not n or not n_turns:
        return pl.DataFrame(schema=POLICY_GRADES)
    # row i of the view: turn i // n under policy i % n; its grade is row p * n_inputs + key of the
    # inputs' policy columns put one under the other
    position = pl.int_range(n_turns * n, dtype=pl.Int64, eager=True)
    of_turn = position // n
    of_policy = position % n
    del position
    take = of_policy * n_inputs + input_keys.cast(pl.Int64).gather(of_turn)
    columns = [turns.get_column(c).gather(of_turn) for c in _TURN_KEYS]
    columns.append(pl.Series("policy", names).gather(of_policy).cast(POLICY_GRADES["policy"]))
    del of_policy
    stacked = pl.concat([inputs.get_column(name).rename("_grade") for name in names])
    present = stacked.is_not_null().gather(take)
    for field, dtype in POLICY_GRADE_FIELDS.items():
        column = stacked.struct.field(field)
        if column.dtype == pl.String():  # from one chunk: gathering text from several copies the text
            column = column.rechunk()
        columns.append(column.gather(take).cast(dtype).rename(field))
        del column
    del stacked, take, of_turn
    view = pl.DataFrame(columns).select([pl.col(c).cast(t) for c, t in POLICY_GRADES.items()])
    return view if present.all() else view.filter(present)


def from_policy_grades(
    turns: pl.DataFrame, grades: pl.DataFrame, *, source: str = ""
) -> tuple[pl.Series, pl.DataFrame]:
    """``input_keys`` (aligned with ``turns``) and ``policy_inputs`` from a
    :data:`~workbench.schema.POLICY_GRADES` table of ``turns`` (as a version-1 graded folder
    stored it): turns whose grades agree under every policy share an input.
    :func:`policy_view` of the result gives ``grades`` back, sorted as ``turns``.

    Raises
    ------
    InputError
        When ``turns`` has a turn twice and ``grades`` is not in the turns' order (``source`` names the file).
    """
    names = grades.get_column("policy").cast(pl.String).unique(maintain_order=True).to_list()
    n = len(names)
    if turns.is_empty() or not n:
        return pl.Series("input_key", [0] * turns.height, dtype=pl.UInt32), pl.DataFrame(
            {"input_key": pl.Series([0] if turns.height else [], dtype=pl.UInt32)}
        )
    keys = list(_TURN_KEYS)
    # as the grading writes it: the turns' order, each turn's policies in one order
    in_order = grades.height == turns.height * n and (
        grades.get_column("policy").cast(pl.String).equals(pl.Series(names * turns.height), check_names=False)
        and grades.select(keys).gather_every(n).equals(turns.select(keys))
    )
    wide: list[pl.Series] = []
    for p, name in enumerate(names):
        if in_order:
            wide.append(_struct(grades.gather_every(n, offset=p), name))
            continue
        if turns.select(keys).is_duplicated().any():
            raise InputError(
                source or "policy_grades",
                "a turn appears twice and the policy grades are not in the turns' order",
                fix="grade the run again ('workbench grade ... --out FOLDER')",
            )
        placed = turns.select(keys).join(
            grades.filter(pl.col("policy").cast(pl.String) == name).unique(keys, keep="first", maintain_order=True),
            on=keys,
            how="left",
            maintain_order="left",
        )
        wide.append(pl.Series(name, _struct(placed, name)).set(placed.get_column("policy").is_null(), None))
    inputs = pl.DataFrame([pl.int_range(turns.height, dtype=pl.UInt32, eager=True).alias("input_key"), *wide])
    table, input_keys = canonical(inputs, inputs.get_column("input_key"))
    return input_keys, table


def canonical(inputs: pl.DataFrame | list[pl.DataFrame], input_keys: pl.Series) -> tuple[pl.DataFrame, pl.Series]:
    """``inputs`` and the turns' ``input_keys`` in their one form, whatever the engine that graded
    them and the layout they were read from: inputs with the same grades under every policy are one
    row, numbered in the order the turns first point to them (rows no turn points to are dropped).
    ``inputs`` given in a one-item list is let go of column by column (the list is emptied).

    Examples
    --------
    >>> rows = pl.DataFrame({"_key": [0, 1, 2], "_p": [0, 0, 0], "correct": [True, False, True],
    ...     "status": "ok", "reason": ["exact", "wrong_value", "exact"], "answer": "1",
    ...     "answer_source": "answer", "extraction_rule": None, "detail": ""})
    >>> inputs, keys = canonical(policy_inputs(rows, ["a"], 3), pl.Series([1, 2, 0, 1], dtype=pl.UInt32))
    >>> inputs.height, keys.to_list()
    (2, [0, 1, 1, 0])
    """
    frame = inputs.pop() if isinstance(inputs, list) else inputs
    names = [c for c in frame.columns if c != "input_key"]
    if frame.is_empty() or not names:
        keys = pl.Series("input_key", [0] * input_keys.len(), dtype=pl.UInt32)
        return pl.DataFrame({"input_key": pl.Series([0] if input_keys.len() else [], dtype=pl.UInt32)}), keys
    # each input's first row with the same grades (exact equality, nothing copied but the row numbers)
    same = frame.select(names).with_row_index("_row").select(pl.col("_row").first().over(names)).get_column("_row")
    first, keys = distinct(same.gather(input_keys).to_frame("_same"), ["_same"])  # as the turns meet them
    take = first.get_column("_same")
    del same, first
    columns = [pl.int_range(take.len(), dtype=pl.UInt32, eager=True).alias("input_key")]
    grade = pl.Struct(dict(POLICY_GRADE_FIELDS))  # answers and details held as categories while grading are text
    owned = isinstance(inputs, list)
    for name in names:
        # let go of once copied (the table given in a list: taken out in place, a drop copies one of several chunks)
        column = frame.drop_in_place(name) if owned else frame.get_column(name)
        columns.append(column.gather(take).cast(grade))
        del column
    return pl.DataFrame(columns), keys.cast(pl.UInt32).rename("input_key")


def check_inputs(inputs: pl.DataFrame, input_keys: pl.Series, *, source: str) -> None:
    """Check a ``policy_inputs`` table read from a file against its turns' ``input_keys``.

    Raises
    ------
    InputError
        When ``input_key`` is not the row number, a policy column is not a struct of the grade
        fields, or a turn points to no input.
    """
    fix = "grade the run again ('workbench grade ... --out FOLDER')"
    if inputs.schema.get("input_key") != pl.UInt32:
        raise InputError(source, "column input_key is missing or not UInt32", field="input_key", fix=fix)
    if not inputs.get_column("input_key").equals(
        pl.int_range(inputs.height, dtype=pl.UInt32, eager=True), check_names=False
    ):
        raise InputError(source, "input_key is not the row number (0, 1, 2, ...)", field="input_key", fix=fix)
    want = pl.Struct(dict(POLICY_GRADE_FIELDS))
    for name in inputs.columns[1:]:
        if inputs.schema[name] != want:
            raise InputError(source, f"column {name} holds {inputs.schema[name]}, not {want}", field=name, fix=fix)
    if input_keys.len() and (input_keys.null_count() or (input_keys.max() or 0) >= inputs.height):  # type: ignore[operator]
        raise InputError(source, "a turn's input_key points to no row of the policy inputs", field="input_key", fix=fix)

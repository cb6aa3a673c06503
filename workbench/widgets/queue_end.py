"""The line the triage shows at the end of its queue: how many items are annotated and by whom, and
why the others are still open (on another analyst's screen, skipped, waiting for another analyst).

"All ... annotated" is said only when every item is: an item another analyst still has open is not done.

Examples
--------
>>> from workbench.annotations.items import QueueTally
>>> end_of_queue(QueueTally(total=3, done=3, mine=3, held=0, skipped=0, waiting=0))
'All 3 items are annotated (all by you).'
>>> end_of_queue(QueueTally(total=3, done=2, mine=2, held=1, skipped=0, waiting=0))
"End of your queue. Annotated: 2 of 3 items (both by you). Still open: 1 on another analyst's screen."
>>> end_of_queue(QueueTally(total=2, done=0, mine=0, held=0, skipped=2, waiting=0))
'End of your queue. Annotated: 0 of 2 items. Still open: 2 you skipped.'
"""

from __future__ import annotations

from workbench.annotations.items import QueueTally

__all__ = ["BACK_AND_UNDO", "end_of_queue"]

#: What Back and Undo do at the end of the queue, said after its line.
BACK_AND_UNDO = "Back (←) shows the last item again; Undo takes back the last save."


def _by_whom(mine: int, done: int) -> str:
    """Who annotated the ``done`` items, ``mine`` of them this analyst."""
    others = done - mine
    if others == 0:
        return "by you" if done == 1 else "both by you" if done == 2 else "all by you"
    theirs = "another analyst" if others == 1 else "other analysts"
    return f"by {theirs}" if mine == 0 else f"{mine} by you, {others} by {theirs}"


def end_of_queue(tally: QueueTally) -> str:
    """The end-of-queue line for ``tally`` (a queue of at least one item).

    Examples
    --------
    >>> end_of_queue(QueueTally(total=4, done=1, mine=0, held=2, skipped=0, waiting=1))
    "End of your queue. Annotated: 1 of 4 items (by another analyst). Still open: 2 on other analysts' screens, 1 waiting for another analyst's decision (yours is in)."
    >>> end_of_queue(QueueTally(total=1, done=1, mine=0, held=0, skipped=0, waiting=0))
    'The only item is annotated (by another analyst).'
    >>> end_of_queue(QueueTally(total=5, done=4, mine=1, held=0, skipped=1, waiting=0))
    'End of your queue. Annotated: 4 of 5 items (1 by you, 3 by other analysts). Still open: 1 you skipped.'
    """
    by_whom = f" ({_by_whom(tally.mine, tally.done)})" if tally.done else ""
    if tally.done == tally.total:
        return (
            f"The only item is annotated{by_whom}."
            if tally.total == 1
            else f"All {tally.total} items are annotated{by_whom}."
        )
    still_open = [
        (tally.held, "on another analyst's screen" if tally.held == 1 else "on other analysts' screens"),
        (tally.skipped, "you skipped"),
        (tally.waiting, "waiting for another analyst's decision (yours is in)"),
    ]
    reasons = ", ".join(f"{n} {why}" for n, why in still_open if n)
    items = "item" if tally.total == 1 else "items"
    return f"End of your queue. Annotated: {tally.done} of {tally.total} {items}{by_whom}. Still open: {reasons}."

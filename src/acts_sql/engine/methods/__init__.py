"""The correction methods by name: what runs for each `Method` once the task is set up.

One module per method, each with its runner `run` (a function of `MethodRun`): `acts` and
`linear` are searches (`acts.py` runs `engine/search.py`'s `TreeSearch`, `linear.py` holds
`LinearSearch`, a subclass); `vote` counts its own majority; the methods without a judge
(`critic`, `raw`, `dac`, `maplerepair`) have their acceptance checked afterwards by
`vouch.vouched`. What methods share: `base.py` (`MethodRun`, how a runner is built),
`single_call.py` (`critic`, `raw`), `staged.py` (`dac`, `maplerepair`). A new method is a
module with a `run` added to `METHODS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from acts_sql.engine.methods import acts, critic, dac, linear, maplerepair, raw, vote
from acts_sql.engine.methods.base import MethodRun, MethodRunner
from acts_sql.engine.options import Method
from acts_sql.engine.search import SearchOutcome

METHODS: Mapping[Method, MethodRunner] = MappingProxyType(
    {
        Method.ACTS: acts.run,
        Method.LINEAR: linear.run,
        Method.VOTE: vote.run,
        Method.CRITIC: critic.run,
        Method.RAW: raw.run,
        Method.DAC: dac.run,
        Method.MAPLEREPAIR: maplerepair.run,
    }
)


def run_method(run: MethodRun) -> SearchOutcome:
    """The outcome of the options' method on the task."""
    return METHODS[run.options.method](run)

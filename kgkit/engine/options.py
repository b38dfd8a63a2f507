"""What a run is asked to do beside its inputs and configuration: one object for every entry point.

``kgkit extract`` builds a :class:`RunOptions` once from its flags and hands the same object
to whichever entry point runs: :func:`kgkit.engine.run.extract_each` (local or Ray),
:func:`kgkit.engine.batch.extract_batch` (``--batch``) or :func:`kgkit.engine.plan.plan`
(``--dry-run``), so a flag cannot reach one of them and miss another. The public
:func:`kgkit.extract` takes the same values as keyword arguments and builds one too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from kgkit.config.model import Config


@dataclass(frozen=True)
class RunOptions:
    """A run's choices (configuration aside: see :class:`kgkit.config.model.Config`)."""

    domain: str | os.PathLike | None = None  # a name on the search path or a YAML path; None: config.domain
    # view names, a comma-separated string or "all"; None: config.views, else the domain's defaults
    views: Sequence[str] | str | None = None
    out_dir: str | os.PathLike | None = None  # parent of the run folders; None: config.out_dir
    include: Sequence[str] = ()  # globs of the files a folder input stands for
    exclude: Sequence[str] = ()  # ... and of those it leaves out
    resume: bool = False  # the run continues the one in the folder (every run does; said for batch runs)
    replace_views: bool = False  # drop the folder's earlier views: it then holds only this run's
    skills: bool = True  # give the top-k learned skills to the core passes
    direct_retries: bool = False  # a batch run: passes a batch failed run directly, at full price

    def root(self, config: Config) -> Path:
        """The folder of the run folders."""
        return Path(self.out_dir) if self.out_dir is not None else Path(config.out_dir)

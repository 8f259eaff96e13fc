"""Suite-wide test settings: Hypothesis writes nothing into the repository.

No example database: it replayed a once-failing draw in every later run (a stale replay of a
since-fixed example failed each run), and a fresh clone in CI has none, so local runs now draw as
CI does. Its other caches (constants, unicode data) go to a folder under the temp dir instead of
`.hypothesis/` in the working tree.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"agent-cli-hypothesis-{os.getuid()}")
settings.register_profile("agent-cli", database=None)
settings.load_profile("agent-cli")
